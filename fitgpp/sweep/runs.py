"""What a sweep cell keeps of its simulation, and how it becomes a Dataset again.

A cell keeps, per job, what every figure and metric of the research questions
reads (class, submit, duration, first start, finish, slowdown, wait,
preemptions), the cluster's time series (GPU utilization, GPUs in grace
period and reserved, waiting TE and BE jobs) and the run and grace intervals
per node, plus the simulation's attrs. :func:`run_dataset` turns that back
into a simulation Dataset with the same variable names, units and attrs as
:func:`fitgpp.simulate` gives, so plots take it as they take a fresh result and
no figure needs a second simulation. About 70 bytes per job.
"""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

#: Per-job variables a cell keeps (besides the class, kept as the boolean ``te``).
JOB_VARS = ("submit", "duration", "first_start", "finish", "slowdown", "wait", "preemptions")
#: Time series a cell keeps (dimension ``time``).
TIME_VARS = ("gpu_util", "gpu_stopping", "gpu_reserved", "waiting_te", "waiting_be")
_KINDS = ("run", "grace")


def reduce_run(ds: xr.Dataset) -> dict:
    """The arrays (and attrs) a cell keeps of a simulation Dataset made with ``segments=True``."""
    out = {"te": ds["cls"].to_numpy() == "TE", "job_id": ds["job"].to_numpy().astype(np.int64)}
    for k in JOB_VARS:
        v = ds[k].to_numpy()
        out[k] = v.astype(np.int32) if k == "preemptions" else v.astype(np.float64)
    out["time"] = ds["time"].to_numpy().astype(np.float64)
    for k in TIME_VARS:
        out[f"series_{k}"] = ds[k].to_numpy().astype(np.float64)
    if "segment_job" in ds:
        out["segment_job"] = ds["segment_job"].to_numpy().astype(np.int64)
        out["segment_node"] = ds["segment_node"].to_numpy().astype(np.int32)
        out["segment_kind"] = (ds["segment_kind"].to_numpy() == "grace").astype(np.int8)
        out["segment_start"] = ds["segment_start"].to_numpy().astype(np.float64)
        out["segment_end"] = ds["segment_end"].to_numpy().astype(np.float64)
    out["attrs"] = json.dumps({k: v for k, v in ds.attrs.items()
                               if isinstance(v, (str, int, float))}, sort_keys=True)
    out["units"] = json.dumps({k: [ds[k].attrs.get("units", ""), ds[k].attrs.get("description", "")]
                               for k in (*JOB_VARS, *TIME_VARS, "cls")}, sort_keys=True)
    return out


def run_dataset(res: dict) -> xr.Dataset:
    """A cell result (from :func:`reduce_run`, live or from the cache) as a simulation
    Dataset: dimensions ``job``, ``time`` and ``segment``, the variables kept, and the
    attrs of the run (policy, parameters, cluster, tick, workload recipe, ...)."""
    units = json.loads(str(res["units"]))
    ids = np.asarray(res["job_id"])

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
    ds = xr.Dataset(data, coords={"job": ids, "time": res["time"]})
    ds.attrs = json.loads(str(res["attrs"]))
    return ds
