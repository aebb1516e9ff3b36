"""Adapters: real trace files in, SPEC-schema traces out, with a report of what was dropped.

Each adapter returns ``(trace, report)``. ``trace`` is a validated :class:`~fitgpp.Trace`
(``job_id`` = the row's 0-based position in the source file) whose ``source`` records the
file, its sha256, the options, the mapping and the report; ``trace.dropped`` lists every
source row left out, with its reason. ``report`` (:class:`AdapterReport`) counts them.

Grace periods: real traces record none. By default each BE job gets one drawn from
:data:`~fitgpp.workload.model.DEFAULT_GRACE` (seeded by ``seed``); ``grace_period=X`` gives
every BE job the fixed value X seconds instead. (``fit`` ignores these values unless asked
to fit them: a fitted model carries DEFAULT_GRACE.)

Re-drawn run times (``runtimes="philly"``): the paper's premise is TE short, BE long; the
Alibaba labels run against it (BE pods are shorter than LS pods) and the Chronus labels are
synthetic (same run times for every label). With ``runtimes="philly"`` each TE job gets a
run time drawn (with replacement, seeded) from the real Philly run times shorter than
``split`` seconds (default 1 h), and each BE job one from those of at least ``split``;
zero run times are excluded. Arrivals, classes and sizes stay those of the trace.

Multi-node jobs (Chronus): a job asking more GPUs than a node has becomes a gang (the
trace's ``tasks`` column) by :func:`split_gpus`: ``k = ceil(gpus / G)`` tasks of
``ceil(gpus / k)`` GPUs each, ``G`` the GPUs of the cluster's largest node. That is the
fewest nodes that can hold the job, with the GPUs spread evenly; when ``k`` does not divide
``gpus`` each task is rounded up, so the job holds up to ``k - 1`` GPUs more than it asked
(20 GPUs on 8-GPU nodes: 3 tasks of 7, one GPU more). The report counts each split
(``AdapterReport.gangs``) and the GPUs added by rounding; only jobs whose tasks fit on fewer
than ``k`` nodes of the cluster are dropped.

Compressed files: every adapter reads a CSV plain or compressed with gzip, xz or bzip2
(recognized by its first bytes, whatever the file is named); the ``sha256`` recorded is that
of the CSV itself, after decompression, so a trace and its compressed copy give one
provenance.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import zlib
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from fitgpp.sim.cluster import DEFAULT_CLUSTER, Cluster
from fitgpp.sim.trace import TraceError, _record_lines, read_trace
from fitgpp.sim.validate import MAX_SEED, MAX_TIME_S, check_int, check_number, read_regular
from fitgpp.workload.adapter_report import AdapterError, AdapterReport, _at_lines, _Filter, _nothing_left, _whole
from fitgpp.workload.model import DEFAULT_GRACE, models_dir

FORMATS = ("spec", "alibaba-v2023", "philly-chronus")


#: first bytes of a compressed file -> (name, reader over a file object)
_COMPRESSED = {b"\x1f\x8b": ("gzip", lambda f: gzip.GzipFile(fileobj=f)),
               b"\xfd7zXZ\x00": ("xz", lzma.LZMAFile), b"BZh": ("bzip2", bz2.BZ2File)}
#: Largest size a compressed trace may expand to (a small file can hold a "bomb").
MAX_DECOMPRESSED = 2**30


def _decompressed(data: bytes, p: Path, what: str) -> bytes:
    """``data`` (read from ``p``), decompressed if it is gzip, xz or bzip2, to at most
    MAX_DECOMPRESSED bytes."""
    for magic, (kind, reader) in _COMPRESSED.items():
        if data.startswith(magic):
            try:
                with reader(io.BytesIO(data)) as f:
                    out = f.read(MAX_DECOMPRESSED + 1)
            except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error) as exc:
                raise AdapterError(f"{p}: not a readable {kind} file ({exc}; {what})") from None
            if len(out) > MAX_DECOMPRESSED:
                raise AdapterError(f"{p}: expands to more than {MAX_DECOMPRESSED} bytes "
                                   f"({MAX_DECOMPRESSED / 2**30:g} GiB), the limit for a "
                                   f"compressed {what}")
            return out
    return data


def _read(path, columns, fmt) -> tuple[pd.DataFrame, str, str]:
    """The CSV as a DataFrame; ``df.attrs["lines"]`` holds each row's line in the file."""
    p = Path(path)
    data = _decompressed(read_regular(p, f"{fmt} trace", AdapterError, limit=None), p,
                         f"{fmt} trace")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise AdapterError(f"{p}: not a UTF-8 text file (byte {exc.start})") from None
    try:
        lines = _record_lines(text, str(p))  # refuses a header naming a column twice
        df = pd.read_csv(io.StringIO(text))
    except TraceError as exc:
        raise AdapterError(str(exc)) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise AdapterError(f"{p}: not a readable CSV ({' '.join(str(exc).split())})") from None
    if len(df) == 0:
        raise AdapterError(f"{p}: no data rows, only a header ({fmt} trace)")
    df.attrs["lines"] = lines if len(lines) == len(df) else np.arange(len(df)) + 2
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise AdapterError(f"{p}: missing column(s) {', '.join(missing)} for format {fmt} "
                           f"(expected {', '.join(columns)})")
    return df, str(p.resolve()), hashlib.sha256(data).hexdigest()


