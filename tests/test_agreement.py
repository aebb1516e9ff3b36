"""fitgpp.simulate agrees, job by job, with the independent slow reference (tests/reference.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import (HUGE_P, POLICIES, assert_agrees, busy_cases, random_loaded_trace,
                      run_both, scaled, small_cases)

EXAMPLES = scaled(40)   # per policy; FITGPP_TEST_SCALE=8 gives 320
N_TRACES = scaled(6)    # per policy; FITGPP_TEST_SCALE=8 gives 48
cases = st.one_of(small_cases(), busy_cases())


@settings(max_examples=EXAMPLES)
@given(case=small_cases())
def test_fifo_agrees(case):
    df, cap, tick = case
    ds, ref = run_both(df, cap, "fifo", tick=tick)
    assert_agrees(ds, ref, tick, "fifo")


@settings(max_examples=EXAMPLES)
@given(case=cases)
def test_prio_agrees(case):
    df, cap, tick = case
    ds, ref = run_both(df, cap, "prio", tick=tick)
    assert_agrees(ds, ref, tick, "prio")


@settings(max_examples=EXAMPLES)
@given(case=cases, s=st.sampled_from([0.0, 0.5, 1.0, 4.0, 8.0, 1e9]),
       P=st.sampled_from([1, 2, 3, HUGE_P]))
def test_fitgpp_agrees(case, s, P):
    df, cap, tick = case
    ds, ref = run_both(df, cap, "fitgpp", tick=tick, s=s, P=P)
    assert_agrees(ds, ref, tick, f"fitgpp s={s} P={P}")


@settings(max_examples=EXAMPLES)
@given(case=cases, P=st.sampled_from([1, 2, 3, HUGE_P]))
def test_lrtp_agrees(case, P):
    df, cap, tick = case
    ds, ref = run_both(df, cap, "lrtp", tick=tick, P=P)
    assert_agrees(ds, ref, tick, f"lrtp P={P}")


@settings(max_examples=EXAMPLES)
@given(case=cases, P=st.sampled_from([1, 2, 3, HUGE_P]),
       seed=st.integers(0, 2**32 - 1))
def test_rand_agrees(case, P, seed):
    df, cap, tick = case
    ds, ref = run_both(df, cap, "rand", tick=tick, P=P, seed=seed)
    assert_agrees(ds, ref, tick, f"rand P={P} seed={seed}")


@pytest.mark.parametrize("policy", POLICIES)
def test_loaded_traces_agree(policy):
    """Busy clusters, 40-80 jobs: preemptions must really happen, and still agree."""
    preempted_runs = 0
    for k in range(N_TRACES):
        df, cap = random_loaded_trace(1000 + k, n_jobs=40 + (k * 37) % 41, n_nodes=2 + k % 3)
        s = (4.0, 8.0, 2.0, 1e9)[k % 4]
        P = (3, 1, 2, HUGE_P)[k % 4]
        ds, ref = run_both(df, cap, policy, s=s, P=P, seed=k)
        assert_agrees(ds, ref, 60, f"{policy} trace {k} s={s} P={P}")
        preempted_runs += int(ds.preemptions.sum()) > 0
    if policy in ("fitgpp", "lrtp", "rand"):
        # not vacuous: most of these loaded runs exercise the preempt step
        assert preempted_runs >= 0.6 * N_TRACES, preempted_runs
    else:
        assert preempted_runs == 0
