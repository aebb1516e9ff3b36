"""``simulate``: a validated trace, a cluster and a policy in; one self-describing Dataset out."""

from __future__ import annotations

from fitgpp.errors import FitgppError

import json
import math
import os

import numpy as np
import pandas as pd
import xarray as xr

from fitgpp.sim.cluster import Cluster
from fitgpp.sim import ledger
from fitgpp.sim.engine import Engine
from fitgpp.sim.policies import make_policy, params_of
from fitgpp.sim.policies import registry
from fitgpp.sim.trace import read_trace

from fitgpp._version import __version__

#: Default number of time samples when ``sample_every`` is not given.
MAX_SAMPLES = 2000

_JOB_VARS = {  # name: (units, description)
    "cls": ("", "job class: TE (trial-and-error) or BE (best-effort)"),
    "submit_time": ("s", "submission time as given in the trace"),
    "submit": ("s", "submission tick x tick: floor(submit_time / tick) * tick"),
    "duration": ("s", "run time when uninterrupted, as given in the trace"),
    "work": ("s", "work in ticks x tick: max(1, ceil(duration / tick)) * tick"),
    "gpu": ("GPU", "GPUs demanded per task"),
    "tasks": ("1", "tasks of a multi-node job (gang), each on its own node; 1 for an ordinary job"),
    "cpu_milli": ("millicore", "CPU demanded"),
    "mem_mib": ("MiB", "memory demanded"),
    "grace_period": ("s", "grace period as given (0 for TE)"),
    "restart_overhead": ("s", "checkpoint reload time at each restart after a preemption, as given"),
    "first_start": ("s", "first time the job started"),
    "finish": ("s", "time the job finished"),
    "slowdown": ("1", "(finish - submit) / work, in ticks"),
    "wait": ("s", "time spent waiting in a queue: finish - submit - work - reload - stopped"),
    "stopped": ("s", "time spent in grace periods after preemption signals"),
    "reload": ("s", "time spent running but reloading a checkpoint after preemptions "
                    "(lost reloads included)"),
    "preemptions": ("1", "times the job was preempted"),
    "node": ("1", "node the job finished on (a gang: the lowest of its nodes)"),
}
_TIME_VARS = {
    "gpu_util": ("1", "mean fraction of the cluster's GPUs held by running jobs"),
    "gpu_stopping": ("1", "mean fraction of GPUs held by jobs in their grace period"),
    "gpu_reserved": ("1", "mean fraction of GPUs reserved for TE jobs not yet started"),
    "waiting_te": ("jobs", "mean number of waiting TE jobs"),
    "waiting_be": ("jobs", "mean number of waiting BE jobs"),
}


class SimulationError(FitgppError):
    """Arguments to :func:`simulate` are invalid; the message names the argument."""


def to_ticks(jobs: pd.DataFrame, tick: float) -> dict[str, np.ndarray]:
    """SPEC's time quantization: submit = floor, work = max(1, ceil), gp = ceil."""
    return {
        "job_id": jobs["job_id"].to_numpy(np.int64),
        # (numpy's compare of the objects: pandas' of its str column took 50 us more a run)
        "te": np.asarray(jobs["cls"].to_numpy(object) == "TE", dtype=bool),
        "gpu": jobs["gpu"].to_numpy(np.int64),
        "cpu_milli": jobs["cpu_milli"].to_numpy(np.int64),
        "mem_mib": jobs["mem_mib"].to_numpy(np.int64),
        "submit": np.floor(jobs["submit_time"].to_numpy(float) / tick).astype(np.int64),
        "work": np.maximum(1, np.ceil(jobs["duration"].to_numpy(float) / tick)).astype(np.int64),
        "gp": np.ceil(jobs["grace_period"].to_numpy(float) / tick).astype(np.int64),
        "tasks": (jobs["tasks"].to_numpy(np.int64) if "tasks" in jobs
                  else np.ones(len(jobs), dtype=np.int64)),
        "ro": (np.ceil(jobs["restart_overhead"].to_numpy(float) / tick).astype(np.int64)
               if "restart_overhead" in jobs else np.zeros(len(jobs), dtype=np.int64)),
    }


