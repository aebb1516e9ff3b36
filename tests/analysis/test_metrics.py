"""fitgpp.analysis.metrics: the one place statistics are computed."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr
from scipy import stats

from fitgpp.analysis import metrics


def test_class_stats_against_numpy():
    rng = np.random.default_rng(1)
    te = rng.random(200) < 0.3
    sd = 1 + rng.exponential(3, 200)
    pre = rng.integers(0, 3, 200)
    wait = rng.exponential(100, 200)
    st = metrics.class_stats(te, sd, pre, wait)
    for i, sel in enumerate((te, ~te)):
        assert st["jobs"][i] == sel.sum()
        assert st["slowdown_median"][i] == np.median(sd[sel])
        assert st["slowdown_p95"][i] == np.percentile(sd[sel], 95)
        assert st["slowdown_p99"][i] == np.percentile(sd[sel], 99)
        assert st["wait_mean"][i] == pytest.approx(wait[sel].mean())
        assert st["preemptions_per_job"][i] == pre[sel].sum() / sel.sum()
    # class labels work as well as a mask; a class without jobs is NaN, not 0
    labels = np.where(te, "TE", "BE")
    assert metrics.class_stats(labels, sd, pre)["slowdown_p95"][1] == st["slowdown_p95"][1]
    empty = metrics.class_stats(np.ones(3, bool), [1.0, 2.0, 3.0], [0, 0, 0])
    assert empty["jobs"][1] == 0 and math.isnan(empty["slowdown_median"][1])


def test_t_interval_is_scipys_and_needs_three_values():
    x = [1.0, 2.0, 4.0, 8.0]
    m, lo, hi = metrics.t_interval(x)
    want = stats.t.interval(0.95, 3, loc=np.mean(x), scale=stats.sem(x))
    assert (lo, hi) == pytest.approx(want) and m == pytest.approx(np.mean(x))
    for few in ([5.0], [5.0, 7.0]):
        m, lo, hi = metrics.t_interval(few)
        assert m == pytest.approx(np.mean(few)) and math.isnan(lo) and math.isnan(hi)


def test_t_quantile_is_scipy_stats_exactly():
    """_t_half takes the quantile from scipy.special (scipy.stats cost a warm panel 0.6 s to
    import): bit for bit stats.t.ppf's, for every number of seeds a panel offers."""
    n = np.arange(1, 101)
    sd = np.linspace(0.5, 3.0, n.size)
    ok = n >= metrics.MIN_CI_VALUES
    q = stats.t.ppf(0.5 + metrics.LEVEL / 2, np.where(ok, n - 1, 1))
    want = np.where(ok, q * sd / np.sqrt(n), np.nan)
    np.testing.assert_array_equal(metrics._t_half(sd, n), want)


def test_mean_ci_over_a_dimension_matches_t_interval():
    rng = np.random.default_rng(0)
    da = xr.DataArray(rng.random((2, 4)), dims=("policy", "seed"))
    mean, half = metrics.mean_ci(da)
    for i in range(2):
        m, lo, hi = metrics.t_interval(da[i].values)
        assert float(mean[i]) == pytest.approx(m) and float(half[i]) == pytest.approx(hi - m)
    _, half2 = metrics.mean_ci(da.isel(seed=slice(0, 2)))
    assert np.isnan(half2).all()


def test_change_is_a_fraction_and_percent_prints_it():
    assert metrics.change(1.0, 29.4) == pytest.approx(-0.966, abs=1e-3)
    assert metrics.percent(-0.966) == "-96.6 %"
    assert metrics.percent(0.18) == "+18.0 %"
    assert metrics.percent(float("nan")) == "n/a"


def test_long_jobs_p95_takes_the_longest_quarter():
    te = np.array([False] * 8)
    dur = np.arange(8.0)
    sd = np.array([1, 1, 1, 1, 1, 1, 5, 9.0])
    assert metrics.long_jobs_p95(te, dur, sd) == np.percentile([5, 9.0], 95)


def test_bootstrap_interval_brackets_the_statistic():
    x = np.random.default_rng(3).exponential(2, 500)
    lo, hi = metrics.bootstrap_interval(x, 95)
    assert lo < np.percentile(x, 95) < hi
    assert metrics.bootstrap_interval(np.ones(10), 95) == (1.0, 1.0)


def test_gpu_hours_count_every_gpu_of_every_task():
    # job 0: 1 h reloading on 2 tasks x 8 GPUs; job 1: 30 min on 4 GPUs; job 2 (TE) none
    reload, gpu, tasks = [3600.0, 1800.0, 0.0], [8, 4, 1], [2, 1, 1]
    assert metrics.reload_gpu_hours(reload, gpu, tasks) == pytest.approx(16 + 2)
    assert metrics.reload_gpu_hours(reload, gpu) == pytest.approx(8 + 2)     # no gangs
    te, duration = [False, False, True], [7200.0, 3600.0, 600.0]
    assert metrics.work_gpu_hours(te, duration, gpu, tasks) == pytest.approx(2 * 16 + 4)
    assert metrics.work_gpu_hours(["BE", "BE", "TE"], duration, gpu, tasks, cls="TE") == \
        pytest.approx(600 / 3600)
    assert metrics.work_gpu_hours(te, duration, gpu) == pytest.approx(2 * 8 + 4)
