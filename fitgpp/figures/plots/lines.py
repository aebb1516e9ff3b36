"""A metric against a knob: lines with intervals, one panel per metric."""

from __future__ import annotations

import math
import re

import altair as alt
import numpy as np
import pandas as pd

from fitgpp.figures.plots.axes import _log_scale, _ticks_fit, coincident
from fitgpp.figures.plots.base import Preset, PlotError, _finish, _panel, preset
from fitgpp.figures.plots.style import _styles


# ------------------------------------------------------------------ a metric against a knob
SERIES_TITLES = {"P": "P (max preemptions)", "policy": "policy",
                 "grace": "grace-period distribution", "s": "threshold s"}


def metric_lines(df: pd.DataFrame, *, x: str, series: str = "policy", log_y: bool = False,
                 x_title: str | None = None, y_title: str = "", series_title: str | None = None,
                 title: str | None = None, log_x: bool | None = None, percent: bool = False,
                 share: bool = False, size: str | Preset | None = None) -> alt.Chart:
    """Lines of ``value`` against ``x``, one per ``series``, one panel per ``metric``,
    with ``lo``/``hi`` whiskers when present (long format: x, series, metric, value[, lo, hi]).

    ``log_x``: None puts x on a log axis when its values are positive and span a factor
    of 8 or more (s, grace scale). Series are drawn side by side (dodged a little along
    x) so their whiskers do not hide each other; tooltips give the true x. Each panel has
    its own y axis, titled with its metric (``y_title`` overrides), and tick labels with
    as many decimals as its range needs.
    ``percent``: the values are fractions (changes, see :mod:`fitgpp.analysis.metrics`), shown in
    percent. ``share``: the values are fractions of a whole (not changes), shown in
    unsigned percent. A change (``percent``, or a metric named ``... vs BASELINE (%)``) has its
    whiskers stop at -100 % (nothing falls by more than all of it), said in the subtitle;
    otherwise each axis includes the whole of every interval."""
    need = {x, series, "metric", "value"}
    if not need <= set(df.columns):
        raise PlotError(f"metric_lines needs columns {sorted(need)}, got {list(df.columns)}")
    p = preset(size)
    st = _styles(df[series].astype(str))
    d = df.assign(**{series: df[series].astype(str)})
    metrics = list(dict.fromkeys(d["metric"]))
    change = (percent and not share) or all(re.search(r" vs .+\(%\)$", m) for m in metrics)
    vs = re.search(r" vs (.+?)( \(%\))?$", metrics[0])
    base = vs.group(1) if change and vs else "the baseline"
    d["panel"] = [re.sub(r" vs .+$", "", m) if change else m for m in d["metric"]]
    panels = list(dict.fromkeys(d["panel"]))
    whole = d
    d, zero = _zero_series(d, series)
    empty = [n for n in panels if not (d["panel"] == n).any()]
    only_zeros = len(empty) == len(panels)
    if only_zeros:      # nothing but zeros: their points, no lines along the axis, said so
        d, zero, empty = whole, {}, []
    panels = [n for n in panels if n not in empty]   # a panel of zeros alone is left out
    ncols = min(len(panels), 3) if p.name == "full" else 1
    width = _panel(p, ncols, axis_px=60 if p.name == "full" else 52)
    xe, d = _x_encoding(d, x, series, st, log_x, width, p, x_title or x)
    d, notes = _intervals(d, change, -1.0 if percent else -100.0)
    if empty or only_zeros:
        every = f"every {series_title or SERIES_TITLES.get(series, series)}"
        notes += [f"{', '.join(empty)}: 0 throughout for {every} (not drawn)." if empty else
                  f"0 throughout for {every} in every panel (points only)."]
    s_title = series_title or SERIES_TITLES.get(series, series)
    charts = []
    for name in panels:
        g = d[d["panel"] == name]
        yt = ([name, y_title] if y_title and len(panels) > 1 else y_title) or (
            [name, f"change vs {base}" + ("" if percent else " (%)")] if change else name)
        said = coincident(g, series, [x, "value"] + [c for c in ("lo_c", "hi_c") if c in g])
        said += [f"{', '.join(zero[name])}: 0 throughout (not drawn)."] if name in zero else []
        one = _panel_chart(g, xe, yt, _percent_format(g, percent, share), series, s_title, st,
                           log_y, p, x, x_title or x, lines=not only_zeros).properties(
            width=width, height=140 if ncols > 1 else 95)
        charts.append(one.properties(title=_panel_note(said, width, p)) if said else one)
    what = f"Change against {base}" if change else ", ".join(panels)
    return _finish(alt.concat(*charts, columns=ncols), p,
                   title or f"{what} as the {x_title or x} varies", notes, legend=st["order"])


