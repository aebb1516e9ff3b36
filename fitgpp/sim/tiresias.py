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

Two things Tiresias's simulator reads otherwise than fitgpp, said by a
:class:`TiresiasWarning` when a file has them (docs/model.md, "Where fitgpp and Tiresias's
simulator still part"): jobs submitted in the same second go in *line* order there (a stable
sort by ``submit_time``), in ``job_id`` order here (SPEC); and a duration with a fraction of
a second is cut to whole seconds there (``int(float(duration))``), rounded up to whole ticks
here. A file :func:`to_tiresias` writes has neither: its lines are in ``(submit_time,
job_id)`` order, and it refuses fractional submit times.
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
#: Columns of the SPEC schema the conversion sets itself: a Tiresias file holding one is
#: ambiguous (read as SPEC, or as Tiresias with that column replaced?) and is refused.
_SPEC_ONLY = ("gpu", "cpu_milli", "mem_mib", "grace_period", "cls", "tasks")
#: Largest gzipped Tiresias trace read, decompressed (10 million jobs take about 1 GB).
MAX_TEXT_BYTES = 2**31
_MAX_INT = 2**53


class TiresiasError(FitgppError):
    """A Tiresias trace cannot be read or converted; the message names rows and column."""


class TiresiasWarning(UserWarning):
    """A Tiresias trace that Tiresias's simulator reads otherwise than fitgpp (the message
    says where and how): runs of the same policy can then differ between the two."""


