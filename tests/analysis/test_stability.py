"""Steady state, warm-up, drain and the steady window (fitgpp.analysis.stability)."""

import numpy as np
import pytest
import xarray as xr

import fitgpp
from fitgpp.analysis.metrics import class_table
from fitgpp.analysis.stability import (BATCH, Stability, drain_start, mser_warmup, stability,
                                       steady_window, window_summary)
from fitgpp.workload import load_model, synthesize

HOUR = 3600.0


def run(load: float, n: int = 3000, seed: int = 0):
    cluster = fitgpp.DEFAULT_CLUSTER
    trace = synthesize(load_model("paper-default"), n_jobs=n, seed=seed, load=load,
                       cluster=cluster)
    return fitgpp.simulate(trace, cluster, "fitgpp", s=4.0, max_preemptions=3)


@pytest.fixture(scope="module")
def light():
    return run(0.5)


@pytest.fixture(scope="module")
def overloaded():
    return run(1.3)


def queue_dataset(queue, submit):
    """A Dataset with just what :func:`stability` reads: a queue sampled once a minute and
    jobs submitted at ``submit`` [s] (slowdown 1 + submit / 1 h, so windows show)."""
    queue = np.asarray(queue, dtype=float)
    submit = np.asarray(submit, dtype=float)
    n = len(submit)
    return xr.Dataset(
        {"waiting_te": ("time", queue / 2), "waiting_be": ("time", queue / 2),
         "submit": ("job", submit), "cls": ("job", np.where(np.arange(n) % 2, "TE", "BE")),
         "slowdown": ("job", 1 + submit / HOUR), "preemptions": ("job", np.zeros(n, int)),
         "wait": ("job", np.zeros(n))},
        coords={"time": np.arange(len(queue)) * 60.0, "job": np.arange(n)})


def test_a_light_run_is_steady(light):
    r = stability(light)
    assert isinstance(r, Stability) and r.steady, r.text()
    assert r.slope_low <= 0 or r.rise <= 0.5 * max(r.mean_queue, 1)
    assert r.text().startswith("steady:")


def test_an_overloaded_run_is_not(overloaded):
    r = stability(overloaded)
    assert not r.steady, r.text()
    assert r.slope_low > 0 and r.slope > 1  # waiting jobs per hour
    assert "grows" in r.reason


def test_drain_starts_at_the_last_arrival(overloaded):
    r = stability(overloaded)
    assert r.drain_start == drain_start(overloaded) == float(overloaded["submit"].max())
    assert r.drain_start < float(overloaded["finish"].max())  # the drain is a real stretch
    assert 0 <= r.warmup_end < r.drain_start


def test_a_rise_then_a_drain_is_not_steady():
    """A queue that grows for the whole arrival window and then drains: kept in, the drain
    would cancel the rise (a symmetric series has no trend at all)."""
    up = np.linspace(0, 1000, 1000)
    queue = np.concatenate([up, up[::-1]])
    ds = queue_dataset(queue, submit=np.linspace(0, 999 * 60, 500))
    r = stability(ds)
    assert not r.steady and r.slope > 0
    assert r.drain_start == 999 * 60


def test_mser_cuts_the_transient():
    rng = np.random.default_rng(1)
    transient = np.linspace(60, 5, 200)
    x = np.concatenate([transient, 5 + rng.normal(0, 1, 1800)])
    t = np.arange(len(x)) * 60.0
    warm = mser_warmup(t, x)
    assert 150 * 60 <= warm <= 400 * 60  # ends near where the transient does
    assert mser_warmup(t, np.full(len(x), 3.0)) == 0.0  # nothing to cut
    assert mser_warmup(t[:3 * BATCH], x[:3 * BATCH]) == 0.0  # too short to judge


def test_steady_queue_with_transient_is_steady_and_window_excludes_it():
    rng = np.random.default_rng(2)
    queue = np.concatenate([np.linspace(60, 5, 200), 5 + rng.normal(0, 1, 1300),
                            np.linspace(5, 0, 500)])
    submit = np.linspace(0, 1499 * 60, 3000)
    ds = queue_dataset(queue, submit)
    r = stability(ds)
    assert r.steady, r.text()
    mask = steady_window(ds, r)
    assert mask.sum() > 0
    assert submit[mask].min() >= r.warmup_end > 0
    assert submit[mask].max() < r.drain_start
    assert not mask[submit < r.warmup_end].any() and not mask[submit >= r.drain_start].any()