def simulate(trace, cluster: Cluster, policy="fitgpp", *, tick: float = 60,
             sample_every: float | None = None, segments: bool = False, jump: bool = True,
             check: bool = False, progress=None, **policy_params) -> xr.Dataset:
    """Simulate ``trace`` on ``cluster`` under ``policy`` (SPEC.md, tick by tick).

    ``trace``: a :class:`Trace`, a DataFrame in the trace schema, or a CSV path.
    ``policy``: a policy object, a policy class, a registry name (``fifo``,
    ``prio``, ``fitgpp``, ``lrtp``, ``rand``) or ``"module:Class"``;
    ``policy_params`` are values of its dataclass fields (for FitGpp ``s`` and
    ``max_preemptions``) when a name or a class is given. ``tick`` is in seconds. ``sample_every``
    (seconds, a multiple of ``tick``) sets the time-series step; by default at
    most ``MAX_SAMPLES`` samples cover the run. ``segments=True`` adds every
    run and grace-period interval on a ``segment`` dimension (for timelines of
    small runs). ``jump=False`` steps every tick
    and ``check=True`` asserts the ledger every visited tick (both for tests).
    ``progress(jobs_done)`` is called periodically on long runs.
    """
    if not isinstance(cluster, Cluster):
        raise SimulationError(f"cluster must be a fitgpp.Cluster, got {type(cluster).__name__}")
    if policy_params and not isinstance(policy, (str, type)):
        raise SimulationError("policy parameters go into the policy object when one is given")
    policy = registry.recordable(make_policy(policy, **policy_params))  # (as it is kept)
    from fitgpp.sim.validate import check_tick
    tick = check_tick(tick, "tick", SimulationError)
    sample_ticks = None
    if sample_every is not None:
        if isinstance(sample_every, bool) or not isinstance(sample_every, (int, float)):
            raise SimulationError(f"sample_every must be a number of seconds, got {sample_every!r}")
        q = sample_every / tick
        if not math.isfinite(q) or q < 1 or abs(q - round(q)) > 1e-9:
            raise SimulationError(f"sample_every must be a positive multiple of tick={tick} s,"
                                  f" got {sample_every!r}")
        sample_ticks = int(round(q))
    trace = read_trace(trace, cluster=cluster)
    if len(trace) == 0:
        raise SimulationError("the trace has no jobs")
    jobs = trace.jobs
    cols = to_ticks(jobs, tick)
    eng = Engine(cols, cluster.capacity, policy, tick=tick, check=check, segments=segments)
    del cols  # (the engine holds what the result needs of them, in queue order)
    eng.run(jump=jump, progress=progress)
    eng.drop_run_state()
    ds = _dataset(eng, jobs, trace, cluster, policy, tick, sample_ticks)
    if segments:
        ds.update(_segments(eng, tick))  # (Dataset.merge's alignment imports dask.array)
    return ds


def _segments(eng, tick) -> dict[str, xr.Variable]:
    seg = np.asarray(eng.segments, dtype=np.int64).reshape(-1, 5)
    spec = {
        "segment_job": (np.asarray(eng.job_id, dtype=np.int64)[seg[:, 0]], "1", "job_id of the interval"),
        "segment_node": (seg[:, 1], "1", "node the job held"),
        "segment_kind": (np.array(["run", "grace"])[seg[:, 2]], "",
                         "run (making progress) or grace (stopping after a preemption signal)"),
        "segment_start": (seg[:, 3] * tick, "s", "interval start"),
        "segment_end": (seg[:, 4] * tick, "s", "interval end (exclusive)"),
    }
    return {k: _variable("segment", v, u, d) for k, (v, u, d) in spec.items()}


def _dataset(eng, jobs, trace, cluster, policy, tick, sample_ticks) -> xr.Dataset:
    n = eng.n
    first = np.asarray(eng.first_start, dtype=np.int64)
    fin = np.asarray(eng.finish, dtype=np.int64)
    if n and ((fin < 0).any() or (first < 0).any()):
        raise RuntimeError("simulation ended with unfinished jobs")
    total_gpu = cluster.total_gpus
    t0 = int(eng.submit[0]) if n else 0  # (queue order: the least submission first)
    t_end = int(fin.max()) if n else 0
    # what needs the engine's recorded series and demands first, so that they can go before
    # the per-job variables are made (a million jobs: about 60 MB less at the peak)
    times, series, busy = _sample(eng, t0, t_end, sample_ticks, tick)
    parts = ledger.variables(eng, tick)
    eng.trace_t = eng.trace_vals = eng.dg = None
    data = _job_data(eng, _Picked(jobs, eng.order), first, fin, tick)
    del first, fin
    variables = {k: _variable("job", data.pop(k), *_JOB_VARS[k]) for k in list(data)}
    job, job_index = _coord("job", _Picked(jobs, eng.order).get("job_id", np.int64), None,
                            "job_id from the trace; (submit, job_id) order")
    variables["job"] = job
    scale = {"gpu_util": total_gpu, "gpu_stopping": total_gpu, "gpu_reserved": total_gpu}
    variables.update({k: _variable("time", v / scale[k] if k in scale and total_gpu else v,
                                   *_TIME_VARS[k]) for k, v in series.items()})
    variables["time"], time_index = _coord(
        "time", times * tick, "s", "start of each sample; values are time means over the sample")
    variables.update(parts)
    util = busy / (total_gpu * (t_end - t0)) if total_gpu and t_end > t0 else 0.0
    sample_every = float((sample_ticks or _auto_sample(t_end)) * tick)
    return _assemble(variables, {"job": job_index, "time": time_index},
                     _attrs(trace, cluster, policy, tick, sample_every, util))


