"""``synthesize``: draw a reproducible trace in the SPEC schema from a workload model.

Randomness: one ``SeedSequence(seed)`` is spawned into one generator per attribute and
class (see :data:`STREAMS`). Every stream draws ``n_jobs`` values whatever the other
settings are, and the k-th job of a class takes the k-th value of that class's streams.
So changing ``te_fraction`` changes which jobs are TE, but the k-th BE job keeps its run
time, GPUs, CPU/memory and grace period; changing ``load`` only stretches arrival times.

Arrivals: a Poisson process whose intensity is ``rate * profile(hour of day)``, where the
profile is the share-weighted mix of the class profiles (flat if the model has none); the
class of each job is drawn independently of its arrival time (TE with probability
``te_fraction``, default the model's TE share). Times are rounded to milliseconds.

Load: with ``load``, the rate is set so the offered GPU load of the drawn jobs,
``sum(gpu * duration) / (total GPUs * n_jobs / rate)``, equals ``load`` exactly; the
window ``n_jobs / rate`` is the expected span of ``n_jobs`` arrivals, so the load measured
with the realised span (last submit time) is within about ``1/sqrt(n_jobs)`` of it.

Demands that fit no node of ``cluster``: ``on_unfit="error"`` (default) raises and names
the demands and their probability; ``on_unfit="restrict"`` removes them from the GPU and
CPU/memory distributions of that class (renormalising the rest) before drawing, and
records the removed probability in ``source["restricted"]``. Nothing is dropped silently.

Multi-node jobs (gangs): a job's number of tasks is drawn from the model's ``tasks``
distribution given its GPUs per task (one task when the model has none). For sweeps,
``gang_fraction=f`` replaces it for BE jobs: each BE job is a gang with probability ``f``,
of a number of tasks uniform on ``2..gang_tasks`` (default 4); the GPUs, CPU and memory
drawn are per task. The offered load counts every task (``gpu * tasks * duration``), so at
a fixed ``load`` more gangs mean fewer arrivals. A gang needs ``tasks`` distinct nodes that
each fit its per-task demand; with ``cluster``, a draw that could break that is an error.

Restart overhead (seconds a preempted job spends reloading its checkpoint each time it
starts again; SPEC "Restart cost"): ``restart_overhead=m`` gives every BE job ``m``, or
with ``restart_sigma=σ > 0`` a lognormal value of median ``m`` and log-spread ``σ``. It does
not scale with the job's GPUs or run time: reloading reads the model and optimizer state
(the size of the model, which the traces do not record; data-parallel tasks read the same
checkpoint in parallel) and restarts the data pipeline and process group (about fixed), so
no recorded attribute predicts it, and one number the experiments sweep is the plainest
assumption; ``restart_sigma`` tests whether the spread matters. TE jobs are never preempted
and get 0.

The share of wide BE jobs: ``be_8gpu_share=f`` makes a BE job ask for 8 GPUs (per task) with
probability ``f``, the model's other BE GPU counts keeping their relative probabilities (scaled
to ``1 - f``), each with its own CPU and memory as the model gives them. The model's BE class
must have an 8-GPU demand (and another one, unless ``f`` is 1). Full-node BE jobs are what
FIFO's strict queue blocks behind and what a wide TE job preempts, so RQ8 varies it.

Columns ``tasks`` and ``restart_overhead`` are written only when some job's value differs
from the default (1 and 0), so traces without gangs or reloads stay byte-identical to
those of earlier versions; the new random streams come after the old ones in the spawn
order, so they do not change the old streams' values.
"""

from __future__ import annotations

import math
import numbers
from typing import Literal

import numpy as np
import pandas as pd

from fitgpp.sim.cluster import Cluster
from fitgpp.errors import FitgppError
from fitgpp._version import __version__
from fitgpp.sim.trace import Trace, read_trace
from fitgpp.workload.dists import Categorical, _pick
from fitgpp.workload.model import CLASSES, WorkloadModel, list_models, load_model

