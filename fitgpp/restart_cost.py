"""RQ6, beyond the paper: what does preemption cost when restarts are not free?

Every BE job gets a restart overhead (SPEC "Restart cost"): each time it starts again after a
preemption it first reloads its checkpoint for that long, holding its GPUs without progress.
We sweep the overhead from 0 to tens of minutes and compare PRIO (TE first, never preempts:
its numbers do not move) with the preempting policies, FitGpp at several ``s``, LRTP and RAND,
on three workloads: ``paper-default``, ``paper-wide-te`` (TE jobs of 4-8 GPUs, which must
preempt) and ``philly-chronus-mix1`` (fitted to the Philly-derived trace, with its multi-node
gangs). Each workload is one declared :class:`fitgpp.sweep.Experiment` (the overhead is the
swept workload knob ``restart_overhead``), run by :func:`fitgpp.sweep.run_sweep`.

Per run: TE p95, BE median and p95 slowdown, preemptions per BE job, and the GPU-hours lost to
reloads, ``sum over jobs of reload x gpu x tasks / 3600`` (``reload`` is the Dataset's
per-job time spent reloading, lost reloads included), also as a share of the BE jobs' own
GPU-hours of work.

Whether preempting still pays off against PRIO, at each overhead (our definitions):

- *TE gain*: ``1 - TE p95 / PRIO's TE p95`` (how much of PRIO's TE tail preemption removes);
- *BE cost*: ``BE p95 / PRIO's BE p95 - 1`` (how much longer the BE tail gets);
- preempting *stops paying off* at the first overhead where the BE cost exceeds the TE gain
  (both relative, same workload and seed), and *stops helping TE* at the first overhead where
  the TE p95 is no lower than PRIO's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from .cluster import DEFAULT_CLUSTER, Cluster
from .errors import FitgppError
from .metrics import t_interval

#: The workloads of RQ6: shipped model names.
WORKLOADS = ("paper-default", "paper-wide-te", "philly-chronus-mix1")
#: (label, policy, parameters) compared; PRIO is the no-preemption reference.
POLICIES = (("PRIO", "prio", {}), ("FitGpp s=1", "fitgpp", {"s": 1.0}),
            ("FitGpp s=4", "fitgpp", {"s": 4.0}), ("FitGpp s=8", "fitgpp", {"s": 8.0}),
            ("LRTP", "lrtp", {}), ("RAND", "rand", {}))
#: Metrics per run: column -> title.
METRICS = {"te_p95": "TE p95 slowdown", "be_median": "BE median slowdown",
           "be_p95": "BE p95 slowdown", "preemptions_per_be": "preemptions per BE job",
           "reload_gpu_h": "GPU-hours lost to reloads",
           "reload_share": "reloads, % of BE GPU-hours"}


class RestartCostError(FitgppError):
    """RQ6 cannot run as asked (bad size, a result without the per-job reload time)."""


@dataclass(frozen=True)
class Size:
    """How big RQ6 is: jobs per workload, seeds, the restart overheads [s] swept, where."""

    n_jobs: int
    seeds: tuple[int, ...]
    overheads: tuple[float, ...]
    workloads: tuple[str, ...] = WORKLOADS
    load: float = 0.9
    cluster: Cluster = DEFAULT_CLUSTER
    workers: int | None = 0        # fitgpp.sweep: 0 = in this process, None = Dask, all CPUs
    cache: bool = False            # fitgpp.sweep's cell cache (~/.cache/fitgpp)

    def __post_init__(self):
        if not self.overheads or 0 not in self.overheads:
            raise RestartCostError(f"overheads must include 0 (the free-restart baseline), got "
                                   f"{self.overheads!r}")
        if any(not (isinstance(x, (int, float)) and x >= 0) for x in self.overheads):
            raise RestartCostError(f"overheads are seconds >= 0, got {self.overheads!r}")
        if len(self.seeds) < 1:
            raise RestartCostError("seeds: give at least one")


QUICK = Size(n_jobs=1000, seeds=(0, 1), overheads=(0.0, 600.0, 1800.0))
FULL = Size(n_jobs=5000, seeds=(0, 1, 2, 3, 4),
            overheads=(0.0, 60.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0), cache=True)


@dataclass
class RestartCost:
    """What :func:`restart_cost` returns: per-run rows, the across-seed table, the findings
    table (one row per workload and preempting policy), the charts and the finding text."""

    runs: pd.DataFrame
    table: pd.DataFrame
    findings: pd.DataFrame
    charts: dict
    finding: str
    config: dict = field(default_factory=dict)
    key: str = "rq6"
    title: str = "RQ6: restart cost"
    question: str = "What does preemption cost when restarts are not free?"


# ---------------------------------------------------------------- the declared experiments
def experiment(workload: str, size: Size = QUICK):
    """The sweep of one workload: every policy of :data:`POLICIES` x the overheads x seeds."""
    from .sweep import Experiment, PolicyGrid, Workload
    s_values = tuple(sorted({p["s"] for _, name, p in POLICIES if name == "fitgpp"}))
    grids = [PolicyGrid(name=name) for name in dict.fromkeys(n for _, n, _ in POLICIES)
             if name != "fitgpp"]
    grids.append(PolicyGrid(name="fitgpp", s=s_values))
    return Experiment(
        workload=Workload(model=workload, n_jobs=size.n_jobs, load=size.load,
                          restart_overhead=tuple(float(x) for x in size.overheads)),
        policies=tuple(grids), seeds=tuple(size.seeds), cluster=size.cluster,
        name=f"rq6-{workload}",
        description="RQ6: restart overhead of BE jobs from 0 up, preempting policies vs PRIO")


def _label(policy: str, params: dict) -> str:
    for label, name, p in POLICIES:
        if name == policy and all(params.get(k) == v for k, v in p.items()):
            return label
    raise RestartCostError(f"cell {policy} {params} is not one of RQ6's policies")


def cell_metrics(jobs: pd.DataFrame) -> dict:
    """RQ6's metrics of one run from its per-job columns (``te``, ``slowdown``,
    ``preemptions``, ``duration`` [s], ``reload`` [s], ``gpu`` per task, ``tasks``)."""
    need = {"te", "slowdown", "preemptions", "duration", "reload", "gpu", "tasks"}
    missing = need - set(jobs.columns)
    if missing:
        raise RestartCostError(f"a run lacks the per-job column(s) {sorted(missing)}: RQ6 needs "
                               "the simulator's per-job reload time, GPUs and tasks")
    te, be = jobs["te"].to_numpy(bool), ~jobs["te"].to_numpy(bool)
    sd = jobs["slowdown"].to_numpy(float)
    gpus = jobs["gpu"].to_numpy(float) * jobs["tasks"].to_numpy(float)
    lost = float(np.sum(jobs["reload"].to_numpy(float) * gpus) / 3600.0)
    work_be = float(np.sum(jobs["duration"].to_numpy(float)[be] * gpus[be]) / 3600.0)
    return {"te_p95": float(np.percentile(sd[te], 95)),
            "be_median": float(np.median(sd[be])), "be_p95": float(np.percentile(sd[be], 95)),
            "preemptions_per_be": float(jobs["preemptions"].to_numpy()[be].sum() / be.sum()),
            "reload_gpu_h": lost, "reload_share": 100.0 * lost / work_be if work_be else 0.0}


def _jobs_of(res: dict) -> pd.DataFrame:
    """Per-job columns of one sweep cell result."""
    cols = ("slowdown", "preemptions", "duration", "reload", "gpu", "tasks")
    return pd.DataFrame({"te": np.asarray(res["te"], bool),
                         **{k: np.asarray(res[k]) for k in cols if k in res}})


def _row(workload: str, cell, res: dict) -> dict:
    params = {k: v for k, v in cell.params if k != "seed"}
    return {"workload": workload, "policy": _label(cell.policy, params),
            "overhead_s": float(dict(cell.knobs)["restart_overhead"]), "seed": cell.seed,
            **cell_metrics(_jobs_of(res))}


def runs_of(workload: str, size: Size = QUICK) -> pd.DataFrame:
    """One row per (policy, overhead, seed) of one workload, with :data:`METRICS`, from the
    per-cell results :func:`fitgpp.sweep.run_sweep` hands back (its cell cache and Dask)."""
    from .sweep import run_sweep
    results: dict = {}
    serial = size.workers == 0
    run_sweep(experiment(workload, size), workers=None if serial else size.workers,
              serial=serial, cache=None if size.cache else False, progress=False, runs=results)
    return pd.DataFrame([_row(workload, cell, res) for cell, res in results.items()])


# ---------------------------------------------------------------- across seeds and findings
def _vs_prio(runs: pd.DataFrame) -> pd.DataFrame:
    """Per run: TE gain and BE cost against PRIO on the same workload, seed and overhead."""
    prio = runs[runs["policy"] == "PRIO"].set_index(["workload", "overhead_s", "seed"])
    key = pd.MultiIndex.from_frame(runs[["workload", "overhead_s", "seed"]])
    p = prio.reindex(key)
    out = runs.copy()
    out["te_gain"] = 100.0 * (1.0 - runs["te_p95"].to_numpy() / p["te_p95"].to_numpy())
    out["be_p95_cost"] = 100.0 * (runs["be_p95"].to_numpy() / p["be_p95"].to_numpy() - 1.0)
    out["be_median_cost"] = 100.0 * (runs["be_median"].to_numpy() / p["be_median"].to_numpy()
                                     - 1.0)
    out["net"] = out["te_gain"] - out["be_p95_cost"]
    return out


def across_seeds(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and 95 % interval (``<m>``, ``<m>_lo``, ``<m>_hi``; :func:`fitgpp.metrics.t_interval`,
    no bounds below 3 seeds) over seeds of every metric, with the comparisons against PRIO."""
    r = _vs_prio(runs)
    by = ["workload", "policy", "overhead_s"]
    cols = [c for c in r.columns if c not in (*by, "seed")]
    rows = []
    for key, g in r.groupby(by, sort=False):
        row = dict(zip(by, key))
        row["overhead_min"] = row["overhead_s"] / 60.0
        row["seeds"] = len(g)
        for c in cols:
            row[c], row[f"{c}_lo"], row[f"{c}_hi"] = t_interval(g[c])
        rows.append(row)
    return pd.DataFrame(rows).sort_values(by, kind="stable").reset_index(drop=True)