def test_window_summary_is_over_the_window_jobs_only(overloaded):
    r = stability(overloaded)
    table = window_summary(overloaded, r)
    submit = overloaded["submit"].to_numpy()
    inside = (submit >= r.warmup_end) & (submit < r.drain_start)
    be = inside & (overloaded["cls"].to_numpy() == "BE")
    assert table.loc["BE", "jobs"] == be.sum() < (overloaded["cls"] == "BE").sum()
    assert table.loc["BE", "slowdown_median"] == np.median(overloaded["slowdown"].to_numpy()[be])
    assert table.attrs["steady"] is False and table.attrs["warmup_end"] == r.warmup_end
    assert not table.equals(class_table(overloaded))


def test_too_short_a_window_cannot_be_judged():
    ds = queue_dataset(np.zeros(40), submit=np.linspace(0, 39 * 60, 10))
    r = stability(ds)
    assert not r.steady and r.reason.startswith("cannot tell")
    assert r.text().startswith("cannot tell: ") and "nan" not in r.text()
    assert r.verdict == "cannot tell"     # not called "not steady": nothing was judged


def test_a_ramp_up_then_a_plateau_is_steady_once_the_warm_up_is_cut():
    """Filling an empty cluster is a rise; judged with it, a steady run would look growing."""
    rng = np.random.default_rng(3)
    queue = np.concatenate([np.linspace(0, 50, 600), 50 + rng.normal(0, 2, 1400)])
    r = stability(queue_dataset(queue, submit=np.linspace(0, 1999 * 60, 3000)))
    assert r.steady, r.text()
    assert r.warmup_end >= 500 * 60


def test_growth_must_be_both_detectable_and_material():
    rng = np.random.default_rng(4)
    submit = np.linspace(0, 1999 * 60, 3000)
    small = stability(queue_dataset(100 + np.linspace(0, 5, 2000) + rng.normal(0, 1, 2000),
                                    submit))
    assert small.slope_low > 0 and small.steady, small.text()  # detectable, not material
    swings = np.repeat(np.resize([600.0, -600.0], 20), 100)  # a queue that swings widely
    loud = stability(queue_dataset(600 + np.linspace(0, 600, 2000) + swings, submit))
    assert loud.rise > 0.5 * loud.mean_queue
    assert loud.slope_low <= 0 and loud.steady, loud.text()  # material, not detectable


def test_usable_capacity_of_the_run_length_benchmark():
    """benchmarks/run_length.py: the highest load up to which every long FitGpp run is steady."""
    import importlib.util
    import pathlib

    import pandas as pd
    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "run_length.py"
    spec = importlib.util.spec_from_file_location("run_length", path)
    rl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rl)
    rows = pd.DataFrame({"load": [0.5, 0.8, 0.8, 0.9, 0.9, 1.0],
                         "jobs": [10000, 10000, 600, 10000, 40000, 40000],
                         "steady_fitgpp": [True, True, False, True, False, True]})
    assert rl.usable_capacity(rows) == 0.8  # short runs do not count; 1.0 is above a failure
    assert np.isnan(rl.usable_capacity(rows.assign(steady_fitgpp=False)))


@pytest.mark.parametrize("seed", [0, 1])
def test_the_default_load_is_steady_and_the_old_one_is_not(seed):
    """fitgpp.DEFAULT_LOAD is the usable capacity the run-length study found: 10,000 FitGpp
    jobs there reach a steady state; at 0.9, the default before, the same run's queue grows."""
    assert fitgpp.DEFAULT_LOAD < 0.9
    at_default = stability(run(fitgpp.DEFAULT_LOAD, n=10000, seed=seed))
    assert at_default.steady, at_default.text()
    above = stability(run(0.9, n=10000, seed=seed))
    assert not above.steady, above.text()