#: Independent random streams, one per attribute (and class), in spawn order.
STREAMS = ("arrival", "class", "run_time_TE", "run_time_BE", "gpu_TE", "gpu_BE",
           "cpu_mem_TE", "cpu_mem_BE", "grace_period", "tasks_TE", "tasks_BE",
           "restart_overhead")
#: Default largest gang (tasks) drawn with ``gang_fraction``.
GANG_TASKS = 4


class SynthesisError(FitgppError):
    """Invalid synthesis arguments, or a model whose demands fit no node of the cluster."""


def _demand_table(cm, cluster: Cluster | None, on_unfit: str, c: str):
    """Per class: list of (gpu, cpu, mem, prob) and the probability removed as unfit."""
    rows = []
    for g, p_g in zip(cm.gpu.values, cm.gpu.probs):
        pairs = cm.cpu_mem[g]
        tot = sum(w for _, _, w in pairs)
        rows += [(g, cpu, mem, p_g * w / tot) for cpu, mem, w in pairs]
    removed = 0.0
    if cluster is not None:
        dem = np.array([r[:3] for r in rows], dtype=np.int64)
        fits = cluster.fits_some_node(dem)
        if not fits.all():
            bad = [rows[i] for i in np.flatnonzero(~fits)]
            removed = float(sum(r[3] for r in bad))
            if on_unfit == "error" or removed >= 1.0 - 1e-12:
                shown = ", ".join(f"({g} GPU, {cpu} mCPU, {mem} MiB)" for g, cpu, mem, _ in bad[:4])
                more = f" and {len(bad) - 4} more" if len(bad) > 4 else ""
                hint = ("; pass on_unfit='restrict' (CLI --on-unfit restrict) to draw only "
                        "demands that fit" if on_unfit == "error" else "")
                raise SynthesisError(
                    f"class {c}: demands {shown}{more} (probability {removed:.4f}) fit no node "
                    f"of the cluster ({cluster.describe()}){hint}")
            rows = [r for r, ok in zip(rows, fits) if ok]
    return rows, removed


def _arrivals(n: int, rate: float, profile, rng) -> np.ndarray:
    """``n`` arrival times [s] of a Poisson process with intensity rate * profile[hour]."""
    e = np.cumsum(rng.exponential(1.0, n))        # unit-rate event times
    if profile is None:
        return e / rate
    p = np.asarray(profile, dtype=float)
    days = int(math.ceil(e[-1] / (rate * 86_400.0))) + 2
    per_hour = np.tile(p, days) * rate * 3600.0   # expected arrivals in each hour
    cum = np.concatenate([[0.0], np.cumsum(per_hour)])
    k = np.searchsorted(cum, e, side="right") - 1  # hour containing each event
    return 3600.0 * k + (e - cum[k]) / (rate * p[k % 24])


def _nonneg(name, v, *, hi=None):
    if v is None:
        return None
    if not (isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)
            and v >= 0 and (hi is None or v <= hi)):
        rng = f"in [0, {hi}]" if hi is not None else "a number >= 0"
        raise SynthesisError(f"{name} must be {rng}, got {v!r}")
    return float(v)


def _gang_args(gang_fraction, gang_tasks, restart_overhead, restart_sigma):
    f = _nonneg("gang_fraction", gang_fraction, hi=1.0)
    if gang_tasks is not None:
        if f is None:
            raise SynthesisError("gang_tasks needs gang_fraction (the share of BE jobs that "
                                 "are gangs)")
        if isinstance(gang_tasks, bool) or not isinstance(gang_tasks, (int, np.integer)) \
                or gang_tasks < 2:
            raise SynthesisError(f"gang_tasks must be an integer >= 2, got {gang_tasks!r}")
    ro = _nonneg("restart_overhead", restart_overhead)
    sig = _nonneg("restart_sigma", restart_sigma)
    if sig is not None and ro is None:
        raise SynthesisError("restart_sigma needs restart_overhead (the median, in seconds)")
    return f, (None if gang_tasks is None else int(gang_tasks)), ro, sig


