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
import os
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


class PlotError(FitgppError):
    """A chart was asked for with input it cannot draw; the message names the input."""


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
def policy_label(ds) -> str:
    """``FitGpp s=4 P=3``-style label from a Dataset's attrs (or a policy name)."""
    attrs = ds if isinstance(ds, dict) else getattr(ds, "attrs", {"policy": str(ds)})
    name = str(attrs.get("policy", "?")).rpartition(":")[2]  # module:Class -> Class
    base = {"fifo": "FIFO", "prio": "PRIO", "fitgpp": "FitGpp", "lrtp": "LRTP",
            "rand": "RAND"}.get(name.lower(), name)
    if base == "FitGpp" and "s" in attrs:
        return f"FitGpp s={float(attrs['s']):g}"
    return base


def _family(label: str) -> str:
    return label.split(" ")[0]


def _styles(labels) -> dict[str, alt.Scale]:
    """Colour, shape and dash scales for the given labels, keeping each policy's own style."""
    labels = list(dict.fromkeys(labels))
    order = sorted(labels, key=lambda lb: (list(POLICY_STYLE).index(_family(lb))
                                           if _family(lb) in POLICY_STYLE else 99, lb))
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
def slowdown_cdf(results, *, points: int = 200) -> alt.Chart:
    """Empirical CDF of slowdown per class (one panel each) and policy (one line each).

    ``results``: ``{label: Dataset}`` or a list of Datasets. Each curve is drawn
    through ``points`` quantiles, so the spec stays small for any trace size.
    """
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
    return alt.Chart(df).mark_line(interpolate="step-after").encode(
        x=alt.X("slowdown:Q", scale=alt.Scale(type="log"), title="slowdown (log scale)"),
        y=alt.Y("fraction:Q", title="fraction of jobs", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("policy:N", scale=st["color"], sort=st["order"], title="policy"),
        strokeDash=alt.StrokeDash("policy:N", scale=st["dash"], sort=st["order"], title="policy"),
        column=alt.Column("class:N", title=None, sort=[CLASS_NAMES["TE"], CLASS_NAMES["BE"]]),
    ).properties(width=COLUMN_WIDTH * 0.75, height=150)


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


def slowdown_bars(stats: pd.DataFrame) -> alt.Chart:
    """Median and p95 slowdown bars per policy with CI whiskers; panels class x statistic.

    ``stats``: columns ``policy, class, stat, value, lo, hi`` (see :func:`stats_table`;
    a sweep's across-seed means and CIs fit the same shape).
    """
    need = {"policy", "class", "stat", "value", "lo", "hi"}
    if not need <= set(stats.columns):
        raise PlotError(f"slowdown_bars needs columns {sorted(need)}, got {list(stats.columns)}")
    df = stats.copy()
    df["panel"] = df["class"] + " " + df["stat"]
    st = _styles(df["policy"])
    base = alt.Chart().encode(y=alt.Y("policy:N", sort=st["order"], title=None))
    bars = base.mark_bar(height=10, stroke="black", strokeWidth=0.5).encode(
        x=alt.X("value:Q", title="slowdown (log scale; bars start at 1)",
                scale=alt.Scale(type="log", domainMin=1)),
        x2=alt.datum(1),
        color=alt.Color("policy:N", scale=st["color"], sort=st["order"], legend=None),
        tooltip=["policy", "class", "stat", alt.Tooltip("value:Q", format=".3g"),
                 alt.Tooltip("lo:Q", format=".3g"), alt.Tooltip("hi:Q", format=".3g")],
    )
    whisk = base.mark_rule(color="black", strokeWidth=1.2).encode(x="lo:Q", x2="hi:Q")
    return alt.layer(bars, whisk, data=df).properties(
        width=COLUMN_WIDTH * 0.6, height=alt.Step(14)).facet(
        facet=alt.Facet("panel:N", title=None,
                        sort=["TE median", "TE p95", "BE median", "BE p95"]),
        columns=2).resolve_scale(x="independent")


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


def s_tradeoff(table: pd.DataFrame) -> alt.Chart:
    """TE p95 slowdown (x) against BE median and p95 slowdown (y, two panels).

    FitGpp rows (``family == 'FitGpp'``, one per ``s``) form a labelled line;
    other rows (FIFO, LRTP, RAND, ...) are single marked points.
    """
    need = {"policy", "family", "s", "te_p95", "be_median", "be_p95"}
    if not need <= set(table.columns):
        raise PlotError(f"s_tradeoff needs columns {sorted(need)}, got {list(table.columns)}")
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
    x = alt.X("te_p95:Q", scale=alt.Scale(type="log"), title="TE p95 slowdown (log)")
    y = alt.Y("be:Q", scale=alt.Scale(zero=False), title="BE slowdown")
    long = long.sort_values(["metric", "family", "s"], ignore_index=True)
    is_fit = alt.datum.family == "FitGpp"
    line = alt.Chart().mark_line(color=POLICY_STYLE["FitGpp"][0]).encode(
        x=x, y=y, order="s:Q").transform_filter(is_fit)
    pts = alt.Chart().mark_point(filled=True, size=70, stroke="black", strokeWidth=0.5).encode(
        x=x, y=y, color=alt.Color("point:N", scale=color, title=None),
        shape=alt.Shape("point:N", scale=shape, title=None),
        tooltip=["policy", "metric", alt.Tooltip("te_p95:Q", format=".3g"),
                 alt.Tooltip("be:Q", format=".3g")])
    text = alt.Chart().mark_text(dx=4, dy=-7, fontSize=9, align="left").encode(
        x=x, y=y, text="s_label:N").transform_filter(is_fit)
    return alt.layer(line, pts, text, data=long).properties(
        width=COLUMN_WIDTH * 0.8, height=150).facet(
        column=alt.Column("metric:N", title=None)).resolve_scale(y="independent")


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


def utilization(ds, *, max_points: int = 600) -> alt.Chart:
    """GPU utilization (running, in grace period, reserved) and queue lengths over time, one run.

    Samples are merged to at most ``max_points`` so the chart stays small."""
    if "gpu_util" not in ds:
        raise PlotError("utilization needs a simulation Dataset with a time dimension (gpu_util)")
    v = _coarsen(ds, max_points)
    h = _hours(v["time"])
    gpu = pd.DataFrame({"hours": np.tile(h, 3), "series": np.repeat(
        ["running", "in grace period", "reserved for TE"], len(h)),
        "fraction": np.concatenate([v["gpu_util"], v["gpu_stopping"], v["gpu_reserved"]])})
    q = pd.DataFrame({"hours": np.tile(h, 2), "series": np.repeat(["TE", "BE"], len(h)),
                      "jobs": np.concatenate([v["waiting_te"], v["waiting_be"]])})
    x = alt.X("hours:Q", title="time (h)")
    top = alt.Chart(gpu).mark_line(interpolate="step-after").encode(
        x=x, y=alt.Y("fraction:Q", title="share of GPUs", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("series:N", title="GPUs", scale=alt.Scale(
            domain=["running", "in grace period", "reserved for TE"],
            range=["#0072B2", "#D55E00", "#999999"])),
        strokeDash=alt.StrokeDash("series:N", title="GPUs", scale=alt.Scale(
            domain=["running", "in grace period", "reserved for TE"],
            range=[[1, 0], [4, 2], [1, 2]])),
    ).properties(width=COLUMN_WIDTH * 1.6, height=110, title=policy_label(ds))
    bottom = alt.Chart(q).mark_line(interpolate="step-after").encode(
        x=x, y=alt.Y("jobs:Q", title="waiting jobs"),
        color=alt.Color("series:N", title="queue", scale=alt.Scale(
            domain=["TE", "BE"], range=["#CC79A7", "#009E73"])),
        strokeDash=alt.StrokeDash("series:N", title="queue", scale=alt.Scale(
            domain=["TE", "BE"], range=[[1, 0], [6, 3]])),
    ).properties(width=COLUMN_WIDTH * 1.6, height=90)
    return alt.vconcat(top, bottom).resolve_scale(color="independent", strokeDash="independent")


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


def node_timeline(seg: pd.DataFrame, *, nodes=None, title: str | None = None) -> alt.Chart:
    """One row per node: TE runs, BE runs and BE grace periods as bars, preemptions as ticks.

    ``seg``: the output of :func:`segments`. ``nodes``: which nodes (default: the first 8).
    """
    need = {"job", "cls", "node", "kind", "start", "end"}
    if not need <= set(seg.columns):
        raise PlotError(f"node_timeline needs columns {sorted(need)} (see fitgpp.plots.segments)")
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
        color=alt.Color("what:N", title=None, legend=alt.Legend(orient="bottom"), scale=alt.Scale(
            domain=dom, range=["#CC79A7", "#0072B2", "#E69F00"])),
        opacity=alt.Opacity("what:N", legend=None, scale=alt.Scale(domain=dom, range=[1, 0.55, 1])),
        tooltip=["job", "what", alt.Tooltip("h0:Q", format=".2f"), alt.Tooltip("h1:Q", format=".2f")])
    pre = df[df["kind"] == "grace"].assign(event="preemption signal")
    ticks = alt.Chart(pre).mark_tick(color="black", thickness=1.5, size=14).encode(
        x="h0:Q", y=y, shape=alt.Shape("event:N", title=None))
    return alt.layer(bars, ticks).properties(
        width=COLUMN_WIDTH * 1.6, height=alt.Step(14), title=title or "")


# ------------------------------------------------------------------ fitted vs empirical
def _interarrival(jobs: pd.DataFrame) -> np.ndarray:
    return np.diff(np.sort(jobs["submit_time"].to_numpy(float)))


def distribution_fit(empirical, synthetic, *, columns=("duration", "interarrival", "gpu",
                                                        "grace_period"),
                     points: int = 150) -> alt.Chart:
    """ECDFs of a real trace (solid) against a trace synthesized from the fitted model (dashed),
    per class, one panel per quantity. ``empirical``/``synthetic``: Traces or trace DataFrames."""
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
    df["panel"] = df["class"] + " " + df["quantity"]
    return alt.Chart(df).mark_line(interpolate="step-after").encode(
        x=alt.X("value:Q", scale=alt.Scale(type="log"), title="value (s, or GPUs; log)"),
        y=alt.Y("fraction:Q", title="CDF"),
        color=alt.Color("source:N", scale=alt.Scale(domain=list(sources),
                                                    range=["#000000", "#D55E00"]), title=None),
        strokeDash=alt.StrokeDash("source:N", scale=alt.Scale(domain=list(sources),
                                                              range=[[1, 0], [5, 3]]), title=None),
    ).properties(width=150, height=110).facet(
        facet=alt.Facet("panel:N", title=None), columns=4).resolve_scale(x="independent")


# ------------------------------------------------------------------ export
FORMATS = (".png", ".svg", ".pdf")


def save(chart, path, *, scale_factor: float = 2.0, cache=None) -> Path:
    """Write ``chart`` to ``path`` (``.png``, ``.svg`` or ``.pdf``) through vl-convert, offline.

    PNG is rendered at ``scale_factor`` x (2 = ~144 dpi at column width). Returns the path.
    ``cache``: a directory of rendered files keyed by the sha256 of the spec, format,
    scale and vl-convert version; an unchanged figure is copied from there instead of
    rendered again (rendering is most of a warm ``fitgpp reproduce``).
    """
    import vl_convert as vlc
    path = Path(path)
    ext = path.suffix.lower()
    if ext not in FORMATS:
        raise PlotError(f"cannot save {path}: use one of {', '.join(FORMATS)}")
    spec = chart.to_dict() if hasattr(chart, "to_dict") else chart
    spec = json.dumps(spec, sort_keys=True)
    hit = None if cache is None else _cached_file(spec, ext, scale_factor, cache)
    if hit is not None and hit.is_file():
        data = hit.read_bytes()
    elif ext == ".png":
        data = vlc.vegalite_to_png(spec, scale=scale_factor)
    elif ext == ".svg":
        data = vlc.vegalite_to_svg(spec).encode()
    else:
        data = vlc.vegalite_to_pdf(spec)
    for dst in ([path] if hit is None or hit.is_file() else [path, hit]):
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, dst)
    return path


