"""A metric against a knob: lines with intervals, one panel per metric."""

from __future__ import annotations

import math
import re

import altair as alt
import numpy as np
import pandas as pd

from fitgpp.figures.plots.axes import (_log_scale, _ticks_fit, coincident, linear_domain,
                                       quantity_range)
from fitgpp.figures.plots.base import Preset, PlotError, _finish, _panel, preset
from fitgpp.figures import names
from fitgpp.figures.plots.layout import fit_page
from fitgpp.figures.plots.style import _styles


# ------------------------------------------------------------------ a metric against a knob

def metric_lines(df: pd.DataFrame, *, x: str, series: str = "policy", log_y: bool = False,
                 x_title: str | None = None, y_title: str = "", series_title: str | None = None,
                 title: str | None = None, log_x: bool | None = None, percent: bool = False,
                 share=False, size: str | Preset | None = None, notes=()) -> alt.Chart:
    """Lines of ``value`` against ``x``, one per ``series``, one panel per ``metric``,
    with ``lo``/``hi`` whiskers when present (long format: x, series, metric, value[, lo, hi,
    lowest]; ``lowest``, the least value a row's quantity can take, cuts its whisker there
    and starts its axis there at the lowest: without it, the range of the quantity the
    metric names, :func:`fitgpp.figures.plots.axes.quantity_range`; ``-inf``: none).

    ``log_x``: None puts x on a log axis when its values are positive and span a factor
    of 8 or more (s, grace scale). Series are drawn side by side (dodged a little along
    x) so their whiskers do not hide each other; tooltips give the true x. Each panel has
    its own y axis, titled with its metric (``y_title`` overrides), and tick labels with
    as many decimals as its range needs.
    ``percent``: the values are fractions (changes, see :mod:`fitgpp.analysis.metrics`), shown in
    percent. ``share``: the values are fractions of a whole (not changes), shown in
    unsigned percent (True: every panel; a collection of metrics: those panels). A change
    (``percent``, or a metric named ``... vs BASELINE (%)``) has its whiskers stop at -100 %
    (nothing falls by more than all of it), said in the subtitle; otherwise each axis
    includes the whole of every interval. The panels are laid out to pass the rules of the
    page at the printed width (:func:`fitgpp.figures.plots.layout.fit_page`). ``notes``:
    sentences of the caller's, said first in the subtitle."""
    need = {x, series, "metric", "value"}
    if not need <= set(df.columns):
        raise PlotError(f"metric_lines needs columns {sorted(need)}, got {list(df.columns)}")
    p = preset(size)
    shares = set(df["metric"]) if share is True else set(share or ())
    prep = _prepare(df, x, series, percent, shares, series_title)
    prep["notes"] = [*notes, *prep["notes"]]
    return fit_page(lambda lay: _draw(prep, lay, p, x=x, x_title=x_title or x, y_title=y_title,
                                      title=title, log_x=log_x, log_y=log_y, percent=percent),
                    _layouts(p, len(prep["panels"])), p)


def _prepare(df, x: str, series: str, percent: bool, shares: set, series_title) -> dict:
    """The long table split into panels: ``d`` (zero series left out; ``floor``: the least
    value each row's quantity takes), the panels drawn, the constant ones and the zero series
    said in notes, whether these are changes, the panels of shares."""
    st = _styles(df[series].astype(str))
    d = df.assign(**{series: df[series].astype(str)})
    metrics = list(dict.fromkeys(d["metric"]))
    change = (percent and not shares) or all(re.search(r" vs .+\(%\)$", m) for m in metrics)
    vs = re.search(r" vs (.+?)( \(%\))?$", metrics[0])
    d["panel"] = [re.sub(r" vs .+$", "", m) if change else m for m in d["metric"]]
    d["floor"] = _floors(d, change)
    panels = list(dict.fromkeys(d["panel"]))
    whole = d
    d, zero = _zero_series(d, series)
    flat = _constant_panels(whole, panels)
    only_flat = len(flat) == len(panels)
    if only_flat:      # nothing but constants: their points, no lines along the axis, said so
        d, zero, flat = whole, {}, {}
    s_title = series_title or names.title(series)
    notes = [_flat_note(flat, f"every {s_title}", percent or bool(shares), change)] if flat else []
    notes += [f"0 throughout for every {s_title} in every panel (points only)."] if only_flat \
        else []
    return dict(d=d, st=st, series=series, s_title=s_title, change=change, zero=zero,
                base=vs.group(1) if change and vs else "the baseline", notes=notes,
                panels=[n for n in panels if n not in flat], lines=not only_flat,
                shares={re.sub(r" vs .+$", "", m) if change else m for m in shares})


