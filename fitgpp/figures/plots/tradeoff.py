"""The threshold s: TE latency against BE slowdown."""

from __future__ import annotations

import math
import re

import altair as alt
import numpy as np
import pandas as pd

from fitgpp.figures.plots.axes import (_log_domain, _log_scale, coincident, joined,
                                       quantity_range)
from fitgpp.figures.plots.layout import fit_page
from fitgpp.figures.plots.base import POLICY_STYLE, Preset, PlotError, _finish, _panel, preset
from fitgpp.figures.plots.style import _as_runs, _family, _styles


# ------------------------------------------------------------------ the s trade-off
def tradeoff_table(runs) -> pd.DataFrame:
    """One row per run: ``policy, family, s, te_p95, be_median, be_p95`` (from :func:`fitgpp.summarize`)."""
    from fitgpp.analysis.metrics import summarize
    rows = []
    for lb, ds in _as_runs(runs).items():
        t = summarize(ds)
        rows.append({"policy": lb, "family": _family(lb),
                     "s": float(ds.attrs["s"]) if "s" in ds.attrs else np.nan,
                     "te_p95": t.loc["TE", "slowdown_p95"], "be_median": t.loc["BE", "slowdown_median"],
                     "be_p95": t.loc["BE", "slowdown_p95"]})
    return pd.DataFrame(rows)


#: Where an s label may go around its point, in order of preference: (dx, dy) in px from
#: the point; dx > 0 starts the label there, dx < 0 ends it there, dx == 0 centres it.
_LABEL_OFFSETS = {"ne": (5, -8), "se": (5, 9), "nw": (-5, -8), "sw": (-5, 9),
                  "e": (8, 1), "w": (-8, 1), "n": (0, -11), "s": (0, 12), "n2": (0, -21)}


def _corner(x, y, w, h, labels, markers, width, height) -> tuple[str, tuple] | None:
    """Where a ``w`` x ``h`` label of the point ``(x, y)`` goes: of the places of
    :data:`_LABEL_OFFSETS` that stay inside the panel, overlap none of ``labels`` and are
    nearer ``(x, y)`` than the centre of any of ``markers`` (boxes of the other points: a
    label beside another point names the wrong one), the first that overlaps the fewest
    markers; with its box. None: no such place."""
    def hits(box, boxes):
        return sum(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3]
                   for b in boxes)

    def dist(box, a, b):
        return math.hypot(max(box[0] - a, 0, a - box[2]), max(box[1] - b, 0, b - box[3]))
    centres = [((m[0] + m[2]) / 2, (m[1] + m[3]) / 2) for m in markers]
    best = None
    for pos, (dx, dy) in _LABEL_OFFSETS.items():
        x0 = x + dx if dx > 0 else x - w / 2 if dx == 0 else x + dx - w
        box = (x0, y + dy - h / 2, x0 + w, y + dy + h / 2)
        inside = box[0] >= 0 and box[2] <= width and box[1] >= 0 and box[3] <= height
        own = dist(box, x, y)
        if inside and not hits(box, labels) and all(own < dist(box, a, b) for a, b in centres):
            n = hits(box, markers)
            if best is None or n < best[0]:
                best = (n, pos, box)
            if n == 0:
                break
    return None if best is None else (best[1], best[2])