def _cached_file(spec: str, ext: str, scale_factor: float, cache) -> Path:
    """Where the figure cache keeps ``spec`` (JSON, sorted keys) rendered as ``ext``."""
    import vl_convert as vlc
    key = hashlib.sha256(f"{spec}\0{ext}\0{scale_factor}\0{vlc.__version__}".encode()).hexdigest()
    return Path(cache) / key[:2] / f"{key}{ext}"


def _spec(chart, formats, scale_factor: float, cache) -> dict:
    """The chart's Vega-Lite dict, validated against the schema (~0.1 s a chart) unless
    every format of it is in the figure cache already: it was rendered from this exact spec
    before, so it is not validated again (altair builds the same dict either way)."""
    if not hasattr(chart, "to_dict"):
        return chart
    if cache is not None:
        spec = chart.to_dict(validate=False)
        text = json.dumps(spec, sort_keys=True)
        if all(_cached_file(text, ext.lower(), scale_factor, cache).is_file() for ext in formats):
            return spec
    return chart.to_dict()


def save_all(charts: dict, out_dir, formats=FORMATS, **kw) -> list[Path]:
    """Save ``{name: chart}`` as ``out_dir/name.<ext>`` for every format; returns the paths."""
    out = []
    for name, chart in charts.items():
        spec = _spec(chart, formats, kw.get("scale_factor", 2.0), kw.get("cache"))
        for ext in formats:
            out.append(save(spec, Path(out_dir) / f"{name}{ext}", **kw))
    return out


