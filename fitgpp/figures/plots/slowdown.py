"""Slowdown distributions: CDFs, bootstrap statistics and bars."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd

from fitgpp.analysis.metrics import SLOWDOWN_RANGE, cut_interval
from fitgpp.figures.plots.axes import _log_domain, _log_scale, coincident, log_ticks
from fitgpp.figures.plots.base import CLASS_NAMES, Preset, PlotError, _finish, _panel, preset
from fitgpp.figures.plots.style import _as_runs, _styles


# ------------------------------------------------------------------ slowdown distributions
def slowdown_cdf(results, *, points: int = 200, size: str | Preset | None = None,
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
                                          title="slowdown (log scale)", room_below=True,
                                          lowest=SLOWDOWN_RANGE[0])),
        y=alt.Y("fraction:Q", title="fraction of jobs", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("policy:N", scale=st["color"], sort=st["order"], title="policy"),
        strokeDash=alt.StrokeDash("policy:N", scale=st["dash"], sort=st["order"], title="policy"),
        column=alt.Column("class:N", title=None, sort=[CLASS_NAMES["TE"], CLASS_NAMES["BE"]]),
    ).properties(width=width, height=110 if p.name == "column" else 170)   # 50 pt was too flat
    notes = coincident(df, "policy", ["slowdown", "fraction"], ["class"])
    return _finish(chart, p, title, notes, legend=st["order"])


def bootstrap_stats(ds, *, n_boot: int = 300, seed: int = 0, level: float = 0.95,
                    cache=None) -> pd.DataFrame:
    """Median and p95 slowdown per class with a percentile-bootstrap CI over jobs
    (:func:`fitgpp.analysis.metrics.bootstrap_interval`).

    Returns rows ``class, stat ('median'|'p95'), value, lo, hi``. ``cache``: a directory
    where each interval is kept (see :func:`_cached_interval`); the numbers are the same.
    """
    from fitgpp.analysis.metrics import class_stats
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
    """:func:`fitgpp.analysis.metrics.bootstrap_interval` of ``x``, read from ``cache`` (a directory)
    when it was computed before: keyed by the sha256 of the values, ``q``, the resampling
    parameters, the numpy and scipy versions and the digest of fitgpp's result code (which
    covers fitgpp.analysis.metrics); the bounds are stored as JSON numbers, which round-trip exactly.
    Resampling 300 times is most of a warm RQ5 (~0.8 s CPU on the full trace)."""
    from fitgpp.analysis.metrics import bootstrap_interval
    if cache is None:
        return bootstrap_interval(x, q, **kw)
    import numpy
    import scipy

    from fitgpp.sweep.cell import code_digest
    x = np.ascontiguousarray(x, dtype=float)
    doc = json.dumps({"q": float(q), **kw, "numpy": numpy.__version__, "scipy": scipy.__version__,
                      "code": code_digest(), "n": len(x)}, sort_keys=True)
    key = hashlib.sha256(doc.encode() + b"\0" + x.tobytes()).hexdigest()
    path = Path(cache) / key[:2] / f"{key}.json"
    from fitgpp.figures.plots.render import keep, kept_bytes
    try:   # (not a regular file, or nested too deep: read as damaged)
        lo, hi = json.loads(kept_bytes(path))
        return float(lo), float(hi)
    except (ValueError, TypeError, RecursionError):
        pass  # missing or unreadable: compute it again
    lo, hi = bootstrap_interval(x, q, **kw)
    keep(path, json.dumps([lo, hi]).encode())  # (not kept in a cache it cannot write)
    return lo, hi


def stats_table(results, **kw) -> pd.DataFrame:
    """:func:`bootstrap_stats` for every run, with a ``policy`` column."""
    runs = _as_runs(results)
    return pd.concat([bootstrap_stats(ds, **kw).assign(policy=lb) for lb, ds in runs.items()],
                     ignore_index=True)


def slowdown_bars(stats: pd.DataFrame, *, size: str | Preset | None = None,
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
    # a slowdown is never below 1: a whisker reaching below is cut there and marked "*",
    # as a cut bound is in the tables (fitgpp.analysis.metrics.cut_interval)
    cuts = [cut_interval(v, lo, hi, SLOWDOWN_RANGE) for v, lo, hi in
            zip(df["value"], df["lo"], df["hi"])]
    df["lo_c"] = [c.low for c in cuts]
    df["cut"] = ["*" if c.clipped_low else "" for c in cuts]
    whisk = base.mark_rule(color="black", strokeWidth=1.2, clip=True).encode(
        x=alt.X("lo_c:Q", **xs), x2="hi:Q")
    star = base.mark_text(align="left", baseline="bottom", dx=1, dy=-3,
                          fontSize=p.font + 2, fontWeight="bold").encode(
        x=alt.X("lo_c:Q", **xs), text="cut:N")
    chart = alt.layer(bars, whisk, star, data=df).properties(
        # a panel at least ~54 pt high: three policies at 12 pt each left the plots 22 %
        width=width, height=alt.Step(max(12, round(54 / max(1, df["policy"].nunique()))))).facet(
        facet=alt.Facet("panel:N", title=None,
                        sort=["TE median", "TE p95", "BE median", "BE p95"]),
        columns=2)
    cut = " (* where cut at 1)" if (df["cut"] == "*").any() else ""
    return _finish(chart, p, title, ["Bars (from 1, the least slowdown) show the statistic, "
                                     f"whiskers its 95 % interval{cut}; log scale."])


