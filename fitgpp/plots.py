"""Paper figures for simulation results, in Altair, with a theme that prints at column width.

Every chart function takes Datasets (from :func:`fitgpp.simulate`) or small tidy
DataFrames and returns an ``alt.Chart``; :func:`save` writes it as PNG, SVG or
PDF through vl-convert, offline. Times on axes are in hours, slowdowns are
unitless ((finish - submit) / work).

Policies keep one colour (Okabe-Ito, colour-blind safe), one point shape and
one dash pattern each, so the figures still read in greyscale.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd

from .errors import FitgppError

#: Policy display order, colour (Okabe-Ito), point shape and dash pattern.
POLICY_STYLE = {
    "FIFO": ("#000000", "square", [8, 3, 2, 3]),
    "PRIO": ("#999999", "triangle-down", [2, 2]),
    "FitGpp": ("#0072B2", "circle", [1, 0]),
    "LRTP": ("#E69F00", "diamond", [6, 3]),
    "RAND": ("#009E73", "triangle-up", [2, 1, 6, 1]),
}
_EXTRA = ["#D55E00", "#CC79A7", "#56B4E9", "#F0E442"]
_EXTRA_SHAPES = ["cross", "triangle-right", "triangle-left", "stroke"]
_EXTRA_DASH = [[4, 4], [8, 2], [1, 3], [3, 1]]
CLASS_NAMES = {"TE": "TE (trial-and-error)", "BE": "BE (best-effort)"}
COLUMN_WIDTH = 240  # px: a 3.3 in paper column at 72 px/in
THEME = "fitgpp_paper"
DPI = 300  # PNG export resolution


class PlotError(FitgppError):
    """A chart was asked for with input it cannot draw; the message names the input."""


@dataclass(frozen=True)
class Preset:
    """A printed size: total width in inches and font sizes in points.

    Vega-Lite draws 1 px = 1 pt (72 per inch), so a chart of ``width`` px prints at
    ``inches`` when exported at :data:`DPI` with scale ``DPI / 72``."""

    name: str
    inches: float
    font: int          # tick labels, legend labels, subtitles (pt)
    title_font: int    # axis and legend titles, panel headings, caption (pt)

    @property
    def width(self) -> int:
        return round(self.inches * 72)


PRESETS = {"column": Preset("column", 3.3, 7, 8), "full": Preset("full", 7.0, 9, 10)}


def preset(p: str | Preset = "full") -> Preset:
    """The :class:`Preset` named ``p`` (``"column"``: 3.3 in, ``"full"``: 7 in)."""
    if isinstance(p, Preset):
        return p
    if p not in PRESETS:
        raise PlotError(f"unknown figure preset {p!r}: use one of {', '.join(PRESETS)}")
    return PRESETS[p]


def _panel(p: Preset, ncols: int, *, axis_px: int = 50, gap: int = 14) -> int:
    """Width of one of ``ncols`` panels side by side (each with its own y axis) in ``p``."""
    return max(50, int((p.width - ncols * axis_px - (ncols - 1) * gap) / ncols))


def _wrap(text: str, p: Preset, font: float | None = None, em: float = 0.55) -> list[str]:
    return textwrap.wrap(text, width=max(20, int(p.width / (em * (font or p.font)))))


def _finish(chart, p: Preset, title: str, notes=(), legend=()) -> alt.TopLevelMixin:
    """Caption, subtitle (``notes``, wrapped to the width) and the preset's fonts; the
    legend gets as many columns of its labels ``legend`` as fit the width."""
    longest = max((len(str(lb)) for lb in legend), default=12)
    columns = max(1, min(len(legend) or 3, int(p.width // (0.6 * p.font * longest + 34))))
    sub = [ln for note in notes if note for ln in _wrap(note, p)]
    lines = _wrap(title, p, p.title_font + 1, em=0.62)   # bold: wider than 0.55 em
    head = alt.Title(lines if len(lines) > 1 else title,
                     subtitle=sub or alt.Undefined, anchor="start", fontSize=p.title_font + 1,
                     subtitleFontSize=p.font, fontWeight="bold")
    return (chart.properties(title=head, usermeta={"fitgpp": {"preset": p.name,
                                                               "inches": p.inches}})
            .configure_axis(labelFontSize=p.font, titleFontSize=p.title_font)
            .configure_legend(labelFontSize=p.font, titleFontSize=p.title_font, columns=columns,
                              labelLimit=p.width, titleLimit=p.width, symbolSize=40)
            .configure_header(labelFontSize=p.title_font, titleFontSize=p.title_font)
            .configure_text(fontSize=p.font))


def natural_key(label) -> tuple:
    """Sort key that orders the numbers inside labels as numbers: ``s=4`` before ``s=16``."""
    parts = re.split(r"(-?\d+(?:\.\d+)?)", str(label))
    return tuple((0, float(x), "") if i % 2 else (1, 0.0, x) for i, x in enumerate(parts))


# ------------------------------------------------------------------ log axes
_MANTISSAS = ((1, 1.5, 2, 3, 5, 7), (1, 2, 5), (1, 3), (1,))


def _log_domain(values, pad: float = 1.0) -> list[float]:
    """[lo, hi] around the positive ``values`` (widened by the factor ``pad`` each way, so
    point marks at the ends are not cut in half), rounded out to 1-2-5 steps."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    v = np.array([v.min() / pad, v.max() * pad]) if len(v) else v
    if not len(v):
        return [1.0, 10.0]
    def steps(e):
        return [m * 10.0 ** e for m in (1, 2, 5)]
    lo = max(x for e in range(math.floor(math.log10(v.min())) - 1, math.floor(math.log10(v.min())) + 1)
             for x in steps(e) if x <= v.min() * (1 + 1e-9))
    hi = min(x for e in range(math.floor(math.log10(v.max())), math.floor(math.log10(v.max())) + 2)
             for x in steps(e) if x >= v.max() * (1 - 1e-9))
    return [lo, hi if hi > lo else lo * 2]