#: xarray's constructor of a Dataset from parts already consistent (private, so looked up
#: once and not relied on: without it, or with another signature, :func:`_assemble` merges)
_DIRECT = getattr(xr.Dataset, "_construct_direct", None)


def _assemble(variables: dict, indexes: dict, attrs: dict) -> xr.Dataset:
    """The Dataset that xr.Dataset(job variables, coords=job).assign(time variables)
    .assign_coords(time).assign(ledger) makes, in that order, made directly: each of those
    steps merged and aligned everything so far (3-5 ms of a 1,000-job run of 12 ms; issue
    26). tests/sim/test_output.py checks the two are identical."""
    if _DIRECT is not None:
        try:
            return _DIRECT(variables, set(indexes), {d: variables[d].size for d in indexes},
                           attrs, indexes, {})
        except TypeError:
            pass  # an xarray whose private constructor changed: the public way below
    by_dim = {(): {}, ("job",): {}, ("time",): {}}
    for k, v in variables.items():
        if k not in indexes:
            by_dim[v.dims][k] = v
    coord = {d: xr.Coordinates({d: variables[d]}, indexes={d: indexes[d]}) for d in indexes}
    ds = xr.Dataset(by_dim[("job",)], coords=coord["job"]).assign(by_dim[("time",)])
    ds = ds.assign_coords(coord["time"])
    ds.attrs = attrs
    return ds.assign(by_dim[()])


class _Picked:
    """Columns of the trace in (submit, job_id) order, each taken when asked (``iloc`` on
    the whole table copied every column at once: 80 bytes a job more at the peak)."""

    def __init__(self, jobs: pd.DataFrame, order: np.ndarray):
        self.jobs, self.order = jobs, order

    def __contains__(self, name: str) -> bool:
        return name in self.jobs

    def __getitem__(self, name: str) -> np.ndarray:
        return self.jobs[name].to_numpy()[self.order]

    def get(self, name: str, dtype) -> np.ndarray:
        return self.jobs[name].to_numpy(dtype)[self.order]


def _job_data(eng, j, first, fin, tick) -> dict[str, np.ndarray]:
    """The per-job variables of :data:`_JOB_VARS`, in (submit, job_id) order (the engine's
    columns are in that order already)."""
    submit = np.asarray(eng.submit, dtype=np.int64)
    work = np.asarray(eng.work, dtype=np.int64)
    stopped = np.asarray(eng.stop_ticks, dtype=np.int64)
    reload = np.asarray(eng.reload_ticks, dtype=np.int64)
    return {
        "cls": np.where(eng.te, "TE", "BE"),
        "submit_time": j.get("submit_time", float),
        "submit": submit * tick,
        "duration": j.get("duration", float),
        "work": work * tick,
        "gpu": j.get("gpu", np.int64),
        "tasks": np.asarray(eng.tasks, dtype=np.int64),
        "cpu_milli": j.get("cpu_milli", np.int64),
        "mem_mib": j.get("mem_mib", np.int64),
        "grace_period": j.get("grace_period", float),
        "restart_overhead": (j.get("restart_overhead", float) if "restart_overhead" in j
                             else np.zeros(eng.n)),
        "first_start": first * tick,
        "finish": fin * tick,
        "slowdown": (fin - submit) / work,
        "wait": (fin - submit - work - reload - stopped) * tick,
        "stopped": stopped * tick,
        "reload": reload * tick,
        "preemptions": np.asarray(eng.preemptions, dtype=np.int64),
        "node": eng.node,
    }