def _floors(d: pd.DataFrame, change: bool) -> np.ndarray:
    """The least value each row's quantity can take: its ``lowest`` (``-inf``: none), else
    -100 % for a change, else the range of the quantity its metric names
    (:func:`fitgpp.figures.plots.axes.quantity_range`)."""
    own = d["lowest"].to_numpy(float) if "lowest" in d else np.full(len(d), np.nan)
    named = {m: quantity_range(m)[0] for m in dict.fromkeys(d["metric"])}
    fallback = np.array([-1.0 if change else named[m] for m in d["metric"]])
    return np.where(np.isnan(own), fallback, own)


def _draw(prep, lay: dict, p: Preset, *, x, x_title, y_title, title, log_x, log_y, percent):
    """The figure of :func:`_prepare`'s panels in layout ``lay`` (:func:`_layouts`)."""
    series, st, panels, change = prep["series"], prep["st"], prep["panels"], prep["change"]
    # side by side at column width, a long x title goes on two lines (it set the width)
    xt = _fold(x_title, lay["width"], p) if lay["ncols"] > 1 and p.name == "column" else x_title
    xe, d = _x_encoding(prep["d"], x, series, st, log_x, lay["width"], p, xt)
    d, notes = _intervals(d)
    charts, said = [], {}
    for i, name in enumerate(panels):
        g = d[d["panel"] == name]
        # a y title of its own: the panel's name above it (a third line beside the axis
        # took the width of rq6_net's panels)
        heading = bool(y_title) and len(panels) > 1
        yt = _fold(y_title or ([name, f"change vs {prep['base']}" + ("" if percent else " (%)")]
                           if change else name), lay["height"], p)
        for n_ in coincident(g, series, [x, "value"] + [c for c in ("lo_c", "hi_c") if c in g]) \
                + ([f"{', '.join(prep['zero'][name])}: 0 throughout (not drawn)."]
                   if name in prep["zero"] else []):
            said.setdefault(n_, []).append(name)
        shown = i + lay["ncols"] >= len(panels)      # x labels under each column's last panel
        # its size and heading given as the layer is made: each properties() of a layered
        # chart deep-copies every layer (issue 26); the dict is the same
        props = dict(width=lay["width"], height=lay["height"])
        if heading:
            props["title"] = alt.Title(name, fontSize=p.title_font, anchor="start", offset=1)
        fmt = _percent_format(g, percent, name in prep["shares"])
        charts.append(_panel_chart(g, xe(shown), yt, fmt, series,
                                   prep["s_title"], st, log_y, p, x, x_title,
                                   lines=prep["lines"], height=lay["height"], props=props))
    from fitgpp.figures.plots.page import MAX_SUBTITLE
    merged = _merged_notes(said, panels)
    if len(" ".join(notes + prep["notes"] + merged)) > MAX_SUBTITLE:
        # too much for one paragraph: what holds in some panels goes above them
        merged = [n for n, where in said.items() if len(where) == len(panels)]
        for i, name in enumerate(panels):
            own = [n for n, where in said.items() if name in where and n not in merged]
            if own:
                charts[i] = charts[i].properties(title=_panel_note(
                    ([f"{name}:"] if heading else []) + own, lay["width"], p))
    notes += prep["notes"] + merged + _zoom_notes(d, panels, log_y)
    what = f"Change against {prep['base']}" if change else ", ".join(panels)
    chart = alt.concat(*charts, columns=lay["ncols"], spacing=lay["spacing"])
    # one paragraph: a note per line left most lines half empty at column width
    return _finish(chart, p, title or f"{what} as the {x_title} varies", [" ".join(notes)],
                   legend=st["order"], own=True)