def _place_labels(df, xcol, ycol, label, panel, x_domain, width, height, font, *,
                  y_pad: float = 0, y_domains: dict | None = None) -> list[str]:
    """Where each non-empty ``label`` goes (a key of :data:`_LABEL_OFFSETS`, or "" when no
    place is free): the place around its point that stays inside the panel, overlaps no
    placed label and the fewest other points of its panel (none when it can; its white halo
    keeps it legible over one it must cross), the longest labels placed first. Pixels are
    estimated from a log x domain and each panel's y domain (``y_domains``, by panel), else
    its y range drawn ``y_pad`` px inside the top and bottom."""
    lo, hi = x_domain
    out = [""] * len(df)
    for key, g in df.groupby(panel, sort=False):
        y = g[ycol].to_numpy(float)
        if y_domains and key in y_domains:
            y0, y1 = y_domains[key]
            py = height * (1 - (y - y0) / ((y1 - y0) or 1.0))
        else:
            y0, y1 = g[ycol].min(), g[ycol].max()
            py = y_pad + (height - 2 * y_pad) * (1 - (y - y0) / ((y1 - y0) or 1.0))
        px = width * np.log(g[xcol].to_numpy(float) / lo) / math.log(hi / lo)
        markers = [(a - 5, b - 5, a + 5, b + 5) for a, b in zip(px, py)]
        labels: list[tuple] = []
        # the longest labels first: they have the fewest places that fit
        for i in sorted(range(len(g)), key=lambda j: -len(g[label].iat[j])):
            idx, text = g.index[i], g[label].iat[i]
            if not text:
                continue
            own = markers[i]    # points on one spot count once; the label's own not at all
            others = list(dict.fromkeys(tuple(round(v, 1) for v in m) for m in markers
                                        if m != own))
            got = _corner(px[i], py[i], 0.6 * font * len(text), font + 1, labels, others,
                          width, height)
            if got:
                labels.append(got[1])
                out[df.index.get_loc(idx)] = got[0]
    return out


#: A policy whose TE p95 lies this factor beyond FitGpp's range is drawn at the axis edge.
OFF_SCALE = 8.0


def _off_scale(long: pd.DataFrame) -> pd.Series:
    """Rows (not FitGpp) drawn on the axis edge, so FitGpp's points are not squeezed
    together: those whose TE p95 lies more than :data:`OFF_SCALE` times beyond the range of
    FitGpp's, and those far enough to squeeze the rest into a sliver of the axis as the
    figure check's ``off-scale`` rule reads it (FIFO at 7.8 times FitGpp's largest TE p95
    left FitGpp and the others 8 % of it)."""
    fit = long.loc[long["family"] == "FitGpp", "te_p95"]
    fit = fit[np.isfinite(fit) & (fit > 0)]
    if fit.empty:
        return pd.Series(False, index=long.index)
    off = (long["family"] != "FitGpp") & ((long["te_p95"] > fit.max() * OFF_SCALE)
                                          | (long["te_p95"] < fit.min() / OFF_SCALE))
    for _ in range(3):
        far = _squeezing(long.loc[~off, "te_p95"])
        hit = (long["family"] != "FitGpp") & long["te_p95"].isin(far)
        if not len(far) or not (hit & ~off).any():
            break
        off |= hit
    return off