def _check_options(seed, split, max_gpu, grace_period) -> None:
    check_int(seed, "seed", 0, MAX_SEED, AdapterError)
    check_number(split, "split (seconds)", 0, MAX_TIME_S, lo_open=True, error=AdapterError)
    if max_gpu is not None:
        check_int(max_gpu, "max_gpu", 0, 2**31 - 1, AdapterError)
    if grace_period is not None:
        check_number(grace_period, "grace_period (seconds)", 0, MAX_TIME_S, error=AdapterError)


def _grace(cls: np.ndarray, grace_period, rng) -> np.ndarray:
    if grace_period is None:
        g = DEFAULT_GRACE.rvs(len(cls), rng)
    else:
        if not isinstance(grace_period, (int, float)) or grace_period < 0:
            raise AdapterError(f"grace_period must be a number >= 0 or None, got {grace_period!r}")
        g = np.full(len(cls), float(grace_period))
    return np.where(cls == "BE", np.round(g, 3), np.nan)


#: the Philly run times shipped with fitgpp (traces/philly-runtime/, see its SOURCE.md)
PHILLY_RUNTIME = Path("philly-runtime") / "philly_runtime.csv.gz"


def philly_runtime_path(near: str | Path) -> Path:
    """The Philly run times for the trace ``near``: ``philly-runtime/philly_runtime.csv``
    (or ``.csv.gz``, ``.csv.xz``) in the folder beside the trace's, as the traces are laid
    out in ``traces/``; else the copy shipped with fitgpp."""
    folder = Path(near).resolve().parent.parent / "philly-runtime"
    for name in ("philly_runtime.csv", "philly_runtime.csv.gz", "philly_runtime.csv.xz"):
        if (folder / name).is_file():
            return folder / name
    return models_dir() / PHILLY_RUNTIME


def _redraw(cls: np.ndarray, path, split: float, rngs, report: AdapterReport) -> tuple:
    p = Path(path)
    if not p.exists():
        raise AdapterError(f"{p}: no such file (philly run times, for runtimes='philly'; "
                           "pass philly_runtime=PATH)")
    data = _decompressed(read_regular(p, "philly run times", AdapterError, limit=None), p,
                         "philly run times")
    try:
        rt = pd.read_csv(io.BytesIO(data))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise AdapterError(f"{p}: not a readable CSV of run times "
                           f"({' '.join(str(exc).split())[:200]})") from None
    if "runtime" not in rt.columns:
        raise AdapterError(f"{p}: missing column 'runtime' (philly run times)")
    x = pd.to_numeric(rt["runtime"], errors="coerce").to_numpy(float)
    x = x[np.isfinite(x) & (x > 0)]
    short, long_ = x[x < split], x[x >= split]
    if len(short) == 0 or len(long_) == 0:
        raise AdapterError(f"{p}: split {split} s leaves no run times on one side")
    out = np.empty(len(cls))
    te = cls == "TE"
    out[te] = rngs[0].choice(short, te.sum())
    out[~te] = rngs[1].choice(long_, (~te).sum())
    report.notes.append(
        f"run times re-drawn from {p.name} ({len(x)} run times > 0): TE from the {len(short)} "
        f"shorter than {split:g} s, BE from the {len(long_)} of at least {split:g} s")
    return out, {"path": str(p.resolve()), "sha256": hashlib.sha256(data).hexdigest(),
                 "split_s": split, "n_short": int(len(short)), "n_long": int(len(long_))}


