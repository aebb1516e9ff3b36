"""Axes within the range of the quantity they show, log axes whose tick labels do not
collide, and series that coincide.

One rule for every chart (:func:`quantity_range`, read from the declared metrics of
:mod:`fitgpp.analysis.metrics`): a slowdown axis starts at 1 at the lowest (or higher, where
the data start higher), a count or a share at 0, a change at -100 %; nothing is drawn below
that, neither the axis (:func:`linear_domain`, :func:`_log_domain`) nor a whisker."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import altair as alt

from fitgpp.figures.plots.base import Preset, natural_key


# ------------------------------------------------------------------ log axes
_MANTISSAS = ((1, 1.5, 2, 3, 5, 7), (1, 2, 5), (1, 3), (1,))


def _log_domain(values, pad: float = 1.0, lowest: float | None = None) -> list[float]:
    """[lo, hi] around the positive ``values`` (widened by the factor ``pad`` each way, so
    point marks at the ends are not cut in half), rounded out to 1-1.5-2-3-5-7 steps (1-2-5
    made the s trade-off span 0.5 to 5 for points between 1.2 and 1.6), never below
    ``lowest`` (1 for a slowdown)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    least = float(v.min()) if len(v) else math.inf     # the data's own least value
    v = np.array([v.min() / pad, v.max() * pad]) if len(v) else v
    if not len(v):
        return [1.0, 10.0]
    def steps(e):
        return [m * 10.0 ** e for m in (1, 1.5, 2, 3, 5, 7)]
    lo = max(x for e in range(math.floor(math.log10(v.min())) - 1, math.floor(math.log10(v.min())) + 1)
             for x in steps(e) if x <= v.min() * (1 + 1e-9))
    hi = min(x for e in range(math.floor(math.log10(v.max())), math.floor(math.log10(v.max())) + 2)
             for x in steps(e) if x >= v.max() * (1 - 1e-9))
    if lowest is not None and lowest > 0:
        lo = max(lo, min(lowest, least))
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
               room_below: bool = False, lowest: float | None = None) -> dict:
    """Scale and axis of a log position channel, never below ``lowest`` (the least value
    the quantity can take: 1 for a slowdown). ``room_below``: when the smallest value sits
    on the axis start (a CDF's vertical step), start the axis a little lower so that the
    step is drawn beside the axis, not on it (not below ``lowest``)."""
    dom = _log_domain(values, pad, lowest)
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if room_below and len(v) and dom[0] >= v.min() * (1 - 1e-9):
        dom = [max(round(v.min() / 1.25, 4), min(lowest or 0.0, float(v.min()))), dom[1]]
    ticks = log_ticks(dom, px, p.font, vertical=vertical)
    return dict(scale=alt.Scale(type="log", domain=dom, nice=False),
                axis=alt.Axis(values=ticks, format="~g", labelOverlap="greedy", title=title))


# ------------------------------------------------------------------ the range of a quantity
def quantity_range(name: str) -> tuple[float, float]:
    """The range of the quantity a column or an axis shows: by column name
    (:func:`fitgpp.analysis.metrics.value_range`: ``te_p95``, ``change_be_p95``), by the title of
    a declared metric (its title, label or short name: "TE p95 slowdown"), a change by its
    title ("... vs FIFO (%)"), else by what it counts: a slowdown at least 1; preemptions,
    utilization and a share of something at least 0; anything else (a setting's name, a
    difference of GPU-hours) unbounded."""
    from fitgpp.analysis.metrics import (CHANGE_RANGE, COUNT_RANGE, METRICS, SLOWDOWN_RANGE,
                                         UNBOUNDED, value_range)
    text = str(name).strip()
    got = value_range(text)
    if got != UNBOUNDED or text in METRICS:
        return got
    low = text.lower()
    for m in METRICS.values():
        if low in {m.title.lower(), m.label.lower(), (m.short or m.title).lower()}:
            return value_range(m.name)
    if (" vs " in low and low.endswith("(%)")) or "change" in low:
        return CHANGE_RANGE
    if re.search(r"(?<![\w.])-?\d+(\.\d+)?(?![\w.])", low):
        return UNBOUNDED    # a setting's name ("load 0.8, TE share 0.3"), not a quantity's
    if "slowdown" in low:
        return SLOWDOWN_RANGE
    if any(w in low for w in ("preemption", "utilization", "share of")):
        return COUNT_RANGE    # (not "GPU-h": RQ8 draws GPU-hours FitGpp minus FIFO)
    return UNBOUNDED


def nice_step(span: float, count: int = 5) -> float:
    """d3's tick step for ``count`` ticks over ``span``: a 1-2-5 multiple of a power of 10."""
    step = span / max(count, 1)
    power = 10 ** math.floor(math.log10(step))
    err = step / power
    return power * (10 if err >= 7.07 else 5 if err >= 3.16 else 2 if err >= 1.41 else 1)


def linear_domain(values, value_range=(-math.inf, math.inf), *, count: int = 4,
                  pad: float = 0.06) -> list[float]:
    """[lo, hi] of a linear axis around ``values`` (and the whiskers drawn), widened by
    ``pad`` of their span each way and rounded out to a tick step, but never past
    ``value_range`` (the axis of a slowdown never starts below 1, a count's below 0, a
    change's below -100 %; :func:`quantity_range`) nor across 0 where the values do not."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    a, b = value_range
    if not len(v):
        lo = a if np.isfinite(a) else 0.0
        return [lo, lo + 1.0]
    lo, hi = float(v.min()), float(v.max())
    span = (hi - lo) or (abs(hi) * 0.1 or 1.0)
    step = nice_step(span * (1 + 2 * pad), count)
    lo2 = math.floor((lo - pad * span) / step) * step
    hi2 = math.ceil((hi + pad * span) / step) * step
    # never past the range, nor inside the data, nor across 0 where the data do not cross it
    # (GPU-hours of 0 to 317 drew from -50)
    a, b = max(a, 0.0) if lo >= 0 else a, min(b, 0.0) if hi <= 0 else b
    lo2 = min(max(round(lo2, 12), a), lo)
    hi2 = max(min(round(hi2, 12), b), hi)
    return [lo2, hi2 if hi2 > lo2 else lo2 + step]


# ------------------------------------------------------------------ series that coincide
def joined(labels) -> str:
    """``a, b and c``, a label that repeats the words before its last one of the label before
    it written by its last word alone: ``FitGpp s=1, s=4 and s=8`` (notes of RQ6's figures ran
    past the page naming FitGpp three times in each)."""
    out, before = [], None
    for lb in map(str, labels):
        head, _, last = lb.rpartition(" ")
        out.append(last if head and head == before else lb)
        before = head or None
    return out[0] if len(out) == 1 else ", ".join(out[:-1]) + " and " + out[-1]


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
        names = joined(grp)
        place = "" if len(where) == n_panels else " in " + "; ".join(where)
        out.append(f"{names} coincide{place}.")
    if out:   # said once: why a reader sees fewer lines than the legend lists
        out[0] = out[0][:-1] + " (one line hides the other)."
    return out