def _check_gangs(c, rows, tasks_of, cluster):
    """Every (demand, tasks) that can be drawn fits on ``tasks`` distinct nodes."""
    if cluster is None:
        return
    dem = np.array([r[:3] for r in rows], dtype=np.int64).reshape(-1, 3)
    n_fit = (dem[:, None, :] <= cluster.capacity[None, :, :]).all(axis=2).sum(axis=1)
    for (g, cpu, mem, _), nf in zip(rows, n_fit):
        k = tasks_of(g)
        if k > nf:
            raise SynthesisError(
                f"class {c}: a gang of {k} tasks of ({g} GPU, {cpu} mCPU, {mem} MiB) can be "
                f"drawn, but only {nf} node(s) of the cluster ({cluster.describe()}) fit one "
                "task: use a cluster with more nodes, or fewer tasks (gang_tasks)")


def _most_tasks(cm, c, gang_fraction, gang_tasks):
    """``g -> the largest number of tasks a job of g GPUs per task can be drawn with``."""
    if c == "BE" and gang_fraction is not None:
        return lambda g: gang_tasks if gang_fraction > 0 else 1
    return lambda g: max(cm.tasks_given_gpu(g).values)


def _draw_tasks(cm, c, gdraw, u, gang_fraction, gang_tasks) -> np.ndarray:
    """Tasks per job of class ``c``: the model's given the GPUs, or the gang knob for BE."""
    if c == "BE" and gang_fraction is not None:
        extra = np.floor(u[:, 1] * (gang_tasks - 1)).astype(np.int64)
        return np.where(u[:, 0] < gang_fraction, 2 + np.minimum(extra, gang_tasks - 2), 1)
    tasks = np.ones(len(gdraw), dtype=np.int64)
    if cm.tasks is not None:
        for g in np.unique(gdraw):
            sel = gdraw == g
            tasks[sel] = cm.tasks_given_gpu(int(g)).rvs_from(u[sel, 0])
    return tasks


