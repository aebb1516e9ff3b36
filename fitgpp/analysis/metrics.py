"""Every statistic fitgpp reports, computed here and nowhere else.

- **Per class** (:func:`class_stats`, :func:`class_table`): jobs, median / p95 / p99
  slowdown (numpy's default linear interpolation, as SPEC.md fixes), mean wait,
  preemptions and preemptions per job, for TE and BE.
- **Long jobs** (:func:`long_jobs_p95`): the p95 slowdown of the longest quarter of a class.
- **Across seeds** (:func:`t_interval`, :func:`mean_ci`): the mean and its Student-t 95 %
  interval (``scipy.stats.t``). An interval from fewer than :data:`MIN_CI_VALUES` values
  means nothing (one degree of freedom gives bounds ~13 standard errors wide), so it is
  NaN there, and :data:`CI_NOTE` says so wherever intervals are printed.
- **Across jobs of one run** (:func:`bootstrap_interval`): a percentile-bootstrap interval of
  a percentile (``scipy.stats.bootstrap``), for a single trace where there are no seeds.
- **Against a baseline** (:func:`change`): always a *fraction*, ``(x - base) / base``;
  ``-0.966`` is a 96.6 % drop. Text shows it in percent through :func:`percent`, and
  nothing else converts.
- **Intervals shown** (:func:`cut_interval`, the one function that does it): every interval
  printed anywhere is cut at its quantity's range (:func:`value_range`: a slowdown is at
  least 1, a change at least -100 %, a count or share at least 0) and every cut bound is
  marked ``*`` (:data:`CLIP_NOTE`).
- **Capacity ledger**: one metric per ``ledger_*`` part of a result (GPU-hours, see
  :mod:`fitgpp.sim.ledger`), ``ledger_<part>`` in :data:`METRICS`.
- **GPU time** (:func:`gpu_hours`, :func:`reload_gpu_hours`, :func:`work_gpu_hours`):
  per-job seconds x GPUs per task x tasks, summed, in GPU-hours (RQ6's GPU-hours lost to
  reloads and the BE work they are a share of).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr

CLASSES = ("TE", "BE")
#: Per-class metrics: name -> (units, description).
CLASS_METRICS = {
    "slowdown_median": ("1", "median slowdown (finish - submit) / work"),
    "slowdown_p95": ("1", "95th percentile of the slowdown (linear interpolation)"),
    "slowdown_p99": ("1", "99th percentile of the slowdown (linear interpolation)"),
    "wait_mean": ("s", "mean time spent waiting in a queue"),
    "preemptions_per_job": ("1", "preemptions divided by the number of jobs"),
}
#: Fewest values a Student-t interval is computed from (fewer: NaN bounds).
MIN_CI_VALUES = 3
LEVEL = 0.95
CI_NOTE = (f"intervals are Student-t {LEVEL:.0%} intervals of the mean over seeds, computed only "
           f"from {MIN_CI_VALUES} or more seeds (with fewer they are left out: one or two values "
           "give an interval too wide to mean anything)")
CHANGE_NOTE = "changes against a baseline are fractions: (x - base) / base, -0.966 = a 96.6 % drop"


# ------------------------------------------------------------------ what a study reports
@dataclass(frozen=True)
class Metric:
    """One number a study reports for each configuration and seed, declared once: every
    table, panel, seeds table, figure title and ``results.md`` reads the declarations in
    :data:`METRICS`, so a metric added with :func:`declare` appears in all of them.

    ``name``: its column (``te_p95``); ``title``: how people read it; ``unit``; ``cls``:
    the job class it is of (None: the whole cluster); ``var``: the variable of the sweep
    Dataset it is read from (per class when ``cls`` is set); ``per_run``: else, how it is
    computed from one run's per-job results (a simulation Dataset -> float);
    ``better``: ``"lower"`` or ``"higher"``; ``vs_baseline``: whether a change against a
    baseline means something (preemptions against FIFO, which never preempts, do not);
    ``lowest``: the least value it can take, when it has one (1 for a slowdown: a job never
    finishes before its work is done), and ``highest`` the largest (1 for the GPU
    utilization), where intervals over seeds are cut.
    """

    name: str
    title: str
    unit: str = "1"
    cls: str | None = None
    var: str | None = None
    per_run: Callable | None = None
    better: str = "lower"
    vs_baseline: bool = True
    short: str = ""
    brief: bool = True      # in the short tables, the panels and results.md
    lowest: float | None = None
    highest: float | None = None
    #: The per-job columns of the simulation Dataset ``per_run`` reads, when it reads
    #: nothing else: a table then gives it a Dataset of only those (a whole run rebuilt per
    #: cell took most of a warm RQ6 panel's table, issue 26). Empty: the whole run.
    columns: tuple[str, ...] = ()

    def of_run(self, ds) -> float:
        """This metric of one simulation Dataset (what a cell of the grid holds)."""
        if self.per_run is not None:
            return float(self.per_run(ds))
        if self.cls is None:
            raise ValueError(f"metric {self.name}: no per-run definition (it is read from "
                             "the sweep Dataset only)")
        return float(class_table(ds).loc[self.cls, self.var])

    @property
    def label(self) -> str:
        return self.short or self.title


#: Every metric, by name, in the order tables show them; see :func:`declare`.
METRICS: dict[str, Metric] = {}


def brief(extra=()) -> list[Metric]:
    """The metrics the short tables show: every ``brief`` one, then those named in
    ``extra`` (a study's own columns)."""
    return [m for m in METRICS.values() if m.brief or m.name in extra]


def declare(metric: Metric) -> Metric:
    """Add ``metric`` to :data:`METRICS` (replacing one of the same name); return it."""
    METRICS[metric.name] = metric
    return metric


def _long_be_p95(ds) -> float:
    return long_jobs_p95(ds["cls"].values, ds["duration"].values,
                         ds["slowdown"].values)


def _reload_gpu_h(ds) -> float:
    return reload_gpu_hours(ds["reload"].values, ds["gpu"].values, ds["tasks"].values)


def _reload_share(ds) -> float:
    work = work_gpu_hours(ds["cls"].values == "TE", ds["duration"].values,
                          ds["gpu"].values, ds["tasks"].values, cls="BE")
    return _reload_gpu_h(ds) / work if work else 0.0


for _m in (
        Metric("te_median", "TE median slowdown", cls="TE", var="slowdown_median",
               short="TE median", brief=False, lowest=1.0),
        Metric("te_p95", "TE p95 slowdown", cls="TE", var="slowdown_p95", short="TE p95",
               lowest=1.0),
        Metric("be_median", "BE median slowdown", cls="BE", var="slowdown_median",
               short="BE median", lowest=1.0),
        Metric("be_p95", "BE p95 slowdown", cls="BE", var="slowdown_p95", short="BE p95",
               lowest=1.0),
        Metric("preemptions_per_be", "preemptions per BE job", cls="BE",
               var="preemptions_per_job", vs_baseline=False, short="preempt/BE job",
               lowest=0.0),
        Metric("gpu_util", "GPU utilization", var="gpu_util", better="higher", brief=False,
               lowest=0.0, highest=1.0),
        Metric("be_long_p95", "p95 slowdown of the longest 25 % of BE jobs",
               per_run=_long_be_p95, short="long BE p95", brief=False, lowest=1.0,
               columns=("cls", "duration", "slowdown")),
        Metric("reload_gpu_h", "GPU-hours lost to reloads", unit="GPU-h", per_run=_reload_gpu_h,
               vs_baseline=False, brief=False, lowest=0.0, columns=("reload", "gpu", "tasks")),
        Metric("reload_share", "reloads, share of BE GPU-hours", per_run=_reload_share,
               vs_baseline=False, brief=False, lowest=0.0,
               columns=("cls", "duration", "reload", "gpu", "tasks")),
):
    declare(_m)


def _ledger_part(name: str, ds) -> float:
    return float(ds[f"ledger_{name}"])


def _declare_ledger() -> None:
    """One metric per part of the capacity ledger (:mod:`fitgpp.sim.ledger`), GPU-hours."""
    from functools import partial
    from fitgpp.sim.ledger import CAPACITY_NOTE, PARTS
    titles = {"useful_te": "TE progress", "useful_be": "BE progress", "reload": "reloading",
              "grace": "grace periods", "reserved": "reserved for TE",
              "idle_fits": "idle, a waiting job fits", "idle_nofit": "idle, none fits",
              "idle_empty": "idle, none waiting", "capacity": "capacity"}
    for name, desc in {**PARTS, "capacity": CAPACITY_NOTE}.items():
        declare(Metric(f"ledger_{name}", f"GPU-hours {titles[name]}", unit="GPU-h",
                       per_run=partial(_ledger_part, name), vs_baseline=False, brief=False,
                       short=f"GPU-h {titles[name]}", lowest=0.0))


_declare_ledger()


# ------------------------------------------------------------------ per class, one run
def class_stats(te, slowdown, preemptions, wait=None) -> dict[str, np.ndarray]:
    """Per-class metrics of one run as arrays over :data:`CLASSES` (NaN for a class with
    no jobs), plus ``jobs`` and ``preemptions`` (totals). ``te``: a boolean per job, or
    the class labels ("TE"/"BE"); ``wait`` in seconds (optional: NaN without it)."""
    te = np.asarray(te)
    if te.dtype != bool:
        te = te.astype(str) == "TE"
    slowdown = np.asarray(slowdown, dtype=float)
    preemptions = np.asarray(preemptions)
    out = {k: np.full(len(CLASSES), np.nan) for k in CLASS_METRICS}
    out["jobs"] = np.zeros(len(CLASSES), np.int64)
    out["preemptions"] = np.zeros(len(CLASSES), np.int64)
    for c, is_te in enumerate((True, False)):
        sel = te == is_te
        n = int(sel.sum())
        out["jobs"][c] = n
        out["preemptions"][c] = int(preemptions[sel].sum())
        if n == 0:
            continue
        sd = slowdown[sel]
        out["slowdown_median"][c] = np.median(sd)
        # both from one partition (each percentile is the same number as asked alone)
        out["slowdown_p95"][c], out["slowdown_p99"][c] = np.percentile(sd, [95, 99])
        if wait is not None:
            out["wait_mean"][c] = np.asarray(wait, dtype=float)[sel].mean()
        out["preemptions_per_job"][c] = out["preemptions"][c] / n
    return out


def class_table(ds):
    """:func:`class_stats` of a simulation Dataset as a DataFrame indexed by class."""
    import pandas as pd
    # .values, not .to_numpy(): that asks whether the data is a dask array, importing dask
    st = class_stats(ds["cls"].values, ds["slowdown"].values, ds["preemptions"].values,
                     ds["wait"].values if "wait" in ds else None)
    cols = ["jobs", "slowdown_median", "slowdown_p95", "slowdown_p99", "wait_mean",
            "preemptions", "preemptions_per_job"]
    return pd.DataFrame({k: st[k] for k in cols}, index=pd.Index(CLASSES, name="class"))


def long_jobs_p95(te, duration, slowdown, *, cls: str = "BE", q: float = 0.75) -> float:
    """p95 slowdown of the ``cls`` jobs whose duration is at or above its ``q`` quantile."""
    te = np.asarray(te)
    if te.dtype != bool:
        te = te.astype(str) == "TE"
    sel = te if cls == "TE" else ~te
    if not sel.any():
        return math.nan
    d = np.asarray(duration, dtype=float)[sel]
    sd = np.asarray(slowdown, dtype=float)[sel]
    return float(np.percentile(sd[d >= np.quantile(d, q)], 95))


# ------------------------------------------------------------------ GPU time
def gpu_hours(seconds, gpu, tasks=1) -> float:
    """GPU-hours of per-job times: ``sum(seconds x gpu x tasks) / 3600`` (``gpu`` per task,
    as the Dataset keeps it; ``tasks`` nodes per job, 1 without gangs)."""
    s = np.asarray(seconds, dtype=float)
    return float(np.sum(s * np.asarray(gpu, dtype=float) * np.asarray(tasks, dtype=float)) / 3600.0)


def reload_gpu_hours(reload, gpu, tasks=1) -> float:
    """GPU-hours lost to reloads: every job's time spent reloading its checkpoint [s] (lost
    reloads included, the Dataset's ``reload``) on all the GPUs it holds."""
    return gpu_hours(reload, gpu, tasks)


def work_gpu_hours(te, duration, gpu, tasks=1, *, cls: str = "BE") -> float:
    """GPU-hours of work of the ``cls`` jobs: their ``duration`` [s] on all their GPUs
    (``te``: a boolean per job, or the class labels)."""
    te = np.asarray(te)
    if te.dtype != bool:
        te = te.astype(str) == "TE"
    sel = te if cls == "TE" else ~te
    n = len(te)
    per = lambda x: np.broadcast_to(np.asarray(x, dtype=float), (n,))[sel]  # noqa: E731
    return gpu_hours(per(duration), per(gpu), per(tasks))


# ------------------------------------------------------------------ against a baseline
def change(x, base):
    """``(x - base) / base``: the change against a baseline as a fraction (numbers,
    arrays or DataArrays alike)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x - base) / base


def paired_change(x, base) -> np.ndarray:
    """Per-seed changes of ``x`` against ``base`` (same seeds, same workloads): the one
    way a configuration is compared with its baseline."""
    x, base = np.asarray(x, dtype=float), np.asarray(base, dtype=float)
    if x.shape != base.shape:
        raise ValueError(f"paired change: {x.shape} values against {base.shape}")
    return change(x, base)


def percent(x, digits: int = 1, *, sign: bool = True) -> str:
    """A fraction as percent text: ``-0.966`` -> ``"-96.6 %"`` (``"n/a"`` for NaN)."""
    x = float(x)
    if math.isnan(x):
        return "n/a"
    return f"{100 * x:{'+' if sign else ''}.{digits}f} %"


# ------------------------------------------------------------------ intervals
_LEVEL = contextvars.ContextVar("fitgpp_interval_level", default=LEVEL)


def interval_level() -> float:
    """The level of every Student-t interval computed now: :data:`LEVEL`, unless
    :func:`at_level` says otherwise (a study whose seeds were added in rounds is judged at
    the level its stopping rule spends per look, :mod:`fitgpp.analysis.looks`)."""
    return _LEVEL.get()


@contextlib.contextmanager
def at_level(level: float):
    """Within this block every interval (:func:`t_interval`, :func:`mean_ci`) and every paired
    test of :mod:`fitgpp.analysis.verdicts` is at ``level`` (a float in (0, 1))."""
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"an interval level is a number in (0, 1), got {level!r}")
    token = _LEVEL.set(float(level))
    try:
        yield
    finally:
        _LEVEL.reset(token)


def _t_half(sd, n):
    """Half-width of the Student-t interval of a mean; NaN where n < MIN_CI_VALUES.
    The quantile is ``scipy.stats.t.ppf``'s own function, ``scipy.special.stdtrit`` (the
    same numbers, a test checks): importing scipy.stats for it cost every warm panel
    about 0.6 s (issue 26)."""
    from scipy import special
    n = np.asarray(n, dtype=float)
    ok = n >= MIN_CI_VALUES
    q = special.stdtrit(np.where(ok, n - 1, 1), 0.5 + interval_level() / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok, q * np.asarray(sd, dtype=float) / np.sqrt(np.maximum(n, 1)), np.nan)


def t_interval(values) -> tuple[float, float, float]:
    """Mean of ``values`` (NaNs ignored) and its Student-t interval ``(mean, lo, hi)``;
    the bounds are NaN with fewer than :data:`MIN_CI_VALUES` values."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if not len(x):
        return math.nan, math.nan, math.nan
    m = float(np.mean(x))
    sd = float(np.std(x, ddof=1)) if len(x) > 1 else math.nan
    h = float(_t_half(sd, len(x)))
    return m, m - h, m + h


