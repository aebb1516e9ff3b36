"""How big a study's runs are (:class:`Size`, :data:`QUICK`, :data:`FULL`), what a study
hands to the report (:class:`RQResult`), and the error a study that cannot run raises.

The names are re-exported by :mod:`fitgpp.studies` (and :mod:`fitgpp.studies.reproduce`), where
they are documented.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import xarray as xr

from fitgpp.sim.cluster import DEFAULT_CLUSTER, DEFAULT_LOAD, Cluster
from fitgpp.errors import FitgppError


class ReproduceError(FitgppError):
    """A research question cannot run as asked (e.g. its input trace is missing)."""


#: The largest seed budget (:attr:`Size.max_seeds`): seeds per configuration.
MAX_SEED_BUDGET = 1000


@dataclass(frozen=True)
class Size:
    """How big the runs are. ``QUICK`` is for tests and a first look, ``FULL`` for the paper.

    ``workers``: 0 runs the cells in this process; None on a Dask LocalCluster with one
    worker per CPU (started only if some cell is not cached; ``$FITGPP_SCHEDULER`` names
    an existing cluster instead); N on N workers. ``timeline_jobs``: the node timeline
    shows the run until the N-th arrival. ``max_seeds``: the seed budget of adaptive
    replication (:mod:`fitgpp.studies.adaptive`): a configuration whose verdict is undecided
    gets more seeds in rounds, up to this many; None, or no more than the seeds: off.
    """

    n_jobs: int
    seeds: tuple[int, ...]
    timeline_jobs: int = 300
    real_jobs: int | None = None    # RQ5: first N GPU jobs of the real trace (None = all)
    model: str = "paper-default"
    load: float = DEFAULT_LOAD
    cluster: Cluster = DEFAULT_CLUSTER
    workers: int | None = 0
    #: The run-length study's grid (:mod:`fitgpp.studies.run_length`): jobs per run, loads.
    #: Its loads go above :data:`fitgpp.DEFAULT_LOAD` on purpose: the study measures what
    #: happens beyond the usable capacity (0.9: queues that grow with the run).
    run_lengths: tuple[int, ...] = (600, 2000)
    run_loads: tuple[float, ...] = (0.7, 0.8, 0.9)
    #: Measure every per-class metric over the steady window only (jobs submitted between
    #: the later warm-up end of the run and its baseline's and the last arrival, see
    #: :func:`fitgpp.studies.steady.window_values`); False: over all jobs.
    steady_window: bool = False
    max_seeds: int | None = None

    def __post_init__(self):
        _check_size(self)
        m = self.max_seeds
        if m is not None and (isinstance(m, bool) or not isinstance(m, int)
                              or not 1 <= m <= MAX_SEED_BUDGET):
            raise ReproduceError(f"Size.max_seeds is the seed budget, a whole number from 1 to "
                                 f"{MAX_SEED_BUDGET} (or None: off), got {m!r}"[:300])

    @property
    def budget(self) -> int:
        """The most seeds a configuration may get: ``max_seeds``, at least the seeds asked."""
        return max(self.max_seeds or 0, len(self.seeds))


def _check_size(size: Size) -> None:
    """Refuse a :class:`Size` a study cannot run at once, naming the field and its bound
    (:mod:`fitgpp.sim.validate`), before anything is drawn or simulated."""
    from fitgpp.sim.validate import MAX_JOBS, MAX_SEED, MAX_WORKERS, check_int, check_number

    def ints(name, lo, hi, *value):
        return check_int(value[0] if value else getattr(size, name), f"Size: {name}", lo, hi,
                         ReproduceError)

    ints("n_jobs", 1, MAX_JOBS)
    ints("timeline_jobs", 1, MAX_JOBS)
    if size.real_jobs is not None:
        ints("real_jobs", 1, MAX_JOBS)
    if size.workers is not None:
        ints("workers", 0, MAX_WORKERS)
    for name, lo, hi in (("seeds", 0, MAX_SEED), ("run_lengths", 1, MAX_JOBS),
                         ("run_loads", 0, 1e3)):
        values = getattr(size, name)
        if not isinstance(values, (tuple, list)) or not values:
            raise ReproduceError(f"Size: {name} must be a non-empty tuple, got {values!r}"[:300])
        for v in values:
            if name == "run_loads":
                check_number(v, f"Size: {name}", lo, hi, lo_open=True, error=ReproduceError)
            else:
                ints(name, lo, hi, v)
        object.__setattr__(size, name, tuple(values))
    check_number(size.load, "Size: load", 0, 1e3, lo_open=True, error=ReproduceError)
    if not isinstance(size.model, str) or not size.model:
        raise ReproduceError(f"Size: model must be a model's name or file, got {size.model!r}"
                             [:300])
    if not isinstance(size.cluster, Cluster):
        raise ReproduceError(f"Size: cluster must be a fitgpp.Cluster, got {size.cluster!r}"[:300])
    if not isinstance(size.steady_window, bool):
        raise ReproduceError(f"Size: steady_window must be True or False, got "
                             f"{size.steady_window!r}"[:300])


QUICK = Size(n_jobs=600, seeds=(0, 1), timeline_jobs=150, real_jobs=1000)
FULL = Size(n_jobs=10000, seeds=(0, 1, 2, 3, 4), timeline_jobs=400, real_jobs=None, workers=None,
            run_lengths=(1000, 3000, 10000, 30000, 100000),
            run_loads=(0.5, 0.7, 0.8, 0.85, 0.9, 1.0), max_seeds=30)


@dataclass
class RQResult:
    key: str
    title: str
    question: str
    table: pd.DataFrame
    charts: dict
    datasets: dict = field(default_factory=dict)
    finding: str = ""
    config: dict = field(default_factory=dict)
    grid: xr.Dataset | None = None     # the sweep Dataset every number comes from
    stats: dict = field(default_factory=dict)   # cells, cached, computed
    details: str = ""    # Markdown shown in its section of results.md, after the question
    columns: tuple[str, ...] = ()    # the study's own metrics, besides the brief ones
    baseline: str = "FIFO"           # the label of what its changes are against
    #: per configuration, whether its runs reached a steady state
    #: (:func:`fitgpp.studies.steady.steadiness`)
    steadiness: pd.DataFrame | None = None
    #: results.md columns when they are not the metrics and their changes: (id columns,
    #: columns, the columns that are fractions)
    report_columns: tuple | None = None
    #: the rounds of adaptive replication (:class:`fitgpp.studies.adaptive.Rounds`; None: the
    #: seeds asked, no rounds)
    rounds: object = None