def _x_encoding(d, x, series, st, log_x, width, p: Preset, x_title: str):
    """The shared x encoding and ``d`` with ``x_plot``: the series dodged over 6 % of the
    axis around the true x, so their whiskers do not hide each other."""
    xv = d[x].to_numpy(float)
    if log_x is None:
        log_x = bool((xv > 0).all() and xv.max() / xv.min() >= 8)
    k, n = st["order"].index, len(st["order"])
    off = np.array([(k(v) - (n - 1) / 2) for v in d[series]]) * (0.06 / max(n - 1, 1))
    if log_x:
        span = math.log10(xv.max() / xv.min()) if xv.max() > xv.min() else 1.0
        d = d.assign(x_plot=xv * 10 ** (off * span))
        xs = _log_scale(np.concatenate([xv, d["x_plot"]]), width, p, pad=1.15, title=x_title)
        dom = xs["scale"].domain
        if _ticks_fit(sorted(set(xv)), *dom, width, p.font):   # tick at every value drawn
            xs["axis"] = alt.Axis(values=sorted(set(xv)), format="~g", title=x_title,
                                  labelOverlap="greedy")
    else:
        span = (xv.max() - xv.min()) or 1.0
        d = d.assign(x_plot=xv + off * span)
        xs = dict(title=x_title, scale=alt.Scale(zero=False, nice=False, padding=8))
        values = sorted(set(xv))
        fmt = ",d" if all(float(v).is_integer() for v in values) else None
        if _linear_ticks_fit(values, d["x_plot"].min(), d["x_plot"].max(), width, p.font, fmt):
            # a tick at every value run: Vega's own ticks, on a domain that does not start
            # at a round number, can put "500" against "1,000" (seen on a 90 pt panel)
            xs["axis"] = alt.Axis(values=values, title=x_title, labelOverlap="greedy",
                                  **({"format": fmt} if fmt else {}))
    return alt.X("x_plot:Q", **xs), d


def _linear_ticks_fit(values, lo: float, hi: float, px: float, font: float, fmt) -> bool:
    """Whether 2 to 8 labels at ``values`` (d3 format ``fmt``) on a linear axis from ``lo``
    to ``hi`` drawn ``px`` long keep 6 px apart (:func:`fitgpp.figures.plots.text.label_clash`)."""
    from fitgpp.figures.plots.text import label_clash
    return (2 <= len(values) <= 8 and hi > lo
            and label_clash(values, lo, hi, px, font, fmt=fmt, gap=6, log=False) is None)


def _intervals(d, change: bool, floor: float):
    """``d`` with ``lo_c``/``hi_c`` (the interval as drawn: a change's stops at ``floor``,
    -100 %) and the subtitle sentence that says what the whiskers are."""
    if not ({"lo", "hi"} <= set(d.columns) and d[["lo", "hi"]].notna().any().any()):
        return d, []
    lo_c = np.maximum(d["lo"], floor) if change else d["lo"]
    cut = bool((lo_c > d["lo"]).any())
    note = "Vertical lines: 95 % intervals" + (", cut at -100 % (marked with a bar)"
                                               if cut else "") + "."
    return d.assign(lo_c=lo_c, hi_c=d["hi"], cut=np.where(lo_c > d["lo"], lo_c, np.nan)), [note]