def _ticks_fit(ticks, lo, hi, px, font, vertical=False) -> bool:
    if vertical:
        pos = [px * math.log(t / lo) / math.log(hi / lo) for t in ticks]
        return all(b - a >= font + 3 for a, b in zip(pos, pos[1:]))
    from .figcheck import label_clash
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


def _log_scale(values, px, p: Preset, *, vertical=False, title: str, pad: float = 1.0) -> dict:
    dom = _log_domain(values, pad)
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
        out.append(f"{names} coincide{place} (identical values: one line hides the other).")
    return out


@alt.theme.register(THEME, enable=True)
def paper_theme() -> alt.theme.ThemeConfig:
    """Column-width defaults: 10-11 pt sans text, thin grid, no chart border."""
    font = "Helvetica, Arial, sans-serif"
    return {
        "config": {
            "view": {"continuousWidth": COLUMN_WIDTH, "continuousHeight": 160, "stroke": None},
            "font": font,
            "axis": {"labelFontSize": 10, "titleFontSize": 11, "titleFontWeight": "normal",
                     "gridColor": "#e6e6e6", "domainColor": "#555", "tickColor": "#555"},
            "legend": {"labelFontSize": 10, "titleFontSize": 10, "symbolSize": 60,
                       "orient": "bottom", "direction": "horizontal", "columns": 3},
            "header": {"labelFontSize": 11, "titleFontSize": 11},
            "title": {"fontSize": 11, "fontWeight": "normal", "anchor": "start"},
            "line": {"strokeWidth": 1.6},
            "point": {"size": 50, "filled": True},
        }
    }


# ------------------------------------------------------------------ labels and styles
#: How the built-in policies are written in labels (a researcher's policy: its own name).
FAMILIES = {"fifo": "FIFO", "prio": "PRIO", "fitgpp": "FitGpp", "lrtp": "LRTP", "rand": "RAND"}
#: Short names of policy fields in labels.
SHORT = {"max_preemptions": "P"}


def family(name: str) -> str:
    """``FitGpp`` for ``fitgpp``; a policy that is not built in keeps its own name."""
    return FAMILIES.get(str(name).lower(), str(name))


def config_label(name: str, params: dict, varying=()) -> str:
    """The one name of a configuration: the policy's family, ``s`` when it has one, and
    every other field in ``varying`` (the ones its grid sweeps): ``FitGpp s=4``,
    ``FitGpp s=4 P=3``, ``patient s=4 patience=80``, ``FIFO``."""
    shown = [k for k in params if k == "s" or k in varying]
    parts = [family(name)]
    for k in shown:
        v = params[k]
        parts.append(f"{SHORT.get(k, k)}={v:g}" if isinstance(v, (int, float))
                     and not isinstance(v, bool) else f"{SHORT.get(k, k)}={v}")
    return " ".join(parts)


def policy_label(ds) -> str:
    """The label of a simulation Dataset (from its attrs) or of a policy name, as
    :func:`config_label` writes it."""
    attrs = ds if isinstance(ds, dict) else getattr(ds, "attrs", {"policy": str(ds)})
    name = str(attrs.get("policy", "?")).rpartition(":")[2]  # module:Class -> Class
    params = {"s": float(attrs["s"])} if family(name) == "FitGpp" and "s" in attrs else {}
    return config_label(name, params)


def _family(label: str) -> str:
    return label.split(" ")[0]


def _styles(labels) -> dict[str, alt.Scale]:
    """Colour, shape and dash scales for the given labels, keeping each policy's own style."""
    labels = list(dict.fromkeys(labels))
    order = sorted(labels, key=lambda lb: (list(POLICY_STYLE).index(_family(lb))
                                           if _family(lb) in POLICY_STYLE else 99,
                                           natural_key(lb)))
    colors, shapes, dashes, k = [], [], [], 0
    seen_family: dict[str, int] = {}
    for lb in order:
        fam = _family(lb)
        j = seen_family.get(fam, 0)
        seen_family[fam] = j + 1
        if fam in POLICY_STYLE and j == 0:
            c, sh, d = POLICY_STYLE[fam]
        else:  # a second FitGpp (another s) or an unknown policy: next spare style
            c, sh, d = _EXTRA[k % 4], _EXTRA_SHAPES[k % 4], _EXTRA_DASH[k % 4]
            k += 1
        colors.append(c)
        shapes.append(sh)
        dashes.append(d)
    return {"order": order,
            "color": alt.Scale(domain=order, range=colors),
            "shape": alt.Scale(domain=order, range=shapes),
            "dash": alt.Scale(domain=order, range=dashes)}


