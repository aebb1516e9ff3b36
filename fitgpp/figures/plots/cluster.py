"""The cluster over time: GPU use, queues, and jobs on nodes."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from fitgpp.figures.plots.axes import coincident
from fitgpp.figures.plots.base import Preset, PlotError, _finish, preset
from fitgpp.figures.plots.style import _hours, policy_label


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


#: The series of :func:`utilization`: colour and dash of each.
GPU_SERIES = {"running": ("#0072B2", [1, 0]), "in grace period": ("#D55E00", [4, 2]),
              "reserved for TE": ("#999999", [1, 2])}
QUEUE_SERIES = {"TE": ("#CC79A7", [1, 0]), "BE": ("#009E73", [6, 3])}


def _kept(styles: dict, i: int, df: pd.DataFrame) -> alt.Scale:
    keep = [k for k in styles if k in set(df["series"])]
    return alt.Scale(domain=keep, range=[styles[k][i] for k in keep])


def _drop_zero(df: pd.DataFrame, col: str) -> tuple[pd.DataFrame, list[str]]:
    """``df`` without the series that are zero throughout (a line along the axis reads as
    missing data), and the names of those series."""
    flat = [s for s, g in df.groupby("series", sort=False) if (g[col].fillna(0) == 0).all()]
    return df[~df["series"].isin(flat)], flat


def utilization_extent(*runs) -> dict:
    """The time and waiting-jobs ranges that cover every run of ``runs``: give them to
    :func:`utilization` of each so runs drawn side by side share their scales."""
    return {"hours_max": max(float(_hours(ds["time"].to_numpy()).max()) for ds in runs),
            "jobs_max": max(float(max(ds["waiting_te"].max(), ds["waiting_be"].max()))
                            for ds in runs)}


def utilization(ds, *, max_points: int = 600, size: str | Preset | None = None,
                title: str | None = None, hours_max: float | None = None,
                jobs_max: float | None = None) -> alt.Chart:
    """GPU utilization (running, in grace period, reserved) and queue lengths over time, one run.

    Samples are merged to at most ``max_points`` so the chart stays small. ``hours_max``,
    ``jobs_max``: the time and waiting-jobs axes run from 0 to these
    (:func:`utilization_extent`, for runs compared side by side), else to the run's own. The last time label is flush with
    the axis end (centred on it, "240" overhung the chart and was cut to "24" on screen)."""
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
    gpu, idle_gpu = _drop_zero(gpu, "fraction")
    q, idle_q = _drop_zero(q, "jobs")
    xs = alt.Scale(domain=[0, hours_max]) if hours_max else alt.Undefined
    x = alt.X("hours:Q", title="time (h)", scale=xs, axis=alt.Axis(labelFlush=True))
    # one time axis under both panels; lower panels at column width (5.5 in tall there)
    x_top = alt.X("hours:Q", scale=xs, axis=alt.Axis(title=None, labels=False))
    tall = {"column": (64, 52)}.get(p.name, (100, 80))
    width = p.width - 60
    top = alt.Chart(gpu).mark_line(interpolate="step-after", clip=True).encode(
        x=x_top if len(q) else x,
        y=alt.Y("fraction:Q", title="share of GPUs", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("series:N", title="GPUs", scale=_kept(GPU_SERIES, 0, gpu)),
        strokeDash=alt.StrokeDash("series:N", title="GPUs", scale=_kept(GPU_SERIES, 1, gpu)),
    ).properties(width=width, height=tall[0])
    bottom = alt.Chart(q).mark_line(interpolate="step-after").encode(
        x=x, y=alt.Y("jobs:Q", title="waiting jobs", scale=alt.Scale(domain=[0, jobs_max])
                     if jobs_max else alt.Undefined),
        color=alt.Color("series:N", title="queue", scale=_kept(QUEUE_SERIES, 0, q)),
        strokeDash=alt.StrokeDash("series:N", title="queue", scale=_kept(QUEUE_SERIES, 1, q)),
    ).properties(width=width, height=tall[1])
    # a panel whose every series is zero is left out: the subtitle says so
    chart = alt.vconcat(*[c for c, d in ((top, gpu), (bottom, q)) if len(d)]).resolve_scale(
        color="independent", strokeDash="independent")
    notes = coincident(gpu, "series", ["hours", "fraction"]) + coincident(q, "series",
                                                                          ["hours", "jobs"])
    if idle_gpu:
        notes.append(f"No GPU was ever {' or '.join(idle_gpu)} (not drawn).")
    if idle_q:
        notes.append(f"No {' or '.join(idle_q)} job ever waited (not drawn).")
    return _finish(chart, p, title or f"GPU use and waiting jobs over time, {policy_label(ds)}",
                   notes)


# ------------------------------------------------------------------ per-node timeline
def segments(trace, cluster, policy="fitgpp", *, tick: float = 60, **params) -> pd.DataFrame:
    """Exact run and grace-period intervals of every job (``simulate(..., segments=True)``).

    Returns rows ``job, cls, node, kind ('run'|'grace'), start, end`` in seconds.
    Meant for small runs (a few hundred jobs) drawn by :func:`node_timeline`.
    """
    from fitgpp.sim.run import simulate
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
                  size: str | Preset | None = None) -> alt.Chart:
    """One row per node: TE runs, BE runs and BE grace periods as bars, preemptions as ticks.

    ``seg``: the output of :func:`segments`. ``nodes``: which nodes (default: the first 8).
    """
    need = {"job", "cls", "node", "kind", "start", "end"}
    if not need <= set(seg.columns):
        raise PlotError(f"node_timeline needs columns {sorted(need)} (see fitgpp.figures.plots.segments)")
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
    # at least ~60 pt high: two nodes at 14 pt each left the plot a fifth of the figure
    step = max(14, round(60 / max(1, df["node"].nunique())))
    chart = alt.layer(bars, *ticks).properties(width=p.width - 50, height=alt.Step(step))
    return _finish(chart, p, title or f"Jobs on nodes {nodes[0]}-{nodes[-1]} over time")


