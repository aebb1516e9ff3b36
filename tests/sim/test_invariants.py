"""SPEC.md "What must always hold", checked on the engine's Dataset and, tick by tick,
on the reference."""

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import fitgpp
from conftest import (HUGE_P, POLICIES, assert_agrees, cluster_of, jobs_frame, policy_kwargs,
                      random_loaded_trace, run_both, scaled, small_cases, busy_cases, gang_cases)
from reference import DONE, FUTURE, RUNNING, STOPPING, WAITING, Reference, ge, sub

EXAMPLES = scaled(25)
policies = st.sampled_from(POLICIES)
cases = st.one_of(small_cases(), busy_cases(), gang_cases())
params = st.fixed_dictionaries({"s": st.sampled_from([0.0, 1.0, 4.0, 8.0]),
                                "P": st.sampled_from([1, 2, 3]),
                                "seed": st.integers(0, 1000)})


def ticks(da, tick):
    return np.rint(da.values / tick).astype(np.int64)


def check_tick(ref, phase):
    """Per-tick ledger and state invariants of the reference."""
    t = ref.t
    for n in range(ref.N):
        assert ge(ref.free(n), (0, 0, 0)), f"tick {t} {phase}: free({n}) = {ref.free(n)} < 0"
        # the ledger's definitions agree with each other
        assert ref.avail(n) == sub(ref.free(n), ref.reserved(n))
    for j in ref.jobs:
        assert j.state in (FUTURE, WAITING, RUNNING, STOPPING, DONE)
        assert (j.state == FUTURE) == (t < j.submit), (t, j)
        assert (j.node is not None) == (j.state in (RUNNING, STOPPING, DONE)), (t, j)
        if j.state in (RUNNING, STOPPING):  # a gang's tasks: distinct nodes, one state
            assert len(j.nodes) == j.tasks == len(set(j.nodes)), (t, j)
        else:
            assert j.nodes == () or j.state == DONE, (t, j)
        assert j.reservation is None or (j.te and j.state == WAITING), (t, j)
        assert j.preemptions <= ref.P and (not j.te or j.preemptions == 0), (t, j)
        assert 0 <= j.remaining <= j.work and j.ran - j.reloaded + j.remaining == j.work, (t, j)
        assert 0 <= j.reload_left <= j.ro and (j.state == RUNNING or j.reload_left == 0), (t, j)
        if j.state == STOPPING:
            assert j.release > t, (t, j)  # released at its release tick, not later
    if ref.policy == "fifo":  # starts so far form a prefix of (submit, job_id) order
        started = [j.first_start is not None for j in ref.jobs]
        assert started == sorted(started, reverse=True), f"tick {t}: FIFO started out of order"


@settings(max_examples=EXAMPLES)
@given(case=cases, policy=policies, p=params)
def test_reference_invariants_every_tick(case, policy, p):
    df, cap, tick = case
    ref = Reference(df, cap, policy, tick=tick, on_tick=check_tick, **p)
    out = ref.run()
    for j in ref.jobs:  # done exactly once, ran `work` ticks plus the reloads of its restarts
        assert j.state == DONE and j.finished_times == 1, j
        assert len(j.runs) == j.preemptions + 1 and j.runs[0][0] == 0, j
        assert all(planned == j.ro for planned, _ in j.runs[1:]), j
        assert j.reloaded == sum(min(planned, length) for planned, length in j.runs), j
        assert j.ran == j.work + j.reloaded, j
        assert j.stopped == j.preemptions * j.gp
    assert set(out) == set(df.job_id)


@settings(max_examples=EXAMPLES)
@given(case=cases, policy=policies, p=params)
def test_dataset_invariants(case, policy, p):
    """check=True asserts the engine's own ledger (free >= 0 ...) every tick; then the
    Dataset must account for every tick of every job exactly once."""
    df, cap, tick = case
    ds = fitgpp.simulate(df, cluster_of(cap), policy, tick=tick, check=True,
                         sample_every=tick, **policy_kwargs(policy, **p))
    submit, work, first, fin = (ticks(ds[k], tick) for k in ("submit", "work", "first_start",
                                                              "finish"))
    wait, stopped, pre = ticks(ds.wait, tick), ticks(ds.stopped, tick), ds.preemptions.values
    reload = ticks(ds.reload, tick)
    be = ds.cls.values == "BE"
    # jobs come in (submit, job_id) order, each exactly once
    keys = list(zip(submit.tolist(), ds.job.values.tolist()))
    assert keys == sorted(keys) and len(set(ds.job.values.tolist())) == len(df)
    assert (first >= submit).all() and (fin - first >= work).all()
    assert (fin - submit == work + reload + wait + stopped).all() and (wait >= 0).all()
    ro = np.ceil(ds.restart_overhead.values / tick).astype(np.int64)
    assert (reload <= pre * ro).all() and (reload[pre == 0] == 0).all()
    # BE preempted at most P times, TE never; a job never preempted runs in one piece
    P = p["P"] if policy in ("fitgpp", "lrtp", "rand") else 0
    assert (pre[be] <= P).all() and (pre[~be] == 0).all()
    assert (fin - first == work)[pre == 0].all()
    gp = np.ceil(np.nan_to_num(ds.grace_period.values) / tick).astype(np.int64)
    assert (stopped == np.where(be, pre * gp, 0)).all()
    # the per-tick series account for each job's running, stopping and waiting ticks
    tot = ds.attrs["total_gpus"]
    gpu = ds.gpu.values * ds.tasks.values  # utilization counts every task
    if tot:
        assert round(float(ds.gpu_util.sum()) * tot) == int((gpu * (work + reload)).sum())
        assert round(float(ds.gpu_stopping.sum()) * tot) == int((gpu * stopped).sum())
    assert round(float(ds.waiting_te.sum())) == int(wait[~be].sum())
    assert round(float(ds.waiting_be.sum())) == int(wait[be].sum())
    if policy == "fifo":  # FIFO starts jobs in (submit, job_id) order
        assert (np.diff(first) >= 0).all() and (pre == 0).all()


