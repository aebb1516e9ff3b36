"""A metric against a knob: lines with intervals, one panel per metric."""

from __future__ import annotations

import math
import re

import altair as alt
import numpy as np
import pandas as pd

from .axes import _log_scale, _ticks_fit, coincident
from .base import Preset, PlotError, _finish, _panel, preset
from .style import _styles


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
    x) so their whiskers do not hide each other; tooltips give the true x.
    ``percent``: the values are fractions (changes, see :mod:`fitgpp.metrics`), shown in
    percent. ``share``: the values are fractions of a whole (not changes), shown in
    unsigned percent. A change (``percent``, or a metric named ``... vs BASELINE (%)``) has its
    whiskers stop at -100 % (nothing falls by more than all of it). Whiskers that reach far
    past the values are clipped at the plot's edge; the numbers are in the table."""
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
    floor = -1.0 if percent else -100.0          # a fraction, or already in percent
    y_title = y_title or (f"change against {base}" + ("" if percent else " (%)") if change
                          else "share (see panel heading)" if share
                          else "value (see panel heading)")
    # axis format of fractions: one decimal when some panel spans under 5 points, so that
    # its ticks do not repeat ("-9%, -9%, -10%")
    cols = [c for c in ("value", "lo", "hi") if c in d]
    spans = [np.nanmax(v) - np.nanmin(v) for _, g in d.groupby("metric")
             if np.isfinite(v := g[cols].to_numpy(float)).any()]
    digits = 1 if spans and min(spans) < 0.05 else 0
    pct = (f".{digits}%" if share else f"+.{digits}%") if (share or percent) else None
    xv = d[x].to_numpy(float)
    if log_x is None:
        log_x = bool((xv > 0).all() and xv.max() / xv.min() >= 8)
    ncols = len(metrics) if p.name == "full" else 1
    width = _panel(p, ncols, axis_px=60 if p.name == "full" else 52)
    # panel headings: the metric; "vs FIFO (%)" is said once, on the y axis
    d["panel"] = [re.sub(r" vs .+$", "", m) if change else m for m in d["metric"]]
    panels = list(dict.fromkeys(d["panel"]))
    # dodge: spread the series over 6 % of the axis, centred on the true x
    k = st["order"].index
    n = len(st["order"])
    off = np.array([(k(v) - (n - 1) / 2) for v in d[series]]) * (0.06 / max(n - 1, 1))
    if log_x:
        span = math.log10(xv.max() / xv.min()) if xv.max() > xv.min() else 1.0
        d["x_plot"] = xv * 10 ** (off * span)
        xs = _log_scale(np.concatenate([xv, d["x_plot"]]), width, p, pad=1.15,
                        title=x_title or x)
        dom = xs["scale"].domain
        if _ticks_fit(sorted(set(xv)), *dom, width, p.font):   # tick at every value drawn
            xs["axis"] = alt.Axis(values=sorted(set(xv)), format="~g", title=x_title or x,
                                  labelOverlap="greedy")
    else:
        span = (xv.max() - xv.min()) or 1.0
        d["x_plot"] = xv + off * span
        xs = dict(title=x_title or x, scale=alt.Scale(zero=False, nice=False, padding=8))
    xe = alt.X("x_plot:Q", **xs)
    if log_y:
        ye = alt.Y("value:Q", **_log_scale(d[["value"] + [c for c in ("lo", "hi") if c in d]]
                                           .to_numpy().ravel(), 140, p, vertical=True,
                                           title=y_title))
    else:
        ye = alt.Y("value:Q", title=y_title, scale=alt.Scale(zero=False, nice=True, padding=10),
                   axis=alt.Axis(format=pct) if pct else alt.Axis())
    s_title = series_title or SERIES_TITLES.get(series, series)
    enc = dict(color=alt.Color(f"{series}:N", scale=st["color"], sort=st["order"], title=s_title))
    tip = [series, alt.Tooltip(f"{x}:Q", title=x_title or x), "metric",
           alt.Tooltip("value:Q", format=pct.replace(".0", ".1") if pct else ".3g")]
    line = alt.Chart().mark_line(clip=True).encode(
        x=xe, y=ye, strokeDash=alt.StrokeDash(f"{series}:N", scale=st["dash"], sort=st["order"],
                                              title=s_title), **enc)
    pts = alt.Chart().mark_point(filled=True, size=40, clip=True).encode(
        x=xe, y=ye, shape=alt.Shape(f"{series}:N", scale=st["shape"], sort=st["order"],
                                    title=s_title), tooltip=tip, **enc)
    layers = [line, pts]
    notes = []
    if {"lo", "hi"} <= set(d.columns) and d[["lo", "hi"]].notna().any().any():
        layers.append(alt.Chart().mark_rule(clip=True, opacity=0.7, strokeWidth=1.2).encode(
            x=xe, y="lo_c:Q", y2="hi_c:Q", **enc))
        spread = d.groupby("metric")["value"].agg(["min", "max"])
        pad = (spread["max"] - spread["min"]).clip(lower=1e-9) * 0.5 + 1e-9
        lo_lim, hi_lim = d["metric"].map(spread["min"] - pad), d["metric"].map(spread["max"] + pad)
        if change:
            lo_lim = np.maximum(lo_lim, floor)
        lo_c, hi_c = np.maximum(d["lo"], lo_lim), np.minimum(d["hi"], hi_lim)
        cut = ((lo_c > d["lo"]) | (hi_c < d["hi"])).any()
        notes.append("Vertical lines: 95 % intervals" + (
            ", cut at the plot's edge where they reach past it" + (" or below -100 %"
                                                                   if change else "")
            if cut else "") + ".")
        d = d.assign(lo_c=lo_c, hi_c=hi_c)
    notes = coincident(d, series, [x, "value"] + [c for c in ("lo_c", "hi_c") if c in d],
                       ["panel"]) + notes
    chart = alt.layer(*layers, data=d).properties(
        width=width, height=140 if ncols > 1 else 95).facet(
        facet=alt.Facet("panel:N", title=None, sort=panels), columns=ncols
    ).resolve_scale(y="independent")
    what = f"Change against {base}" if change else ", ".join(metrics)
    return _finish(chart, p, title or f"{what} as the {x_title or x} varies", notes,
                   legend=st["order"])

