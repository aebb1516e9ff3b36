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


@dataclass(frozen=True)
class Size:
    """How big the runs are. ``QUICK`` is for tests and a first look, ``FULL`` for the paper.

    ``workers``: 0 runs the cells in this process; None on a Dask LocalCluster with one
    worker per CPU (started only if some cell is not cached); N on N workers. A scheduler
    (``$FITGPP_SCHEDULER``, or one given to the run) takes its place at every size.
    ``timeline_jobs``: the node timeline shows the run until the N-th arrival.
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


QUICK = Size(n_jobs=600, seeds=(0, 1), timeline_jobs=150, real_jobs=1000)
FULL = Size(n_jobs=10000, seeds=(0, 1, 2, 3, 4), timeline_jobs=400, real_jobs=None, workers=None,
            run_lengths=(1000, 3000, 10000, 30000, 100000),
            run_loads=(0.5, 0.7, 0.8, 0.85, 0.9, 1.0))


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
