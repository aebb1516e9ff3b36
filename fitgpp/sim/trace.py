"""Job traces: the SPEC schema, read from CSV or a DataFrame and validated once.

A trace is one row per job with the columns of :data:`COLUMNS`. Reading checks
every rule of the schema and raises :class:`TraceError` naming the source, the
row(s) and the column of the first rule that fails; nothing is repaired or
dropped unless ``drop_invalid=True`` is asked for, in which case the rows that
break a rule are returned in :attr:`Trace.dropped` with the reason.

Times are in seconds, CPU in millicores, memory in MiB.
"""

from __future__ import annotations

from fitgpp.errors import FitgppError
from fitgpp.sim.validate import MAX_TIME_S

import csv
import hashlib
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from fitgpp.sim.cluster import Cluster

#: Required columns, in order, with their meaning (units in brackets).
COLUMNS: dict[str, str] = {
    "job_id": "unique integer id",
    "cls": "job class, TE (trial-and-error) or BE (best-effort)",
    "submit_time": "submission time [s] since the trace start, >= 0",
    "duration": "run time when uninterrupted [s], > 0",
    "gpu": "GPUs, integer >= 0",
    "cpu_milli": "CPU [millicores], integer >= 0",
    "mem_mib": "memory [MiB], integer >= 0",
    "grace_period": "BE: time from preemption signal to exit [s], >= 0; TE: ignored, may be empty",
}
#: Optional columns (SPEC "Multi-node jobs", "Restart cost"): absent or empty means the default.
OPTIONAL: dict[str, str] = {
    "tasks": "multi-node job: tasks, each with the demand above on its own node; integer >= 1, default 1",
    "restart_overhead": "time a preempted job spends reloading its checkpoint at each restart [s],"
                        " >= 0, default 0",
}
OPTIONAL_DEFAULTS = {"tasks": 1, "restart_overhead": 0.0}
INT_COLUMNS = ("job_id", "gpu", "cpu_milli", "mem_mib", "tasks")
RESOURCES = ("gpu", "cpu_milli", "mem_mib")
CLASSES = ("TE", "BE")
_MAX_LISTED = 5
_MAX_INT = 2**53  # ids and resources pass through float64 during validation


class TraceError(FitgppError):
    """A trace breaks the schema; the message names source, rows and column."""

    def __init__(self, source: str, column: str | None, problem: str, rows=(), unit="row"):
        self.source, self.column, self.problem = source, column, problem
        self.rows = list(rows)
        super().__init__(_message(source, column, problem, self.rows, unit))


def _message(source, column, problem, rows, unit) -> str:
    where = source
    if rows:
        shown = ", ".join(str(r) for r in rows[:_MAX_LISTED])
        more = f" and {len(rows) - _MAX_LISTED} more" if len(rows) > _MAX_LISTED else ""
        where += f": {unit if len(rows) == 1 else unit + 's'} {shown}{more}"
    if column:
        where += f", column '{column}'"
    return f"{where}: {problem}"


@dataclass(frozen=True)
class Trace:
    """A validated jobs table plus where it came from.

    ``jobs`` has exactly the :data:`COLUMNS` (plus any extra columns the
    source had, kept untouched), typed: integer ids and resources, float
    times, ``cls`` as ``"TE"``/``"BE"`` strings, TE grace periods set to 0.
    ``source`` is a JSON-serialisable description sufficient to find the
    input again (path and sha256, or a synthesis recipe). ``dropped`` holds
    the rows removed on request, with a ``reason`` column; empty otherwise.
    """

    jobs: pd.DataFrame
    source: dict = field(default_factory=dict)
    dropped: pd.DataFrame | None = None

    def __len__(self) -> int:
        return len(self.jobs)

    def source_json(self) -> str:
        return json.dumps(self.source, sort_keys=True)