def _as_runs(results) -> dict[str, object]:
    """``{label: Dataset}`` from a dict, a list of Datasets, or one Dataset."""
    if hasattr(results, "data_vars"):
        results = [results]
    if isinstance(results, dict):
        out = dict(results)
    else:
        out = {}
        for ds in results:
            out[policy_label(ds)] = ds
    if not out:
        raise PlotError("no results to plot: pass at least one Dataset")
    for lb, ds in out.items():
        missing = {"cls", "slowdown"} - set(getattr(ds, "data_vars", ()))
        if missing:
            raise PlotError(f"result {lb!r} is not a simulation Dataset: missing {sorted(missing)}")
    return out


def _hours(x):
    return np.asarray(x, dtype=float) / 3600.0


# ------------------------------------------------------------------ slowdown distributions
def slowdown_cdf(results, *, points: int = 200, size: str | Preset = "full",
                 title: str = "Slowdown of jobs: cumulative distribution per class") -> alt.Chart:
    """Empirical CDF of slowdown per class (one panel each) and policy (one line each).

    ``results``: ``{label: Dataset}`` or a list of Datasets. Each curve is drawn
    through ``points`` quantiles, so the spec stays small for any trace size.
    ``size``: a :data:`PRESETS` name; ``title``: the caption.
    """
    p = preset(size)
    runs = _as_runs(results)
    q = np.linspace(0, 1, points)
    rows = []
    for lb, ds in runs.items():
        cls = ds["cls"].to_numpy()
        sd = ds["slowdown"].to_numpy()
        for c in ("TE", "BE"):
            x = sd[cls == c]
            if len(x):
                rows.append(pd.DataFrame({"policy": lb, "class": CLASS_NAMES[c],
                                          "slowdown": np.quantile(x, q), "fraction": q}))
    if not rows:
        raise PlotError("no jobs in any result")
    df = pd.concat(rows, ignore_index=True)
    st = _styles(runs)
    width = _panel(p, 2, gap=6)
    chart = alt.Chart(df).mark_line(interpolate="step-after", clip=True).encode(
        x=alt.X("slowdown:Q", **_log_scale(df["slowdown"], width, p,
                                          title="slowdown (log scale)")),
        y=alt.Y("fraction:Q", title="fraction of jobs", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("policy:N", scale=st["color"], sort=st["order"], title="policy"),
        strokeDash=alt.StrokeDash("policy:N", scale=st["dash"], sort=st["order"], title="policy"),
        column=alt.Column("class:N", title=None, sort=[CLASS_NAMES["TE"], CLASS_NAMES["BE"]]),
    ).properties(width=width, height=round(width * 0.75) if p.name == "column" else 170)
    notes = coincident(df, "policy", ["slowdown", "fraction"], ["class"])
    return _finish(chart, p, title, notes, legend=st["order"])


def bootstrap_stats(ds, *, n_boot: int = 300, seed: int = 0, level: float = 0.95,
                    cache=None) -> pd.DataFrame:
    """Median and p95 slowdown per class with a percentile-bootstrap CI over jobs
    (:func:`fitgpp.metrics.bootstrap_interval`).

    Returns rows ``class, stat ('median'|'p95'), value, lo, hi``. ``cache``: a directory
    where each interval is kept (see :func:`_cached_interval`); the numbers are the same.
    """
    from .metrics import class_stats
    te = ds["cls"].to_numpy() == "TE"
    sd = ds["slowdown"].to_numpy()
    st = class_stats(te, sd, ds["preemptions"].to_numpy())
    rows = []
    for i, c in enumerate(("TE", "BE")):
        x = sd[te == (c == "TE")]
        if not len(x):
            continue
        for stat, p in (("median", 50), ("p95", 95)):
            lo, hi = _cached_interval(x, p, n_resamples=n_boot, seed=seed, level=level,
                                      cache=cache)
            rows.append({"class": c, "stat": stat, "value": float(st[f"slowdown_{stat}"][i]),
                         "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


def _cached_interval(x, q, *, cache=None, **kw) -> tuple[float, float]:
    """:func:`fitgpp.metrics.bootstrap_interval` of ``x``, read from ``cache`` (a directory)
    when it was computed before: keyed by the sha256 of the values, ``q``, the resampling
    parameters, the numpy and scipy versions and the digest of fitgpp's result code (which
    covers fitgpp.metrics); the bounds are stored as JSON numbers, which round-trip exactly.
    Resampling 300 times is most of a warm RQ5 (~0.8 s CPU on the full trace)."""
    from .metrics import bootstrap_interval
    if cache is None:
        return bootstrap_interval(x, q, **kw)
    import numpy
    import scipy

    from .sweep.cell import code_digest
    x = np.ascontiguousarray(x, dtype=float)
    doc = json.dumps({"q": float(q), **kw, "numpy": numpy.__version__, "scipy": scipy.__version__,
                      "code": code_digest(), "n": len(x)}, sort_keys=True)
    key = hashlib.sha256(doc.encode() + b"\0" + x.tobytes()).hexdigest()
    path = Path(cache) / key[:2] / f"{key}.json"
    try:
        lo, hi = json.loads(path.read_text())
        return float(lo), float(hi)
    except (OSError, ValueError, TypeError):
        pass  # missing or unreadable: compute it again
    lo, hi = bootstrap_interval(x, q, **kw)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps([lo, hi]))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache: the interval is still right, just not kept
    return lo, hi


def stats_table(results, **kw) -> pd.DataFrame:
    """:func:`bootstrap_stats` for every run, with a ``policy`` column."""
    runs = _as_runs(results)
    return pd.concat([bootstrap_stats(ds, **kw).assign(policy=lb) for lb, ds in runs.items()],
                     ignore_index=True)


def slowdown_bars(stats: pd.DataFrame, *, size: str | Preset = "full",
                  title: str = "Median and p95 slowdown per policy, with 95 % intervals"
                  ) -> alt.Chart:
    """Median and p95 slowdown bars per policy with CI whiskers; panels class x statistic.

    ``stats``: columns ``policy, class, stat, value, lo, hi`` (see :func:`stats_table`;
    a sweep's across-seed means and CIs fit the same shape). All panels share one log
    axis from 1 (the floor of a slowdown), so bars compare across panels.
    """
    need = {"policy", "class", "stat", "value", "lo", "hi"}
    if not need <= set(stats.columns):
        raise PlotError(f"slowdown_bars needs columns {sorted(need)}, got {list(stats.columns)}")
    p = preset(size)
    df = stats.copy()
    df["panel"] = df["class"] + " " + df["stat"]
    st = _styles(df["policy"])
    width = _panel(p, 2, axis_px=60 if p.name == "column" else 80)
    top = np.nanmax(df[["value", "hi"]].to_numpy(float))
    dom = [1.0, _log_domain([top if top > 1 else 2.0])[1]]
    xs = dict(scale=alt.Scale(type="log", domain=dom, nice=False),
              axis=alt.Axis(values=log_ticks(dom, width, p.font), format="~g",
                            labelOverlap="greedy", title="slowdown (log)"))
    base = alt.Chart().encode(y=alt.Y("policy:N", sort=st["order"], title="policy"))
    bars = base.mark_bar(height=8, stroke="black", strokeWidth=0.5, clip=True).encode(
        x=alt.X("value:Q", **xs),
        x2=alt.datum(1),
        color=alt.Color("policy:N", scale=st["color"], sort=st["order"], legend=None),
        tooltip=["policy", "class", "stat", alt.Tooltip("value:Q", format=".3g"),
                 alt.Tooltip("lo:Q", format=".3g"), alt.Tooltip("hi:Q", format=".3g")],
    )
    whisk = base.mark_rule(color="black", strokeWidth=1.2, clip=True).encode(
        x=alt.X("lo:Q", **xs), x2="hi:Q")
    chart = alt.layer(bars, whisk, data=df).properties(
        width=width, height=alt.Step(12)).facet(
        facet=alt.Facet("panel:N", title=None,
                        sort=["TE median", "TE p95", "BE median", "BE p95"]),
        columns=2)
    return _finish(chart, p, title, ["Bars (from 1, the least slowdown) show the statistic, "
                                     "whiskers its 95 % interval; log scale."])


# ------------------------------------------------------------------ the s trade-off
def tradeoff_table(runs) -> pd.DataFrame:
    """One row per run: ``policy, family, s, te_p95, be_median, be_p95`` (from :func:`fitgpp.summarize`)."""
    from .simulate import summarize
    rows = []
    for lb, ds in _as_runs(runs).items():
        t = summarize(ds)
        rows.append({"policy": lb, "family": _family(lb),
                     "s": float(ds.attrs["s"]) if "s" in ds.attrs else np.nan,
                     "te_p95": t.loc["TE", "slowdown_p95"], "be_median": t.loc["BE", "slowdown_median"],
                     "be_p95": t.loc["BE", "slowdown_p95"]})
    return pd.DataFrame(rows)


_LABEL_OFFSETS = {"ne": (5, -8), "se": (5, 9), "nw": (-5, -8), "sw": (-5, 9)}


def _place_labels(df, xcol, ycol, label, panel, x_domain, width, height, font) -> list[str]:
    """Where each non-empty ``label`` goes (a key of :data:`_LABEL_OFFSETS`, or "" when no
    place is free): the first corner around its point that stays inside the panel and
    overlaps no placed label and no point of its panel. Pixels are estimated from a log x domain and the panel's y range."""
    lo, hi = x_domain
    out = [""] * len(df)
    for _, g in df.groupby(panel, sort=False):
        y0, y1 = g[ycol].min(), g[ycol].max()
        span = (y1 - y0) or 1.0
        px = width * np.log(g[xcol].to_numpy(float) / lo) / math.log(hi / lo)
        py = height * (1 - (g[ycol].to_numpy(float) - y0) / span)
        boxes = [(a - 5, b - 5, a + 5, b + 5) for a, b in zip(px, py)]   # the markers
        for i, (idx, text) in enumerate(zip(g.index, g[label])):
            if not text:
                continue
            w, h = 0.6 * font * len(text), font + 1
            for pos, (dx, dy) in _LABEL_OFFSETS.items():
                x0 = px[i] + dx if dx > 0 else px[i] + dx - w
                box = (x0, py[i] + dy - h / 2, x0 + w, py[i] + dy + h / 2)
                inside = box[0] >= 0 and box[2] <= width and box[1] >= 0 and box[3] <= height
                if inside and not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3]
                                      and b[1] < box[3] for b in boxes):
                    boxes.append(box)
                    out[df.index.get_loc(idx)] = pos
                    break
    return out