def _finish(df_out, flt, report, fmt, path, sha, options, mapping, name, extra=None):
    report.rows_out = int(len(df_out))
    src = {"kind": "adapter", "format": fmt, "name": name, "path": path,
           "file": Path(path).name, "sha256": sha, "options": options, "mapping": mapping,
           "report": report.to_dict(), **(extra or {})}
    try:
        tr = read_trace(df_out.reset_index(drop=True), source=src)
    except TraceError as exc:  # name the source file's lines, not the adapted frame's rows
        if not exc.rows:
            raise AdapterError(f"{path}: adapted trace: {exc.problem}") from None
        lines = flt.df.attrs["lines"][df_out["job_id"].to_numpy()[exc.rows]]
        raise AdapterError(f"{_at_lines(path, lines)}: adapted "
                           f"column '{exc.column}': {exc.problem}") from None
    return type(tr)(jobs=tr.jobs, source=src, dropped=flt.dropped()), report


def _start(path, columns, fmt, options) -> tuple:
    """The source file read, the report of its adaptation and the filter of its rows."""
    df, rpath, sha = _read(path, columns, fmt)
    rep = AdapterReport(fmt, rpath, sha, len(df), options=options)
    return df, rpath, sha, rep, _Filter(df, rep)


def _grace_and_seed(grace_period, seed) -> dict:
    """The options every adapter records last: how BE grace periods are set, and the seed."""
    return {"grace_period": grace_period if grace_period is not None else "DEFAULT_GRACE",
            "seed": seed}


def _streams(seed) -> tuple:
    """Independent generators for the grace periods, TE run times and BE run times."""
    rng_g, rng_te, rng_be = (np.random.default_rng(s)
                             for s in np.random.SeedSequence(seed).spawn(3))
    return rng_g, rng_te, rng_be


def _durations(cls, observed, runtimes, philly_runtime, path, split, rngs, rep) -> tuple:
    """The run times of the kept rows, observed or re-drawn from Philly, and what the
    trace's source records about them."""
    if runtimes == "observed":
        return observed, {}
    ppath = philly_runtime or philly_runtime_path(path)
    dur, info = _redraw(cls, ppath, split, rngs, rep)
    return dur, {"philly_runtime": info}


def _mapping(cls, submit_time, duration, runtimes, grace_period, **resources) -> dict:
    """Where each SPEC column comes from (``duration``: the observed one's source)."""
    return {"cls": cls, "submit_time": submit_time,
            "duration": (duration if runtimes == "observed"
                         else "re-drawn from philly_runtime.csv by class (split_s)"),
            **resources,
            "grace_period": "BE: " + ("drawn from DEFAULT_GRACE" if grace_period is None
                                      else f"fixed {grace_period} s"),
            "job_id": "0-based row of the source file"}


def _trace_name(base: str, runtimes: str) -> str:
    """The trace's name: ``base``, marked when its run times are re-drawn from Philly."""
    return base + ("-philly-runtimes" if runtimes == "philly" else "")


ALIBABA_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "qos",
                   "pod_phase", "creation_time", "deletion_time", "scheduled_time")