def mean_ci(da, dim: str = "seed"):
    """Mean over ``dim`` of a DataArray and the half-width of its Student-t interval
    (NaN where fewer than :data:`MIN_CI_VALUES` values are not NaN)."""
    import xarray as xr
    n = da.count(dim)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = da.mean(dim)
        sd = da.std(dim, ddof=1) if da.sizes[dim] > 1 else xr.full_like(mean, np.nan)
    return mean, xr.apply_ufunc(_t_half, sd, n)


def paired_p(d: np.ndarray) -> float:
    """The two-sided p-value of ``scipy.stats.ttest_rel(x, y)`` for the differences
    ``d = x - y`` (no NaN, 2 or more), computed as scipy computes it, step for step (a test
    checks the numbers are scipy's): importing scipy.stats cost a warm panel about 0.6 s
    (issue 26)."""
    from scipy import special
    n = len(d)
    mean = np.mean(d, axis=-1)
    var = np.mean((d - np.mean(d, axis=-1, keepdims=True)) ** 2, axis=-1) * \
        (np.float64(n) / (np.float64(n) - 1))
    t = np.divide(mean - np.float64(0.0), np.sqrt(var / n))
    return float(2 * special.stdtr(np.float64(n - 1), -np.abs(t)))


def bootstrap_interval(x, q: float, *, n_resamples: int = 300, seed: int = 0,
                       level: float = LEVEL) -> tuple[float, float]:
    """Percentile-bootstrap interval of the ``q``-th percentile of ``x`` (jobs of one run)."""
    from scipy import stats
    x = np.asarray(x, dtype=float)
    if len(x) < 2 or np.all(x == x[0]):
        v = float(np.percentile(x, q)) if len(x) else math.nan
        return v, v  # nothing to resample: every resample gives the same value
    res = stats.bootstrap((x,), lambda a, axis: np.percentile(a, q, axis=axis), vectorized=True,
                          n_resamples=n_resamples, confidence_level=level, method="percentile",
                          random_state=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def summarize(ds: xr.Dataset) -> pd.DataFrame:
    """Per class: jobs, median / p95 / p99 slowdown, mean wait, total and per-job
    preemptions (see :func:`fitgpp.analysis.metrics.class_table`)."""
    return class_table(ds)


#: Range of a slowdown, of a change against a baseline (a fraction), of a count or share.
SLOWDOWN_RANGE = (1.0, math.inf)
CHANGE_RANGE = (-1.0, math.inf)
COUNT_RANGE = (0.0, math.inf)
UNBOUNDED = (-math.inf, math.inf)
#: Range of RQ6's net, TE gain (at most 1) minus BE p95 cost (at least -1): at most 2, and no
#: floor (a BE tail four times PRIO's is a net of -300 % or less).
NET_RANGE = (-math.inf, 2.0)
CLIP_NOTE = ("* an interval bound cut at the quantity's limit (a slowdown is at least 1, "
             "a change at least -100 %, a count or share at least 0)")


# ------------------------------------------------------------------ intervals shown: cut, marked
def _nan(x) -> bool:
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def _g(x: float) -> str:
    return f"{x:.3g}"


@dataclass(frozen=True)
class Interval:
    """A mean and its interval, cut at the quantity's range (``clipped_low`` and
    ``clipped_high`` say which bounds were)."""
    mean: float
    low: float
    high: float
    clipped_low: bool = False
    clipped_high: bool = False

    def text(self, *, as_percent: bool = False, fmt=None) -> str:
        """``"1.01 [1*, 1.04]"`` (a ``*`` marks a cut bound, :data:`CLIP_NOTE`); ``fmt``
        formats a number (default: percent of a fraction, or 3 significant digits)."""
        f = fmt or (percent if as_percent else _g)
        if _nan(self.low) or _nan(self.high):
            return f(self.mean)
        return (f"{f(self.mean)} [{f(self.low)}{'*' * self.clipped_low}, "
                f"{f(self.high)}{'*' * self.clipped_high}]")

    @property
    def clipped(self) -> bool:
        return self.clipped_low or self.clipped_high


def value_range(name: str) -> tuple[float, float]:
    """The range of the quantity in column ``name`` (its ``_lo``/``_hi`` bounds alike):

    - a change against a baseline (``change_*``, RQ6's ``*_cost`` and ``be_p95_growth``) at
      least -1 (nothing falls by more than all of it), unbounded above;
    - RQ6's ``te_gain`` (``1 - TE p95 / PRIO's``) at most 1, unbounded below, and its ``net``
      (TE gain minus BE p95 cost) at most 2 and unbounded below: a net has no -100 % floor;
    - a declared metric from its :attr:`~fitgpp.analysis.metrics.Metric.lowest` (1 for a
      slowdown, 0 for a count, a share or GPU-hours) and
      :attr:`~fitgpp.analysis.metrics.Metric.highest` (1 for the GPU utilization);
    - RQ6's findings name a quantity at no overhead and at the largest (``te_gain_0``,
      ``reload_gpu_h_max``): the range of the quantity itself;
    - anything else unbounded."""
    base = name.removesuffix("_lo").removesuffix("_hi")
    if base not in METRICS:
        for end in ("_0", "_max"):
            base = base.removesuffix(end)
    if base.startswith("change_") or base.endswith("_cost") or base == "be_p95_growth":
        return CHANGE_RANGE
    if base == "te_gain":
        return (-math.inf, 1.0)
    if base == "net":
        return NET_RANGE
    if base.startswith("preemptions_per"):
        return COUNT_RANGE
    m = METRICS.get(base)
    if m is not None and (m.lowest is not None or m.highest is not None):
        return (-math.inf if m.lowest is None else float(m.lowest),
                math.inf if m.highest is None else float(m.highest))
    return UNBOUNDED


def cut_interval(mean: float, low: float, high: float,
                 value_range: tuple[float, float] = SLOWDOWN_RANGE) -> Interval:
    """The one place an interval is cut: ``low``..``high`` limited to ``value_range``, each cut
    bound marked (NaN bounds stay NaN: no interval)."""
    a, b = value_range
    lo_cut = not _nan(low) and low < a
    hi_cut = not _nan(high) and high > b
    return Interval(float(mean), a if lo_cut else float(low), b if hi_cut else float(high),
                    bool(lo_cut), bool(hi_cut))


def bounded_interval(values, value_range: tuple[float, float] = SLOWDOWN_RANGE) -> Interval:
    """The Student-t interval of the mean of ``values``, cut by :func:`cut_interval`."""
    return cut_interval(*t_interval(values), value_range)


def interval_cell(mean, low, high, name: str, *, as_percent: bool = False, fmt=None) -> str:
    """The text of one table cell: the interval of column ``name`` cut at its range
    (:func:`value_range`) and marked; the mean alone without bounds."""
    return cut_interval(mean, low, high, value_range(name)).text(as_percent=as_percent, fmt=fmt)


def percent_values(fractions):
    """Fractions as the numbers a column headed "(%)" holds: ``-0.966`` -> ``-96.6``."""
    return np.asarray(fractions, dtype=float) * 100.0