def _attrs(trace, cluster, policy, tick, sample_every: float, util: float) -> dict:
    """What a run needs to be read and rerun: policy, cluster, workload, tick, version."""
    params = params_of(policy)
    return {
        "title": f"fitgpp simulation: {registry.label(policy)}",
        "policy": registry.ref(policy),
        "policy_params": json.dumps(params, sort_keys=True),
        "policy_digest": registry.digest(policy),
        # each parameter as its own attr too (netCDF attrs hold numbers and strings only)
        **{k: int(v) if isinstance(v, bool) else v for k, v in params.items()
           if isinstance(v, (int, float, str))},
        "cluster": cluster.to_json(),
        "cluster_description": cluster.describe(),
        "n_nodes": cluster.n_nodes,
        "total_gpus": cluster.total_gpus,
        "tick": float(tick),
        "sample_every": sample_every,
        "workload": trace.source_json(),
        "gpu_util_mean": float(util),
        "fitgpp_version": __version__,
        "spec": "fitgpp SPEC.md simulation contract",
    }


def _variable(dim: str, values: np.ndarray, units: str | None, description: str) -> xr.Variable:
    """A 1-D Variable over ``dim`` from a numpy array, with its units and description."""
    attrs = {"description": description} if units is None else {"units": units,
                                                                 "description": description}
    return xr.Variable((dim,), np.asarray(values), attrs, fastpath=True)


def _coord(dim: str, values: np.ndarray, units: str | None,
           description: str) -> tuple[xr.IndexVariable, xr.indexes.PandasIndex]:
    """Coordinate ``dim`` and the pandas index xarray would make of it (so it need not look
    for dask)."""
    var = _variable(dim, values, units, description)
    index = xr.indexes.PandasIndex(pd.Index(var.values), dim, coord_dtype=var.dtype)
    return index.create_variables({dim: var})[dim], index


def _auto_sample(t_end: int) -> int:
    return max(1, math.ceil(t_end / MAX_SAMPLES))


def _integrals(eng, edges: np.ndarray):
    """Per column of the recorded state (``Engine.RECORDED``), in order, the exact integral
    of its step function (the value recorded at visited tick ``t[i]`` held on ``[t[i],
    t[i+1])``) from 0 to each of ``edges``, in integers; where the edges fall among the
    visited ticks is found once for the five columns."""
    t, vals = eng.recorded()
    if len(t) == 0:
        yield from (np.zeros(len(edges), dtype=np.int64) for _ in range(vals.shape[1]))
        return
    k = np.searchsorted(t, edges, side="right") - 1
    inside = k >= 0
    kk = k[inside]
    past = edges[inside] - t[kk]
    steps = np.diff(t)
    for c in range(vals.shape[1]):
        v = vals[:, c].astype(np.int64)
        cum = np.concatenate([[0], np.cumsum(v[:-1] * steps)])
        out = np.zeros(len(edges), dtype=np.int64)
        out[inside] = cum[kk] + v[kk] * past
        yield out


#: Most time samples a run may be asked for (5 series of float64: 400 MB).
MAX_SAMPLE_BINS = 10_000_000


def _sample(eng, t0: int, t_end: int, sample_ticks, tick):
    """Sample start times (ticks), the time series (``_TIME_VARS``: means per sample) and
    the GPU-ticks run in ``[t0, t_end)``, from one pass over the recorded state."""
    step = sample_ticks or _auto_sample(t_end)
    n_bins = max(1, math.ceil(t_end / step))
    if n_bins > MAX_SAMPLE_BINS:
        raise SimulationError(f"sample_every={step * tick:g} s gives {n_bins} samples over "
                              f"this run, more than {MAX_SAMPLE_BINS}; choose a longer step "
                              "(or leave it out for at most 2000)")
    edges = np.arange(n_bins + 1, dtype=np.int64) * step
    series, busy = {}, 0
    ends = np.concatenate([edges, np.array([t0, t_end], dtype=np.int64)])
    for name, at in zip(_TIME_VARS, _integrals(eng, ends)):
        series[name] = np.diff(at[:-2]) / step
        if name == "gpu_util":  # (the GPUs running)
            busy = int(at[-1]) - int(at[-2])
    return edges[:-1], series, busy


def format_table(table: pd.DataFrame) -> list[str]:
    """The lines of a :func:`~fitgpp.analysis.metrics.summarize` table as the CLI and the
    widgets print it."""
    lines = [f"{'class':<6}{'jobs':>8}{'median slowdown':>18}{'p95 slowdown':>15}{'preemptions':>13}"]
    for cls, row in table.iterrows():
        lines.append(f"{cls:<6}{int(row['jobs']):>8d}{row['slowdown_median']:>18.3f}"
                     f"{row['slowdown_p95']:>15.3f}{int(row['preemptions']):>13d}")
    return lines