def _alibaba_gpus(df, flt, cpu_only, sharing, max_gpu, rpath) -> tuple:
    """``num_gpu`` (the pods it rules out dropped, per the options) and which pods share
    a GPU (``gpu_milli < 1000``)."""
    ngpu = _whole(df, "num_gpu", rpath)
    flt.drop(ngpu.isna() | (ngpu < 0), "num_gpu missing or negative")
    if cpu_only == "drop":
        flt.drop(ngpu == 0, "CPU-only pod, num_gpu == 0 (cpu_only='drop')")
    shared = (ngpu == 1) & (pd.to_numeric(df["gpu_milli"], errors="coerce") < 1000)
    if sharing == "drop":
        flt.drop(shared, "GPU-sharing pod, gpu_milli < 1000 (sharing='drop')")
    if max_gpu is not None:
        flt.drop(ngpu > max_gpu, f"more than max_gpu={max_gpu} GPUs (a job runs on one node)")
    return ngpu, shared


def from_alibaba_v2023(path, *, other_qos: Literal["drop", "TE", "BE"] = "drop",
                       sharing: Literal["whole", "drop"] = "whole",
                       cpu_only: Literal["drop", "keep"] = "drop",
                       runtimes: Literal["observed", "philly"] = "observed",
                       philly_runtime=None, split: float = 3600.0, max_gpu: int | None = 8,
                       grace_period: float | None = None, seed: int = 0):
    """Alibaba cluster-trace-gpu-v2023 pod list (``openb_pod_list_*.csv``) -> (Trace, report).

    Mapping: ``qos`` LS -> TE, BE -> BE; Burstable and Guaranteed per ``other_qos``
    (dropped by default). submit_time = creation_time; duration = deletion_time -
    scheduled_time (``runtimes="observed"``; pending pods, never scheduled, are dropped)
    or re-drawn from Philly (``runtimes="philly"``; pending pods are kept, they did
    arrive). GPU-sharing pods (``gpu_milli < 1000``) count as one whole GPU
    (``sharing="whole"``) or are dropped. CPU-only pods (``num_gpu == 0``) are dropped
    unless ``cpu_only="keep"``; pods asking more than ``max_gpu`` GPUs are dropped
    (a SPEC job runs on one node). cpu_milli and memory_mib are kept as they are.
    """
    fmt = "alibaba-v2023"
    _choice("other_qos", other_qos, ("drop", "TE", "BE"))
    _choice("sharing", sharing, ("whole", "drop"))
    _choice("cpu_only", cpu_only, ("drop", "keep"))
    _choice("runtimes", runtimes, ("observed", "philly"))
    _check_options(seed, split, max_gpu, grace_period)
    options = {"other_qos": other_qos, "sharing": sharing, "cpu_only": cpu_only,
               "runtimes": runtimes, "split_s": split, "max_gpu": max_gpu,
               **_grace_and_seed(grace_period, seed)}
    df, rpath, sha, rep, flt = _start(path, ALIBABA_COLUMNS, fmt, options)
    qos = df["qos"].astype(str)
    flt.drop(~qos.isin(["LS", "BE", "Burstable", "Guaranteed"]), "unknown qos value")
    if other_qos == "drop":
        flt.drop(qos.isin(["Burstable", "Guaranteed"]),
                 "qos Burstable or Guaranteed (other_qos='drop')")
    ngpu, shared = _alibaba_gpus(df, flt, cpu_only, sharing, max_gpu, rpath)
    created = pd.to_numeric(df["creation_time"], errors="coerce").to_numpy(float)
    flt.drop(~np.isfinite(created) | (created < 0), "creation_time missing or negative")
    sched = pd.to_numeric(df["scheduled_time"], errors="coerce").to_numpy(float)
    deleted = pd.to_numeric(df["deletion_time"], errors="coerce").to_numpy(float)
    observed = deleted - sched
    if runtimes == "observed":
        flt.drop(np.isnan(sched), "pending pod, never scheduled: no run time")
        flt.drop(~(observed > 0), "observed run time <= 0 or missing")
    if sharing == "whole" and (shared & flt.keep).any():
        rep.notes.append(f"{int((shared & flt.keep).sum())} GPU-sharing pods (gpu_milli < 1000) "
                         "counted as 1 whole GPU")
    _nothing_left(flt, rpath)
    k = flt.keep
    cls = np.where(qos[k] == "LS", "TE", np.where(qos[k] == "BE", "BE", other_qos))
    rng_g, rng_te, rng_be = _streams(seed)
    dur, extra = _durations(cls, observed[k], runtimes, philly_runtime, path, split,
                            (rng_te, rng_be), rep)
    if runtimes == "observed":
        cens = int((deleted[k] >= np.nanmax(deleted)).sum())
        rep.notes.append(f"{cens} kept pods still exist at the trace end (deletion_time = "
                         "its maximum): their run time is a lower bound (censored)")
    out = pd.DataFrame({
        "job_id": np.flatnonzero(k), "cls": cls, "submit_time": created[k],
        "duration": dur, "gpu": ngpu[k].astype(np.int64).to_numpy(),
        "cpu_milli": df["cpu_milli"][k].to_numpy(), "mem_mib": df["memory_mib"][k].to_numpy(),
        "grace_period": _grace(cls, grace_period, rng_g)})
    mapping = _mapping("qos LS -> TE, BE -> BE, Burstable/Guaranteed -> other_qos",
                       "creation_time [s]", "deletion_time - scheduled_time [s]", runtimes,
                       grace_period, gpu="num_gpu (GPU-sharing pods: per sharing)",
                       cpu_milli="cpu_milli", mem_mib="memory_mib")
    name = _trace_name("alibaba-gpu-v2023", runtimes)
    return _finish(out, flt, rep, fmt, rpath, sha, options, mapping, name, extra)