def _fold(title, height: int, p: Preset) -> list[str]:
    """A y title in lines no longer than its panel is high (0.58 em a character): a longer
    vertical title stretched each stacked panel past its height."""
    import textwrap
    lines = [title] if isinstance(title, str) else list(title)
    most = max(10, int(height / (0.58 * p.title_font)))
    return [w for ln in lines
            for w in (textwrap.wrap(ln, most, break_long_words=False) or [ln])]


def _layouts(p: Preset, n: int) -> list[dict]:
    """Candidate layouts of ``n`` panels at preset ``p``, best first, for
    :func:`fitgpp.figures.plots.layout.fit_page`: up to three side by side at full width; at
    column width stacked, then two side by side (RQ6's five stacked panels printed 12.25 in
    tall on a 3.3 in column). ``height``: the panels' height preferred (pt), ``least`` the
    lowest that still reads (ticks about every 20 pt), ``rows``: rows of panels."""
    if p.name == "full":
        ncols = min(n, 3)
        if n == 4:   # three to a row would leave two thirds of the second row empty
            ncols = 2
        return [dict(ncols=ncols, width=_panel(p, ncols, axis_px=60), height=140, least=60,
                     most=200, spacing=16, rows=math.ceil(n / ncols))]
    one = dict(ncols=1, width=_panel(p, 1, axis_px=52), spacing=6, rows=n)
    two = dict(ncols=2, width=_panel(p, 2, axis_px=52, gap=8), spacing=8, rows=math.ceil(n / 2))
    if n <= 2:
        return [{**one, "height": (100, 80)[n - 1], "least": 36, "most": 160}]
    return [{**one, "height": 64, "least": 32, "most": 100},
            {**two, "height": 80, "least": 40, "most": 120}]


def _constant_panels(d, panels) -> dict:
    """``{panel: value}`` of the panels whose every value (and interval bound) is one and
    the same number: flat lines with a single tick say nothing a sentence cannot (RQ6's TE
    p95 slowdown, 1 for every policy and overhead)."""
    cols = [c for c in ("value", "lo", "hi") if c in d]
    out = {}
    for name in panels:
        v = d.loc[d["panel"] == name, cols].to_numpy(float).ravel()
        v = v[np.isfinite(v)]
        if len(v) and np.ptp(v) == 0:
            out[name] = float(v[0])
    return out


def _flat_note(flat: dict, every: str, fraction: bool, change: bool) -> str:
    """"BE median: 0 throughout for every policy (not drawn)." for the panels left out
    (several: "TE p95: -73 %, BE median: 0, throughout for ...")."""
    def fmt(v):
        sign = "+" if change else ""
        return "0" if v == 0 else (f"{v * 100:{sign}.3g} %" if fraction else f"{v:{sign}.3g}")
    said = ", ".join(f"{name}: {fmt(v)}" for name, v in flat.items())
    return f"{said}{',' if len(flat) > 1 else ''} throughout (not drawn)."


def _merged_notes(said: dict, panels) -> list[str]:
    """Each panel's notes (series that coincide or are left out there) once, in the
    subtitle: as they are when they hold in every panel; else series that coincide "in
    some panels" (the reader sees where), other notes after the panels' names."""
    out, hides = [], " (one line hides the other)"
    for note, where in said.items():
        if hides in note and any(hides in n for n in out):
            note = note.replace(hides, "")       # said once is enough
        if len(where) == len(panels) or len(panels) == 1:
            out.append(note)
        elif " coincide" in note:     # the reader sees where: no panel named
            out.append(note.replace(hides, "").replace(" coincide", " coincide in some panels", 1))
        else:
            n = len(where)
            out.append(note.replace(" (not drawn)", f" in {n} panel{'s' * (n != 1)} (not drawn)"))
    return out


