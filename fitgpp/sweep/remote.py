"""What a Dask worker does for one cell, and the receipt it sends back.

A worker does all the work of a cell, not only its simulation: it encodes the cache entry
(archive and checksum, :func:`fitgpp.sweep.cache._encode`), computes the numbers the sweep's
Dataset is assembled from (:func:`fitgpp.sweep.summary.cell_metrics`, kept as
:func:`fitgpp.sweep.derived.derived` keeps them) and, when it can see the sweep's cache
(:class:`Target`), writes the entry and its summary there itself. The client then only reads
a :class:`Receipt` of a few kilobytes per cell, so it is not the bottleneck of a sweep however
many workers run it (docs/cluster.md). A worker that cannot see the cache (another machine,
another file system) sends the entry's bytes back and the client writes them; with no cache at
all, the result itself comes back. The bytes written are the same in every case, and the same
as a sweep in process writes.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from fitgpp.sweep import derived
from fitgpp.sweep.cache import CellCache, _encode, _meta
from fitgpp.sweep.cell import CELL_FORMAT, compute_cell
from fitgpp.sweep.summary import cell_metrics

#: The file a client puts in its cache, for the sweep's duration, so that a worker can tell
#: whether it sees the same directory (the same path on another machine is another cache).
TOKEN = "sweep-cells/.client-{token}"


@dataclass(frozen=True)
class Target:
    """The sweep's cache as the client names it: its directory and the token it wrote there."""

    root: str
    token: str

    def visible(self) -> bool:
        """Whether this process sees the client's cache (the token file is there); asked once
        per process and sweep."""
        seen = _SEEN.get(self)
        if seen is None:
            seen = _SEEN[self] = os.path.isfile(Path(self.root) / TOKEN.format(token=self.token))
        return seen


_SEEN: dict[Target, bool] = {}


@dataclass
class Receipt:
    """What comes back of a cell: the entry's summary (its checksum, size, jobs, arrays,
    scalars and strings, and the derived values, encoded), whether the worker wrote it, and
    else its bytes (``blob``) or, with no cache, the result itself (``result``)."""

    key: str
    fitgpp: str
    code: str
    payload: str = ""
    size: int = 0
    n: int = 0
    names: tuple = ()
    meta: str = ""
    values: dict | None = None
    #: the digest of the code that derived ``values`` (:func:`fitgpp.sweep.derived.code_digest`)
    values_code: str = ""
    written: bool = False
    blob: bytes | None = None
    result: dict | None = None
    #: CPU seconds the worker's thread spent on the cell (simulation, encoding, writing)
    cpu_s: float = 0.0
    #: ``meta`` read as the cache reads it (:func:`fitgpp.sweep.cache._meta`), here on the
    #: worker rather than on the client
    scalars: dict | None = None

    def summary(self, path: Path | None) -> derived.Summary:
        """The entry's summary, kept at ``path`` (None: kept in memory only), with the values
        the worker derived if its code derives them as this process's does."""
        values = self.values if self.values_code == derived.code_digest() else None
        cls = derived.Summary if path is not None else _InMemory
        return cls(path, self.key, self.payload, self.size, self.n, self.names, self.meta, values)


class _InMemory(derived.Summary):
    """A summary kept nowhere but here: a cell whose entry is not (yet) on disk."""

    def _write(self) -> None:
        pass


def run_cell(cell, policy_digest: str, key: str, *, source, cluster, tick: float,
             target: Target | None, version: str) -> Receipt:
    """Compute the cell of cache key ``key`` (:func:`~fitgpp.sweep.cell.compute_cell`) and
    return its :class:`Receipt`. ``target``: the sweep's cache (None: no cache); ``version``:
    the client's fitgpp version; a worker of another version writes nothing (the client
    refuses its result)."""
    c0 = time.thread_time()
    if target is not None and target.visible():
        done = _in_cache(key, cell, source, target, version)
        if done is not None:   # run again after its worker died: it had written the cell
            return done
    res = compute_cell(source, cell, cluster, tick, policy_digest)
    if res["fitgpp"] != version:
        return Receipt(key, res["fitgpp"], res["code"])
    kept = derived.Kept(res)
    if target is None:
        kept.summary = _InMemory(None, key, "", 0, len(res["te"]), (), "")
        derived.derived(kept, "cell_metrics", cell_metrics)
        return _receipt(key, res, kept.summary, result=res, cpu_s=time.thread_time() - c0)
    blob = _encode(res, key)
    store = CellCache(target.root)
    written = target.visible() and store.write(key, blob, warn=False)
    s = store.summary_of(key, blob, res)
    kept.summary = s if written else _InMemory(None, key, s.payload, s.size, s.n, s.names, s.meta)
    derived.derived(kept, "cell_metrics", cell_metrics)   # kept beside the entry, if written
    return _receipt(key, res, kept.summary, written=written, blob=None if written else blob,
                    cpu_s=time.thread_time() - c0)


def _in_cache(key: str, cell, source, target: Target, version: str) -> Receipt | None:
    """The receipt of the cell if its entry and summary are in the cache already and hold
    (:func:`fitgpp.sweep.derived.load`), with the values the sweep needs: a task run again
    after the worker that ran it died, having written it, computes nothing."""
    store = CellCache(target.root)
    n = len(source.trace) if source.kind == "trace" else dict(cell.knobs).get("n_jobs")
    s = derived.load(store.path(key), key, n, CELL_FORMAT)
    if s is None or "cell_metrics" not in s.values:
        return None
    try:
        meta = json.loads(s.meta)
    except ValueError:
        return None
    if not isinstance(meta, dict) or meta.get("fitgpp") != version:
        return None
    return Receipt(key, meta["fitgpp"], str(meta.get("code")), s.payload, s.size, s.n,
                   tuple(s.names), s.meta, dict(s.values), derived.code_digest(), written=True,
                   scalars=_meta(s.meta, key))


def _receipt(key: str, res: dict, s: derived.Summary, **kw) -> Receipt:
    return Receipt(key, res["fitgpp"], res["code"], s.payload, s.size, s.n, tuple(s.names),
                   s.meta, dict(s.values), derived.code_digest(),
                   scalars=_meta(s.meta, key) if s.meta else None, **kw)

