"""What a sweep cell keeps of its simulation, and how it becomes a Dataset again.

A cell keeps, per job, what every figure and metric of the research questions
reads (class, submit, duration, first start, finish, slowdown, wait,
preemptions, GPUs per task, tasks, time spent reloading), the cluster's time series (GPU utilization, GPUs in grace
period and reserved, waiting TE and BE jobs), the run and grace intervals
per node and the capacity ledger (:mod:`fitgpp.sim.ledger`), plus the simulation's attrs. :func:`run_dataset` turns that back
into a simulation Dataset with the same variable names, units and attrs as
:func:`fitgpp.simulate` gives, so plots take it as they take a fresh result and
no figure needs a second simulation. About 50 bytes per job (integers that fit
are stored in 32 bits and restored exactly).
"""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

#: Per-job variables a cell keeps (besides the class, kept as the boolean ``te``).
JOB_VARS = ("submit", "duration", "first_start", "finish", "slowdown", "wait", "preemptions",
            "gpu", "tasks", "reload")
#: Time series a cell keeps (dimension ``time``).
TIME_VARS = ("gpu_util", "gpu_stopping", "gpu_reserved", "waiting_te", "waiting_be")
_KINDS = ("run", "grace")


def _compact(v: np.ndarray) -> np.ndarray:
    """Whole numbers that fit in 32 bits (times in seconds are whole ticks x tick) are
    stored as int32; :func:`run_dataset` restores the original dtype exactly."""
    if v.dtype.kind not in "iuf" or not v.size:
        return v
    if v.dtype.kind == "f" and not (np.isfinite(v).all() and (v == np.round(v)).all()):
        return v
    if np.iinfo(np.int32).min <= v.min() and v.max() <= np.iinfo(np.int32).max:
        return v.astype(np.int32)
    return v


def reduce_run(ds: xr.Dataset) -> dict:
    """The arrays (and attrs) a cell keeps of a simulation Dataset made with ``segments=True``."""
    out = {"te": ds["cls"].values == "TE", "job_id": ds["job"].values}
    dtypes = {"job_id": str(out["job_id"].dtype)}
    names = {**{k: k for k in JOB_VARS}, "time": "time",
             **{f"series_{k}": k for k in TIME_VARS}}
    if "segment_job" in ds:
        names.update({k: k for k in ("segment_job", "segment_node", "segment_start", "segment_end")})
        out["segment_kind"] = (ds["segment_kind"].values == "grace").astype(np.int8)
    for key, var in names.items():
        v = ds[var].values
        dtypes[key] = str(v.dtype)
        out[key] = v
    out = {k: _compact(v) if k != "te" else v for k, v in out.items()}
    out["dtypes"] = json.dumps(dtypes, sort_keys=True)
    out["attrs"] = json.dumps({k: v for k, v in ds.attrs.items()
                               if isinstance(v, (str, int, float))}, sort_keys=True)
    out["ledger"] = json.dumps({k: [float(v), int(v.attrs["gpu_ticks"])]
                                for k, v in ds.data_vars.items() if k.startswith("ledger_")})
    out["units"] = json.dumps({k: [ds[k].attrs.get("units", ""), ds[k].attrs.get("description", "")]
                               for k in (*JOB_VARS, *TIME_VARS, "cls")}, sort_keys=True)
    return out


def _ledger(res: dict) -> dict:
    """The ``ledger_*`` variables of a cell result (GPU-hours, GPU-ticks in ``gpu_ticks``)."""
    from fitgpp.sim.ledger import CAPACITY_NOTE, PARTS
    kept = json.loads(str(res["ledger"])) if "ledger" in res else {}
    return {k: ((), np.array(float(h)), {"units": "GPU-h", "gpu_ticks": np.int64(n), "description":
                                    PARTS.get(k[len("ledger_"):], CAPACITY_NOTE)})
            for k, (h, n) in kept.items()}


def _decoded(res: dict, keys=None) -> dict:
    """The cell result's columns (all, or those named in ``keys``) in the dtypes the run
    recorded them in (``res["dtypes"]``)."""
    dtypes = json.loads(str(res["dtypes"]))
    return {k: (np.asarray(res[k]).astype(dtypes[k]) if k in dtypes else res[k])
            for k in (res if keys is None else keys)}


def queue_dataset(res: dict) -> xr.Dataset:
    """Of a cell result, only what :func:`fitgpp.analysis.stability.stability` reads: the
    waiting TE and BE jobs at each visited tick and the submit times, as :func:`run_dataset`
    makes them, without building the rest of the run (every per-job column and interval)."""
    r = _decoded(res, ("series_waiting_te", "series_waiting_be", "submit", "job_id", "time"))
    return xr.Dataset({"waiting_te": ("time", r["series_waiting_te"]),
                       "waiting_be": ("time", r["series_waiting_be"]),
                       "submit": ("job", r["submit"])},
                      coords={"job": r["job_id"], "time": r["time"]})


def run_dataset(res: dict) -> xr.Dataset:
    """A cell result (from :func:`reduce_run`, live or from the cache) as a simulation
    Dataset: dimensions ``job``, ``time`` and ``segment``, the variables kept, and the
    attrs of the run (policy, parameters, cluster, tick, workload recipe, ...)."""
    units = json.loads(str(res["units"]))
    res = _decoded(res)
    ids = res["job_id"]

    def var(dim, v, name):
        u, d = units.get(name, ["", ""])
        return (dim, v, {"units": u, "description": d})

    data = {"cls": var("job", np.where(res["te"], "TE", "BE"), "cls")}
    data.update({k: var("job", res[k], k) for k in JOB_VARS})
    data.update({k: var("time", res[f"series_{k}"], k) for k in TIME_VARS})
    if "segment_job" in res:
        data.update({
            "segment_job": ("segment", res["segment_job"], {"units": "1"}),
            "segment_node": ("segment", res["segment_node"], {"units": "1"}),
            "segment_kind": ("segment", np.asarray(_KINDS)[np.asarray(res["segment_kind"], int)],
                             {"units": ""}),
            "segment_start": ("segment", res["segment_start"], {"units": "s"}),
            "segment_end": ("segment", res["segment_end"], {"units": "s"}),
        })
    data.update(_ledger(res))
    ds = xr.Dataset(data, coords={"job": ids, "time": res["time"]})
    ds.attrs = json.loads(str(res["attrs"]))
    return ds
