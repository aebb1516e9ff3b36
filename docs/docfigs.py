"""Small helpers for the executed doc pages: tiny traces, a tick-by-tick table, a job timeline.

Only the docs import this. The simulation itself is always :func:`fitgpp.simulate`
(or, for the tick-by-tick table, the same :class:`fitgpp.sim.engine.Engine` that
``simulate`` runs, observed after each schedule step and never changed); every
page checks that what it draws agrees with ``simulate``'s Dataset.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

import fitgpp
from fitgpp.figures import plots
from fitgpp.sim.engine import DONE, PENDING, RUNNING, STOPPING, WAITING, Engine
from fitgpp.sim.run import to_ticks

TICK = 60  # seconds; every tiny example uses the default tick

WHAT_COLORS = {  # Okabe-Ito, as in fitgpp.figures.plots
    "TE running": "#CC79A7",
    "BE running": "#0072B2",
    "BE grace period": "#E69F00",
    "waiting": "#d9d9d9",
}


def jobs(*rows, tasks: dict | None = None, reload: dict | None = None) -> pd.DataFrame:
    """A trace DataFrame from ``(job_id, cls, submit_tick, work_ticks, gpu, gp_ticks)`` rows.

    Times are given in ticks and converted to seconds (x 60) so the examples read in
    ticks; CPU and memory demands are 0, so a job's size is its share of a node's GPUs.
    ``tasks`` and ``reload`` ({job_id: value}, reload in ticks) add the optional columns.
    """
    df = pd.DataFrame(rows, columns=["job_id", "cls", "submit", "work", "gpu", "gp"])
    out = pd.DataFrame({
        "job_id": df["job_id"], "cls": df["cls"],
        "submit_time": df["submit"] * float(TICK), "duration": df["work"] * float(TICK),
        "gpu": df["gpu"], "cpu_milli": 0, "mem_mib": 0,
        "grace_period": df["gp"] * float(TICK),
    })
    if tasks is not None:
        out["tasks"] = [tasks.get(j, 1) for j in out["job_id"]]
    if reload is not None:
        out["restart_overhead"] = [reload.get(j, 0) * float(TICK) for j in out["job_id"]]
    return out


def cluster(nodes: int, gpu: int) -> fitgpp.Cluster:
    """``nodes`` identical nodes of ``gpu`` GPUs (CPU and memory large enough to never bind)."""
    return fitgpp.Cluster.homogeneous(nodes, gpu=gpu, cpu_milli=96000, mem_mib=786432)


def job_table(ds) -> pd.DataFrame:
    """Per-job outcome of a tiny run, in ticks: submit, first start, finish, work, slowdown."""
    tick = float(ds.attrs["tick"])
    out = pd.DataFrame({
        "cls": ds["cls"].to_numpy(),
        "GPUs": ds["gpu"].to_numpy(),
        "submit": (ds["submit"].to_numpy() / tick).astype(int),
        "work": (ds["work"].to_numpy() / tick).astype(int),
        "first start": (ds["first_start"].to_numpy() / tick).astype(int),
        "finish": (ds["finish"].to_numpy() / tick).astype(int),
        "preemptions": ds["preemptions"].to_numpy(),
        "slowdown": ds["slowdown"].to_numpy().round(3),
    }, index=pd.Index(ds["job"].to_numpy(), name="job"))
    if (ds["tasks"] > 1).any():
        out.insert(2, "tasks", ds["tasks"].to_numpy())
    if (ds["reload"] > 0).any():
        out.insert(len(out.columns) - 1, "reload", (ds["reload"].to_numpy() / tick).astype(int))
    return out


# ------------------------------------------------------------------ tick by tick
class _Observed:
    """Wraps a policy; after each schedule step it records the engine's state."""

    def __init__(self, inner, rows: list):
        self.inner, self.rows = inner, rows
        self.name = inner.name
        self.max_preemptions = getattr(inner, "max_preemptions", 0)
        vk = getattr(inner, "victim_key", None)
        if vk is not None:
            self.victim_key = vk

    def bind(self, eng) -> None:
        self.inner.bind(eng)

    def schedule(self, eng, t: int) -> None:
        self.inner.schedule(eng, t)
        self.rows.append(_snapshot(eng, t))


def _state(eng, i: int, t: int) -> str:
    s = eng.state[i]
    if s == PENDING:
        return ""
    if s == WAITING:
        return f"waiting, reserved n{eng.resv[i]}" if eng.resv[i] >= 0 else "waiting"
    where = "+".join(f"n{n}" for n in eng.nodes[i])
    if s == RUNNING:
        reload_end = eng.started_at[i] + eng.run_ro[i]
        if t < reload_end:
            return f"reloading {where} until {reload_end}, then {eng.end[i] - reload_end} left"
        return f"running {where}, {eng.end[i] - t} left"
    if s == STOPPING:
        rel = next(r for r, j in eng._release_heap if j == i)
        return f"stopping {where} until {rel}"
    assert s == DONE
    return f"done at {eng.finish[i]}"


