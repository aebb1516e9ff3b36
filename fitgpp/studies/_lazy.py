"""A Dask cluster started only when some cell of a study must be computed."""

from __future__ import annotations


class _LazyCluster:
    """A Dask LocalCluster started the first time a cell must be computed (never on a
    warm cache); callable: returns the scheduler address."""

    def __init__(self, workers: int | None):
        self.workers, self.cluster = workers, None

    def __call__(self) -> str:
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