def test_least_squares_is_linregress_exactly():
    """The trend's slope and standard error are scipy.stats.linregress's, bit for bit
    (computed without importing scipy.stats: 0.6 s of every warm panel, issue 26)."""
    from scipy import stats

    from fitgpp.analysis.stability import _least_squares
    rng = np.random.default_rng(3)
    cases = [(np.sort(rng.random(20)) * 40, rng.normal(50, 10, 20)) for _ in range(200)]
    x = np.linspace(0.5, 30, 20)
    cases += [(x, 3 * x + 1), (x, -2 * x), (x, np.full(20, 7.0)), (x[:2], x[:2] * 5),
              (x, 1e6 + rng.random(20) * 1e-9)]
    for x, y in cases:
        fit = stats.linregress(x, y)
        slope, stderr = _least_squares(x, y)
        assert (slope, stderr) == (fit.slope, fit.stderr) or \
            (slope == fit.slope and np.isnan(stderr) and np.isnan(fit.stderr))
    with pytest.raises(ValueError):
        _least_squares(np.ones(20), rng.random(20))


def test_mser_warmup_is_the_plain_formula_exactly():
    """mser_warmup's loop (np.add.reduce for speed, issue 26) gives what the formula of the
    module docstring gives with rest.mean() and np.sum, on series long and short."""
    import math

    def plain(t, x, batch=BATCH):
        nb = len(x) // batch
        if nb < 4:
            return float(t[0]) if len(t) else 0.0
        means = x[:nb * batch].reshape(nb, batch).mean(axis=1)
        best, best_d = math.inf, 0
        for d in range(nb // 2 + 1):
            rest = means[d:]
            score = float(np.sum((rest - rest.mean()) ** 2)) / len(rest) ** 2
            if score < best:
                best, best_d = score, d
        return float(t[best_d * batch])

    rng = np.random.default_rng(5)
    for n in (3, 19, 20, 137, 1500, 4000):
        t = np.arange(n) * 60.0
        for x in (rng.poisson(30, n), 100 + np.linspace(0, 50, n) + rng.normal(0, 5, n),
                  np.full(n, 4), np.exp(-np.arange(n) / 50) * 300 + rng.random(n),
                  # near ties: the suffix-sum scores that pick the contenders round more
                  1e6 + rng.normal(0, 1e-3, n), np.tile([0.0, 1, 2, 1, 0], n // 5 + 1)[:n],
                  np.where(rng.random(n) < 0.5, 0.0, 1e8) + rng.random(n) * 1e-6,
                  np.where(np.arange(n) == n // 2, np.inf, rng.poisson(3, n)),
                  # finite, but their squares' sums overflow: no bound, every score exact
                  1e155 * (1 + 1e-9 * (np.exp(-np.arange(n) / 50) * 30 + rng.random(n)))):
            with np.errstate(invalid="ignore"):  # (inf - inf, in both)
                assert mser_warmup(t, x) == plain(t, x)


def test_a_growing_queue_is_clear_or_borderline_by_the_slopes_lower_bound(overloaded, light):
    """Not steady, and even the slope's lower bound gives a material rise: clear; the point
    slope material but its lower bound not: borderline (a queue that may be settling slowly).
    RQ8's map tells them apart (issue 34: borderline slopes at load 0.8 were lumped with
    FIFO's growing queue at 0.85)."""
    from fitgpp.analysis.stability import GROWTH_RULE, GROWTH_SHARE
    clear = stability(overloaded)
    assert not clear.steady and clear.growth == "clear", clear.text()
    rng = np.random.default_rng(5)
    submit = np.linspace(0, 1999 * 60, 3000)
    swings = np.repeat(np.resize([3.0, -3.0], 20), 100)
    slow = stability(queue_dataset(10 + np.linspace(0, 8, 2000) + swings
                                   + rng.normal(0, 0.5, 2000), submit))
    assert not slow.steady and slow.growth == "borderline", slow.text()
    low_rise = slow.rise * slow.slope_low / slow.slope
    assert 0 < low_rise <= GROWTH_SHARE * slow.mean_queue < slow.rise
    assert stability(light).growth == "none" and "lower bound" in GROWTH_RULE
    short = stability(queue_dataset(np.zeros(40), submit=np.linspace(0, 39 * 60, 10)))
    assert short.growth == "cannot tell"
