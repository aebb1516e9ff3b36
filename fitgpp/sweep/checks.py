"""Checking the values of an experiment description: the error that names the table and
key, numbers within bounds, lists of values to sweep, and the workload knobs with their
checks (see :mod:`fitgpp.sweep.config`)."""

from __future__ import annotations

import math

from fitgpp.errors import FitgppError
from fitgpp.sim.validate import MAX_GRACE_SCALE, MAX_JOBS, MAX_TIME_S

#: Workload knobs a synthesized workload takes (see fitgpp.workload.synthesize).
KNOBS = ("n_jobs", "load", "te_fraction", "grace_scale", "gang_fraction", "gang_tasks",
         "restart_overhead", "restart_sigma", "be_8gpu_share")


class ExperimentError(FitgppError):
    """An experiment description is malformed; the message names the file, table and key."""


def _fail(where: str, msg: str):
    raise ExperimentError(f"{where} {msg}" if where else msg)


def _number(where, key, v, *, lo=None, lo_open=False, hi=None, integer=False):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or \
            (integer and not isinstance(v, int)):
        kind = "an integer" if integer else "a number"
        _fail(where, f"key '{key}' must be {kind}, got {v!r}")
    if not integer and not math.isfinite(v):
        _fail(where, f"key '{key}' must be finite, got {v!r}")
    if lo is not None and (v <= lo if lo_open else v < lo):
        _fail(where, f"key '{key}' must be {'>' if lo_open else '>='} {lo}, got {v!r}")
    if hi is not None and v > hi:
        _fail(where, f"key '{key}' must be <= {hi}, got {v!r}")
    return v if integer else float(v)


def _values(where, key, v, check) -> tuple | object:
    """A scalar (checked) or a non-empty list of distinct checked values (a tuple)."""
    if isinstance(v, (list, tuple)):
        if not v:
            _fail(where, f"key '{key}' is an empty list: nothing to sweep")
        out = tuple(check(where, key, x) for x in v)
        if len(set(out)) != len(out):
            _fail(where, f"key '{key}' lists a value twice: {list(v)!r}")
        return out
    return check(where, key, v)


_KNOB_CHECKS = {
    "n_jobs": lambda w, k, v: _number(w, k, v, lo=1, hi=MAX_JOBS, integer=True),
    "load": lambda w, k, v: _number(w, k, v, lo=0, lo_open=True, hi=1e3),
    "te_fraction": lambda w, k, v: _number(w, k, v, lo=0, hi=1),
    "grace_scale": lambda w, k, v: _number(w, k, v, lo=0, hi=MAX_GRACE_SCALE),
    "gang_fraction": lambda w, k, v: _number(w, k, v, lo=0, hi=1),
    "gang_tasks": lambda w, k, v: _number(w, k, v, lo=2, hi=2**20, integer=True),
    "restart_overhead": lambda w, k, v: _number(w, k, v, lo=0, hi=MAX_TIME_S),
    "restart_sigma": lambda w, k, v: _number(w, k, v, lo=0, hi=10),
    "be_8gpu_share": lambda w, k, v: _number(w, k, v, lo=0, hi=1),
}


def _sorted(v):
    try:
        return sorted(v)
    except TypeError:
        return list(v)
