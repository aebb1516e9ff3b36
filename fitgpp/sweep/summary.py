"""From cell results to one Dataset: per-class metrics on the sweep's grid,
summaries across seeds, and the relative change against FIFO."""

from __future__ import annotations

import itertools
import json

import numpy as np
import xarray as xr

from fitgpp._version import __version__
from fitgpp.analysis.metrics import (CHANGE_NOTE, CI_NOTE, CLASS_METRICS, CLASSES, change,
                                     class_stats, mean_ci, percent)
from fitgpp.analysis.escape import visible
from fitgpp.sweep import lazy_dask
from fitgpp.sweep.config import Experiment

# the Datasets made here and above ask xarray whether each array is a dask array: answered
# without importing dask.array while nothing has (issue 26)
lazy_dask.defer()

CLUSTER_METRICS = {
    "gpu_util": ("1", "fraction of all GPUs held by running jobs, from the first "
                      "submission to the last finish"),
}
#: Metrics compared against FIFO (FIFO never preempts, so preemptions are not).
VS_FIFO = ("slowdown_median", "slowdown_p95", "slowdown_p99", "wait_mean", "gpu_util")
_COORD_ATTRS = {
    "policy": {"description": "scheduling policy"},
    "s": {"units": "1", "description": "FitGpp preemption threshold s"},
    "max_preemptions": {"units": "1", "description": "P: times a BE job may be preempted"},
    "n_jobs": {"units": "jobs", "description": "jobs synthesized per workload"},
    "load": {"units": "1", "description": "offered GPU load as a fraction of the cluster's GPUs"},
    "te_fraction": {"units": "1", "description": "share of TE jobs in the workload"},
    "grace_scale": {"units": "1", "description": "factor on the model's grace periods"},
    "gang_fraction": {"units": "1", "description": "share of BE jobs drawn as multi-node gangs"},
    "gang_tasks": {"units": "tasks", "description": "largest gang drawn (2..gang_tasks tasks)"},
    "restart_overhead": {"units": "s", "description": "median checkpoint reload time of a "
                                                      "preempted BE job, each restart"},
    "restart_sigma": {"units": "1", "description": "log-spread of the lognormal reload time"},
    "be_8gpu_share": {"units": "1", "description": "share of BE jobs that ask for 8 GPUs"},
    "seed": {"description": "workload seed (RAND's seed too unless its grid gives one)"},
    "cls": {"description": "job class: TE (trial-and-error) or BE (best-effort)"},
}


def cell_metrics(res: dict) -> dict:
    """Per-class metrics (arrays over CLASSES) and gpu_util of one cell result."""
    out = class_stats(res["te"], res["slowdown"], res["preemptions"], res["wait"])
    out["gpu_util"] = float(res["gpu_util"])
    return out


def assemble(exp: Experiment, cells, metrics: list[dict], workload_sha256: str = "") -> xr.Dataset:
    """Place each cell's metrics on the grid (policy, s, max_preemptions, swept knobs,
    seed, cls); a policy without a parameter is repeated along that dimension."""
    grid_params = exp.grid_params
    dims = ["policy"] + [k for k in grid_params if exp.grid_values(k)]
    coords = {"policy": list(exp.policy_names)}
    for k in dims[1:]:
        coords[k] = list(exp.grid_values(k))
    swept = exp.workload.swept
    dims += list(swept)
    coords.update({k: list(v) for k, v in swept.items()})
    dims.append("seed")
    coords["seed"] = list(exp.seeds)
    shape = [len(coords[d]) for d in dims]
    data = {k: np.full(shape + [len(CLASSES)], np.nan) for k in CLASS_METRICS}
    data["gpu_util"] = np.full(shape, np.nan)
    jobs = np.zeros([len(coords[k]) for k in (*swept, "seed")] + [len(CLASSES)], np.int64)
    index = {d: {v: i for i, v in enumerate(coords[d])} for d in dims}
    broadcast = {}
    for cell, m in zip(cells, metrics):
        params, knobs = dict(cell.params), dict(cell.knobs)
        where = []
        for d in dims:
            if d == "policy":
                where.append([index[d][cell.policy]])
            elif d in grid_params:
                if d in params:
                    where.append([index[d][params[d]]])
                else:  # computed once, the same all along this dimension
                    where.append(list(range(len(coords[d]))))
                    broadcast.setdefault(cell.policy, set()).add(d)
            elif d == "seed":
                where.append([index[d][cell.seed]])
            else:
                where.append([index[d][knobs[d]]])
        for pos in itertools.product(*where):
            for k in CLASS_METRICS:
                data[k][pos] = m[k]
            data["gpu_util"][pos] = m["gpu_util"]
        jobs[tuple(index[d][knobs[d]] for d in swept) + (index["seed"][cell.seed],)] = m["jobs"]
    ds = xr.Dataset(coords={**coords, "cls": list(CLASSES)})
    for k, (units, desc) in CLASS_METRICS.items():
        ds[k] = (dims + ["cls"], data[k], {"units": units, "description": desc})
    ds["gpu_util"] = (dims, data["gpu_util"],
                      {"units": "1", "description": CLUSTER_METRICS["gpu_util"][1]})
    ds["jobs"] = ([*swept, "seed", "cls"], jobs,
                  {"units": "jobs", "description": "jobs of each class in the workload"})
    for name, attrs in _COORD_ATTRS.items():
        if name in ds.coords:
            ds[name].attrs.update(attrs)
    for name in grid_params:  # a parameter of a user's policy: what its field declares
        if name in ds.coords and name not in _COORD_ATTRS:
            ds[name].attrs.update(exp.param_attrs(name))
    _add_summaries(ds)
    ds.attrs = _attrs(exp, broadcast, workload_sha256)
    return ds