def _squeezing(te_p95: pd.Series) -> list[float]:
    """The values of ``te_p95`` that, on a log axis around them all, leave the others a
    sliver (under 15 %) beyond a wide gap (over half the axis); none when they do not."""
    v = np.unique(te_p95[np.isfinite(te_p95) & (te_p95 > 0)].to_numpy(float))
    if len(v) < 4:
        return []
    lo, hi = _log_domain(v, 1.25)
    pos = (np.log(v) - math.log(lo)) / (math.log(hi / lo) or 1.0)
    i = int(np.argmax(np.diff(pos)))
    left, right = v[:i + 1], v[i + 1:]
    crowd, far = (left, right) if len(left) >= len(right) else (right, left)
    spread = np.ptp(pos[:i + 1] if crowd is left else pos[i + 1:])
    squeezed = (np.diff(pos)[i] > 0.5 and len(crowd) >= 3
                and len(far) <= max(1, len(crowd) // 3) and spread < 0.15)
    return list(far) if squeezed else []


#: Plotting height (pt) of one panel: two side by side at 7 in; stacked, and shorter, at
#: 3.3 in, so the column figure is not much taller than it is wide.
PANEL_HEIGHT = {"full": 150, "column": 72}
#: Pixels kept free above and below the points of a panel (no marker cut by the axis).
Y_PAD = 8
#: Points (pt) between a panel and its axes.
AXIS_OFFSET = 4


def _long_table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per run and BE metric (``metric``, ``be``), FitGpp's last, with the legend
    entry (``point``) and, on FitGpp rows, the ``s`` label; settings of s that land on the same point share
    one label ("s=4, 16") on the first of them."""
    long = table.melt(id_vars=["policy", "family", "s", "te_p95"], value_vars=["be_median", "be_p95"],
                      var_name="metric", value_name="be")
    long["metric"] = long["metric"].map({"be_median": "BE median slowdown",
                                         "be_p95": "BE p95 slowdown"})
    fit = long["family"] == "FitGpp"
    long["point"] = np.where(fit, "FitGpp", long["policy"])
    # FitGpp's rows last: Vega draws a mark's points in row order, so FitGpp's (the swept,
    # clickable ones) sit on top of a policy that lands on the same spot
    long = (long.assign(top=long["family"] == "FitGpp")
            .sort_values(["metric", "top", "family", "s"], ignore_index=True).drop(columns="top"))
    fit = long["family"] == "FitGpp"
    spot = long.loc[fit].groupby(["metric", "te_p95", "be"], sort=False)["s"]
    joined = spot.transform(lambda v: "s=" + ", ".join(f"{x:g}" for x in v))
    first = ~long.loc[fit].duplicated(["metric", "te_p95", "be"])
    long["s_label"] = ""
    long.loc[fit, "s_label"] = np.where(first, joined, "")
    return long


def _label_layers(x, y, used) -> list[alt.Chart]:
    """The s labels: one text layer per place of :data:`_LABEL_OFFSETS` in ``used`` (where
    some label sits), each over a white halo. Every layer keeps all rows and writes "" where
    the label sits elsewhere: a layer filtered to no rows makes vega warn "Infinite extent for
    field be" per redraw. The text is a calculated field, not ``alt.condition``: Altair checks
    a condition's dict against the schema when it builds the channel, and layering copies every
    layer, which made 18 layers (9 places, 2 halos) cost 3.5 of a warm RQ2 panel's 9 CPU-s."""
    layers = []
    for pos, (dx, dy) in _LABEL_OFFSETS.items():
        if pos not in used:
            continue
        for halo in (True, False):
            layers.append(alt.Chart().transform_calculate(
                s_text=f"datum.lab === '{pos}' ? datum.s_label : ''").mark_text(
                dx=dx, dy=dy, align="left" if dx > 0 else "center" if dx == 0 else "right",
                clip=True,
                **({"stroke": "white", "strokeWidth": 3} if halo else {})).encode(
                x=x, y=y, text=alt.Text("s_text:N")))
    return layers


def s_tradeoff(table: pd.DataFrame, *, size: str | Preset | None = None,
               title: str = "The threshold s trades TE latency against BE slowdown",
               notes=()) -> alt.Chart:
    """TE p95 slowdown (x) against BE median and p95 slowdown (y, two panels: side by side
    at 7 in, stacked at 3.3 in).

    FitGpp rows (``family == 'FitGpp'``, one per ``s``) form a line, each point labelled
    with its s; other rows (LRTP, RAND, ...) are single marked points. A policy far off
    FitGpp's range (FIFO, whose TE p95 can be 100 times FitGpp's) sits on the axis edge,
    and the subtitle gives its value. ``notes``: more subtitle sentences.
    """
    need = {"policy", "family", "s", "te_p95", "be_median", "be_p95"}
    if not need <= set(table.columns):
        raise PlotError(f"s_tradeoff needs columns {sorted(need)}, got {list(table.columns)}")
    p = preset(size)
    long = _long_table(table)
    st = _styles(long["point"])
    ncols = 2 if p.name == "full" else 1
    width = _panel(p, ncols)
    # a slowdown's axes start at 1 at the lowest (the quantity's range, axes.quantity_range)
    least = quantity_range("te_p95")[0]
    xs = _log_scale(long.loc[~_off_scale(long), "te_p95"], width, p, pad=1.25,
                    title="TE p95 slowdown (log scale)", lowest=least)
    lo, hi = xs["scale"].domain
    # off the scale: what lies outside the axis as drawn, and only that (a point at 9.13 on
    # an axis to 10 is drawn where it is, not said to be at the edge)
    off = (long["te_p95"] < lo * (1 - 1e-9)) | (long["te_p95"] > hi * (1 + 1e-9))
    long["x_plot"] = long["te_p95"].clip(lower=lo, upper=hi)
    gone = long.loc[off, ["policy", "te_p95"]].drop_duplicates("policy")
    edge = ([f"{joined(gone['policy'])} off the scale (TE p95 "
             f"{', '.join(f'{v:.3g}' for v in gone['te_p95'])}), drawn at the edge."]
            if len(gone) else [])
    head = [*coincident(long, "point", ["x_plot", "be"], ["metric"]), *edge, *notes,
            *_zoom_notes(long)]

    def draw(lay):
        return _draw(long.copy(), st, xs, p, ncols, width, lay["height"], title, head)
    # as high as the page allows, down to panels that still read (RQ7a's trade-off printed
    # 3.3 x 5.4 in with its notes)
    lay = dict(height=PANEL_HEIGHT.get(p.name, 120), rows=2 // ncols,
               least=48 if ncols == 1 else 90, most=PANEL_HEIGHT.get(p.name, 120))
    if ncols == 2:     # side by side on a page it fits: not measured (the live view's width)
        return draw(lay)
    return fit_page(draw, [lay], p)


def _draw(long, st, xs, p: Preset, ncols: int, width: int, height: int, title: str,
          notes: list[str]):
    """:func:`s_tradeoff`'s figure with panels ``height`` pt high (its labels placed there)."""
    # the axes a few points off the plot: a point at slowdown 1, where both axes start, is
    # drawn beside the axis line, not on it
    x = alt.X("x_plot:Q", scale=xs["scale"],
              axis=alt.Axis(**{**xs["axis"].to_dict(), "offset": AXIS_OFFSET}))
    doms = _be_domains(long, height)
    y = alt.Y("be:Q", scale=alt.Scale(zero=False, nice=False, padding=0),
              axis=alt.Axis(tickCount=4 if ncols == 1 else alt.Undefined, offset=AXIS_OFFSET),
              title="BE slowdown")
    long["lab"] = _place_labels(long, "x_plot", "be", "s_label", "metric",
                                xs["scale"].domain, width, height, p.font, y_domains=doms)
    line = alt.Chart().mark_line(color=POLICY_STYLE["FitGpp"][0], clip=False).encode(
        x=x, y=y, order="s:Q").transform_filter(alt.datum.family == "FitGpp")
    # the legend under the x axis title, its title to its left; in a column, above it when
    # its labels are long (beside them, RQ7's "LAS threshold=14000" widened the figure)
    longest = max((len(str(v)) for v in st["order"]), default=0)
    # as many columns as fit beside the title (the columns _finish gives assume it above:
    # RQ5's five policies in four columns drew the figure 3.32 in wide)
    beside = int((p.width - 0.6 * p.title_font * 6 - 12) // (0.6 * p.font * longest + 34))
    legend = (alt.Legend(titleOrient="left", offset=8, columns=max(1, beside))
              if ncols == 2 or longest <= 12 else alt.Legend(offset=8))
    pts = alt.Chart().mark_point(filled=True, size=55 if ncols == 2 else 40, stroke="black",
                                 strokeWidth=0.5, clip=False).encode(
        x=x, y=y, color=alt.Color("point:N", scale=st["color"], sort=st["order"],
                                  title="policy", legend=legend),
        shape=alt.Shape("point:N", scale=st["shape"], sort=st["order"], title="policy",
                        legend=legend),
        tooltip=["policy", "metric", alt.Tooltip("te_p95:Q", format=".3g"),
                 alt.Tooltip("be:Q", format=".3g")])
    # side by side: a column facet, whose headers share one line whatever each y axis's
    # top label; stacked: a wrapped facet, each heading just above its panel
    by = (dict(column=alt.Column("metric:N", title=None)) if ncols == 2 else
          dict(facet=alt.Facet("metric:N", title=None, header=alt.Header(labelPadding=2)),
               columns=1, spacing=8))
    # the labels over the points (placed to cover as few as they can): drawn under them,
    # a click on a FitGpp point in the browser found no point free (notebook 03, P = 1).
    # Each panel's y axis from its own points, widened by Y_PAD pt each way but never below
    # 1: an invisible rule at the two ends of each panel's domain (a facet shares one scale
    # declaration; its data sets each panel's domain); those rows have no x, so no other
    # layer draws them
    ends = pd.DataFrame([{"metric": m, "be": v, "end": True} for m, d in doms.items()
                         for v in d])
    edges = alt.Chart().mark_rule(opacity=0).encode(y=alt.Y("be:Q")).transform_filter(
        "datum.end")
    data = pd.concat([long.assign(end=False), ends], ignore_index=True)
    chart = alt.layer(line, pts, *_label_layers(x, y, set(long["lab"])), edges,
                      data=data).properties(width=width, height=height).facet(
        **by).resolve_scale(y="independent")
    return _finish(chart, p, title, _budget(notes, long), legend=st["order"])


def _budget(notes: list[str], long: pd.DataFrame) -> list[str]:
    """The subtitle's notes (the series that coincide, those off the scale, the caller's,
    zoomed axes) and what the labels could not say, within
    :data:`fitgpp.figures.plots.page.MAX_SUBTITLE` characters where it can: the s labels
    left off said in fewer words, then "(one line hides the other)" left out."""
    from fitgpp.figures.plots.page import MAX_SUBTITLE
    left = long[(long["s_label"] != "") & (long["lab"] == "")]
    more = [f"{'; '.join(dict.fromkeys(left['s_label']))}: no room for the label beside its "
            "point (see the table)."] if len(left) else []
    if long["s_label"].str.contains(",").any():
        more.append("Settings of s on one label give the same result.")
    out = [*notes, *more]
    if len(" ".join(out)) > MAX_SUBTITLE and len(left):
        more[0] = "Some s labels left off for room (see the table)."
        out = [*notes, *more]
    if len(" ".join(out)) > MAX_SUBTITLE:
        out = [n.replace(" (one line hides the other)", "") for n in out]
    if len(" ".join(out)) > MAX_SUBTITLE:    # "zoomed in" stays: the figure check reads it
        out = [re.sub(r"Axis zoomed in: points differ by at most (\S+), no interval drawn\.",
                      r"axis zoomed in (within \1).", n) for n in out]
    if len(" ".join(out)) > MAX_SUBTITLE:    # what a label of several s means goes
        out = [n for n in out if not n.startswith("Settings of s on one label")]
    if len(" ".join(out)) > MAX_SUBTITLE:    # the series that coincide in a panel in one note
        out = _coinciding_by_panel(out)
    return out


def _coinciding_by_panel(notes: list[str]) -> list[str]:
    """Notes "A and B coincide in P." gathered per panel P: "Coincide in P: A and B; C and D."
    (each series still named: the figure check looks for them)."""
    by: dict[str, list[str]] = {}
    out: list[str] = []
    for n in notes:
        m = re.fullmatch(r"(.+) coincide in (.+?)\.", n)
        if m:
            if m.group(2) not in by:
                out.append(m.group(2))          # its place, filled in below
            by.setdefault(m.group(2), []).append(m.group(1))
        else:
            out.append(n)
    return [f"Coincide in {n}: {'; '.join(by[n])}." if n in by else n for n in out]


def _be_domains(long: pd.DataFrame, height: float) -> dict:
    """``{metric: (lo, hi)}``: each BE panel's y domain, its points' range widened so that
    they sit :data:`Y_PAD` pt inside the panel, never below the least BE slowdown (1)."""
    least = quantity_range("be_p95")[0]
    out = {}
    for metric, g in long.groupby("metric", sort=False):
        v = g["be"].to_numpy(float)
        v = v[np.isfinite(v)]
        if not len(v):
            continue
        lo, hi = float(v.min()), float(v.max())
        span = hi - lo
        # one value throughout (every BE median 1): a band of 5 % around it, not 1e-3
        pad = span * Y_PAD / max(height - 2 * Y_PAD, 1.0) if span else abs(hi) * 0.05 or 1.0
        out[metric] = (max(lo - pad, min(least, lo)), hi + pad)
    return out


def _zoom_notes(long: pd.DataFrame) -> list[str]:
    """The mark the figure check asks of a BE axis zoomed in on points that differ by less
    than :data:`fitgpp.figures.plots.page.NARROW` (no intervals are drawn here): one per
    panel that needs it."""
    from fitgpp.figures.plots.page import NARROW, zoom_note
    out = []
    for metric, g in long.groupby("metric", sort=False):
        v = g["be"].to_numpy(float)
        v = v[np.isfinite(v)]
        if len(np.unique(v)) < 2 or not np.max(np.abs(v)):
            continue
        spread = float(np.ptp(v) / np.max(np.abs(v)))
        if spread < NARROW:
            out.append(f"{metric}: {zoom_note(spread)}")
    return out