def _zero_series(d, series: str):
    """``d`` without the series that are 0 throughout a panel (PRIO's preemptions: a line
    along the axis reads as missing data), and ``{panel: [series left out]}``. A panel
    whose every series is 0 loses them all (:func:`metric_lines` then leaves it out: an
    empty view made Vega warn "Infinite extent for field value")."""
    cols = [c for c in ("value", "lo", "hi") if c in d]
    drop, where = pd.Series(False, index=d.index), {}
    for (panel, name), g in d.groupby(["panel", series], sort=False):
        if (g[cols].fillna(0) == 0).all().all() and g["panel"].size < (d["panel"] == panel).sum():
            drop |= (d["panel"] == panel) & (d[series] == name)
            where.setdefault(panel, []).append(str(name))
    return d[~drop], where


def _panel_note(notes, width: int, p: Preset):
    """A panel's own notes (series that coincide or are left out there) above it, wrapped
    to its width, in the label font: next to the lines they explain, not in a paragraph."""
    import textwrap
    lines = [ln for n in notes for ln in textwrap.wrap(n, max(16, int(width / (0.55 * p.font))))]
    return alt.Title(lines, fontSize=p.font, fontWeight="normal", anchor="start")


def _percent_format(g, percent: bool, share: bool) -> str | None:
    """A d3 format for a panel of fractions with enough decimals that its ~5 ticks read
    differently ("-99.75 %, -99.8 %", not "-99.8 %" five times)."""
    if not (percent or share):
        return None
    def span_of(cols):
        v = g[[c for c in cols if c in g]].to_numpy(float)
        v = v[np.isfinite(v)]
        return (v.max() - v.min()) * 100 if len(v) else 0.0
    # the values' own span when they have one: ticks over the points alone are the finest
    # (at full size a TE p95 change spans -99.81 % to -99.82 %, its whiskers far more)
    span = span_of(("value",)) or span_of(("value", "lo_c", "hi_c"))
    digits = 0 if span <= 0 else int(min(6, max(0, math.ceil(-math.log10(span / 5)))))
    return f"{'' if share else '+'}.{digits}~%"


def _panel_chart(g, xe, y_title, fmt, series, s_title, st, log_y, p: Preset, x, x_title,
                 lines: bool = True):
    """One panel: lines (unless ``lines`` is False), points, interval whiskers (and a bar
    where one is cut)."""
    if log_y:
        vals = g[["value"] + [c for c in ("lo_c", "hi_c") if c in g]].to_numpy().ravel()
        ye = alt.Y("value:Q", **_log_scale(vals, 140, p, vertical=True, title=y_title))
    else:
        ye = alt.Y("value:Q", title=y_title, scale=alt.Scale(zero=False, nice=True, padding=10),
                   axis=alt.Axis(format=fmt) if fmt else alt.Axis())
    enc = dict(color=alt.Color(f"{series}:N", scale=st["color"], sort=st["order"], title=s_title))
    tip = [series, alt.Tooltip(f"{x}:Q", title=x_title), "metric",
           alt.Tooltip("value:Q", format=fmt.replace("~", "") if fmt else ".3g")]
    line = alt.Chart().mark_line(clip=True).encode(
        x=xe, y=ye, strokeDash=alt.StrokeDash(f"{series}:N", scale=st["dash"], sort=st["order"],
                                              title=s_title), **enc)
    pts = alt.Chart().mark_point(filled=True, size=40, clip=True).encode(
        x=xe, y=ye, shape=alt.Shape(f"{series}:N", scale=st["shape"], sort=st["order"],
                                    title=s_title), tooltip=tip, **enc)
    layers = [line, pts] if lines else [pts]
    if "lo_c" in g:
        layers.append(alt.Chart().mark_rule(clip=True, opacity=0.7, strokeWidth=1.2).encode(
            x=xe, y="lo_c:Q", y2="hi_c:Q", **enc))
        if g["cut"].notna().any():
            layers.append(alt.Chart(g[g["cut"].notna()]).mark_tick(
                thickness=2, size=8, orient="horizontal", clip=True).encode(x=xe, y="cut:Q", **enc))
    return alt.layer(*layers, data=g)