def read_trace(
    src: str | os.PathLike | pd.DataFrame | Trace,
    *,
    cluster: Cluster | None = None,
    drop_invalid: bool = False,
    source: dict | None = None,
) -> Trace:
    """Read and validate a trace from a CSV path, a DataFrame or a Trace.

    Row labels in errors are CSV line numbers (header = line 1) for files and
    index labels for DataFrames. With ``cluster``, jobs that fit no node are
    rejected too. With ``drop_invalid=True`` offending rows are removed and
    listed in ``Trace.dropped`` instead of raising (a missing column, a row with
    more fields than the header or an unreadable file still raise).
    """
    if isinstance(src, Trace):
        return read_trace(src.jobs, cluster=cluster, drop_invalid=drop_invalid,
                          source=source or src.source)
    if isinstance(src, pd.DataFrame):
        name = "<DataFrame>"
        df = src  # (read only here; the trace's columns are copy-on-write views or new arrays)
        labels = np.asarray(df.index)
        unit = "row"
        source = source or {"kind": "dataframe"}
        spelled = {}  # in memory NaN is how a cell is left empty
    else:
        path = Path(src)
        name = str(path)
        try:
            if not path.exists():
                raise TraceError(name, None, "no such file")
            if not path.is_file():
                raise TraceError(name, None, "not a file")
            data = path.read_bytes()
        except OSError as exc:  # unreadable, a name too long, an I/O error
            raise TraceError(name[:300], None, f"cannot read ({exc.strerror or exc})") from None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise TraceError(name, None, f"not a UTF-8 text file ({exc})") from None
        starts = _record_lines(text, name)
        try:
            # index_col=False: a row with extra fields must not turn job_id into an index
            df = pd.read_csv(io.StringIO(text), dtype={"cls": str}, keep_default_na=True,
                             index_col=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise TraceError(name, None, f"not a readable CSV ({_one_line(exc)})") from None
        # CSV line numbers (header = line 1); the csv module's count when it agrees with pandas
        # (it also counts blank lines and quoted line breaks), else one record per line.
        labels = starts if len(starts) == len(df) else np.arange(len(df)) + 2
        unit = "line"
        source = source or {"kind": "csv", "path": str(path.resolve()),
                            "sha256": hashlib.sha256(data).hexdigest()}
        spelled = _spelled_nan(text, df)
    jobs, dropped = _validate(df, labels, unit, name, cluster, drop_invalid, spelled)
    return Trace(jobs=jobs, source=source, dropped=dropped)


def _record_lines(text: str, name: str) -> np.ndarray:
    """Line number where each data record starts (header = line 1), skipping blank lines as
    pandas does; a record with more fields than the header is an error naming its line."""
    from fitgpp.sim.validate import long_fields
    reader = csv.reader(io.StringIO(text, newline=""))
    starts, width, end = [], None, 0
    try:
        with long_fields(text):
            for rec in reader:
                start, end = end + 1, reader.line_num
                if not rec or (len(rec) == 1 and not rec[0].strip()):
                    continue  # blank or whitespace-only line: pandas skips it too
                if width is None:
                    width = len(rec)
                    names = [c.strip() for c in rec]
                    twice = sorted({c for c in names if names.count(c) > 1})
                    if twice:
                        raise TraceError(name, ", ".join(twice), "column given twice in the header",
                                         [start], "line")
                    continue
                if len(rec) > width:
                    raise TraceError(name, None, f"{len(rec)} fields, but the header has {width}",
                                     [start], "line")
                starts.append(start)
    except csv.Error as exc:
        raise TraceError(name, None, f"not a readable CSV ({_one_line(exc)})", [end + 1], "line") from None
    return np.asarray(starts, dtype=np.int64)


def _spelled_nan(text: str, df: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per optional column present, where a cell is not empty but pandas read it as NaN
    (``nan``, ``NA``, ``null``...): SPEC rejects NaN, and only an empty cell means the
    default."""
    present = [c for c in OPTIONAL if c in df.columns]
    if not present:
        return {}
    raw = pd.read_csv(io.StringIO(text), usecols=present, dtype=str, na_filter=False,
                      index_col=False)
    return {c: df[c].isna().to_numpy() & (raw[c].str.len() > 0).to_numpy() for c in present}


def _validate(df, labels, unit, name, cluster, drop_invalid, spelled):
    _check_header(df, name)
    reject = _Rejections(labels, unit, name, drop_invalid)
    is_te = _classes(df["cls"], reject)
    present = [c for c in OPTIONAL if c in df.columns]
    num = {col: _numbers(df[col], col, is_te, spelled, reject)
           for col in [*COLUMNS, *present] if col != "cls"}
    _check_values(num, reject)
    if cluster is not None:
        _check_fit(num, cluster, reject)
    out = _valid_rows(df, is_te, num, present, ~reject.bad)
    dropped = reject.dropped(df) if drop_invalid else None
    return out, dropped


def _classes(raw: pd.Series, reject: _Rejections) -> np.ndarray:
    """Where a row is TE; an empty or unknown class (after stripping blanks) is rejected.
    A column of exactly ``"TE"`` and ``"BE"`` (what the trace itself holds) is read as it is,
    without making a string of every row again."""
    if raw.dtype == object or isinstance(raw.dtype, pd.StringDtype):
        v = raw.to_numpy(dtype=object)
        te = v == "TE"
        if isinstance(te, np.ndarray) and te.shape == v.shape and (te | (v == "BE")).all():
            return te
    cls = raw.astype("string").str.strip()
    reject(cls.isna().to_numpy(), "cls", "empty value")
    reject(~cls.isin(CLASSES).fillna(False).to_numpy(), "cls",
           "unknown class (expected TE or BE)")
    return (cls == "TE").fillna(False).to_numpy(dtype=bool)


def _check_header(df: pd.DataFrame, name: str) -> None:
    twice = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
    if twice:
        raise TraceError(name, ", ".join(twice), "column given twice")
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise TraceError(name, ", ".join(missing), "missing column(s); required: "
                         + ", ".join(COLUMNS))


class _Rejections:
    """The rows found invalid so far, each with the first problem found in it. Without
    ``drop_invalid`` the first problem found raises, naming every row that has it."""

    def __init__(self, labels, unit, name, drop_invalid):
        self.labels, self.unit, self.name, self.drop_invalid = labels, unit, name, drop_invalid
        self.bad = np.zeros(len(labels), dtype=bool)
        self.reasons = np.full(len(labels), "", dtype=object) if drop_invalid else None

    def __call__(self, mask, column, problem):
        mask = np.asarray(mask, dtype=bool)
        if not mask.any():  # (the usual case: nothing to take out of self.bad first)
            return
        mask = mask & ~self.bad
        if not mask.any():
            return
        if not self.drop_invalid:
            raise TraceError(self.name, column, problem, self.labels[mask].tolist(), self.unit)
        self.bad[mask] = True
        self.reasons[mask] = f"column '{column}': {problem}"

    def dropped(self, df: pd.DataFrame) -> pd.DataFrame:
        """The rejected rows, labelled, with their reason."""
        dropped = df.loc[self.bad].copy()
        dropped.insert(0, self.unit, self.labels[self.bad])
        dropped["reason"] = self.reasons[self.bad]
        return dropped.reset_index(drop=True)


def _numbers(raw: pd.Series, col: str, is_te: np.ndarray, spelled: dict[str, np.ndarray],
             reject: _Rejections) -> np.ndarray:
    """One numeric column as floats (an integer column of int64 as it is), rejecting what is
    not a number SPEC allows."""
    if raw.dtype == np.float64 or (raw.dtype == np.int64 and col in INT_COLUMNS):
        vals = raw.to_numpy()  # numbers already: a read-only view, nothing to convert
        empty = np.isnan(vals) if vals.dtype == np.float64 else np.zeros(len(vals), bool)
    else:
        vals = pd.to_numeric(raw, errors="coerce").astype("float64").to_numpy()
        not_number = np.isnan(vals) & raw.notna().to_numpy()
        reject(not_number, col, "not a number")
        reject(_booleans(raw), col, "not a number (true/false)")
        empty = raw.isna().to_numpy()
    if col in spelled:
        reject(spelled[col], col, "NaN is not a value (leave the cell empty for the default)")
    if col in OPTIONAL:
        vals = np.where(empty, OPTIONAL_DEFAULTS[col], vals)  # SPEC: empty = the default
        empty = np.zeros(len(raw), dtype=bool)
    if col == "grace_period":
        empty = empty & ~is_te
        vals = np.where(is_te, 0.0, vals)  # ignored for TE (SPEC); may be empty
    # each rule is checked row by row only where some row may break it (a whole valid column
    # is a few reductions: issue 26): an int64 column is never empty, infinite or fractional,
    # and an empty cell is NaN in vals by now
    floats = vals.dtype.kind == "f"
    if floats and not np.isfinite(vals).all():
        reject(empty, col, "empty value (NaN)")
        reject(np.isinf(vals), col, "not finite")
    if col in INT_COLUMNS:
        if floats:
            frac = np.isfinite(vals) & (vals != np.floor(vals))
            reject(frac, col, "not an integer")
        if not _within(vals, -_MAX_INT, _MAX_INT):
            reject((vals >= _MAX_INT) | (vals <= -_MAX_INT), col,
                   "too large (integers must be below 2**53)")
    elif not _within(vals, -np.inf, MAX_TIME_S, closed=True):
        reject(vals > MAX_TIME_S, col, f"beyond the horizon of {MAX_TIME_S:g} s "
                                       "(about 317 years; see fitgpp.sim.validate)")
    return vals


def _within(vals: np.ndarray, lo, hi, closed: bool = False) -> bool:
    """Whether every value is in ``(lo, hi)`` (``closed``: ``hi`` included); False when some
    is NaN (its row-by-row check then decides)."""
    if not len(vals):
        return True
    top = vals.max()
    return bool(vals.min() > lo and (top <= hi if closed else top < hi))


def _check_values(num: dict[str, np.ndarray], reject: _Rejections) -> None:
    """Signs, ids and demands, each row on its own and against the others."""
    for col in ("submit_time", "gpu", "cpu_milli", "mem_mib", "grace_period"):
        reject(num[col] < 0, col, "negative value")
    reject(num["duration"] <= 0, "duration", "must be > 0")
    if "tasks" in num:
        reject(num["tasks"] < 1, "tasks", "must be an integer >= 1")
    if "restart_overhead" in num:
        reject(num["restart_overhead"] < 0, "restart_overhead", "negative value")
    ids = num["job_id"]
    reject(ids < 0, "job_id", "negative value")
    if not (ids[1:] > ids[:-1]).all():  # (increasing ids, as most traces number them: distinct)
        dup = pd.Series(ids).duplicated(keep=False).to_numpy() & ~np.isnan(ids)
        reject(dup, "job_id", "duplicate id")
    zero = (num["gpu"] == 0) & (num["cpu_milli"] == 0) & (num["mem_mib"] == 0)
    reject(zero, "gpu, cpu_milli, mem_mib", "job demands no resource (all zero)")


def _check_fit(num: dict[str, np.ndarray], cluster, reject: _Rejections) -> None:
    """Every job (every task of a gang, each on its own node) fits the cluster."""
    demand = np.stack([np.nan_to_num(num[r]) for r in RESOURCES], axis=1)
    fitting = cluster.nodes_fitting(demand)
    reject(fitting == 0, "gpu, cpu_milli, mem_mib",
           f"demand fits no node of the cluster ({cluster.describe()})")
    if "tasks" in num:
        tasks = np.nan_to_num(num["tasks"], nan=1.0)
        reject(fitting < tasks, "tasks, gpu, cpu_milli, mem_mib",
               f"a gang needs one node per task, but its per-task demand fits fewer nodes"
               f" than it has tasks ({cluster.describe()})")


def _valid_rows(df, is_te, num, present, keep) -> pd.DataFrame:
    """The kept rows, typed, SPEC columns first then the optional ones then the extras. A
    column the input already holds as it must be is shared with it, not copied (pandas'
    copy-on-write keeps either from seeing a later change to the other); ``cls`` holds one
    ``"TE"`` and one ``"BE"`` object (8 bytes a job, not a string each)."""
    every = bool(keep.all())
    # an input indexed 0..n-1 already (as most are) lends its index to the output: its
    # columns then need no new index (reset_index) nor alignment (this function took 0.5 of
    # the 1 ms reading 1,000 valid jobs, before: issue 26)
    own = every and isinstance(df.index, pd.RangeIndex) and df.index.name is None \
        and df.index.equals(pd.RangeIndex(len(df)))
    index = df.index if own else pd.RangeIndex(int(keep.sum()))
    cls = np.array(["BE", "TE"], dtype=object)[(is_te if every else is_te[keep]).astype(np.intp)]
    data = {}
    for col in [*COLUMNS, *present]:
        if col == "cls":
            data[col] = cls
            continue
        v = num[col] if every else num[col][keep]
        if col in INT_COLUMNS:
            v = v.astype(np.int64, copy=False)
        same = df[col]
        if v.dtype == same.dtype and np.shares_memory(v, same.to_numpy()):
            v = same if own else same.reset_index(drop=True)  # the input's own column (see _numbers)
        data[col] = v
    for c in df.columns:
        if c not in COLUMNS and c not in OPTIONAL:
            data[c] = df[c] if own else (df[c] if every else df[c][keep]).reset_index(drop=True)
    return pd.DataFrame(data, index=index, copy=False)


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def _booleans(raw: pd.Series) -> np.ndarray:
    """True where a value is a boolean (pandas reads ``true``/``false`` cells as bools)."""
    if raw.dtype == bool:
        return np.ones(len(raw), dtype=bool)
    if raw.dtype == object:
        return np.fromiter((isinstance(v, (bool, np.bool_)) for v in raw), bool, len(raw))
    return np.zeros(len(raw), dtype=bool)


def write_trace(trace: Trace | pd.DataFrame, path: str | os.PathLike) -> None:
    """Write the SPEC columns (and extras) as CSV, full float precision."""
    jobs = trace.jobs if isinstance(trace, Trace) else trace
    jobs.to_csv(path, index=False, float_format="%.17g")