def _first(ovh, cond) -> float:
    hit = [o for o, c in zip(ovh, cond) if c]
    return float(hit[0]) if hit else math.nan


def findings_table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per workload and preempting policy: its numbers at no overhead and at the
    largest, where it stops paying off against PRIO, and how fast it degrades."""
    rows = []
    for (wl, pol), g in table[table["policy"] != "PRIO"].groupby(["workload", "policy"],
                                                                 sort=False):
        g = g.sort_values("overhead_s")
        ovh = g["overhead_min"].to_numpy()
        a, b = g.iloc[0], g.iloc[-1]
        rows.append({
            "workload": wl, "policy": pol, "max_overhead_min": b["overhead_min"],
            "te_gain_0": a["te_gain"], "te_gain_max": b["te_gain"],
            "be_p95_cost_0": a["be_p95_cost"], "be_p95_cost_max": b["be_p95_cost"],
            "be_median_cost_max": b["be_median_cost"],
            "be_p95_growth": 100.0 * (b["be_p95"] / a["be_p95"] - 1.0),
            "preemptions_per_be_0": a["preemptions_per_be"],
            "preemptions_per_be_max": b["preemptions_per_be"],
            "reload_gpu_h_max": b["reload_gpu_h"], "reload_share_max": b["reload_share"],
            "stops_paying_min": _first(ovh, g["net"].to_numpy() < 0),
            "stops_helping_te_min": _first(ovh, g["te_gain"].to_numpy() <= 0),
        })
    return pd.DataFrame(rows)


def _when(x: float, top: float) -> str:
    return (f"beyond {top:g} min" if math.isnan(x) else
            "already at 0 min" if x == 0 else f"at {x:g} min")


def describe(findings: pd.DataFrame) -> str:
    """The finding, in sentences computed from :func:`findings_table` (no fixed result)."""
    out = []
    for wl, g in findings.groupby("workload", sort=False):
        g = g.set_index("policy")
        top = float(g["max_overhead_min"].iloc[0])
        parts = []
        for pol, r in g.iterrows():
            parts.append(
                f"{pol}: TE gain over PRIO {r['te_gain_0']:.0f} % -> {r['te_gain_max']:.0f} %, "
                f"BE p95 cost {r['be_p95_cost_0']:+.0f} % -> {r['be_p95_cost_max']:+.0f} %, "
                f"{r['preemptions_per_be_max']:.2f} preemptions per BE job, "
                f"{r['reload_gpu_h_max']:.3g} GPU-h lost to reloads "
                f"({r['reload_share_max']:.2g} % of BE work); stops paying off "
                f"{_when(r['stops_paying_min'], top)}")
        fit = g[g.index.str.startswith("FitGpp")]
        oth = g[~g.index.str.startswith("FitGpp")]
        verdict = ""
        if len(fit) and len(oth):
            best_fit = fit["be_p95_cost_max"].idxmin()
            f_lost, o_lost = fit["reload_gpu_h_max"].max(), oth["reload_gpu_h_max"].min()
            f_cost, o_cost = fit["be_p95_cost_max"].max(), oth["be_p95_cost_max"].min()
            verdict = (f" At {top:g} min, every FitGpp setting loses "
                       f"{'fewer' if f_lost < o_lost else 'no fewer'} GPU-hours to reloads "
                       f"than LRTP and RAND (at most {f_lost:.3g} against at least "
                       f"{o_lost:.3g}) and its BE p95 cost over PRIO is "
                       f"{'lower' if f_cost < o_cost else 'not lower'} (at most "
                       f"{f_cost:+.0f} % against at least {o_cost:+.0f} %); the mildest "
                       f"FitGpp is {best_fit}.")
        out.append(f"{wl}, restart overhead 0 -> {top:g} min. " + "; ".join(parts) + "."
                   + verdict)
    return "\n".join(out)


# ---------------------------------------------------------------- charts
def workload_chart(table: pd.DataFrame, workload: str):
    """Every metric of ``workload`` against the overhead, one line per policy, 95 % CIs."""
    from . import plots
    g = table[table["workload"] == workload]
    if g.empty:
        raise RestartCostError(f"nothing to draw for workload {workload!r}")
    long = pd.concat([g[["overhead_min", "policy"]].assign(
        metric=title, value=g[k], lo=g[f"{k}_lo"], hi=g[f"{k}_hi"])
        for k, title in METRICS.items()], ignore_index=True)
    return plots.metric_lines(long, x="overhead_min", x_title="restart overhead (min)",
                              title=f"{workload}: what restarts cost")


def charts(table: pd.DataFrame) -> dict:
    """``rq6_<workload>``: :func:`workload_chart` of each workload; ``rq6_net``: TE gain minus
    BE p95 cost against PRIO (below 0: preempting no longer pays off), one panel per
    workload."""
    from . import plots
    out = {f"rq6_{wl}": workload_chart(table, wl) for wl in dict.fromkeys(table["workload"])}
    net = table[table["policy"] != "PRIO"]
    long = net[["overhead_min", "policy"]].assign(metric=net["workload"], value=net["net"],
                                                  lo=net["net_lo"], hi=net["net_hi"])
    out["rq6_net"] = plots.metric_lines(long, x="overhead_min",
                                        x_title="restart overhead (min)",
                                        y_title="TE gain - BE p95 cost vs PRIO (%)")
    return out


def at_overhead(result: RestartCost, workload: str, overhead_s: float,
                policies=None) -> pd.DataFrame:
    """The across-seed numbers of ``workload`` at one overhead, for ``policies`` (labels;
    default all): what the notebook's controls show beside the chart."""
    t = result.table
    if workload not in set(t["workload"]):
        raise RestartCostError(f"workload {workload!r} is not in this result (has "
                               f"{', '.join(dict.fromkeys(t['workload']))})")
    if not np.isclose(t["overhead_s"], overhead_s).any():
        raise RestartCostError(f"overhead {overhead_s!r} s was not swept (swept: "
                               f"{', '.join(f'{x:g}' for x in sorted(set(t['overhead_s'])))})")
    pols = list(policies) if policies else list(dict.fromkeys(t["policy"]))
    sel = t[(t["workload"] == workload) & np.isclose(t["overhead_s"], overhead_s)
            & t["policy"].isin(pols)]
    cols = ["policy", *METRICS, "te_gain", "be_p95_cost", "be_median_cost"]
    return sel[cols].set_index("policy").round(3)


