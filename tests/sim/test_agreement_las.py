"""LAS: fitgpp.simulate agrees job by job with the independent reference (tests/reference.py),
and jumping over quiet ticks equals stepping every tick."""

import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import fitgpp
from conftest import (assert_agrees, busy_cases, cluster_of, gang_cases, random_loaded_trace,
                      scaled, small_cases)
from reference import reference_simulate

# GPU-seconds: small ones so that demotions happen within these short traces
THRESHOLDS = st.sampled_from([(60.0,), (60.0, 300.0), (120.0, 600.0, 1800.0), (1.0, 2.0),
                              (3250.0, 7200.0), (45.0, 700.0)])
cases = st.one_of(small_cases(), busy_cases(), gang_cases())


def run_both(df, cap, tick, thresholds, **kw):
    ds = fitgpp.simulate(df, cluster_of(cap), "las", tick=tick, thresholds=thresholds, **kw)
    ref = reference_simulate(df, cap, "las", tick=tick, thresholds=thresholds)
    return ds, ref


@settings(max_examples=scaled(60))
@given(case=cases, thresholds=THRESHOLDS)
def test_las_agrees(case, thresholds):
    df, cap, tick = case
    ds, ref = run_both(df, cap, tick, thresholds, check=True)
    assert_agrees(ds, ref, tick, f"las {thresholds}")


@settings(max_examples=scaled(30))
@given(case=cases, thresholds=THRESHOLDS)
def test_las_jumping_equals_stepping(case, thresholds):
    df, cap, tick = case
    kw = dict(tick=tick, thresholds=thresholds)
    jumped = fitgpp.simulate(df, cluster_of(cap), "las", **kw)
    stepped = fitgpp.simulate(df, cluster_of(cap), "las", jump=False, **kw)
    xr.testing.assert_identical(jumped.drop_dims("time"), stepped.drop_dims("time"))


@settings(max_examples=scaled(30))
@given(case=cases, thresholds=THRESHOLDS)
def test_las_tiresias_demotion_jumping_equals_stepping(case, thresholds):
    df, cap, tick = case
    kw = dict(tick=tick, thresholds=thresholds, mode="tiresias")
    jumped = fitgpp.simulate(df, cluster_of(cap), "las", **kw)
    stepped = fitgpp.simulate(df, cluster_of(cap), "las", jump=False, **kw)
    xr.testing.assert_identical(jumped.drop_dims("time"), stepped.drop_dims("time"))


@pytest.mark.parametrize("seed, gangs, nodes", [(1, False, 1), (2, False, 3), (3, True, 4)])
def test_loaded_traces_agree(seed, gangs, nodes):
    """Busy clusters, 50 jobs: LAS preempts and demotes often, and still agrees."""
    df, cap = random_loaded_trace(seed, 50, nodes, gangs=gangs)
    ds, ref = run_both(df, cap, 60, (600.0, 3000.0), check=True)
    assert int(ds.preemptions.sum()) > 0
    assert_agrees(ds, ref, 60, f"las seed {seed}")