@settings(max_examples=EXAMPLES)
@given(case=cases, policy=policies, p=params)
def test_jump_equals_step(case, policy, p):
    df, cap, tick = case
    kw = policy_kwargs(policy, **p)
    a = fitgpp.simulate(df, cluster_of(cap), policy, tick=tick, jump=True, **kw)
    b = fitgpp.simulate(df, cluster_of(cap), policy, tick=tick, jump=False, **kw)
    xr.testing.assert_identical(a, b)


@pytest.mark.parametrize("policy", POLICIES)
def test_jump_equals_step_loaded(policy):
    for k in range(4):
        df, cap = random_loaded_trace(50 + k, n_jobs=120, n_nodes=3)
        kw = policy_kwargs(policy, s=(4.0, 8.0, 1.0, 0.5)[k], P=(3, 1, 2, HUGE_P)[k], seed=k)
        a = fitgpp.simulate(df, cluster_of(cap), policy, jump=True, **kw)
        b = fitgpp.simulate(df, cluster_of(cap), policy, jump=False, **kw)
        xr.testing.assert_identical(a, b)


@pytest.mark.parametrize("policy", POLICIES)
def test_same_inputs_same_dataset(policy):
    df, cap = random_loaded_trace(7, n_jobs=150, n_nodes=3)
    runs = [fitgpp.simulate(df, cluster_of(cap), policy, **policy_kwargs(policy, seed=11))
            for _ in range(2)]
    xr.testing.assert_identical(runs[0], runs[1])
    if policy != "fifo":
        assert int(runs[0].preemptions.sum()) > 0 or policy == "prio"


def test_rand_seed_matters():
    """The seed reaches RAND's draws (else "same seed, same result" would be vacuous)."""
    df, cap = random_loaded_trace(7, n_jobs=150, n_nodes=3)
    runs = [fitgpp.simulate(df, cluster_of(cap), "rand", seed=seed) for seed in range(4)]
    firsts = {tuple(r.finish.values.tolist()) for r in runs}
    assert len(firsts) > 1


def test_engine_visits_tick_after_preemption():
    """Why the engine must visit t+1 after a preemption, even with no event there.

    One 4-GPU node, FitGpp s=2. BE X (4 GPUs, gp 0) runs from tick 0. At tick 2 TE
    jobs A (1 GPU) and B (3 GPUs) arrive, A first. A fails: X is too big to be its
    victim (size 1 > 2 * 0.25) and nothing is free. B preempts X (1 <= 2 * 0.75);
    X is released at once, B starts, 1 GPU stays free, and X (4 GPUs) cannot
    restart. At tick 3 nothing arrives, finishes or is released, yet A now finds
    avail = 1 and starts: an engine that skipped tick 3 would start A at tick 7.
    """
    df = jobs_frame([(1, "BE", 0, 600, 4, 1, 1, 0.0),
                     (2, "TE", 120, 300, 1, 1, 1, None),
                     (3, "TE", 120, 300, 3, 1, 1, None)])
    cap = np.array([[4, 10, 10]])
    ref = Reference(df, cap, "fitgpp", s=2.0, on_tick=check_tick).run()
    assert (ref[2].first_start, ref[3].first_start, ref[1].preemptions) == (3, 2, 1)
    for jump in (True, False):
        ds, _ = run_both(df, cap, "fitgpp", s=2.0, jump=jump)
        assert_agrees(ds, ref, 60, f"jump={jump}")
    a = fitgpp.simulate(df, cluster_of(cap), "fitgpp", s=2.0, jump=True)
    b = fitgpp.simulate(df, cluster_of(cap), "fitgpp", s=2.0, jump=False)
    xr.testing.assert_identical(a, b)
    assert int(a.first_start.sel(job=2)) == 180