def save(ds: xr.Dataset, path: str | os.PathLike) -> None:
    """Write a result as netCDF4 (h5netcdf engine): the file ``Dataset.to_netcdf(engine=
    "h5netcdf")`` writes. A plain result (see :func:`_plain`) is written through h5netcdf
    directly, as xarray's h5netcdf store would (xarray's encoders import dask.array, ~0.3 s
    of a small ``fitgpp simulate``); anything else through that store, with HDF5's lock
    (``to_netcdf`` imports dask.distributed). Made in memory, then written in one go: a
    full disk fails as an :class:`OSError` and leaves no partial file (HDF5 crashes the
    process when its own write fails)."""
    path = os.fspath(path)
    data = (_save_plain if _plain(ds) else _save_xarray)(ds, None)
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError:  # what was written of it is removed
        os.unlink(path) if os.path.lexists(path) else None
        raise


def _save_xarray(ds: xr.Dataset, path: str | None) -> bytes | None:  # None: the bytes
    import io
    from xarray.backends.locks import HDF5_LOCK
    buf = io.BytesIO() if path is None else path
    store = xr.backends.H5NetCDFStore.open(buf, mode="w", lock=HDF5_LOCK, invalid_netcdf=False)
    try:
        ds.dump_to_store(store)
    finally:
        store.close()
    return buf.getvalue() if path is None else None


def _attr_ok(v) -> bool:
    return isinstance(v, (str, int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _plain(ds: xr.Dataset) -> bool:
    """Whether :func:`_save_plain` writes ``ds`` exactly as xarray would."""
    if not all(isinstance(k, str) and _attr_ok(v) for k, v in ds.attrs.items()):
        return False
    for name, v in ds.variables.items():
        if not isinstance(name, str) or "/" in name or v.encoding or v.ndim > 1 \
                or "_FillValue" in v.attrs or (name in ds.coords and v.dims != (name,)):
            return False
        if v.dtype not in (np.float64, np.int64) and v.dtype.kind != "U":
            return False
        if not all(isinstance(k, str) and _attr_ok(a) for k, a in v.attrs.items()):
            return False
        if name not in ds.xindexes and not isinstance(v._data, np.ndarray):
            return False  # lazily loaded, wrapped or chunked data
    return True


def _save_plain(ds: xr.Dataset, path: str | None) -> bytes | None:
    """What xarray's ``H5NetCDFStore`` does for a plain Dataset (see :func:`_plain`):
    root attrs, then each dimension in order of first use, then each variable in order,
    floats with a NaN fill value (netCDF's ``_FillValue``), strings variable-length.
    ``path`` None: made in memory (HDF5's core driver), the file's bytes returned."""
    import h5netcdf
    import h5py
    from xarray.backends.locks import HDF5_LOCK
    mem = {} if path else {"driver": "core", "backing_store": False}
    with HDF5_LOCK, h5netcdf.File(path or f"fitgpp-{id(ds)}.nc", "w", invalid_netcdf=False,
                                  decode_vlen_strings=True, format="NETCDF4", **mem) as f:
        for k, a in ds.attrs.items():
            f.attrs[k] = a
        for v in ds.variables.values():
            for d, size in zip(v.dims, v.shape):
                if d not in f.dimensions:
                    f.dimensions[d] = size
        for name, v in ds.variables.items():
            text = v.dtype.kind == "U"
            var = f.create_variable(name, dimensions=v.dims,
                                    dtype=h5py.special_dtype(vlen=str) if text else v.dtype,
                                    fillvalue=np.float64(np.nan) if v.dtype == np.float64
                                    else None)
            for k, a in v.attrs.items():
                var.attrs[k] = a
            var[...] = v.values.astype(object) if text else v.values
        if not path:
            f.flush()  # (h5netcdf's own last attrs), then HDF5's
            f._h5file.flush()
            return bytes(f._h5file.id.get_file_image())


def load(path: str | os.PathLike) -> xr.Dataset:
    """Read a result written by :func:`save` fully into memory. Only a regular file is
    opened (a FIFO or a device is refused unread, as every input is); a file that is not a
    netCDF result is a :class:`SimulationError` naming it."""
    from fitgpp.sim.validate import regular_file
    regular_file(path, "result file", SimulationError)
    try:
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            return ds.load()
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise SimulationError(f"{path}: not a result file fitgpp can read ({type(exc).__name__}: "
                              f"{' '.join(str(exc).split())})"[:300]) from None