def _snapshot(eng, t: int) -> dict:
    row = {"tick": t}
    for i in range(eng.n):
        row[f"job {eng.job_id[i]}"] = _state(eng, i, t)
    for n in range(eng.n_nodes):
        free = eng.free_g[n]
        res = eng.res_g[n]
        proj = eng.cap_g[n] - sum(eng.dg[i] for i in range(eng.n)
                                  if eng.state[i] == RUNNING and n in eng.nodes[i]) - res
        row[f"n{n} free/resv/avail/proj"] = f"{free}/{res}/{free - res}/{proj}"
    return row


def tick_table(trace: pd.DataFrame, cl: fitgpp.Cluster, policy: str, **params) -> pd.DataFrame:
    """The state of every job and every node's GPU ledger after the schedule step of each
    tick, stepping every tick (``jump=False``). "n left" is the remaining work before this
    tick's advance step; the ledger columns are free / reserved / avail / projected GPUs."""
    rows: list = []
    tr = fitgpp.read_trace(trace, cluster=cl)
    eng = Engine(to_ticks(tr.jobs, TICK), cl.capacity,
                 _Observed(fitgpp.make_policy(policy, **params), rows), check=True)
    eng.run(jump=False)
    return pd.DataFrame(rows).set_index("tick")


# ------------------------------------------------------------------ timeline chart
def intervals(trace: pd.DataFrame, cl: fitgpp.Cluster, policy: str, **params) -> pd.DataFrame:
    """Every job's waiting, running and grace-period intervals in ticks, from
    :func:`fitgpp.figures.plots.segments` (the engine's own start/preempt actions)."""
    seg = plots.segments(trace, cl, policy, tick=TICK, **params)
    seg = seg.assign(start=(seg["start"] / TICK).astype(int), end=(seg["end"] / TICK).astype(int))
    rows = []
    submit = dict(zip(trace["job_id"], (trace["submit_time"] // TICK).astype(int)))
    for job, g in seg.groupby("job", sort=False):
        g = g.sort_values(["start", "kind"], ascending=[True, False])
        ready = submit[job]
        for r in g.itertuples():
            if r.kind == "run":
                if r.start > ready:
                    rows.append((job, r.cls, -1, "waiting", ready, r.start))
                rows.append((job, r.cls, r.node, f"{r.cls} running", r.start, r.end))
            else:
                rows.append((job, r.cls, r.node, "BE grace period", r.start, r.end))
                ready = r.end
    return pd.DataFrame(rows, columns=["job", "cls", "node", "what", "start", "end"])


def timeline(trace: pd.DataFrame, cl: fitgpp.Cluster, policy: str, *, title: str = "",
             **params) -> alt.Chart:
    """One row per job: waiting (grey), running (by class) and grace period (orange), in ticks,
    each bar labelled with its node."""
    iv = intervals(trace, cl, policy, **params)
    ds = fitgpp.simulate(trace, cl, policy, **params)
    fin = dict(zip(ds["job"].to_numpy(), (ds["finish"].to_numpy() / TICK).astype(int)))
    ends = iv[iv["what"].str.endswith("running")].groupby("job")["end"].max()
    if dict(ends) != fin:  # the picture must agree with simulate()
        raise AssertionError(f"timeline finishes {dict(ends)} != simulate finishes {fin}")
    iv = iv.assign(label=np.where(iv["node"] >= 0, "n" + iv["node"].astype(str), ""),
                   row=[f"job {j} ({c})" for j, c in zip(iv["job"], iv["cls"])])
    order = [f"job {j} ({c})" for j, c in zip(trace["job_id"], trace["cls"])]
    horizon = int(iv["end"].max())
    x = alt.X("start:Q", title="tick", scale=alt.Scale(domain=[0, horizon]),
              axis=alt.Axis(values=list(range(horizon + 1)), format="d", grid=True,
                            labelFontSize=12, titleFontSize=12))
    y = alt.Y("row:N", sort=order, title=None, axis=alt.Axis(labelFontSize=12))
    bars = alt.Chart(iv).mark_bar(height=20, stroke="white", strokeWidth=1).encode(
        x=x, x2="end:Q", y=y,
        color=alt.Color("what:N", title=None, scale=alt.Scale(
            domain=list(WHAT_COLORS), range=list(WHAT_COLORS.values())),
            legend=alt.Legend(labelFontSize=12, columns=4, symbolSize=120)))
    text = alt.Chart(iv).mark_text(align="left", dx=4, fontSize=12, color="white").encode(
        x="start:Q", y=y, text="label:N")
    return alt.layer(bars, text).properties(
        width=max(360, 40 * horizon), height=alt.Step(26),
        title=alt.TitleParams(title, fontSize=13))
