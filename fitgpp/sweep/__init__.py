"""Parameter sweeps: policies x parameters x workload knobs x seeds, run as Dask
tasks, cached per cell on disk, folded into one xarray Dataset.

    from fitgpp.sweep import load_experiment, run_sweep
    exp = load_experiment("docs/examples/sweep-quick.toml")
    ds = run_sweep(exp)                      # LocalCluster sized to the machine
    ds["slowdown_p95_vs_fifo_mean"].sel(cls="TE")

See ``docs/experiments.md``.
"""

from fitgpp.sweep.cache import CacheWarning, CellCache, default_cache_dir
from fitgpp.sweep.cell import Cell, cells_of, compute_cell
from fitgpp.sweep.config import (GRID_PARAMS, KNOBS, Experiment, ExperimentError, PolicyGrid, Workload,
                                 load_experiment)
from fitgpp.sweep.runner import SweepError, cache_dir_for, machine_workers, run_sweep
from fitgpp.sweep.runs import run_dataset
from fitgpp.sweep.summary import CLASS_METRICS, VS_FIFO, format_table

__all__ = [
    "CLASS_METRICS", "CacheWarning", "Cell", "CellCache", "Experiment", "ExperimentError",
    "GRID_PARAMS", "KNOBS", "PolicyGrid", "SweepError", "VS_FIFO", "Workload", "cache_dir_for",
    "cells_of", "compute_cell", "default_cache_dir", "format_table", "load_experiment",
    "machine_workers", "run_dataset", "run_sweep",
]