def _header(path) -> list[str] | None:
    """The names of the first non-blank line of a regular file (gzipped or not), each
    stripped of spaces and quotes as a CSV reader reads them; None if there is none."""
    import csv
    import gzip
    p = Path(path)
    if not p.is_file():
        return None
    try:
        with open(p, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        with (gzip.open(p, "rb") if gz else open(p, "rb")) as f:
            head = f.read(1 << 16)
        lines = [ln for ln in head.decode("utf-8-sig", errors="replace").splitlines()
                 if ln.strip()]
    except (OSError, EOFError, ValueError):  # unreadable, or a broken gzip stream
        return None
    return [c.strip() for c in next(csv.reader(lines[:1]), [])] if lines else None


def detect_format(path) -> str:
    """``"tiresias"`` if the CSV's header (gzipped or not; quoted names and spaces around
    them are read as a CSV reader reads them) names Tiresias's ``num_gpu``, ``submit_time``
    and ``duration`` and no ``cls``, else ``"spec"``. A header with Tiresias's columns and
    the SPEC schema's ``gpu``, ``cpu_milli``, ``mem_mib`` or ``grace_period`` but no ``cls``
    could be either: a :class:`TiresiasError` says how to choose. Only a regular file is
    looked at (a FIFO or a device is left to the trace reader, which refuses it unread)."""
    names = _header(path)
    if not names or "cls" in names or not all(c in names for c in _MARK):
        return "spec"
    both = [c for c in _SPEC_ONLY if c in names]
    if both:
        raise TiresiasError(
            f"{path}: the header has Tiresias's columns ({', '.join(_MARK)}) and the SPEC "
            f"schema's ({', '.join(both)}) but no cls: it could be either format. Choose one: "
            "fitgpp simulate --format spec (needs cls and grace_period; num_gpu is kept as an "
            "extra column) or --format tiresias (GPUs from num_gpu, CPU and memory 0; remove "
            f"{', '.join(both)} first); in Python fitgpp.read_trace or "
            "fitgpp.tiresias.read_tiresias")
    return "tiresias"


def is_tiresias(path: str | os.PathLike) -> bool:
    """True if :func:`detect_format` says ``"tiresias"`` (False for an ambiguous header)."""
    try:
        return detect_format(path) == "tiresias"
    except TiresiasError:
        return False


def _bad(name: str, column: str, mask: np.ndarray, labels: np.ndarray, problem: str,
         unit: str = "line"):
    if mask.any():
        rows = ", ".join(str(x) for x in labels[mask][:5]) + (" ..." if mask.sum() > 5 else "")
        raise TiresiasError(f"{name}: column {column}: {problem} ({unit} {rows})")


def _text(path) -> tuple[str, bytes]:
    """The text of a Tiresias CSV file (gzipped or not) and the file's bytes; only a
    regular file is read (a FIFO or a device is refused without waiting on it)."""
    import gzip
    import io
    import zlib

    from fitgpp.sim.validate import read_regular
    data = read_regular(path, "Tiresias trace", TiresiasError, limit=MAX_TEXT_BYTES)
    raw = data
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
                data = f.read(MAX_TEXT_BYTES + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise TiresiasError(f"{path}: not a readable gzip file ({exc})") from None
        if len(data) > MAX_TEXT_BYTES:
            raise TiresiasError(f"{path}: more than {MAX_TEXT_BYTES} bytes once decompressed")
    try:
        return data.decode("utf-8-sig"), raw
    except UnicodeDecodeError as exc:
        raise TiresiasError(f"{path}: not a UTF-8 text file ({exc})") from None


def _frame(src) -> tuple[pd.DataFrame, np.ndarray, str, str, bytes | None]:
    """(table, row labels, unit, name, file bytes) of a Tiresias CSV path or DataFrame;
    a file's labels are its line numbers (header = line 1)."""
    import io

    from fitgpp.sim.trace import _record_lines
    if isinstance(src, pd.DataFrame):
        twice = sorted({str(c) for c in src.columns[src.columns.duplicated()]})
        if twice:
            raise TiresiasError(f"<DataFrame>: column {', '.join(twice)} given twice")
        return src, np.asarray(src.index), "row", "<DataFrame>", None
    name = str(src)
    text, raw = _text(src)
    starts = _record_lines(text, name)  # a row with more fields than the header, a name twice
    try:
        df = pd.read_csv(io.StringIO(text), skipinitialspace=True, index_col=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise TiresiasError(f"{name}: not a readable CSV ({' '.join(str(exc).split())})"
                            ) from None
    df.columns = [str(c).strip() for c in df.columns]
    labels = starts if len(starts) == len(df) else np.arange(len(df)) + 2
    return df, labels, "line", name, raw


def from_tiresias(src, *, node_gpu: int | None = None, cls: str = "BE") -> pd.DataFrame:
    """A Tiresias trace (CSV path, gzipped or not, or DataFrame) as a DataFrame of the
    SPEC schema.

    ``node_gpu``: GPUs of a node; a job with more becomes ``num_gpu / node_gpu`` tasks
    of ``node_gpu`` GPUs each (None: every job is one task). ``cls``: TE or BE for all."""
    return _convert(*_frame(src)[:4], node_gpu, cls).reset_index(drop=True)


def _convert(df, labels, unit, name, node_gpu, cls) -> pd.DataFrame:
    """The SPEC table of ``df``, its index the row labels (lines of a file)."""
    from fitgpp.sim.validate import MAX_TIME_S
    if cls not in ("TE", "BE"):
        raise TiresiasError(f"cls must be 'TE' or 'BE', got {cls!r}"[:300])
    missing = [c for c in ("job_id", "num_gpu", "submit_time", "duration") if c not in df]
    if missing:
        raise TiresiasError(f"{name}: not a Tiresias trace: missing column(s) "
                            f"{', '.join(missing)} (expected {', '.join(COLUMNS)})")
    clash = [c for c in _SPEC_ONLY if c in df]
    if clash:
        raise TiresiasError(f"{name}: column(s) {', '.join(clash)} of the SPEC schema in a "
                            "Tiresias trace would be replaced by the conversion (GPUs from "
                            "num_gpu, CPU and memory 0, every job one class): remove them, or "
                            "read the file as the SPEC schema (--format spec)")
    num = {c: pd.to_numeric(df[c], errors="coerce").to_numpy(float)
           for c in ("job_id", "num_gpu", "submit_time", "duration")}
    for c, low, what in (("job_id", 0, ">= 0"), ("num_gpu", 1, ">= 1"),
                         ("submit_time", 0, ">= 0"), ("duration", 0, "> 0")):
        v = num[c]
        low_or_nan = ~np.isfinite(v) | (v <= low if c == "duration" else v < low)
        _bad(name, c, low_or_nan, labels, f"must be a number {what}", unit)
        if c in ("job_id", "num_gpu"):  # (checked before the cast to int64: no overflow)
            _bad(name, c, v >= _MAX_INT, labels, "too large (integers must be below 2**53)", unit)
        else:
            _bad(name, c, v > MAX_TIME_S, labels, f"beyond the horizon of {MAX_TIME_S:g} s", unit)
    for c in ("job_id", "num_gpu"):
        _bad(name, c, num[c] != np.round(num[c]), labels, "must be an integer", unit)
    _warn_readings(name, num, labels, unit)
    gpus = num["num_gpu"].astype(np.int64)
    tasks = np.ones(len(df), dtype=np.int64)
    if node_gpu is not None:
        big = gpus > node_gpu
        _bad(name, "num_gpu", big & (gpus % node_gpu != 0), labels,
             f"more GPUs than a node has ({node_gpu}) and not a multiple of it", unit)
        tasks = np.where(big, gpus // node_gpu, 1)
        gpus = np.where(big, node_gpu, gpus)
    out = pd.DataFrame({
        "job_id": num["job_id"].astype(np.int64), "cls": cls,
        "submit_time": num["submit_time"], "duration": num["duration"], "gpu": gpus,
        "cpu_milli": 0, "mem_mib": 0, "grace_period": 0.0, "tasks": tasks}, index=labels)
    for c in df.columns:
        if c not in out and c != "num_gpu":
            out[c] = df[c].to_numpy()  # iterations, model_name, interval: kept, ignored
    return out


def _warn_readings(name: str, num: dict, labels: np.ndarray, unit: str) -> None:
    """A :class:`TiresiasWarning` for each way Tiresias's simulator reads these jobs otherwise
    than fitgpp: same-second jobs out of ``job_id`` order, fractional durations."""
    import warnings
    sub, jid, dur = num["submit_time"], num["job_id"], num["duration"]
    order = np.argsort(sub, kind="stable")  # Tiresias's order: by submit_time, then line
    s, j, at = sub[order], jid[order], labels[order]
    out = np.flatnonzero((s[1:] == s[:-1]) & (j[1:] < j[:-1]))
    if out.size:
        pairs = "; ".join(f"{unit}s {at[k]} and {at[k + 1]}: job_id {j[k]:.0f} before "
                          f"{j[k + 1]:.0f}" for k in out[:3])
        warnings.warn(TiresiasWarning(
            f"{name}: jobs submitted in the same second are listed out of job_id order "
            f"({pairs}{' ...' if out.size > 3 else ''}): Tiresias's simulator takes them in "
            "line order, fitgpp (SPEC) in job_id order, so where that order decides (FIFO's "
            "queue, tied keys of SRTF, ...) the two can differ; to_tiresias(from_tiresias("
            "file), new_file) writes them in job_id order"), stacklevel=4)
    frac = dur != np.floor(dur)
    if frac.any():
        lines = ", ".join(str(x) for x in labels[frac][:5]) + (" ..." if frac.sum() > 5 else "")
        warnings.warn(TiresiasWarning(
            f"{name}: {int(frac.sum())} duration(s) with a fraction of a second ({unit} "
            f"{lines}): Tiresias's simulator cuts them to whole seconds, fitgpp rounds them up "
            "to whole ticks"), stacklevel=4)


def read_tiresias(path, *, cluster=None, node_gpu: int | None = None, cls: str = "BE"):
    """A Tiresias CSV file (gzipped or not) read and validated as a :class:`~fitgpp.Trace`
    (:func:`from_tiresias`, then :func:`fitgpp.read_trace`), every error naming the file and
    its line(s). ``node_gpu`` defaults to the largest node's GPUs of ``cluster``. Its source
    records the file's path and sha256 and how it was converted, so that a result
    simulated from it can be rerun (:func:`fitgpp.rerun`)."""
    import hashlib

    from fitgpp.sim.trace import TraceError, read_trace
    if node_gpu is None and cluster is not None:
        node_gpu = int(cluster.capacity[:, 0].max())
    df, labels, unit, name, raw = _frame(path)
    jobs = _convert(df, labels, unit, name, node_gpu, cls)
    source = {"kind": "tiresias", "path": str(Path(path).resolve()),
              "sha256": hashlib.sha256(raw).hexdigest(), "node_gpu": node_gpu, "cls": cls}
    try:
        return read_trace(jobs, cluster=cluster, source=source)
    except TraceError as exc:  # its rows are our lines; its gpu is the file's num_gpu
        col = None if exc.column is None else exc.column.replace("gpu", "num_gpu") \
            .replace("cpu_milli, ", "").replace(", mem_mib", "")
        raise TraceError(name, col, exc.problem, exc.rows, unit) from None


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
