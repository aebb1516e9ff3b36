"""Where a sweep's finished cells go: checked, kept for its Dataset, and in the cache.

A cell computed in this process is written to the cache here, as it arrives. A cell computed
on a Dask worker arrives as a :class:`~fitgpp.sweep.remote.Receipt`: the worker has written
its entry already when it could see the cache; else its bytes come with it and a thread of
this process writes them while the next results keep arriving (:class:`_Writer`). Either way
the client keeps only the entry's summary (its scalars and the numbers the Dataset needs), as
for a cell found in the cache, and reads its arrays from the cache when they are asked for.
"""

from __future__ import annotations

import os
import queue
import threading
import warnings
from pathlib import Path

from fitgpp._version import __version__
from fitgpp.sweep.cache import Summarized, _decode, _meta
from fitgpp.sweep.cell import code_digest
from fitgpp.sweep.config import ExperimentError
from fitgpp.sweep.derived import Kept


class SweepError(ExperimentError):
    """A sweep cannot run as asked (bad worker count, code mismatch on workers)."""


class SweepWarning(UserWarning):
    """Something in a sweep deserves attention but does not stop it."""


_WARNED = False


def check_code(version: str, code: str) -> None:
    """Refuse results from workers with another fitgpp version; warn once when only
    the source differs (an edited install), since the cache key used this process's code."""
    global _WARNED
    if version != __version__:
        raise SweepError(f"a worker runs fitgpp {version} but this process runs "
                         f"{__version__}; install the same fitgpp on the workers")
    if code != code_digest() and not _WARNED:
        _WARNED = True
        warnings.warn(f"a worker runs other fitgpp source (code {code[:12]}) than this "
                      f"process (code {code_digest()[:12]}); were files edited during the sweep?",
                      SweepWarning, stacklevel=3)


class Sink:
    """Takes each finished cell: ``results[key]`` is its result (or its summary, when it is in
    the cache), ``bar.update()`` counts it. ``recompute(key)``: what computes the cell again if
    its entry is found damaged later (:class:`~fitgpp.sweep.cache.Summarized`)."""

    def __init__(self, store, results: dict, bar, recompute):
        self.store, self.results, self.bar, self.recompute = store, results, bar, recompute
        self.writer: _Writer | None = None
        # where summaries go: CellCache.path(key) with ".sum", made as one string per cell
        self._cells = None if store is None else os.path.join(store.root, "sweep-cells")
        #: how worker processes ended during the sweep, where this process can tell
        self.deaths: list[str] = []

    def __call__(self, key: str, res: dict) -> None:
        """A result computed in this process: written to the cache now."""
        check_code(res["fitgpp"], res["code"])
        self.results[key] = res = Kept(res)
        if self.store is not None:
            res.summary = self.store.put(key, res)   # where its derived values are kept
        self.bar.update()

    def receive(self, rc) -> None:
        """The :class:`~fitgpp.sweep.remote.Receipt` of a cell computed on a worker."""
        check_code(rc.fitgpp, rc.code)
        if rc.result is not None:   # no cache: the result itself
            res = Kept(rc.result)
            res.summary = rc.summary(None)
        else:
            summary = rc.summary(Path(f"{self._cells}/{rc.key[:2]}/{rc.key}.sum"))
            res = Summarized(self.store, summary,
                             rc.scalars if rc.scalars is not None else _meta(rc.meta, rc.key))
            res.recompute = self.recompute(rc.key)
            if not rc.written:
                if self.writer is None:
                    self.writer = _Writer(self.store)
                self.writer.queue.put((rc.key, rc.blob, summary))
        self.results[rc.key] = res
        self.bar.update()

    def finish(self) -> None:
        """Wait until every entry handed to the writer is written. One that could not be
        is said with a :class:`~fitgpp.sweep.cache.CacheWarning`, as in process, and its
        result kept in memory."""
        if self.writer is None:
            return
        from fitgpp.sweep.cache import CacheWarning
        from fitgpp.sweep.remote import _InMemory
        failed, self.writer = self.writer.close(), None
        for key, blob, s, exc in failed:
            warnings.warn(self.store.unwritable(key, exc), CacheWarning, stacklevel=3)
            entry = _decode(blob, key)
            entry.summary = _InMemory(None, key, s.payload, s.size, s.n, s.names, s.meta, s.values)
            self.results[key] = entry


class _Writer:
    """A thread that writes cache entries (and their summaries) in the order they are put in
    :attr:`queue`, while the client goes on receiving results; :meth:`close` waits for it."""

    def __init__(self, store):
        self.store, self.failed = store, []
        self.queue: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="fitgpp-cache-writer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (item := self.queue.get()) is not None:
            key, blob, summary = item
            try:
                exc = self.store.place(key, blob)
            except Exception as e:  # noqa: BLE001 - said by the client, as a failed write
                exc = OSError(f"{type(e).__name__}: {e}")
            if exc is None:
                summary._write()
            else:
                self.failed.append((key, blob, summary, exc))

    def close(self) -> list:
        self.queue.put(None)
        self.thread.join()
        return self.failed