def _zoom_notes(d, panels, log_y: bool) -> list[str]:
    """The mark of :func:`fitgpp.figures.print_rules.narrow_axis` for each panel whose points differ by
    less than :data:`fitgpp.figures.print_rules.NARROW` of their size with no interval drawn."""
    from fitgpp.figures.plots.page import NARROW, zoom_note
    if log_y:
        return []
    out = []
    for name in panels:
        g = d[d["panel"] == name]
        v = g["value"].to_numpy(float)
        v = v[np.isfinite(v)]
        has = "lo_c" in g and np.isfinite(g["lo_c"].to_numpy(float)).any()
        if len(np.unique(v)) < 2 or has or not np.max(np.abs(v)):
            continue
        spread = float(np.ptp(v) / np.max(np.abs(v)))
        if spread < NARROW:
            out.append((f"{name}: " if len(panels) > 1 else "") + zoom_note(spread))
    return out


def _x_encoding(d, x, series, st, log_x, width, p: Preset, x_title: str):
    """``shown -> alt.X``, the shared x encoding (titled only where ``shown``), and ``d``
    with ``x_plot``: the series dodged around the true x so that their points and whiskers
    do not hide each other (more series, a wider dodge, up to a third of the narrowest gap
    between two x values)."""
    xv = d[x].to_numpy(float)
    if log_x is None:
        log_x = bool((xv > 0).all() and xv.max() / xv.min() >= 8)
    k, n = st["order"].index, len(st["order"])
    f = np.log10 if log_x else (lambda v: v)
    u = np.unique(f(xv))
    span = float(u.max() - u.min()) or 1.0
    gap = float(np.diff(u).min()) / span if len(u) > 1 else 1.0
    dodge = min(max(0.06, 0.035 * n), gap / 3)
    off = np.array([(k(v) - (n - 1) / 2) for v in d[series]]) * (dodge / max(n - 1, 1))
    axis = {}
    if log_x:
        d = d.assign(x_plot=xv * 10 ** (off * span))
        xs = _log_scale(np.concatenate([xv, d["x_plot"]]), width, p, pad=1.15, title=x_title)
        dom = xs["scale"].domain
        if _ticks_fit(sorted(set(xv)), *dom, width, p.font):   # tick at every value drawn
            axis = dict(values=sorted(set(xv)), format="~g", labelOverlap="greedy")
        else:
            axis = xs["axis"].to_dict()
        xs = dict(scale=xs["scale"])
    else:
        d = d.assign(x_plot=xv + off * span)
        xs = dict(scale=alt.Scale(zero=False, nice=False, padding=8))
        values = sorted(set(xv))
        fmt = ",d" if all(float(v).is_integer() for v in values) else None
        if _linear_ticks_fit(values, d["x_plot"].min(), d["x_plot"].max(), width, p.font, fmt):
            # a tick at every value run: Vega's own ticks, on a domain that does not start
            # at a round number, can put "500" against "1,000" (seen on a 90 pt panel)
            axis = dict(values=values, labelOverlap="greedy", **({"format": fmt} if fmt else {}))
    axis.pop("title", None)

    def encoding(shown: bool = True):
        return alt.X("x_plot:Q", **xs, axis=alt.Axis(**axis, title=x_title if shown else None,
                                                    labels=shown))
    return encoding, d


def _linear_ticks_fit(values, lo: float, hi: float, px: float, font: float, fmt) -> bool:
    """Whether 2 to 8 labels at ``values`` (d3 format ``fmt``) on a linear axis from ``lo``
    to ``hi`` drawn ``px`` long keep 6 px apart (:func:`fitgpp.figures.plots.text.label_clash`)."""
    from fitgpp.figures.plots.text import label_clash
    return (2 <= len(values) <= 8 and hi > lo
            and label_clash(values, lo, hi, px, font, fmt=fmt, gap=6, log=False) is None)