def s_tradeoff(table: pd.DataFrame, *, size: str | Preset = "full",
               title: str = "The threshold s trades TE latency against BE slowdown") -> alt.Chart:
    """TE p95 slowdown (x) against BE median and p95 slowdown (y, two panels).

    FitGpp rows (``family == 'FitGpp'``, one per ``s``) form a labelled line;
    other rows (FIFO, LRTP, RAND, ...) are single marked points.
    """
    need = {"policy", "family", "s", "te_p95", "be_median", "be_p95"}
    if not need <= set(table.columns):
        raise PlotError(f"s_tradeoff needs columns {sorted(need)}, got {list(table.columns)}")
    p = preset(size)
    long = table.melt(id_vars=["policy", "family", "s", "te_p95"], value_vars=["be_median", "be_p95"],
                      var_name="metric", value_name="be")
    long["metric"] = long["metric"].map({"be_median": "BE median slowdown",
                                         "be_p95": "BE p95 slowdown"})
    long["point"] = np.where(long["family"] == "FitGpp", "FitGpp (one point per s)", long["policy"])
    long["s_label"] = np.where(long["family"] == "FitGpp", "s=" + long["s"].map("{:g}".format), "")
    st = _styles(long["point"].str.replace(" (one point per s)", "", regex=False))
    order = [("FitGpp (one point per s)" if o == "FitGpp" else o) for o in st["order"]]
    color = alt.Scale(domain=order, range=st["color"].range)
    shape = alt.Scale(domain=order, range=st["shape"].range)
    ncols = 2 if p.name == "full" else 1
    width = _panel(p, ncols)
    xs = _log_scale(long["te_p95"], width, p, pad=1.25, title="TE p95 slowdown (log scale)")
    x = alt.X("te_p95:Q", **xs)
    y = alt.Y("be:Q", scale=alt.Scale(zero=False), title="BE slowdown")
    long = long.sort_values(["metric", "family", "s"], ignore_index=True)
    # settings of s that land on the same point share one label ("s=4, 16")
    fit_rows = long["family"] == "FitGpp"
    spot = long.loc[fit_rows].groupby(["metric", "te_p95", "be"], sort=False)["s"]
    joined = spot.transform(lambda v: "s=" + ", ".join(f"{x:g}" for x in v))
    first = ~long.loc[fit_rows].duplicated(["metric", "te_p95", "be"])
    long.loc[fit_rows, "s_label"] = np.where(first, joined, "")
    long["lab"] = _place_labels(long, "te_p95", "be", "s_label", "metric",
                                xs["scale"].domain, width, 150 if ncols == 2 else 120, p.font)
    is_fit = alt.datum.family == "FitGpp"
    line = alt.Chart().mark_line(color=POLICY_STYLE["FitGpp"][0], clip=True).encode(
        x=x, y=y, order="s:Q").transform_filter(is_fit)
    pts = alt.Chart().mark_point(filled=True, size=55, stroke="black", strokeWidth=0.5,
                                 clip=True).encode(
        x=x, y=y, color=alt.Color("point:N", scale=color, sort=order, title="policy"),
        shape=alt.Shape("point:N", scale=shape, sort=order, title="policy"),
        tooltip=["policy", "metric", alt.Tooltip("te_p95:Q", format=".3g"),
                 alt.Tooltip("be:Q", format=".3g")])
    labels = []
    # Every label layer keeps all rows and writes "" where the label sits elsewhere: a layer
    # filtered to no rows makes vega warn "Infinite extent for field be" once per redraw.
    for pos, (dx, dy) in _LABEL_OFFSETS.items():
        for halo in (True, False):   # a white halo under the text keeps it legible over lines
            labels.append(alt.Chart().mark_text(
                dx=dx, dy=dy, align="left" if dx > 0 else "right", clip=True,
                **({"stroke": "white", "strokeWidth": 3} if halo else {})).encode(
                x=x, y=y, text=alt.condition(alt.datum.lab == pos, alt.Text("s_label:N"),
                                             alt.value(""))))
    chart = alt.layer(line, pts, *labels, data=long).properties(
        width=width, height=150 if ncols == 2 else 120).facet(
        facet=alt.Facet("metric:N", title=None), columns=ncols).resolve_scale(y="independent")
    notes = coincident(long[long["family"] != "FitGpp"], "policy", ["te_p95", "be"], ["metric"])
    if long["s_label"].str.contains(",").any():
        notes.append("Settings of s listed on one label give the same result.")
    crowded = long[(long["s_label"] != "") & (long["lab"] == "")]
    if len(crowded):
        notes.append("No room for the labels of " + "; ".join(
            f"{lb} ({m})" for lb, m in zip(crowded["s_label"], crowded["metric"]))
            + ": the line passes through the values of s in order.")
    return _finish(chart, p, title, notes, legend=order)