def _attrs(exp: Experiment, broadcast: dict, workload_sha256: str) -> dict:
    return {
        "title": f"fitgpp sweep{': ' + exp.name if exp.name else ''}",
        "experiment": exp.to_json(),
        "workload_sha256": workload_sha256,
        "fitgpp_version": __version__,
        "broadcast": json.dumps({p: sorted(d) for p, d in sorted(broadcast.items())}),
        "broadcast_note": "a policy without a swept parameter (e.g. fifo has no s) is simulated "
                          "once and its values repeated along that dimension (listed in "
                          "'broadcast'); NaN marks a combination the policy's grid does not list",
        "ci95": "half-width of the 95% confidence interval of the mean over seeds, Student t "
                "with n-1 degrees of freedom; " + CI_NOTE,
        "vs_fifo": "(x - x_fifo) / x_fifo per seed on the same workload; " + CHANGE_NOTE,
    }


def _add_summaries(ds: xr.Dataset) -> None:
    """Mean and CI over seeds of every metric, and the change against FIFO (with its mean
    and CI): each statistic is computed on a Dataset of all the metrics at once (the same
    per-variable arithmetic as one DataArray at a time) and the results are added in one
    update, in the same order as one by one."""
    names = [*CLASS_METRICS, "gpu_util"]
    has_fifo = "fifo" in ds["policy"].values
    new = {}
    mean, ci = mean_ci(ds[names])
    for k in names:
        units = ds[k].attrs["units"]
        desc = ds[k].attrs["description"]
        new[f"{k}_mean"] = mean[k].assign_attrs(units=units, description=f"mean over seeds of: {desc}")
        new[f"{k}_ci95"] = ci[k].assign_attrs(units=units, description=f"95% CI half-width over "
                                                                       f"seeds of: {desc}")
    if has_fifo:
        sub = ds[list(VS_FIFO)]
        rel = change(sub, sub.sel(policy="fifo", drop=True))
        mean, ci = mean_ci(rel)
        for k in VS_FIFO:
            what = f"relative change of {k} against FIFO on the same workload"
            new[f"{k}_vs_fifo"] = rel[k].assign_attrs(units="1", description=what)
            new[f"{k}_vs_fifo_mean"] = mean[k].assign_attrs(units="1", description=f"mean over "
                                                                                   f"seeds: {what}")
            new[f"{k}_vs_fifo_ci95"] = ci[k].assign_attrs(units="1", description=f"95% CI "
                                                                                 f"half-width over "
                                                                                 f"seeds: {what}")
    ds.update(new)


def format_table(ds: xr.Dataset) -> str:
    """A short text view, one row per configuration of the grid (a policy with the values
    of its own swept parameters and of the swept workload knobs; combinations its grid does
    not list are left out): TE p95 and BE median / p95 slowdown (mean over seeds), GPU
    utilization, and the change against FIFO."""
    has = "slowdown_p95_vs_fifo_mean" in ds
    # a label shown on a terminal: a control character in a name or a value as its escape
    rows = [(visible(label, breaks=False), d) for label, d in configurations(ds)]
    width = max([36, *(len(label) + 2 for label, _ in rows)])
    head = f"{'policy':<{width}}{'TE p95':>9}{'BE median':>11}{'BE p95':>9}{'GPU util':>10}"
    if has:
        head += f"{'TE p95 vs FIFO':>16}{'BE med vs FIFO':>16}{'BE p95 vs FIFO':>16}"
    lines = [head]
    for label, d in rows:
        def v(name, c=None):
            return float(d[name] if c is None else d[name].sel(cls=c))
        row = (f"{label:<{width}}{v('slowdown_p95_mean', 'TE'):>9.3f}"
               f"{v('slowdown_median_mean', 'BE'):>11.3f}{v('slowdown_p95_mean', 'BE'):>9.3f}"
               f"{v('gpu_util_mean'):>10.3f}")
        if has:
            row += "".join(f"{percent(v(f'slowdown_{m}_vs_fifo_mean', c)):>16}"
                           for m, c in (("p95", "TE"), ("median", "BE"), ("p95", "BE")))
        lines.append(row)
    return "\n".join(lines)


def configurations(ds: xr.Dataset):
    """``(label, dataset)`` for every configuration of a sweep's grid: each policy at every
    combination of the dimensions it was run along (its own swept fields and the swept
    knobs; a dimension it was broadcast along is shown once, not as a parameter)."""
    broadcast = json.loads(ds.attrs.get("broadcast", "{}"))
    dims = [k for k in ds["slowdown_p95_mean"].dims if k not in ("policy", "cls")]
    for p in ds["policy"].values:
        own = [k for k in dims if k not in broadcast.get(str(p), [])]
        d = ds.sel(policy=p).isel({k: 0 for k in dims if k not in own})
        for combo in itertools.product(*(d[k].values for k in own)):
            c = d.sel(dict(zip(own, combo)))
            if not bool(c["slowdown_p95_mean"].notnull().any()):
                continue  # a combination this policy's grid does not list
            yield " ".join([str(p), *(f"{'P' if k == 'max_preemptions' else k}={_text(v)}"
                                      for k, v in zip(own, combo))]), c


def _text(v) -> str:
    """A coordinate value as the table shows it, whatever its type (a swept field may be a
    string or a boolean)."""
    v = v.item() if hasattr(v, "item") else v
    return f"{v:g}" if isinstance(v, float) else str(v)
