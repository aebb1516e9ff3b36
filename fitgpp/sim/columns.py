"""Per-job columns as the engine keeps them: Python lists where policies read them often,
packed ``array`` objects elsewhere, so that a million jobs fit in little memory."""

from __future__ import annotations

from array import array

import numpy as np


def shared(a: np.ndarray) -> list:
    """``a.tolist()`` with one Python object per distinct value (``tolist`` makes one per
    element: 32 bytes a job for each column of large ints); a column of mostly distinct
    values is listed as it is."""
    a = np.asarray(a)
    if len(a) < 1024:
        return a.tolist()
    if a.dtype.kind in "iu":
        lo, hi = int(a.min()), int(a.max())
        if hi - lo < len(a) // 4:  # a table of every value in the range, picked per job
            table = np.array(range(lo, hi + 1), dtype=object)
            return table[a - lo].tolist()
    u, inv = np.unique(a, return_inverse=True)
    if 4 * len(u) > len(a):
        return a.tolist()
    return np.array(u.tolist(), dtype=object)[inv.ravel()].tolist()


def small(a: np.ndarray):
    """An int32 array (4 bytes a job) of a column of small integers (ticks of grace and
    reload, tasks), a list of shared ints if some value does not fit."""
    a = np.asarray(a, dtype=np.int64)
    if len(a) and (a.max() >= 2**31 or a.min() < -2**31):
        return shared(a)
    return array("i", a.astype(np.int32).tobytes())


def largest_share(capacity: np.ndarray, demand: list[np.ndarray]) -> np.ndarray:
    """Per job, ``max_r demand[r] / C[r]`` over the resources, ``C[r]`` the largest capacity
    of ``r`` (0 for a resource no node has), one resource at a time (SPEC's job size)."""
    cmax = capacity.max(axis=0).astype(float)
    out = None
    for d, c in zip(demand, cmax):
        share = d / c if c > 0 else np.zeros(len(d))
        out = share if out is None else np.maximum(out, share)
    return out
