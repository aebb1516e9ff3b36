"""Traces in Tiresias's format, both ways.

Tiresias's simulator (Gu et al., NSDI '19; github.com/SymbioticLab/Tiresias) reads a CSV
with the columns ``job_id, num_gpu, submit_time, iterations, model_name, duration,
interval`` (seconds). :func:`from_tiresias` turns one into a trace of the SPEC schema:
every job of one class (BE by default, so that preempting policies may preempt it; TE
for Tiresias's ``fjf`` as PRIO), GPU-only demands (CPU and memory 0), grace period 0.
A job asking for more GPUs than a node has becomes a gang of whole nodes (``num_gpu``
must then be a multiple of the node's GPUs); the three columns fitgpp does not use
(``iterations``, ``model_name``, ``interval``) are kept and ignored. :func:`to_tiresias`
goes back; it drops what Tiresias cannot express (CPU, memory, grace, restart cost).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from fitgpp.errors import FitgppError

#: The columns of a Tiresias trace.
COLUMNS = ("job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration",
           "interval")
#: What identifies a Tiresias trace among CSV files: it has these and no ``cls`` column.
_MARK = ("num_gpu", "submit_time", "duration")


class TiresiasError(FitgppError):
    """A Tiresias trace cannot be read or converted; the message names rows and column."""


def is_tiresias(path: str | os.PathLike) -> bool:
    """True if the CSV's header names Tiresias's columns and no ``cls`` (the SPEC schema).
    Only a regular file is looked at (a FIFO or a device is left to the trace reader, which
    refuses it without reading)."""
    if not Path(path).is_file():
        return False
    try:
        with open(path, newline="") as f:
            header = f.readline()
    except (OSError, UnicodeDecodeError):
        return False
    names = {h.strip() for h in header.strip().split(",")}
    return all(c in names for c in _MARK) and "cls" not in names


def _bad(name: str, column: str, mask: np.ndarray, labels: np.ndarray, problem: str):
    if mask.any():
        rows = ", ".join(str(x) for x in labels[mask][:5]) + (" ..." if mask.sum() > 5 else "")
        raise TiresiasError(f"{name}: column {column}: {problem} (line {rows})")


def from_tiresias(src, *, node_gpu: int | None = None, cls: str = "BE") -> pd.DataFrame:
    """A Tiresias trace (CSV path or DataFrame) as a DataFrame of the SPEC schema.

    ``node_gpu``: GPUs of a node; a job with more becomes ``num_gpu / node_gpu`` tasks
    of ``node_gpu`` GPUs each (None: every job is one task). ``cls``: TE or BE for all."""
    if cls not in ("TE", "BE"):
        raise TiresiasError(f"cls must be 'TE' or 'BE', got {cls!r}")
    name = "<DataFrame>" if isinstance(src, pd.DataFrame) else str(src)
    if isinstance(src, pd.DataFrame):
        df = src.reset_index(drop=True)
    else:
        try:
            df = pd.read_csv(src, skipinitialspace=True)
        except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeError) as exc:
            raise TiresiasError(f"{name}: not a readable CSV ({exc})") from None
    missing = [c for c in ("job_id", "num_gpu", "submit_time", "duration") if c not in df]
    if missing:
        raise TiresiasError(f"{name}: not a Tiresias trace: missing column(s) "
                            f"{', '.join(missing)} (expected {', '.join(COLUMNS)})")
    labels = np.arange(len(df)) + 2  # CSV lines, header = line 1
    num = {c: pd.to_numeric(df[c], errors="coerce").to_numpy(float)
           for c in ("job_id", "num_gpu", "submit_time", "duration")}
    for c, low, what in (("job_id", 0, ">= 0"), ("num_gpu", 1, ">= 1"),
                         ("submit_time", 0, ">= 0")):
        v = num[c]
        _bad(name, c, ~np.isfinite(v) | (v < low), labels, f"must be a number {what}")
    for c in ("job_id", "num_gpu"):
        _bad(name, c, num[c] != np.round(num[c]), labels, "must be an integer")
    d = num["duration"]
    _bad(name, "duration", ~np.isfinite(d) | (d <= 0), labels, "must be a number > 0")
    gpus = num["num_gpu"].astype(np.int64)
    tasks = np.ones(len(df), dtype=np.int64)
    if node_gpu is not None:
        big = gpus > node_gpu
        _bad(name, "num_gpu", big & (gpus % node_gpu != 0), labels,
             f"more GPUs than a node has ({node_gpu}) and not a multiple of it")
        tasks = np.where(big, gpus // node_gpu, 1)
        gpus = np.where(big, node_gpu, gpus)
    out = pd.DataFrame({
        "job_id": num["job_id"].astype(np.int64), "cls": cls,
        "submit_time": num["submit_time"], "duration": d, "gpu": gpus,
        "cpu_milli": 0, "mem_mib": 0, "grace_period": 0.0, "tasks": tasks})
    for c in df.columns:
        if c not in out and c != "num_gpu":
            out[c] = df[c].to_numpy()  # iterations, model_name, interval: kept, ignored
    return out


def to_tiresias(trace, path: str | os.PathLike | None = None) -> pd.DataFrame:
    """A trace of the SPEC schema (Trace, DataFrame or CSV path) in Tiresias's format, in
    ``(submit_time, job_id)`` order; written to ``path`` if given. ``num_gpu`` = GPUs per
    task x tasks; ``iterations``/``model_name`` are kept if the trace has them, else
    ``iterations`` = duration and ``model_name`` = resnet50 (Tiresias's schedulers do not
    read them); ``interval`` = gap to the next submission (0 for the last job)."""
    from fitgpp.sim.trace import read_trace
    jobs = read_trace(trace).jobs.sort_values(["submit_time", "job_id"], kind="stable")
    if (jobs["gpu"] == 0).any():
        raise TiresiasError("Tiresias jobs need GPUs: job(s) "
                            f"{jobs.loc[jobs['gpu'] == 0, 'job_id'].head(5).tolist()} have none")
    tasks = jobs["tasks"] if "tasks" in jobs else 1
    submit = jobs["submit_time"].to_numpy(float)
    if (submit != np.round(submit)).any():
        raise TiresiasError("Tiresias reads submit_time as whole seconds: job(s) "
                            f"{jobs.loc[submit != np.round(submit), 'job_id'].head(5).tolist()}"
                            " are submitted at fractions of a second")
    out = pd.DataFrame({
        "job_id": jobs["job_id"].to_numpy(),
        "num_gpu": (jobs["gpu"] * tasks).to_numpy(np.int64),
        "submit_time": _plain(submit),
        "iterations": (jobs["iterations"].to_numpy() if "iterations" in jobs
                       else _plain(jobs["duration"].to_numpy(float))),
        "model_name": (jobs["model_name"].to_numpy() if "model_name" in jobs
                       else "resnet50"),
        "duration": _plain(jobs["duration"].to_numpy(float)),
        "interval": _plain(np.append(np.diff(submit), 0.0)),
    })
    if path is not None:
        out.to_csv(Path(path), index=False)
    return out


def _plain(v: np.ndarray):
    """Whole numbers as integers (Tiresias reads ``isdigit()`` fields as int)."""
    return v.astype(np.int64) if np.all(v == np.round(v)) else v
