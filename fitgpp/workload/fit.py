"""``fit``: a validated trace in, a :class:`WorkloadModel` out.

Per class: the arrival rate is (jobs of the class) / (span of all submit times); when the
span is two days or more, a daily profile of 24 hourly factors (arrivals per hour of day,
divided by the seconds of that hour covered by the span, normalised to mean 1; hour 0
starts at trace time 0). Run times: :func:`~fitgpp.workload.dists.fit_best` (MLE with
``floc=0`` for each family, chosen by AIC, KS kept, truncated at the longest run time
seen). GPUs: empirical categorical. CPU and memory: the empirical (cpu_milli, mem_mib)
pairs seen for each GPU count, with their counts as weights. Grace periods: the documented
default :data:`~fitgpp.workload.model.DEFAULT_GRACE` (traces carry none), unless
``grace="fit"`` fits the BE grace periods of the trace like run times. Tasks: when the
trace has multi-node jobs (a ``tasks`` column with a value above 1), the empirical numbers
of tasks seen for each GPU count (per task), with their counts as weights, for both
classes; otherwise none is recorded (every job one task).
"""

from __future__ import annotations

import json
from typing import Literal

import numpy as np
import pandas as pd

from fitgpp._version import __version__
from fitgpp.sim.trace import Trace, read_trace
from fitgpp.workload.dists import FAMILIES, Categorical, FitError, fit_best
from fitgpp.workload.model import (CLASSES, DEFAULT_GRACE, ClassModel, WorkloadModel, WorkloadModelError,
                                   from_dict)

DAY = 86_400.0
#: A trace spanning at least this many seconds gets a daily arrival profile.
PROFILE_MIN_SPAN = 2 * DAY
MIN_JOBS = 10


def daily_profile(times: np.ndarray, t0: float, t1: float) -> tuple[float, ...]:
    """24 hourly arrival-intensity factors with mean 1, corrected for partial coverage."""
    hours = np.floor(times / 3600.0).astype(np.int64) % 24
    counts = np.bincount(hours, minlength=24).astype(float)
    exposure = np.zeros(24)
    h0, h1 = int(np.floor(t0 / 3600)), int(np.floor(t1 / 3600))
    full_days, rem = divmod(h1 - h0 + 1, 24)
    exposure += full_days * 3600.0
    for h in range(h0 + 24 * full_days, h1 + 1):
        exposure[h % 24] += 3600.0
    exposure[h0 % 24] -= t0 - 3600.0 * h0          # the first hour starts at t0
    exposure[h1 % 24] -= 3600.0 * (h1 + 1) - t1    # the last ends at t1
    intensity = counts / np.maximum(exposure, 1.0)
    return tuple(float(v) for v in intensity / intensity.mean())


def _cpu_mem(df: pd.DataFrame) -> dict:
    out = {}
    for g, grp in df.groupby("gpu", sort=True):
        pairs = grp.groupby(["cpu_milli", "mem_mib"]).size().reset_index(name="n")
        out[int(g)] = tuple((int(r.cpu_milli), int(r.mem_mib), float(r.n))
                            for r in pairs.itertuples(index=False))
    return out


def _tasks(df: pd.DataFrame) -> dict:
    out = {}
    for g, grp in df.groupby("gpu", sort=True):
        n = grp.groupby("tasks").size()
        out[int(g)] = tuple((int(k), float(c)) for k, c in n.items())
    return out


def fit(trace, *, name: str | None = None, description: str = "",
        families: tuple[str, ...] = FAMILIES, grace: Literal["default", "fit"] = "default",
        source: dict | None = None) -> WorkloadModel:
    """Fit a workload model to ``trace`` (a :class:`~fitgpp.Trace`, DataFrame or CSV path).

    ``source``: provenance to record (defaults to ``trace.source``, which the adapters fill
    with the file, its sha256, the filters and mapping used and what was dropped).
    """
    tr = trace if isinstance(trace, Trace) else read_trace(trace)
    jobs = tr.jobs
    if len(jobs) < 2 * MIN_JOBS:
        raise FitError(f"trace has {len(jobs)} jobs; fitting needs at least {MIN_JOBS} per class")
    if grace not in ("default", "fit"):
        raise FitError(f"grace must be 'default' or 'fit', got {grace!r}")
    t = jobs["submit_time"].to_numpy(float)
    t0, t1 = float(t.min()), float(t.max())
    span = t1 - t0
    if span <= 0:
        raise FitError("all jobs are submitted at the same time; an arrival rate needs a span")
    gangs = "tasks" in jobs.columns and bool((jobs["tasks"].fillna(1) > 1).any())
    if gangs:
        jobs = jobs.assign(tasks=jobs["tasks"].fillna(1).astype(np.int64))
    classes, stats_out = {}, {}
    for c in CLASSES:
        sub = jobs[jobs["cls"] == c]
        if len(sub) < MIN_JOBS:
            raise FitError(f"class {c}: {len(sub)} jobs in the trace; fitting needs at "
                           f"least {MIN_JOBS}")
        prof = (daily_profile(sub["submit_time"].to_numpy(float), t0, t1)
                if span >= PROFILE_MIN_SPAN else None)
        run = fit_best(_varied(sub["duration"], f"class {c} run times"), families,
                       what=f"class {c} run times")
        gp = None
        if c == "BE":
            gp = (fit_best(_varied(sub["grace_period"], "BE grace periods"), families,
                           what="BE grace periods") if grace == "fit" else DEFAULT_GRACE)
        classes[c] = ClassModel(rate=len(sub) / span, daily_profile=prof, run_time=run,
                                gpu=Categorical.from_values(sub["gpu"]),
                                cpu_mem=_cpu_mem(sub), grace_period=gp,
                                tasks=_tasks(sub) if gangs else None)
        stats_out[c] = {"jobs": int(len(sub)), "run_time_family": run.family,
                        "run_time_aic": run.fit["aic"], "run_time_ks": run.fit["ks"]}
    src = dict(source if source is not None else tr.source)
    provenance = {
        "source": src,
        "rows": int(len(jobs)),
        "span_s": span,
        "daily_profile": span >= PROFILE_MIN_SPAN,
        "grace_period": ("fitted to the trace's BE grace periods" if grace == "fit" else
                         "documented default (traces carry none): lognorm median 60 s, "
                         "sigma 1, truncated at 900 s"),
        "fit": stats_out,
        "families": list(families),
        "fitgpp_version": __version__,
    }
    default_name = src.get("name") or src.get("format") or "fitted"
    model = WorkloadModel(name or default_name, classes, description, provenance)
    _check_fitted(model)
    return model


def _varied(values: pd.Series, what: str) -> np.ndarray:
    """The values, refused when all are equal (every family's MLE degenerates then)."""
    x = values.to_numpy(float)
    if len(x) and np.all(x == x[0]):
        raise FitError(f"{what}: all {len(x)} values are {x[0]:g}; fitting a distribution "
                       "needs values that differ")
    return x


def _check_fitted(model: WorkloadModel) -> None:
    """A fitted model must be one that loading accepts: finite, JSON-compliant, in bounds."""
    try:
        doc = json.loads(model.to_json())
    except ValueError as exc:  # a parameter that is inf or NaN
        raise FitError(f"the fitted model has a non-finite number ({exc}); the data may be "
                       "degenerate (nearly constant values?)") from None
    try:
        from_dict(doc, where="fitted model")
    except WorkloadModelError as exc:
        raise FitError(f"{exc} (the data may be degenerate)") from None
