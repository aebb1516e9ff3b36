"""One run's metric computed from some of its per-job columns, kept beside its cached cell.

A metric that reads a few per-job columns alone (:attr:`fitgpp.analysis.metrics.Metric.columns`:
the long BE jobs' p95, the reloads' GPU-hours and share) is computed from a Dataset of those
columns, not from the whole run rebuilt. When it is one of this package's metrics, its value
is kept in the cell's summary (:func:`fitgpp.sweep.derived.derived`), so a warm table reads no
cell for it; a metric declared elsewhere (a notebook's) is computed each time, its code being
outside the summary's digest (:data:`fitgpp.sweep.derived.CODE`).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from fitgpp.analysis.metrics import METRICS, Metric


def columns(res, names) -> xr.Dataset:
    """Per-job columns ``names`` of the cell result ``res``, as its rebuilt run has them
    (dimension and coordinate ``job``; ``cls`` as "TE"/"BE")."""
    from fitgpp.sweep.runs import _decoded
    r = _decoded(res, [n for n in names if n != "cls"] + ["job_id"])
    data = {n: ("job", np.where(res["te"], "TE", "BE") if n == "cls" else r[n]) for n in names}
    return xr.Dataset(data, coords={"job": r["job_id"]})


def metric_of(res, metric: Metric) -> float:
    """``metric`` (one with ``columns``) of the cell result ``res``."""
    if METRICS.get(metric.name) is not metric or \
            getattr(metric.per_run, "__module__", None) != Metric.__module__:
        return metric.of_run(columns(res, metric.columns))
    from fitgpp.sweep.derived import derived
    return derived(res, f"metric {metric.name}",
                   lambda r: metric.of_run(columns(r, metric.columns)))