# ------------------------------------------------------------------ a metric against a knob
def metric_lines(df: pd.DataFrame, *, x: str, series: str = "policy", log_y: bool = False,
                 x_title: str | None = None, y_title: str = "", percent: bool = False) -> alt.Chart:
    """Lines of ``value`` against ``x``, one per ``series``, one panel per ``metric``,
    with ``lo``/``hi`` whiskers when present (long format: x, series, metric, value[, lo, hi]).
    ``percent``: the values are fractions (changes, see :mod:`fitgpp.metrics`), shown in percent."""
    need = {x, series, "metric", "value"}
    if not need <= set(df.columns):
        raise PlotError(f"metric_lines needs columns {sorted(need)}, got {list(df.columns)}")
    st = _styles(df[series].astype(str))
    d = df.assign(**{series: df[series].astype(str)})
    xe = alt.X(f"{x}:Q", title=x_title or x)
    # the axis follows the values; CI whiskers wider than that are clipped (numbers in the table)
    ye = alt.Y("value:Q", title=y_title, scale=alt.Scale(type="log") if log_y else
               alt.Scale(zero=False, nice=True, padding=10),
               axis=alt.Axis(format="+.0%") if percent else alt.Axis())
    enc = dict(color=alt.Color(f"{series}:N", scale=st["color"], sort=st["order"], title=None))
    line = alt.Chart().mark_line().encode(
        x=xe, y=ye, strokeDash=alt.StrokeDash(f"{series}:N", scale=st["dash"], sort=st["order"],
                                              title=None), **enc)
    pts = alt.Chart().mark_point(filled=True, size=45).encode(
        x=xe, y=ye, shape=alt.Shape(f"{series}:N", scale=st["shape"], sort=st["order"], title=None),
        tooltip=[series, x, "metric", alt.Tooltip("value:Q", format="+.1%" if percent else ".3g")],
        **enc)
    layers = [line, pts]
    if {"lo", "hi"} <= set(d.columns) and d[["lo", "hi"]].notna().any().any():
        layers.append(alt.Chart().mark_rule(clip=True, opacity=0.6).encode(
            x=xe, y="lo_c:Q", y2="hi_c:Q", **enc))
        span = d.groupby("metric")["value"].agg(["min", "max"])
        pad = (span["max"] - span["min"]).clip(lower=1e-9) * 0.5 + 1e-9
        lo_lim, hi_lim = d["metric"].map(span["min"] - pad), d["metric"].map(span["max"] + pad)
        d = d.assign(lo_c=np.maximum(d["lo"], lo_lim), hi_c=np.minimum(d["hi"], hi_lim))
    return alt.layer(*layers, data=d).properties(width=COLUMN_WIDTH * 0.7, height=140).facet(
        column=alt.Column("metric:N", title=None)).resolve_scale(y="independent")