def synthesize(model, n_jobs: int, seed: int = 0, load: float | None = None,
               te_fraction: float | None = None, grace_scale: float | None = None,
               cluster: Cluster | None = None,
               on_unfit: Literal["error", "restrict"] = "error",
               gang_fraction: float | None = None, gang_tasks: int | None = None,
               restart_overhead: float | None = None,
               restart_sigma: float | None = None,
               be_8gpu_share: float | None = None) -> Trace:
    """Draw ``n_jobs`` jobs from ``model`` (a WorkloadModel, shipped name or JSON path).

    ``load``: target offered GPU load as a fraction of ``cluster``'s GPUs (needs
    ``cluster``); default: the model's own arrival rate. ``te_fraction``: TE share of
    jobs (default the model's). ``grace_scale``: factor on BE grace periods (default 1).
    ``cluster``: validate demands against it (see ``on_unfit``). ``gang_fraction``: share
    of BE jobs that are gangs of 2..``gang_tasks`` tasks (default: the model's tasks
    distribution). ``restart_overhead``: median reload time of a preempted BE job [s]
    (default 0), lognormal with log-spread ``restart_sigma`` (default 0: fixed).
    ``be_8gpu_share``: probability of a BE job asking for 8 GPUs (default: the model's).
    Returns a validated :class:`~fitgpp.Trace` whose ``source`` is the full recipe.
    """
    m: WorkloadModel = load_model(model)
    share, gscale, load = _checked_args(m, n_jobs, seed, load, cluster, te_fraction,
                                        grace_scale, on_unfit)
    gfrac, gtasks, ro_med, ro_sig = _gang_args(gang_fraction, gang_tasks, restart_overhead,
                                               restart_sigma)
    gmax = GANG_TASKS if gtasks is None else gtasks
    wide = _nonneg("be_8gpu_share", be_8gpu_share, hi=1.0)

    rngs = dict(zip(STREAMS, (np.random.default_rng(s)
                              for s in np.random.SeedSequence(seed).spawn(len(STREAMS)))))
    n = int(n_jobs)
    is_te = rngs["class"].random(n) < share
    cls = np.where(is_te, "TE", "BE")
    duration, gpu, cpu, mem, grace, tasks, restricted = _draw_classes(
        m, cls, rngs, cluster, on_unfit, gfrac, gmax, gscale, wide)

    duration = np.maximum(np.round(duration, 3), 0.001)
    grace = np.round(grace, 3)
    z = rngs["restart_overhead"].standard_normal(n)
    reload = np.where(cls == "BE", (ro_med or 0.0) * np.exp((ro_sig or 0.0) * z), 0.0)
    reload = np.round(reload, 3)
    profile_mix = _mix_profiles(m, share)
    rate = m.rate  # without load, the model's total arrival rate, whatever the TE share
    offered = None
    if load is not None:
        work = float(np.sum(gpu * tasks * duration))
        if work <= 0:
            raise SynthesisError("the drawn jobs demand no GPUs, so no arrival rate gives "
                                 f"a GPU load of {load}")
        rate = float(load * cluster.total_gpus * n / work)
    submit = np.round(_arrivals(n, rate, profile_mix, rngs["arrival"]), 3)
    if cluster is not None and cluster.total_gpus > 0:
        offered = float(np.sum(gpu * tasks * duration) / (cluster.total_gpus * n / rate))
    del cls  # one "TE" and one "BE" object, not a string a job (8 bytes a job, not 60)
    names = np.full(n, "BE", dtype=object)
    names[is_te] = "TE"
    df = pd.DataFrame({"job_id": np.arange(n, dtype=np.int64), "cls": names,
                       "submit_time": submit, "duration": duration, "gpu": gpu,
                       "cpu_milli": cpu, "mem_mib": mem, "grace_period": grace}, copy=False)
    if (tasks > 1).any():  # only when not the default, so older traces stay byte-identical
        df["tasks"] = tasks
    if (reload > 0).any():
        df["restart_overhead"] = reload
    source = _recipe(m, n, seed, load, te_fraction, grace_scale, cluster, on_unfit, restricted,
                     rate, offered)
    knobs = {"gang_fraction": gfrac, "gang_tasks": gtasks, "restart_overhead": ro_med,
             "restart_sigma": ro_sig, "be_8gpu_share": wide}
    source.update({k: v for k, v in knobs.items() if v is not None})  # older recipes unchanged
    return read_trace(df, cluster=cluster, source=source)