def _intervals(d):
    """``d`` with ``lo_c``/``hi_c`` (the interval as drawn: stopped at the least value the
    row's quantity can take, its ``floor``: 1 for a slowdown, -100 % for a change) and the
    subtitle sentence that says what the whiskers are."""
    if not ({"lo", "hi"} <= set(d.columns) and d[["lo", "hi"]].notna().any().any()):
        return d, []
    lo_c = np.maximum(d["lo"], d["floor"])
    cuts = lo_c > d["lo"]
    where = ("at -100 %" if (d.loc[cuts, "floor"] == -1.0).all() else
             "at the least value the quantity can take")
    from fitgpp.analysis.metrics import interval_level   # (at the level they were made at)
    note = f"Vertical lines: {100 * interval_level():.4g} % intervals" + (
        f", cut {where} (marked with a bar)" if cuts.any() else "") + "."
    return d.assign(lo_c=lo_c, hi_c=d["hi"], cut=np.where(cuts, lo_c, np.nan)), [note]


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
    """A panel's own notes above it, wrapped to its width, in the label font."""
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
                 lines: bool = True, height: int = 140, props=None):
    """One panel: lines (unless ``lines`` is False), points, interval whiskers (and a bar
    where one is cut); ``props``: its properties (width, height, title). Encodings are
    channel objects, not shorthand strings: altair resolves a string's channel class
    through its schema on each use (a fifth of building RQ6's figures, issue 26)."""
    vals = g[["value"] + [c for c in ("lo_c", "hi_c") if c in g]].to_numpy(float).ravel()
    floor = float(g["floor"].min()) if "floor" in g and len(g) else -math.inf
    if log_y:
        ye = alt.Y("value:Q", **_log_scale(vals, height, p, vertical=True, title=y_title,
                                           lowest=floor if floor > 0 else None))
    else:   # about a tick per 20 pt: a 56 pt panel got one tick from Vega's default
        ticks = dict(tickCount=max(3, height // 20))
        # the domain computed, never below the least value the quantity can take (RQ6's
        # slowdowns drew from 0, a user's preemptions below 0): every mark lies inside it
        dom = linear_domain(vals, (floor, math.inf), count=max(3, height // 20))
        ye = alt.Y("value:Q", title=y_title,
                   scale=alt.Scale(domain=dom, zero=False, nice=False, padding=0),
                   axis=alt.Axis(format=fmt, **ticks) if fmt else alt.Axis(**ticks))
    clip = False           # every value and whisker lies inside the domain: none is cut
    g = g.drop(columns=[c for c in ("floor", "lowest") if c in g])   # (-inf: not JSON)
    enc = dict(color=alt.Color(f"{series}:N", scale=st["color"], sort=st["order"], title=s_title))
    tip = [alt.Tooltip(series), alt.Tooltip(f"{x}:Q", title=x_title), alt.Tooltip("metric"),
           alt.Tooltip("value:Q", format=fmt.replace("~", "") if fmt else ".3g")]
    line = alt.Chart().mark_line(clip=clip).encode(
        x=xe, y=ye, strokeDash=alt.StrokeDash(f"{series}:N", scale=st["dash"], sort=st["order"],
                                              title=s_title), **enc)
    pts = alt.Chart().mark_point(filled=True, size=40, clip=clip).encode(
        x=xe, y=ye, shape=alt.Shape(f"{series}:N", scale=st["shape"], sort=st["order"],
                                    title=s_title), tooltip=tip, **enc)
    layers = [line, pts] if lines else [pts]
    if "lo_c" in g:
        layers.append(alt.Chart().mark_rule(clip=clip, opacity=0.7, strokeWidth=1.2).encode(
            x=xe, y=alt.Y("lo_c:Q"), y2=alt.Y2("hi_c:Q"), **enc))
        if g["cut"].notna().any():
            layers.append(alt.Chart(g[g["cut"].notna()]).mark_tick(
                thickness=2, size=8, orient="horizontal", clip=clip).encode(
                    x=xe, y=alt.Y("cut:Q"), **enc))
    return alt.layer(*layers, data=g, **(props or {}))