def chart_for(result: RestartCost, workload: str, policies=None):
    """:func:`workload_chart` of ``workload`` restricted to ``policies`` (labels)."""
    t = result.table
    pols = list(policies) if policies else list(dict.fromkeys(t["policy"]))
    return workload_chart(t[t["policy"].isin(pols)], workload)


# ---------------------------------------------------------------- the question
def restart_cost(size: Size = QUICK) -> RestartCost:
    """Run RQ6 at ``size`` (:data:`QUICK` or :data:`FULL`) on every workload of the size."""
    import fitgpp
    runs = pd.concat([runs_of(wl, size) for wl in size.workloads], ignore_index=True)
    table = across_seeds(runs)
    found = findings_table(table)
    config = {"workloads": list(size.workloads), "n_jobs": size.n_jobs,
              "seeds": list(size.seeds), "overheads_s": list(size.overheads),
              "load": size.load, "cluster": size.cluster.describe(), "tick_s": 60,
              "max_preemptions": 3, "policies": [p[0] for p in POLICIES],
              "fitgpp_version": fitgpp.__version__}
    return RestartCost(runs, table, found, charts(table), describe(found), config)


# ---------------------------------------------------------------- as a study of fitgpp reproduce
def study(overheads=FULL.overheads, workloads=WORKLOADS):
    """RQ6 as a :class:`fitgpp.reproduce.Study` for ``fitgpp reproduce``: the workloads are
    its variants (dimension ``workload``), the overheads its swept knob; ``n_jobs``, seeds and
    load come from the reproduce size. Its analysis is :func:`analyze`."""
    from .reproduce import Study
    from .workload import load_model

    def variant(name):
        def make(_base):
            return load_model(name)
        make.workload = name
        return make

    fitgpp_s = sorted({p["s"] for _, n, p in POLICIES if n == "fitgpp"})
    return Study(key="rq6", title=RestartCost.title, question=RestartCost.question,
                 policies={"prio": {}, "fitgpp": {"s": fitgpp_s}, "lrtp": {}, "rand": {}},
                 knobs={"restart_overhead": tuple(float(x) for x in overheads)},
                 variants={w: variant(w) for w in workloads}, variant_dim="workload",
                 analyze=analyze)


def analyze(o):
    """A :class:`fitgpp.reproduce.Outcome` of :func:`study` -> its ``RQResult``: the
    across-seed table of this module, the charts, the finding; the findings table is in
    ``config["findings"]``."""
    from .reproduce import RQResult, _config
    runs = pd.DataFrame([_row(variant, cell, res) for (variant, cell), res in o.runs.items()])
    table = across_seeds(runs)
    found = findings_table(table)
    return RQResult(o.study.key, o.study.title, o.study.question, table, charts(table), {},
                    describe(found).replace("\n", " "),
                    _config(o, findings=found.round(3).to_dict(orient="records")))