def _checked_args(m, n_jobs, seed, load, cluster, te_fraction, grace_scale, on_unfit) -> tuple:
    """``(TE share, grace scale, load)`` as floats, once every argument is checked."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise SynthesisError(f"n_jobs must be a positive integer, got {n_jobs!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise SynthesisError(f"seed must be an integer >= 0, got {seed!r}")
    if load is not None:
        if cluster is None:
            raise SynthesisError("load needs a cluster: the offered load is a fraction of "
                                 "the cluster's GPUs (pass cluster=...)")
        if not (isinstance(load, numbers.Real) and math.isfinite(load) and load > 0):
            raise SynthesisError(f"load must be a number > 0, got {load!r}")
        if cluster.total_gpus == 0:
            raise SynthesisError("load is a fraction of the cluster's GPUs, but it has none")
    share = m.te_share if te_fraction is None else te_fraction
    if not (isinstance(share, numbers.Real) and not isinstance(share, bool) and 0.0 <= share <= 1.0):
        raise SynthesisError(f"te_fraction must be in [0, 1], got {te_fraction!r}")
    gscale = 1.0 if grace_scale is None else grace_scale
    if not (isinstance(gscale, numbers.Real) and math.isfinite(gscale) and gscale >= 0):
        raise SynthesisError(f"grace_scale must be a number >= 0, got {grace_scale!r}")
    share, gscale = float(share), float(gscale)
    load = None if load is None else float(load)
    if on_unfit not in ("error", "restrict"):
        raise SynthesisError(f"on_unfit must be 'error' or 'restrict', got {on_unfit!r}")
    return share, gscale, load


def _wide_share(rows, share: float | None, model: str) -> list:
    """The BE demand table ``rows`` ((gpu, cpu, mem, prob)) with 8-GPU demands of total
    probability ``share`` and the others scaled to ``1 - share`` (None: as they are)."""
    if share is None:
        return rows
    wide = sum(r[3] for r in rows if r[0] == 8)
    rest = sum(r[3] for r in rows if r[0] != 8)
    if share > 0 and wide <= 0:
        raise SynthesisError(f"be_8gpu_share={share:g}: model {model!r} has no 8-GPU BE demand "
                             f"that fits (its BE GPUs: {sorted({r[0] for r in rows})})")
    if share < 1 and rest <= 0:
        raise SynthesisError(f"be_8gpu_share={share:g}: model {model!r} has no BE demand "
                             "other than 8 GPUs to draw the rest from")
    out = [(g, c, mm, (share * p / wide) if g == 8 else ((1 - share) * p / rest))
           for g, c, mm, p in rows]
    return [r for r in out if r[3] > 0]


def _draw_classes(m, cls, rngs, cluster, on_unfit, gfrac, gmax, gscale, wide=None) -> tuple:
    """Run time, demands, tasks and grace period of every job, each class from its model;
    and, per class, the demands ``on_unfit="restrict"`` removed."""
    n = len(cls)
    duration = np.empty(n)
    gpu = np.empty(n, dtype=np.int64)
    cpu = np.empty(n, dtype=np.int64)
    mem = np.empty(n, dtype=np.int64)
    grace = np.full(n, np.nan)
    tasks = np.ones(n, dtype=np.int64)
    restricted = {}
    for c in CLASSES:
        cm = m.classes[c]
        mask = cls == c
        k = int(mask.sum())
        rows, removed = _demand_table(cm, cluster, on_unfit, c)
        if removed:
            restricted[c] = removed
        if c == "BE":
            rows = _wide_share(rows, wide, m.name)
        # Every stream draws n values, so the k-th job of a class gets the same values
        # whatever te_fraction is.
        duration[mask] = cm.run_time.rvs(n, rngs[f"run_time_{c}"])[:k]
        gvals = np.array(sorted({r[0] for r in rows}), dtype=np.int64)
        gprob = np.array([sum(r[3] for r in rows if r[0] == g) for g in gvals])
        gdraw = Categorical(tuple(gvals), tuple(gprob / gprob.sum())).rvs(
            n, rngs[f"gpu_{c}"])[:k]
        gpu[mask] = gdraw
        cpu[mask], mem[mask] = _draw_cpu_mem(rows, gvals, gdraw,
                                             rngs[f"cpu_mem_{c}"].random(n)[:k])
        _check_gangs(c, rows, _most_tasks(cm, c, gfrac, gmax), cluster)
        tasks[mask] = _draw_tasks(cm, c, gdraw, rngs[f"tasks_{c}"].random((n, 2))[:k],
                                  gfrac, gmax)
        if c == "BE":
            grace[mask] = cm.grace_period.rvs(n, rngs["grace_period"])[:k] * gscale
    return duration, gpu, cpu, mem, grace, tasks, restricted


def _draw_cpu_mem(rows, gvals, gdraw, u) -> tuple[np.ndarray, np.ndarray]:
    """CPU and memory of jobs drawn with ``gdraw`` GPUs: a (cpu, mem) pair of the demand
    table ``rows`` for that GPU count, picked by the uniforms ``u``."""
    k = len(gdraw)
    cpu_c, mem_c = np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64)
    for g in gvals:
        sel = gdraw == g
        pairs = [r for r in rows if r[0] == g]
        idx = _pick(np.array([r[3] for r in pairs]), u[sel])
        cpu_c[sel] = np.array([r[1] for r in pairs])[idx]
        mem_c[sel] = np.array([r[2] for r in pairs])[idx]
    return cpu_c, mem_c


def _recipe(m, n, seed, load, te_fraction, grace_scale, cluster, on_unfit, restricted, rate,
            offered) -> dict:
    """The trace's ``source``: everything :func:`from_recipe` needs to draw it again."""
    model_file, model_file_sha256 = m.file_ref()
    return {
        "kind": "synthetic",
        "model": m.name,
        "model_sha256": m.sha256(),
        "model_file": model_file,
        "model_file_sha256": model_file_sha256,
        "n_jobs": n,
        "seed": int(seed),
        "load": None if load is None else float(load),
        "te_fraction": None if te_fraction is None else float(te_fraction),
        "grace_scale": None if grace_scale is None else float(grace_scale),
        "cluster": cluster.to_json() if cluster is not None else None,
        "on_unfit": on_unfit,
        "restricted": restricted,
        "arrival_rate_per_s": rate,
        "offered_load": offered,
        "streams": list(STREAMS),
        "fitgpp_version": __version__,
    }