CHRONUS_COLUMNS = ("job_id", "num_gpu", "submit_time", "duration", "best_effort", "job_type")


def split_gpus(gpus, node_gpus: int) -> tuple[np.ndarray, np.ndarray]:
    """``(tasks, GPUs per task)`` of jobs asking ``gpus`` GPUs on nodes of ``node_gpus``.

    ``tasks = ceil(gpus / node_gpus)`` (the fewest nodes that can hold the job) and each task
    gets ``ceil(gpus / tasks)`` GPUs (spread evenly; rounded up when ``tasks`` does not divide
    ``gpus``, so a job may hold up to ``tasks - 1`` GPUs more than it asked). A job that fits
    one node stays one task of ``gpus`` GPUs.
    """
    if isinstance(node_gpus, bool) or not isinstance(node_gpus, (int, np.integer)) \
            or node_gpus < 1:
        raise AdapterError(f"node_gpus must be an integer >= 1, got {node_gpus!r}")
    g = np.asarray(gpus, dtype=np.int64)
    tasks = np.maximum(1, -(-g // node_gpus))
    return tasks, -(-g // tasks)


def _gang_counts(g, tasks, per) -> dict:
    """{"20 GPUs -> 3 tasks x 7 GPUs (+1 rounded up)": jobs} for the jobs split into tasks."""
    out = {}
    gang = tasks > 1
    for gg, k, p in sorted(set(zip(g[gang].tolist(), tasks[gang].tolist(),
                                   per[gang].tolist()))):
        n = int(((g == gg) & (tasks == k)).sum())
        extra = k * p - gg
        out[f"{gg} GPUs -> {k} tasks x {p} GPUs" + (f" (+{extra} rounded up)" if extra
                                                   else "")] = n
    return out


def _chronus_cluster(cluster) -> tuple[Cluster, int]:
    """The cluster (default DEFAULT_CLUSTER) and the GPUs of its largest node."""
    cluster = DEFAULT_CLUSTER if cluster is None else cluster
    if not isinstance(cluster, Cluster):
        raise AdapterError(f"cluster must be a fitgpp.Cluster or None, got {cluster!r}")
    node_gpus = int(cluster.capacity[:, 0].max())
    if node_gpus < 1:
        raise AdapterError(f"cluster ({cluster.describe()}) has no GPUs: Chronus jobs need them")
    return cluster, node_gpus


def _gangs(ngpu, cluster, node_gpus, cpu_per_gpu_milli, mem_per_gpu_mib) -> tuple:
    """Every row's GPUs, its tasks, the GPUs of each task, and how many nodes of
    ``cluster`` hold one of its tasks."""
    g_all = ngpu.fillna(0).clip(lower=0).astype(np.int64).to_numpy()
    tasks_all, per_all = split_gpus(g_all, node_gpus)
    dem = np.stack([per_all, per_all * int(cpu_per_gpu_milli),
                    per_all * int(mem_per_gpu_mib)], axis=1)
    caps = cluster.capacity
    n_fit = (dem[:, None, :] <= caps[None, :, :]).all(axis=2).sum(axis=1)
    return g_all, tasks_all, per_all, n_fit


def _note_gangs(rep: AdapterReport, gpus, tasks, per, node_gpus: int) -> None:
    """Count the jobs split into gangs in ``rep``, and note the GPUs rounding added."""
    rep.gangs = _gang_counts(gpus, tasks, per)
    if rep.gangs:
        n_gang = int((tasks > 1).sum())
        added = int((tasks * per - gpus).sum())
        rep.notes.append(
            f"{n_gang} jobs of more than {node_gpus} GPUs (a node) kept as gangs of "
            f"ceil(gpus / {node_gpus}) tasks of ceil(gpus / tasks) GPUs"
            + (f"; rounding up added {added} GPU(s) in all" if added else ""))


def _chronus_stem(path) -> str:
    """``mix1`` for ``trace_job_Philly_MIX1.csv`` (plain or compressed)."""
    stem = Path(Path(path).name.removesuffix(".gz").removesuffix(".xz").removesuffix(".bz2")).stem
    return stem.replace("trace_job_Philly_", "").lower()


def from_philly_chronus(path, *, time_unit: float = 60.0,
                        runtimes: Literal["observed", "philly"] = "observed",
                        philly_runtime=None, split: float = 3600.0, max_gpu: int | None = None,
                        cluster: Cluster | None = None,
                        cpu_per_gpu_milli: int = 12000, mem_per_gpu_mib: int = 98304,
                        grace_period: float | None = None, seed: int = 0):
    """Chronus' Philly-derived job list (``trace_job_Philly_MIX*.csv``) -> (Trace, report).

    Mapping: ``job_type`` best -> BE; strict and soft -> TE (rows whose ``best_effort``
    flag disagrees with the label are dropped). Times are in minutes (``time_unit=60``
    seconds): submit times run 1..20151 (14 days in minutes; 5.6 h in seconds would mean
    1.5 Philly jobs per second) and the median duration is 60 (1 h in minutes, near
    Philly's run times; 1 min in seconds would be implausibly short). The file has no
    CPU or memory: each task gets ``cpu_per_gpu_milli`` and ``mem_per_gpu_mib`` per GPU
    (default: 1/8 of a default node per GPU). Jobs asking more GPUs than a node of
    ``cluster`` (default :data:`fitgpp.DEFAULT_CLUSTER`) has become gangs, split by
    :func:`split_gpus` (column ``tasks``; ``gpu``, ``cpu_milli``, ``mem_mib`` per task);
    dropped are jobs with 0 GPUs (nothing to demand), jobs whose tasks fit on fewer nodes
    of ``cluster`` than they have tasks, and, if ``max_gpu`` is given, jobs of more GPUs.
    """
    fmt = "philly-chronus"
    _choice("runtimes", runtimes, ("observed", "philly"))
    if not (isinstance(time_unit, (int, float)) and time_unit > 0):
        raise AdapterError(f"time_unit must be a number of seconds > 0, got {time_unit!r}")
    _check_options(seed, split, max_gpu, grace_period)
    cluster, node_gpus = _chronus_cluster(cluster)
    options = {"time_unit_s": time_unit, "runtimes": runtimes, "split_s": split,
               "max_gpu": max_gpu, "cluster": cluster.to_dict(),
               "cpu_per_gpu_milli": cpu_per_gpu_milli, "mem_per_gpu_mib": mem_per_gpu_mib,
               **_grace_and_seed(grace_period, seed)}
    df, rpath, sha, rep, flt = _start(path, CHRONUS_COLUMNS, fmt, options)
    jt = df["job_type"].astype(str).str.strip()
    be_flag = pd.to_numeric(df["best_effort"], errors="coerce")
    flt.drop(~jt.isin(["best", "strict", "soft"]), "unknown job_type")
    flt.drop(((jt == "best") != (be_flag == 1)), "best_effort flag disagrees with job_type")
    ngpu = _whole(df, "num_gpu", rpath)
    flt.drop(ngpu.isna() | (ngpu < 0), "num_gpu missing or negative")
    flt.drop(ngpu == 0, "num_gpu == 0: no GPU, and the file records no CPU or memory")
    if max_gpu is not None:
        flt.drop(ngpu > max_gpu, f"more than max_gpu={max_gpu} GPUs (max_gpu option)")
    g_all, tasks_all, per_all, n_fit = _gangs(ngpu, cluster, node_gpus, cpu_per_gpu_milli,
                                              mem_per_gpu_mib)
    flt.drop(n_fit < tasks_all, f"does not fit the cluster ({cluster.describe()}): its "
                                "tasks fit on fewer nodes than it has tasks")
    sub = pd.to_numeric(df["submit_time"], errors="coerce").to_numpy(float) * time_unit
    flt.drop(~np.isfinite(sub) | (sub < 0), "submit_time missing or negative")
    dur0 = pd.to_numeric(df["duration"], errors="coerce").to_numpy(float) * time_unit
    if runtimes == "observed":
        flt.drop(~(dur0 > 0), "duration <= 0 or missing")
    _nothing_left(flt, rpath)
    k = flt.keep
    cls = np.where(jt[k] == "best", "BE", "TE")
    rng_g, rng_te, rng_be = _streams(seed)
    dur, extra = _durations(cls, dur0[k], runtimes, philly_runtime, path, split,
                            (rng_te, rng_be), rep)
    tasks, g = tasks_all[k], per_all[k]
    _note_gangs(rep, g_all[k], tasks, g, node_gpus)
    out = pd.DataFrame({
        "job_id": np.flatnonzero(k), "cls": cls, "submit_time": sub[k], "duration": dur,
        "gpu": g, "cpu_milli": g * int(cpu_per_gpu_milli), "mem_mib": g * int(mem_per_gpu_mib),
        "grace_period": _grace(cls, grace_period, rng_g), "tasks": tasks})
    mapping = _mapping("job_type best -> BE, strict/soft -> TE",
                       f"submit_time x {time_unit:g} s (minutes)", f"duration x {time_unit:g} s",
                       runtimes, grace_period, gpu="per task: ceil(num_gpu / tasks)",
                       tasks=f"ceil(num_gpu / {node_gpus}) (GPUs of the largest node)",
                       cpu_milli=f"gpu x {cpu_per_gpu_milli}", mem_mib=f"gpu x {mem_per_gpu_mib}")
    name = _trace_name(f"philly-chronus-{_chronus_stem(path)}", runtimes)
    return _finish(out, flt, rep, fmt, rpath, sha, options, mapping, name, extra)


def read_format(path, fmt: str, **options):
    """Read ``path`` as ``fmt`` (one of :data:`FORMATS`) -> (Trace, AdapterReport)."""
    if fmt == "spec":
        if options:
            raise AdapterError(f"format spec takes no options, got {', '.join(options)}")
        tr = read_trace(path)
        rep = AdapterReport("spec", tr.source.get("path", str(path)), tr.source.get("sha256", ""),
                            len(tr.jobs), len(tr.jobs))
        src = {**tr.source, "format": "spec", "name": Path(path).stem, "report": rep.to_dict()}
        return type(tr)(jobs=tr.jobs, source=src, dropped=tr.dropped), rep
    if fmt == "alibaba-v2023":
        return from_alibaba_v2023(path, **options)
    if fmt == "philly-chronus":
        return from_philly_chronus(path, **options)
    raise AdapterError(f"unknown trace format {fmt!r} (known: {', '.join(FORMATS)})")


def _choice(name, value, allowed):
    if value not in allowed:
        raise AdapterError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