# ------------------------------------------------------------------ cluster over time
def _coarsen(ds, max_points: int) -> dict[str, np.ndarray]:
    """Merge every k consecutive samples (their exact time means average to the merged bin's)."""
    names = ["time", "gpu_util", "gpu_stopping", "gpu_reserved", "waiting_te", "waiting_be"]
    out = {k: ds[k].to_numpy().astype(float) for k in names}
    k = max(1, -(-len(out["time"]) // max_points))
    if k > 1:
        m = len(out["time"]) // k * k  # drop the ragged last few samples
        out = {n: (v[:m:k] if n == "time" else v[:m].reshape(-1, k).mean(axis=1))
               for n, v in out.items()}
    return out


def utilization(ds, *, max_points: int = 600, size: str | Preset = "full",
                title: str | None = None) -> alt.Chart:
    """GPU utilization (running, in grace period, reserved) and queue lengths over time, one run.

    Samples are merged to at most ``max_points`` so the chart stays small."""
    if "gpu_util" not in ds:
        raise PlotError("utilization needs a simulation Dataset with a time dimension (gpu_util)")
    p = preset(size)
    v = _coarsen(ds, max_points)
    h = _hours(v["time"])
    gpu = pd.DataFrame({"hours": np.tile(h, 3), "series": np.repeat(
        ["running", "in grace period", "reserved for TE"], len(h)),
        "fraction": np.concatenate([v["gpu_util"], v["gpu_stopping"], v["gpu_reserved"]])})
    q = pd.DataFrame({"hours": np.tile(h, 2), "series": np.repeat(["TE", "BE"], len(h)),
                      "jobs": np.concatenate([v["waiting_te"], v["waiting_be"]])})
    x = alt.X("hours:Q", title="time (h)")
    width = p.width - 60
    top = alt.Chart(gpu).mark_line(interpolate="step-after", clip=True).encode(
        x=x, y=alt.Y("fraction:Q", title="share of GPUs", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("series:N", title="GPUs", scale=alt.Scale(
            domain=["running", "in grace period", "reserved for TE"],
            range=["#0072B2", "#D55E00", "#999999"])),
        strokeDash=alt.StrokeDash("series:N", title="GPUs", scale=alt.Scale(
            domain=["running", "in grace period", "reserved for TE"],
            range=[[1, 0], [4, 2], [1, 2]])),
    ).properties(width=width, height=100)
    bottom = alt.Chart(q).mark_line(interpolate="step-after").encode(
        x=x, y=alt.Y("jobs:Q", title="waiting jobs"),
        color=alt.Color("series:N", title="queue", scale=alt.Scale(
            domain=["TE", "BE"], range=["#CC79A7", "#009E73"])),
        strokeDash=alt.StrokeDash("series:N", title="queue", scale=alt.Scale(
            domain=["TE", "BE"], range=[[1, 0], [6, 3]])),
    ).properties(width=width, height=80)
    chart = alt.vconcat(top, bottom).resolve_scale(color="independent", strokeDash="independent")
    notes = coincident(gpu, "series", ["hours", "fraction"]) + coincident(q, "series",
                                                                          ["hours", "jobs"])
    return _finish(chart, p, title or f"GPU use and waiting jobs over time, {policy_label(ds)}",
                   notes)


# ------------------------------------------------------------------ per-node timeline
def segments(trace, cluster, policy="fitgpp", *, tick: float = 60, **params) -> pd.DataFrame:
    """Exact run and grace-period intervals of every job (``simulate(..., segments=True)``).

    Returns rows ``job, cls, node, kind ('run'|'grace'), start, end`` in seconds.
    Meant for small runs (a few hundred jobs) drawn by :func:`node_timeline`.
    """
    from .simulate import simulate
    return segments_of(simulate(trace, cluster, policy, tick=tick, segments=True, **params))


def segments_of(ds) -> pd.DataFrame:
    """The intervals of :func:`segments` from a result that has them (a simulation with
    ``segments=True``, or a sweep cell's :func:`fitgpp.sweep.run_dataset`)."""
    if "segment_job" not in ds:
        raise PlotError("this result has no run/grace intervals: simulate with segments=True")
    df = pd.DataFrame({
        "job": ds["segment_job"].to_numpy(), "node": ds["segment_node"].to_numpy(),
        "kind": ds["segment_kind"].to_numpy().astype(str),
        "start": ds["segment_start"].to_numpy().astype(float),
        "end": ds["segment_end"].to_numpy().astype(float)})
    df["cls"] = ds["cls"].sel(job=df["job"].to_numpy()).to_numpy().astype(str)
    return df[["job", "cls", "node", "kind", "start", "end"]]


def node_timeline(seg: pd.DataFrame, *, nodes=None, title: str | None = None,
                  size: str | Preset = "full") -> alt.Chart:
    """One row per node: TE runs, BE runs and BE grace periods as bars, preemptions as ticks.

    ``seg``: the output of :func:`segments`. ``nodes``: which nodes (default: the first 8).
    """
    need = {"job", "cls", "node", "kind", "start", "end"}
    if not need <= set(seg.columns):
        raise PlotError(f"node_timeline needs columns {sorted(need)} (see fitgpp.plots.segments)")
    p = preset(size)
    nodes = list(range(8)) if nodes is None else list(nodes)
    df = seg[seg["node"].isin(nodes)].copy()
    if df.empty:
        raise PlotError(f"no job ran on nodes {nodes}")
    df["what"] = np.where(df["kind"] == "grace", "BE grace period", df["cls"] + " running")
    df["h0"], df["h1"] = _hours(df["start"]), _hours(df["end"])
    dom = ["TE running", "BE running", "BE grace period"]
    y = alt.Y("node:O", title="node")
    bars = alt.Chart(df).mark_bar(height=9, stroke="white", strokeWidth=0.4).encode(
        x=alt.X("h0:Q", title="time (h)"), x2="h1:Q", y=y,
        color=alt.Color("what:N", title="job state", legend=alt.Legend(orient="bottom"),
                        scale=alt.Scale(domain=dom, range=["#CC79A7", "#0072B2", "#E69F00"])),
        # one legend with the colour: legend=None on one of two channels of a field conflicts
        opacity=alt.Opacity("what:N", title="job state", legend=alt.Legend(orient="bottom"),
                            sort=dom, scale=alt.Scale(domain=dom, range=[1, 0.55, 1])),
        tooltip=["job", "what", alt.Tooltip("h0:Q", format=".2f"), alt.Tooltip("h1:Q", format=".2f")])
    # preemption signals as ticks, only when there are some: an empty layer makes vega warn
    # "Infinite extent for field h0" (and a tick cannot carry a shape legend)
    pre = df[df["kind"] == "grace"]
    ticks = [alt.Chart(pre).mark_tick(color="black", thickness=1.5, size=14).encode(
        x="h0:Q", y=y)] if len(pre) else []
    chart = alt.layer(bars, *ticks).properties(width=p.width - 50, height=alt.Step(14))
    return _finish(chart, p, title or f"Jobs on nodes {nodes[0]}-{nodes[-1]} over time")


# ------------------------------------------------------------------ fitted vs empirical
def _interarrival(jobs: pd.DataFrame) -> np.ndarray:
    return np.diff(np.sort(jobs["submit_time"].to_numpy(float)))


QUANTITY_TITLES = {"duration": "run time (s)", "interarrival": "inter-arrival (s)",
                   "gpu": "GPUs per job", "grace_period": "grace period (s)"}


def distribution_fit(empirical, synthetic, *, columns=("duration", "interarrival", "gpu",
                                                        "grace_period"),
                     points: int = 150, size: str | Preset = "full",
                     title: str = "Fitted workload model against the trace it was fitted to"
                     ) -> alt.Chart:
    """ECDFs of a real trace (solid) against a trace synthesized from the fitted model (dashed),
    per class, one panel per quantity, each with its own log axis and title.
    ``empirical``/``synthetic``: Traces or trace DataFrames."""
    p = preset(size)
    sources = {"empirical": empirical, "fitted model": synthetic}
    q = np.linspace(0, 1, points)
    rows = []
    for name, tr in sources.items():
        jobs = getattr(tr, "jobs", tr)
        for c in ("TE", "BE"):
            sub = jobs[jobs["cls"] == c]
            for col in columns:
                if col == "grace_period" and c == "TE":
                    continue
                x = _interarrival(sub) if col == "interarrival" else sub[col].to_numpy(float)
                x = x[np.isfinite(x) & (x > 0)]
                if len(x):
                    rows.append(pd.DataFrame({"source": name, "class": c, "quantity": col,
                                              "value": np.quantile(x, q), "fraction": q}))
    if not rows:
        raise PlotError(f"no positive values in columns {list(columns)} of either trace")
    df = pd.concat(rows, ignore_index=True)
    ncols = 4 if p.name == "full" else 2
    width = _panel(p, ncols, axis_px=48, gap=12)
    color = alt.Color("source:N", scale=alt.Scale(domain=list(sources),
                                                 range=["#000000", "#D55E00"]), title="source")
    dash = alt.StrokeDash("source:N", scale=alt.Scale(domain=list(sources),
                                                      range=[[1, 0], [5, 3]]), title="source")
    panels = []
    for (c, col), g in df.groupby(["class", "quantity"], sort=False):
        panels.append(alt.Chart(g).mark_line(interpolate="step-after", clip=True).encode(
            x=alt.X("value:Q", **_log_scale(g["value"], width, p,
                                           title=f"{c} {QUANTITY_TITLES.get(col, col)}")),
            y=alt.Y("fraction:Q", title="CDF", scale=alt.Scale(domain=[0, 1])),
            color=color, strokeDash=dash).properties(width=width, height=round(width * 0.7)))
    notes = coincident(df, "source", ["value", "fraction"], ["class", "quantity"])
    return _finish(alt.concat(*panels, columns=ncols), p, title, notes)


# ------------------------------------------------------------------ export
FORMATS = (".png", ".svg", ".pdf")


def render(chart, ext: str, *, dpi: int = DPI, cache=None) -> bytes:
    """The one way fitgpp renders a figure: ``chart`` (or its spec) as ``.png``, ``.svg``
    or ``.pdf`` bytes through vl-convert, offline. PNG is rendered at ``dpi`` (1 px of the
    chart = 1 pt, so scale ``dpi / 72``). ``cache``: a directory of rendered files keyed by
    the sha256 of the spec, format, dpi and vl-convert version; an unchanged figure is read
    from there instead of rendered again (rendering is most of a warm ``fitgpp reproduce``).
    """
    import vl_convert as vlc
    ext = ext.lower()
    if ext not in FORMATS:
        raise PlotError(f"cannot render as {ext}: use one of {', '.join(FORMATS)}")
    spec = chart.to_dict() if hasattr(chart, "to_dict") else chart
    spec = json.dumps(spec, sort_keys=True)
    hit = None if cache is None else _cached_file(spec, ext, dpi, cache)
    if hit is not None and hit.is_file():
        return hit.read_bytes()
    if ext == ".png":
        data = vlc.vegalite_to_png(spec, scale=1, ppi=dpi)  # ppi scales: dpi / 72 px per pt
    elif ext == ".svg":
        data = vlc.vegalite_to_svg(spec).encode()
    else:
        data = vlc.vegalite_to_pdf(spec)
    if hit is not None:
        hit.parent.mkdir(parents=True, exist_ok=True)
        tmp = hit.with_name(f".{hit.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, hit)
    return data


def save(chart, path, *, dpi: int = DPI, cache=None) -> Path:
    """Write ``chart`` to ``path`` (``.png``, ``.svg`` or ``.pdf``) as :func:`render` draws
    it. Overwrites ``path`` and embeds nothing: :func:`fitgpp.export.export` is the way
    fitgpp writes figures (never overwrites, checks them, writes the configuration into the
    files and a manifest); this is for a quick look. Returns the path."""
    path = Path(path)
    data = render(chart, path.suffix, dpi=dpi, cache=cache)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


def _cached_file(spec: str, ext: str, dpi: int, cache) -> Path:
    """Where the figure cache keeps ``spec`` (JSON, sorted keys) rendered as ``ext``."""
    import vl_convert as vlc
    key = hashlib.sha256(f"{spec}\0{ext}\0dpi{dpi}\0{vlc.__version__}".encode()).hexdigest()
    return Path(cache) / key[:2] / f"{key}{ext}"


def _spec(chart, formats, dpi: int, cache) -> dict:
    """The chart's Vega-Lite dict, validated against the schema (~0.1 s a chart) unless
    every format of it is in the figure cache already: it was rendered from this exact spec
    before, so it is not validated again (altair builds the same dict either way)."""
    if not hasattr(chart, "to_dict"):
        return chart
    if cache is not None:
        spec = chart.to_dict(validate=False)
        text = json.dumps(spec, sort_keys=True)
        if all(_cached_file(text, ext.lower(), dpi, cache).is_file() for ext in formats):
            return spec
    return chart.to_dict()


def save_all(charts: dict, out_dir, formats=FORMATS, **kw) -> list[Path]:
    """Save ``{name: chart}`` as ``out_dir/name.<ext>`` for every format; returns the paths."""
    out = []
    for name, chart in charts.items():
        spec = _spec(chart, formats, kw.get("dpi", DPI), kw.get("cache"))
        for ext in formats:
            out.append(save(spec, Path(out_dir) / f"{name}{ext}", **kw))
    return out


# ------------------------------------------------------------------ a metric against a knob
SERIES_TITLES = {"P": "P (max preemptions)", "policy": "policy",
                 "grace": "grace-period distribution", "s": "threshold s"}


def metric_lines(df: pd.DataFrame, *, x: str, series: str = "policy", log_y: bool = False,
                 x_title: str | None = None, y_title: str = "", series_title: str | None = None,
                 title: str | None = None, log_x: bool | None = None, percent: bool = False,
                 share: bool = False, size: str | Preset = "full") -> alt.Chart:
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
