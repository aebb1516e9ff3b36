"""Tiresias's single-list schedulers (sjf, lpjf, shortest, shortest-gpu), in both modes:
fitgpp.simulate agrees job by job with the independent reference (tests/reference.py), and
jumping over quiet ticks equals stepping every tick."""

import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import fitgpp
from conftest import (assert_agrees, busy_cases, cluster_of, gang_cases, random_loaded_trace,
                      scaled, small_cases)
from reference import reference_simulate

#: (policy, its mode parameter or None)
POLICIES = [("sjf", None), ("lpjf", "mode"), ("shortest", "mode"), ("shortest-gpu", "mode")]
RUNS = [(p, m) for p, param in POLICIES for m in (["exact", "tiresias"] if param else ["exact"])]
cases = st.one_of(small_cases(), busy_cases(), gang_cases())


def kwargs(policy, mode):
    param = dict(POLICIES)[policy]
    return {param: mode} if param else {}


@pytest.mark.parametrize("policy, mode", RUNS)
@settings(max_examples=scaled(40), deadline=None)
@given(case=cases)
def test_agrees_with_the_reference(policy, mode, case):
    df, cap, tick = case
    ds = fitgpp.simulate(df, cluster_of(cap), policy, tick=tick, check=True,
                         **kwargs(policy, mode))
    ref = reference_simulate(df, cap, policy, tick=tick, mode=mode)
    assert_agrees(ds, ref, tick, f"{policy} {mode}")


@pytest.mark.parametrize("policy, mode", RUNS)
@settings(max_examples=scaled(25), deadline=None)
@given(case=cases)
def test_jumping_equals_stepping(policy, mode, case):
    df, cap, tick = case
    kw = dict(tick=tick, **kwargs(policy, mode))
    jumped = fitgpp.simulate(df, cluster_of(cap), policy, **kw)
    stepped = fitgpp.simulate(df, cluster_of(cap), policy, jump=False, **kw)
    xr.testing.assert_identical(jumped.drop_dims("time"), stepped.drop_dims("time"))


@pytest.mark.parametrize("policy, mode", RUNS)
@pytest.mark.parametrize("seed, gangs, nodes", [(1, False, 1), (2, False, 3), (3, True, 4)])
def test_loaded_traces_agree(policy, mode, seed, gangs, nodes):
    """Busy clusters, 50 jobs: the preemptive ones preempt often, and still agree."""
    df, cap = random_loaded_trace(seed, 50, nodes, gangs=gangs)
    ds = fitgpp.simulate(df, cluster_of(cap), policy, tick=60, check=True,
                         **kwargs(policy, mode))
    if policy != "lpjf":
        assert int(ds.preemptions.sum()) > 0
    assert_agrees(ds, reference_simulate(df, cap, policy, tick=60, mode=mode), 60,
                  f"{policy} {mode} seed {seed}")


# DLAS: seconds of attained time; small ones so that demotions happen within these traces
THRESHOLDS = st.sampled_from([(60.0,), (60.0, 300.0), (120.0, 600.0, 1800.0), (1.0, 2.0),
                              (3250.0, 7200.0), (45.0, 700.0)])


@settings(max_examples=scaled(60), deadline=None)
@given(case=cases, thresholds=THRESHOLDS)
def test_dlas_agrees(case, thresholds):
    df, cap, tick = case
    ds = fitgpp.simulate(df, cluster_of(cap), "dlas", tick=tick, thresholds=thresholds,
                         check=True)
    ref = reference_simulate(df, cap, "dlas", tick=tick, thresholds=thresholds)
    assert_agrees(ds, ref, tick, f"dlas {thresholds}")


@settings(max_examples=scaled(30), deadline=None)
@given(case=cases, thresholds=THRESHOLDS)
def test_dlas_jumping_equals_stepping(case, thresholds):
    df, cap, tick = case
    kw = dict(tick=tick, thresholds=thresholds)
    jumped = fitgpp.simulate(df, cluster_of(cap), "dlas", **kw)
    stepped = fitgpp.simulate(df, cluster_of(cap), "dlas", jump=False, **kw)
    xr.testing.assert_identical(jumped.drop_dims("time"), stepped.drop_dims("time"))


@pytest.mark.parametrize("seed, gangs, nodes", [(1, False, 1), (2, False, 3), (3, True, 4)])
def test_dlas_loaded_traces_agree(seed, gangs, nodes):
    df, cap = random_loaded_trace(seed, 50, nodes, gangs=gangs)
    kw = dict(tick=60, thresholds=(600.0, 3000.0))
    ds = fitgpp.simulate(df, cluster_of(cap), "dlas", check=True, **kw)
    assert int(ds.preemptions.sum()) > 0
    assert_agrees(ds, reference_simulate(df, cap, "dlas", **kw), 60, f"dlas seed {seed}")


def gpu_only_pool(seed, n=60, gpus=8):
    """One node, GPU-only demands (CPU and memory 0: the step's GPU-only shortcut), TE and BE
    jobs, grace periods, arrivals in bursts so that jobs are preempted and TE jobs kept."""
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(seed)
    te = rng.random(n) < 0.3
    df = pd.DataFrame({"job_id": rng.permutation(3 * n)[:n], "cls": np.where(te, "TE", "BE"),
                       "submit_time": rng.integers(0, 12, n) * 60.0,
                       "duration": rng.integers(1, 15, n) * 60.0,
                       "gpu": rng.choice([1, 1, 2, 3, 4, 8], n), "cpu_milli": 0, "mem_mib": 0,
                       "grace_period": np.where(te, np.nan, rng.choice([0, 0, 60, 120], n))})
    return df, np.array([[gpus, 4, 4]])


@pytest.mark.parametrize("policy, kw", [("shortest", {}), ("sjf", {}), ("shortest-gpu", {}),
                                        ("dlas", {"thresholds": (120.0, 600.0)})])
@pytest.mark.parametrize("seed", [2, 3, 4, 5])
def test_gpu_only_pool_agrees(policy, kw, seed):
    df, cap = gpu_only_pool(seed)
    ds = fitgpp.simulate(df, cluster_of(cap), policy, tick=60, check=True, **kw)
    stepped = fitgpp.simulate(df, cluster_of(cap), policy, tick=60, jump=False, **kw)
    assert (ds["finish"] == stepped["finish"]).all()
    assert int(ds.preemptions.sum()) > 0
    assert_agrees(ds, reference_simulate(df, cap, policy, tick=60, **kw), 60,
                  f"{policy} gpu-only seed {seed}")
