"""Did a run reach a steady state? Warm-up, drain and the trend of the queue, by a stated rule.

A result measured on a run whose queue grows for the whole run is a function of how many
jobs were simulated, not a property of the policy. :func:`stability` judges one
:func:`fitgpp.simulate` Dataset with these rules:

- **Queued work** is the number of waiting jobs, TE plus BE (the Dataset's ``waiting_te`` +
  ``waiting_be``, time means per sample). The Dataset records waiting *jobs*, not waiting
  GPU demand, so that is the measure.
- **Drain** starts at the last arrival (``drain_start``, the largest ``submit``): after it no
  work comes in and the queue can only empty, so the samples from there on are left out of
  the judgement (kept in, they would pull the trend of a growing queue down to zero).
- **Warm-up** ends where MSER-5 puts it (White 1997): the arrival window's samples are
  averaged in batches of :data:`BATCH` and the truncation ``d`` (in batches, at most half of
  them) that minimises ``sum((x[d:] - mean(x[d:]))**2) / (n - d)**2`` is chosen; the run
  starts at an empty cluster, so the first stretch is never typical.
- **Trend**: the samples in ``[warmup_end, drain_start)`` are averaged in
  :data:`TREND_BATCHES` equal batches (batch means are close to independent where single
  samples are not) and ``scipy.stats.linregress`` fits a line through them; the slope's
  two-sided 95 % interval is ``slope +- t(0.975, batches - 2) * stderr``. The run is **not
  steady** when the whole interval is above zero *and* the fitted rise across the window is
  more than :data:`GROWTH_SHARE` of the window's mean queue (at least one job): a queue that
  grows both detectably and materially. Otherwise it is steady. A window shorter than
  :data:`MIN_WINDOW_SAMPLES` samples cannot be judged and counts as not steady.

How clearly a queue grows (:attr:`Stability.growth`): a run that is not steady grows
**clearly** when even the slope's lower bound would give a material rise (its rise across the
window, ``slope_low x window``, more than :data:`GROWTH_SHARE` of the mean queue, at least one
job), and **borderline** otherwise: the point slope is material, but the interval reaches down
to slopes that are not (a queue that may be settling slowly).

:func:`steady_window` gives the jobs *submitted* in ``[warmup_end, drain_start)``, and
:func:`window_summary` the per-class table of :func:`fitgpp.analysis.metrics.class_table` over those
jobs only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Samples per batch of the MSER-5 warm-up rule.
BATCH = 5
#: Batch means the trend is fitted through.
TREND_BATCHES = 20
#: Fewest samples in the steady window for a judgement.
MIN_WINDOW_SAMPLES = 4 * TREND_BATCHES
#: A queue whose fitted rise over the window exceeds this share of its mean grows materially.
GROWTH_SHARE = 0.5
#: Two-sided level of the slope's interval.
LEVEL = 0.95
RULE = (f"waiting jobs (TE + BE) between the MSER-{BATCH} warm-up end and the last arrival, "
        f"fitted by least squares through {TREND_BATCHES} batch means; not steady when the "
        f"slope's {LEVEL:.0%} interval is above zero and the fitted rise exceeds "
        f"{GROWTH_SHARE:.0%} of the mean queue")
GROWTH_RULE = (f"a queue that is not steady grows clearly when the rise at the slope's lower "
               f"bound still exceeds {GROWTH_SHARE:.0%} of the mean queue, borderline otherwise")


@dataclass(frozen=True)
class Stability:
    """Whether one run reached a steady state, and on what evidence.

    ``slope`` and its interval ``slope_low``..``slope_high`` are in waiting jobs per hour;
    ``warmup_end`` and ``drain_start`` in seconds since the start of the trace; ``mean_queue``
    (jobs) and ``rise`` (jobs, slope x window length) over the window."""
    steady: bool
    slope: float
    slope_low: float
    slope_high: float
    warmup_end: float
    drain_start: float
    mean_queue: float
    rise: float
    reason: str
    slope_units: str = "waiting jobs per hour"
    rule: str = RULE

    @property
    def growth(self) -> str:
        """``"none"`` (steady), ``"clear"`` or ``"borderline"`` (not steady, by
        :data:`GROWTH_RULE`: whether the rise at the slope's lower bound is still material)
        or ``"cannot tell"`` (too short a window)."""
        if math.isnan(self.slope):
            return "cannot tell"
        if self.steady:
            return "none"
        low_rise = self.rise * self.slope_low / self.slope   # the window's length x slope_low
        return "clear" if low_rise > GROWTH_SHARE * max(self.mean_queue, 1.0) else "borderline"

    @property
    def verdict(self) -> str:
        """``"steady"``, ``"not steady"`` (the queue grows) or ``"cannot tell"`` (too short a
        window between warm-up and drain to judge)."""
        return "cannot tell" if math.isnan(self.slope) else \
            "steady" if self.steady else "not steady"

    def text(self) -> str:
        """One sentence: the verdict, the slope with its interval, the window."""
        word = self.verdict
        if math.isnan(self.slope):
            return self.reason   # "cannot tell: ..."
        return (f"{word}: the queue changes by {self.slope:+.3g} {self.slope_units} "
                f"[{self.slope_low:+.3g}, {self.slope_high:+.3g}] between "
                f"{self.warmup_end / 3600:.3g} h and {self.drain_start / 3600:.3g} h; {self.reason}")


def queued(ds) -> tuple[np.ndarray, np.ndarray]:
    """Sample start times [s] and the number of waiting jobs (TE + BE, time means)."""
    v = ds.variables  # (each ds[name] makes a DataArray: 20 us)
    t = v["time"].values.astype(float)
    return t, v["waiting_te"].values.astype(float) + v["waiting_be"].values.astype(float)


def drain_start(ds) -> float:
    """The last arrival [s]: from here on nothing arrives and the queue only drains."""
    # numpy (.values): xarray reductions and .to_numpy() import dask
    return float(ds.variables["submit"].values.max())


def mser_warmup(t: np.ndarray, x: np.ndarray, batch: int = BATCH) -> float:
    """MSER-``batch`` warm-up end [s] of the series ``x`` sampled at ``t`` (see module doc):
    the start time of the first kept batch; ``t[0]`` when there are too few samples."""
    nb = len(x) // batch
    if nb < 4:
        return float(t[0]) if len(t) else 0.0
    means = x[:nb * batch].reshape(nb, batch).mean(axis=1)
    best, best_d = math.inf, 0
    # np.add.reduce is what rest.mean() and np.sum do, without their wrappers' cost (the
    # same numbers: a test checks): a warm panel runs this loop ~150 times for each of its
    # 300-540 cells (issue 26)
    add = np.add.reduce
    for d in _contenders(means, nb // 2 + 1):
        rest = means[d:]
        n = len(rest)
        score = float(add((rest - add(rest) / n) ** 2)) / n ** 2
        if score < best:
            best, best_d = score, d
    return float(t[best_d * batch])


def _contenders(means: np.ndarray, m: int):
    """The truncations ``d < m`` whose MSER score may be the least, in order: every ``d``
    whose score, computed at once from suffix sums, is within a bound of its rounding error
    of the least so computed (so the first ``d`` of the least exact score is among them;
    the exact scores of a few, not of all ``m``: 0.2 of a 1,000-job run's ~3 ms outside the
    engine, issue 26). All of them when some mean is not finite."""
    if not np.isfinite(means).all():
        return range(m)
    nb = len(means)
    with np.errstate(over="ignore", invalid="ignore"):  # (overflow: scored all, below)
        s1 = np.cumsum(means[::-1])[::-1][:m]  # sum of means[d:]
        s2 = np.cumsum((means * means)[::-1])[::-1][:m]  # and of their squares
        n = nb - np.arange(m)
        # |exact - s2 + s1**2 / n| <= a few nb eps s2 (sequential sums; s1**2 / n <= s2):
        # far more margin
        err = (1e-12 * nb) * s2 + 1e-300
        ss = s2 - s1 * s1 / n
    if not np.isfinite(ss).all() or not np.isfinite(err).all():
        return range(m)  # sums past float's range: the bound says nothing, score them all
    return np.flatnonzero((ss - err) / n ** 2 <= ((ss + err) / n ** 2).min()).tolist()


def _trend(tw: np.ndarray, qw: np.ndarray) -> tuple[float, float, float]:
    """Slope of the queue [jobs/h] through :data:`TREND_BATCHES` batch means, and its interval."""
    from scipy import special
    k = len(qw) // TREND_BATCHES
    bt = tw[:k * TREND_BATCHES].reshape(TREND_BATCHES, k).mean(axis=1) / 3600.0
    bq = qw[:k * TREND_BATCHES].reshape(TREND_BATCHES, k).mean(axis=1)
    slope, stderr = _least_squares(bt, bq)
    stderr = 0.0 if np.ptp(bq) == 0 else stderr  # a constant queue: an exact fit
    # stats.t.ppf's own function (the same numbers): see _least_squares
    half = float(special.stdtrit(TREND_BATCHES - 2, 0.5 + LEVEL / 2)) * stderr
    return float(slope), float(slope - half), float(slope + half)


def _least_squares(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Slope of ``y`` on ``x`` and its standard error, computed as ``scipy.stats.linregress``
    computes them, step for step (the same numbers, a test checks): importing scipy.stats
    for it cost every warm panel that judges steadiness about 0.6 s (issue 26)."""
    if len(x) < 3 or np.amax(x) == np.amin(x):
        from scipy import stats      # its cases (two points, one x) and errors, as they were
        fit = stats.linregress(x, y)
        return fit.slope, fit.stderr
    ssxm, ssxym, _, ssym = np.cov(x, y, bias=1).flat
    if ssxm == 0.0 or ssym == 0.0:
        r = np.asarray(np.nan if ssxym == 0 else 0.0)[()]
    else:
        r = min(max(ssxym / np.sqrt(ssxm * ssym), -1.0), 1.0)
    return ssxym / ssxm, np.sqrt((1 - r ** 2) * ssym / ssxm / (len(x) - 2))


def stability(ds) -> Stability:
    """Judge whether the run ``ds`` (a :func:`fitgpp.simulate` Dataset) reached a steady
    state, by the rule of this module's docstring."""
    t, q = queued(ds)
    return of_queue(t, q, drain_start(ds))


def of_queue(t: np.ndarray, q: np.ndarray, end: float) -> Stability:
    """:func:`stability` of the waiting jobs ``q`` sampled at ``t`` (:func:`queued`) with
    the last arrival at ``end`` (:func:`drain_start`): what a study judges each cell by,
    from the cell's arrays, without building a Dataset of them (issue 26)."""
    arriving = t < end
    warm = mser_warmup(t[arriving], q[arriving])
    inside = arriving & (t >= warm)
    if inside.sum() < MIN_WINDOW_SAMPLES:
        nan = math.nan
        return Stability(False, nan, nan, nan, warm, end, nan, nan,
                         f"cannot tell: {int(inside.sum())} samples between warm-up and drain, "
                         f"fewer than {MIN_WINDOW_SAMPLES}")
    tw, qw = t[inside], q[inside]
    slope, lo, hi = _trend(tw, qw)
    mean = float(qw.mean())
    rise = slope * float(tw[-1] - tw[0]) / 3600.0
    grows = lo > 0 and rise > GROWTH_SHARE * max(mean, 1.0)
    if grows:
        reason = (f"the queue grows: a rise of {rise:.3g} jobs over the window against a mean "
                  f"of {mean:.3g}, and the slope's interval is above zero")
    elif lo > 0:
        reason = (f"the slope is above zero but the rise ({rise:.3g} jobs) is small against the "
                  f"mean queue ({mean:.3g})")
    else:
        reason = "no upward trend of the queue is detectable"
    if warm >= t[arriving][(arriving.sum() // BATCH) // 2 * BATCH]:
        reason += f" (MSER-{BATCH} truncated as much as it may, half the arrival window)"
    return Stability(not grows, slope, lo, hi, warm, end, mean, rise, reason)


def steady_window(ds, result: Stability | None = None) -> np.ndarray:
    """Boolean mask over ``ds``'s jobs: submitted in ``[warmup_end, drain_start)`` of
    ``result`` (computed from ``ds`` when not given)."""
    result = result or stability(ds)
    submit = ds["submit"].values.astype(float)
    return (submit >= result.warmup_end) & (submit < result.drain_start)


def window_summary(ds, result: Stability | None = None):
    """Per-class table (:func:`fitgpp.analysis.metrics.class_table`) over the jobs of
    :func:`steady_window` only; ``attrs`` record the window and whether the run is steady."""
    from fitgpp.analysis.metrics import class_table
    result = result or stability(ds)
    table = class_table(ds.isel(job=steady_window(ds, result)))
    table.attrs.update(warmup_end=result.warmup_end, drain_start=result.drain_start,
                       steady=result.steady)
    return table


def judge(ds):
    """``ds`` (a simulation Dataset) with the verdict of :func:`stability` in its attrs:
    ``steady_state`` (:attr:`Stability.verdict`), ``steady_state_text`` (its sentence),
    ``steady_state_rule`` (:data:`RULE`) and ``queue_slope_per_h`` with its interval
    ``queue_slope_low``/``queue_slope_high`` (NaN when it cannot tell). :func:`fitgpp.simulate`
    calls it on every run, so every saved result says whether it reached a steady state.
    Returns ``ds`` (changed in place)."""
    st = stability(ds)
    ds.attrs.update(steady_state=st.verdict, steady_state_text=st.text(), steady_state_rule=RULE,
                    queue_slope_per_h=float(st.slope), queue_slope_low=float(st.slope_low),
                    queue_slope_high=float(st.slope_high))
    return ds


def summary_line(ds) -> str:
    """``"steady state: not steady (the queue changes by +12.3 waiting jobs per hour
    [...])"``: the line ``fitgpp simulate`` and the workbench print, from ``ds``'s attrs
    when :func:`judge` wrote them, else judged now."""
    text = ds.attrs.get("steady_state_text")
    if not text:
        text = stability(ds).text()
    return f"steady state: {text}"
