"""fitgpp.simulate agrees, job by job, with the independent slow reference (tests/reference.py)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import (HUGE_P, POLICIES, assert_agrees, busy_cases, gang_cases, jobs_frame,
                      random_loaded_trace, run_both, scaled, small_cases)

EXAMPLES = scaled(40)   # per policy; FITGPP_TEST_SCALE=8 gives 320
N_TRACES = scaled(6)    # per policy; FITGPP_TEST_SCALE=8 gives 48
cases = st.one_of(small_cases(), busy_cases(), gang_cases())


@settings(max_examples=EXAMPLES)
@given(case=st.one_of(small_cases(), gang_cases()))
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


def test_fitgpp_size_sum_is_python_sum_in_victim_order():
    """The node key's "sum of size(V)" is Python's sum() over V in victim order.

    Two nodes of 30 CPU units, each filled by 8 BE jobs (gp 1 tick) whose sizes add up
    to exactly 1 on paper. In floating point, summing in victim order gives 1.0 on node 0
    and 0.9999999999999999 on node 1 (numpy's pairwise np.sum gives the opposite), so a
    whole-node TE job must take node 1's jobs as victims.
    """
    a, b = (1, 1, 1, 1, 1, 2, 6, 17), (1, 3, 4, 4, 4, 4, 5, 5)
    assert sum(x / 30 for x in a) > sum(x / 30 for x in b)  # the premise, in Python floats
    rows = [(k, "BE", 0.0, 600.0, 0, cpu, 0, 60.0) for k, cpu in enumerate(a + b)]
    rows.append((99, "TE", 60.0, 60.0, 0, 30, 0, None))
    df = jobs_frame(rows)
    cap = np.array([[1, 30, 1]] * 2)
    ds, ref = run_both(df, cap, "fitgpp", s=4.0)
    assert_agrees(ds, ref, 60, "size sums")
    assert ref[99].node == 1 and [ref[k].preemptions for k in range(16)] == [0] * 8 + [1] * 8


@pytest.mark.parametrize("te_cpu, be_cpu, cpu_cap, preempted", [
    (3, 9, 10, 0),    # 3.0 * (3/10) = 0.8999999999999999 < 9/10: not eligible, although 9 = 3 * 3
    (10, 30, 30, 1),  # 3.0 * (10/30) = 1.0 = 30/30: eligible (<= includes equality)
])
def test_fitgpp_eligibility_compares_floats(te_cpu, be_cpu, cpu_cap, preempted):
    """FitGpp's filter is the float comparison size(v) <= s * size(te), as documented."""
    assert (be_cpu / cpu_cap <= 3.0 * (te_cpu / cpu_cap)) == bool(preempted)  # the premise
    df = jobs_frame([(1, "BE", 0.0, 600.0, 0, be_cpu, 0, 0.0),
                     (2, "TE", 60.0, 60.0, 0, te_cpu, 0, None)])
    cap = np.array([[1, cpu_cap, 1]])
    ds, ref = run_both(df, cap, "fitgpp", s=3.0)
    assert_agrees(ds, ref, 60, "eligibility")
    assert ref[1].preemptions == preempted


def test_reserved_te_jobs_start_in_order():
    """A reserved TE job may not start ahead of an earlier unstarted reservation on its node.

    One 4-GPU node; BE X (3 GPUs, gp 3 ticks) and BE Y (1 GPU, gp 1 tick) run from tick 0.
    At tick 1 TE A (3 GPUs) preempts both and reserves 3; TE B (1 GPU) then finds
    projected = 4 - 0 - 3 = 1, reserves on the node with no victims. At tick 2 Y's GPU is
    free: B fits it, but free - A's earlier reservation = 1 - 3 < 1, so B waits. At tick 4 X
    is gone and both start. (Found by mutating the reference: without this rule B starts at
    tick 2, which few random traces catch.)
    """
    df = jobs_frame([(1, "BE", 0.0, 600.0, 3, 1, 1, 180.0), (2, "BE", 0.0, 600.0, 1, 1, 1, 60.0),
                     (3, "TE", 60.0, 120.0, 3, 1, 1, None), (4, "TE", 60.0, 120.0, 1, 1, 1, None)])
    cap = np.array([[4, 8, 8]])
    ds, ref = run_both(df, cap, "fitgpp", s=8.0)
    assert_agrees(ds, ref, 60, "reservation order")
    assert (ref[3].first_start, ref[4].first_start) == (4, 4)
    assert (ref[1].preemptions, ref[2].preemptions) == (1, 1)


@pytest.mark.parametrize("policy", POLICIES)
def test_loaded_gang_traces_agree(policy):
    """Busy clusters with gangs (BE and TE) and restart overheads on every BE job: the
    engine agrees with the reference job by job, and the runs really exercise the new rules
    (checked, not assumed): gangs run, preempted jobs reload, gang victims get preempted."""
    n = N_TRACES
    preempting = reloading = gang_victims = 0
    for k in range(n):
        df, cap = random_loaded_trace(2000 + k, n_jobs=40 + (k * 29) % 41, n_nodes=3 + k % 2,
                                      gangs=True)
        s = (4.0, 8.0, 2.0, 1e9)[k % 4]
        P = (3, 1, 2, HUGE_P)[k % 4]
        ds, ref = run_both(df, cap, policy, s=s, P=P, seed=k)
        assert_agrees(ds, ref, 60, f"{policy} gang trace {k} s={s} P={P}")
        assert (ds.tasks > 1).any()
        pre = ds.preemptions.values
        preempting += int(pre.sum()) > 0
        reloading += int(ds.reload.sum()) > 0
        gang_victims += int(((ds.tasks.values > 1) & (pre > 0)).any())
    if policy in ("fitgpp", "lrtp", "rand"):
        assert preempting >= 0.6 * n, preempting
        assert reloading >= 0.5 * n, reloading
        assert gang_victims >= 1, "no gang was ever a victim"
    else:
        assert preempting == reloading == 0


def test_gang_cases_exercise_gangs_and_reloads():
    """The hypothesis strategy used above is not vacuous: over its examples, gangs start,
    jobs get preempted and restarts pay a reload."""
    seen = {"gang": 0, "preempted": 0, "reload": 0}

    @settings(max_examples=60)
    @given(case=gang_cases())
    def run(case):
        df, cap, tick = case
        ds, ref = run_both(df, cap, "fitgpp", tick=tick, s=8.0, P=HUGE_P)
        assert_agrees(ds, ref, tick, "gang case")
        seen["gang"] += bool((ds.tasks > 1).any())
        seen["preempted"] += int(ds.preemptions.sum()) > 0
        seen["reload"] += int(ds.reload.sum()) > 0

    run()
    assert seen["gang"] >= 30 and seen["preempted"] >= 15 and seen["reload"] >= 5, seen
