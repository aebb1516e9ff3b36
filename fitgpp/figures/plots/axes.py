"""Log axes whose tick labels do not collide, and series that coincide."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import altair as alt

from fitgpp.figures.plots.base import Preset, natural_key


# ------------------------------------------------------------------ log axes
_MANTISSAS = ((1, 1.5, 2, 3, 5, 7), (1, 2, 5), (1, 3), (1,))


def _log_domain(values, pad: float = 1.0) -> list[float]:
    """[lo, hi] around the positive ``values`` (widened by the factor ``pad`` each way, so
    point marks at the ends are not cut in half), rounded out to 1-1.5-2-3-5-7 steps (1-2-5
    made the s trade-off span 0.5 to 5 for points between 1.2 and 1.6)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    v = np.array([v.min() / pad, v.max() * pad]) if len(v) else v
    if not len(v):
        return [1.0, 10.0]
    def steps(e):
        return [m * 10.0 ** e for m in (1, 1.5, 2, 3, 5, 7)]
    lo = max(x for e in range(math.floor(math.log10(v.min())) - 1, math.floor(math.log10(v.min())) + 1)
             for x in steps(e) if x <= v.min() * (1 + 1e-9))
    hi = min(x for e in range(math.floor(math.log10(v.max())), math.floor(math.log10(v.max())) + 2)
             for x in steps(e) if x >= v.max() * (1 - 1e-9))
    return [lo, hi if hi > lo else lo * 2]


def _ticks_fit(ticks, lo, hi, px, font, vertical=False) -> bool:
    if vertical:
        pos = [px * math.log(t / lo) / math.log(hi / lo) for t in ticks]
        return all(b - a >= font + 3 for a, b in zip(pos, pos[1:]))
    from fitgpp.figures.plots.text import label_clash
    return label_clash(ticks, lo, hi, px, font, gap=6) is None


def log_ticks(domain, px: float, font: float, *, vertical: bool = False) -> list[float]:
    """The densest 1-1.5-2-3-5-7 / 1-2-5 / 1-3 / decade tick series inside ``domain`` whose
    labels do not overlap on an axis ``px`` long (Vega's default log ticks collide)."""
    lo, hi = domain
    e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    for mant in _MANTISSAS:
        for every in ((1,) if mant != (1,) else (1, 2, 3, 5)):
            ticks = [round(m * 10.0 ** e, 10) for e in range(e0, e1 + 1) if e % every == 0
                     for m in mant if lo * (1 - 1e-9) <= m * 10.0 ** e <= hi * (1 + 1e-9)]
            # the last label is pushed inside the axis end (Vega's labelFlush): try without it
            for cand in (ticks, ticks[:-1]):
                if len(cand) >= 2 and _ticks_fit(cand, lo, hi, px, font, vertical):
                    return cand
    return [lo, hi]


def _log_scale(values, px, p: Preset, *, vertical=False, title: str, pad: float = 1.0,
               room_below: bool = False) -> dict:
    """Scale and axis of a log position channel. ``room_below``: when the smallest value
    sits on the axis start (a CDF's vertical step at slowdown 1), start the axis a little
    lower so that the step is drawn beside the axis, not on it."""
    dom = _log_domain(values, pad)
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if room_below and len(v) and dom[0] >= v.min() * (1 - 1e-9):
        dom = [round(v.min() / 1.25, 4), dom[1]]
    ticks = log_ticks(dom, px, p.font, vertical=vertical)
    return dict(scale=alt.Scale(type="log", domain=dom, nice=False),
                axis=alt.Axis(values=ticks, format="~g", labelOverlap="greedy", title=title))


# ------------------------------------------------------------------ series that coincide
def coincident(df: pd.DataFrame, series: str, cols, panels=()) -> list[str]:
    """Sentences naming the series of ``df`` whose ``cols`` are identical (in every panel
    of ``panels``, or in the named ones), e.g. ``"FitGpp s=4 and FitGpp s=8 coincide"``."""
    cols = [c for c in cols if c in df]
    panels = [c for c in panels if c in df]
    hits: dict[tuple, list[str]] = {}
    n_panels = 0
    for key, g in (df.groupby(panels, sort=False) if panels else [((), df)]):
        n_panels += 1
        curves = {s: c[cols].round(12).sort_values(cols).to_numpy().tolist()
                  for s, c in g.groupby(series, sort=False)}
        names, covered = sorted(curves, key=natural_key), set()
        for i, a in enumerate(names):
            same = [b for b in names[i + 1:] if b not in covered and curves[b] == curves[a]]
            if a not in covered and same:
                covered.update(same)
                where = " ".join(map(str, key if isinstance(key, tuple) else (key,)))
                hits.setdefault((a, *same), []).append(where)
    out = []
    for grp, where in hits.items():
        names = ", ".join(map(str, grp[:-1])) + " and " + str(grp[-1])
        place = "" if len(where) == n_panels else " in " + "; ".join(where)
        out.append(f"{names} coincide{place}.")
    if out:   # said once: why a reader sees fewer lines than the legend lists
        out[0] = out[0][:-1] + " (one line hides the other)."
    return out


