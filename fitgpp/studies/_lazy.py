"""A Dask cluster started only when some cell of a study must be computed."""

from __future__ import annotations


class _LazyCluster:
    """A Dask LocalCluster started the first time a cell must be computed (never on a
    warm cache); callable: returns the scheduler address."""

    def __init__(self, workers: int | None):
        self.workers, self.cluster = workers, None
        #: sized to the machine: a sweep may run in process instead (sweep.runner.dask_pays)
        self.auto = workers is None

    def __call__(self) -> str:
        status = getattr(getattr(self.cluster, "status", None), "name", "running")
        if self.cluster is not None and status not in ("running", "created", "starting"):
            self.close()  # it stopped (closed elsewhere, or broken): start a new one
        if self.cluster is None:
            from fitgpp.sweep import machine_workers
            from fitgpp.sweep.runner import local_cluster
            self.cluster = local_cluster(self.workers or machine_workers())
        return self.cluster.scheduler_address

    def close(self):
        if self.cluster is not None:
            from fitgpp.sweep.runner import close_cluster
            close_cluster(self.cluster)
            self.cluster = None


_SHARED: dict = {}


def shared(workers: int | None) -> _LazyCluster:
    """This session's lazily started cluster of ``workers`` workers (one per value), so the
    studies of one notebook or command share it; closed when the process exits."""
    lazy = _SHARED.get(workers)
    if lazy is None:
        if not _SHARED:
            import atexit
            atexit.register(_close_shared)
        lazy = _SHARED[workers] = _LazyCluster(workers)
    return lazy


def _close_shared() -> None:
    for lazy in _SHARED.values():
        lazy.close()