def _mix_profiles(m: WorkloadModel, share: float):
    te, be = m.classes["TE"].daily_profile, m.classes["BE"].daily_profile
    if te is None and be is None:
        return None
    te = np.ones(24) if te is None else np.asarray(te)
    be = np.ones(24) if be is None else np.asarray(be)
    mix = share * te + (1 - share) * be
    return mix / mix.mean()


def offered_load(trace: Trace | pd.DataFrame, cluster: Cluster, span: float | None = None) -> float:
    """``sum(gpu * tasks * duration) / (total GPUs * span)``; span defaults to the last
    submit time; ``tasks`` is 1 where the trace has none."""
    jobs = trace.jobs if isinstance(trace, Trace) else trace
    if span is None:
        span = float(jobs["submit_time"].max())
    tasks = jobs["tasks"].fillna(1) if "tasks" in jobs.columns else 1
    return float((jobs["gpu"] * tasks * jobs["duration"]).sum() / (cluster.total_gpus * span))


def from_recipe(source: dict, model=None) -> Trace:
    """Re-draw a synthetic trace from its ``Trace.source`` recipe.

    The model is ``model`` if given, else the recorded model file, else the shipped model of
    the recorded name; its content must match the recorded sha256.
    """
    if source.get("kind") != "synthetic":
        raise SynthesisError("not a synthesis recipe (source['kind'] != 'synthetic')")
    if model is None and not source.get("model_file") and source["model"] not in list_models():
        raise SynthesisError(f"the recipe's model {source['model']!r} was built in memory (no "
                             "model file was recorded): pass it as model=, or save it and "
                             "synthesize from the file")
    m = load_model(model if model is not None else (source.get("model_file") or source["model"]))
    if m.sha256() != source["model_sha256"]:
        raise SynthesisError(f"model {m.name!r} has changed since the recipe was recorded "
                             f"(sha256 {m.sha256()[:12]} != {source['model_sha256'][:12]})")
    cl = Cluster.from_json(source["cluster"]) if source.get("cluster") else None
    return synthesize(m, source["n_jobs"], seed=source["seed"], load=source["load"],
                      te_fraction=source["te_fraction"], grace_scale=source["grace_scale"],
                      cluster=cl, on_unfit=source.get("on_unfit", "error"),
                      **{k: source[k] for k in ("gang_fraction", "gang_tasks",
                                                "restart_overhead", "restart_sigma",
                                                "be_8gpu_share")
                         if source.get(k) is not None})
