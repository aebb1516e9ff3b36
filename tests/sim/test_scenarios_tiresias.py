"""Hand-worked cases for Tiresias's single-list schedulers (docs/model.md, "SJF, SRTF, SRSF
and LPJF, exactly"), one rule each.

Every case is checked against numbers worked out by hand (in the docstring) and against the
independent reference. Ticks of 60 s; ``T * k`` is k ticks in seconds. Rows are
``(job_id, cls, submit, duration, gpu, cpu, mem, grace)``.
"""

import numpy as np
import pytest

import fitgpp
from conftest import assert_agrees, cluster_of, gang_frame
from fitgpp.sim.policies import Lpjf, PolicyError, Shortest, ShortestGpu
from reference import reference_simulate

T = 60.0
TWO, FOUR = np.array([[2, 8, 8]]), np.array([[4, 8, 8]])


def run(df, cap, policy, mode="exact", **kw):
    """Simulate (jumping and stepping), check against the reference, return the Dataset."""
    if mode != "exact":
        kw["mode"] = mode
    ds = fitgpp.simulate(df, cluster_of(cap), policy, tick=T, check=True, **kw)
    stepped = fitgpp.simulate(df, cluster_of(cap), policy, tick=T, jump=False, **kw)
    assert (ds["finish"] == stepped["finish"]).all()
    ref_kw = {"thresholds": kw["thresholds"]} if "thresholds" in kw else {}
    assert_agrees(ds, reference_simulate(df, cap, policy, tick=T, mode=mode, **ref_kw), T,
                  policy)
    return ds


def at(ds, var, job):
    return ds[var].sel(job=job).item() / (T if var in ("first_start", "finish") else 1)


def be(jid, submit, work, gpu, grace=0.0):
    return (jid, "BE", submit * T, work * T, gpu, 0, 0, grace * T)


def test_srtf_preempts_a_longer_job():
    """2 GPUs. A (2 GPUs, 10 ticks) runs from 0; B (2 GPUs, 2 ticks) arrives at 3, when A
    has 7 ticks left: B goes first, A is preempted (grace 0). B is done at 5; A starts again
    at 5 with 7 left and is done at 12."""
    ds = run(gang_frame([be(1, 0, 10, 2), be(2, 3, 2, 2)]), TWO, "shortest")
    assert (at(ds, "first_start", 2), at(ds, "finish", 2)) == (3, 5)
    assert (at(ds, "finish", 1), at(ds, "preemptions", 1)) == (12, 1)


def test_srtf_keeps_a_job_with_less_left():
    """The same with B needing 8 ticks: at 3 A has 7 left < 8, so A keeps running, done at
    10; B starts then, done at 18."""
    ds = run(gang_frame([be(1, 0, 10, 2), be(2, 3, 8, 2)]), TWO, "shortest")
    assert (at(ds, "finish", 1), at(ds, "first_start", 2), at(ds, "preemptions", 1)) == \
        (10, 10, 0)


def test_srtf_ties_exact_and_tiresias():
    """2 GPUs. X (1 GPU, 4 ticks) and R (1 GPU, 8 ticks) start at 0. W (2 GPUs, 4 ticks)
    arrives at 1: order X (3 left), W (4), R (7); W does not fit beside X and waits, ahead
    of R. At 4 X is done and R has 4 left, tied with W. Exact: ties by (submit, job_id), R
    (submitted at 0) first: R keeps running, done at 8; W starts then, done at 12.
    Tiresias: its stable re-sort keeps W ahead of R (W was ahead before): W starts at 4, R
    is preempted with 4 left; W is done at 8, R at 12."""
    df = gang_frame([be(1, 0, 4, 1), be(2, 0, 8, 1), be(3, 1, 4, 2)])
    exact = run(df, TWO, "shortest")
    assert (at(exact, "finish", 2), at(exact, "finish", 3), at(exact, "preemptions", 2)) == \
        (8, 12, 0)
    tir = run(df, TWO, "shortest", mode="tiresias")
    assert (at(tir, "finish", 3), at(tir, "finish", 2), at(tir, "preemptions", 2)) == (8, 12, 1)


def test_srtf_counts_the_reload_a_preempted_job_needs():
    """2 GPUs. A (2 GPUs, 6 ticks, restart overhead 3 ticks) runs from 0; B (2 GPUs, 2
    ticks) arrives at 1 and preempts it (5 left). C (2 GPUs, 7 ticks) arrives at 2. At 3 B
    is done; A needs 3 + 5 = 8 ticks once restarted, C needs 7: C goes first, 3 to 10; A
    restarts at 10, reloads until 13, done at 18. (Counting work alone, A's 5 would win.)"""
    df = gang_frame([be(1, 0, 6, 2), be(2, 1, 2, 2), be(3, 2, 7, 2)], ro={1: 3})
    ds = run(df, TWO, "shortest")
    assert (at(ds, "first_start", 3), at(ds, "finish", 3), at(ds, "finish", 1)) == (3, 10, 18)


def test_a_running_te_job_is_never_preempted():
    """2 GPUs. TE job A (2 GPUs, 10 ticks) runs from 0; BE job B (2 GPUs, 1 tick) arrives at
    1 with less left, but A keeps running: B starts at 10."""
    df = gang_frame([(1, "TE", 0.0, 10 * T, 2, 0, 0, np.nan), be(2, 1, 1, 2)])
    for policy in ("shortest", "shortest-gpu", "sjf"):
        ds = run(df, TWO, policy)
        assert (at(ds, "preemptions", 1), at(ds, "first_start", 2)) == (0, 10)


def test_preempted_with_a_grace_period():
    """2 GPUs, SRTF. A (2 GPUs, 10 ticks, grace 2 ticks) runs from 0; B (2 GPUs, 1 tick)
    arrives at 3 and preempts it; A holds its GPUs until 5, so B starts at 5, done at 6; A
    starts again at 6 with 7 left, done at 13, 2 ticks stopped."""
    ds = run(gang_frame([be(1, 0, 10, 2, grace=2), be(2, 3, 1, 2)]), TWO, "shortest")
    assert (at(ds, "first_start", 2), at(ds, "finish", 1)) == (5, 13)
    assert ds["stopped"].sel(job=1).item() == 2 * T


def test_srsf_weighs_remaining_time_by_gpus():
    """4 GPUs. A (4 GPUs, 3 ticks) runs from 0; B (1 GPU, 6 ticks) arrives at 1. SRSF: B needs
    6 GPU-ticks, A 4 x 2 = 8: B goes first and A (4 GPUs, not beside B) is preempted; B is
    done at 7, A then runs its last 2 ticks, done at 9. SRTF: A's 2 ticks beat B's 6: A is
    done at 3 and B runs 3 to 9."""
    df = gang_frame([be(1, 0, 3, 4), be(2, 1, 6, 1)])
    srsf = run(df, FOUR, "shortest-gpu")
    assert (at(srsf, "first_start", 2), at(srsf, "finish", 2), at(srsf, "finish", 1)) == \
        (1, 7, 9)
    srtf = run(df, FOUR, "shortest")
    assert (at(srtf, "finish", 1), at(srtf, "first_start", 2)) == (3, 3)


def test_sjf_orders_by_gpus_and_skips_ahead():
    """4 GPUs, SJF. A (4 GPUs, 5 ticks) runs from 0. At 1 B (3 GPUs, 2 ticks) and C (2 GPUs,
    2 ticks), then D (1 GPU, 2 ticks) at 1: order D (1), C (2), B (3), A (4): D and C start
    (3 GPUs), B does not fit the 1 left and is skipped, A is preempted. At 3 C and D are
    done: B starts (3 GPUs), A waits (4). B is done at 5, A resumes with 4 left, done at 9."""
    df = gang_frame([be(1, 0, 5, 4), be(2, 1, 2, 3), be(3, 1, 2, 2), be(4, 1, 2, 1)])
    ds = run(df, FOUR, "sjf")
    assert [at(ds, "first_start", j) for j in (1, 2, 3, 4)] == [0, 3, 1, 1]
    assert (at(ds, "finish", 1), at(ds, "preemptions", 1)) == (9, 1)


def test_lpjf_is_fifo_and_tiresias_passes_over_the_next_job():
    """4 GPUs. A (4 GPUs, 2 ticks) at 0; B, C, D (1 GPU, 5 ticks) at 1 wait behind it. At 2
    A is done. Exact (longest pending first = FIFO): B, C, D start at 2, done at 7.
    Tiresias's loop removes B from the list it walks, so C is passed over; D starts. C
    waits for the next event, B and D finishing at 7: it starts then, done at 12."""
    df = gang_frame([be(1, 0, 2, 4), be(2, 1, 5, 1), be(3, 1, 5, 1), be(4, 1, 5, 1)])
    exact = run(df, FOUR, "lpjf")
    assert [at(exact, "first_start", j) for j in (2, 3, 4)] == [2, 2, 2]
    tir = run(df, FOUR, "lpjf", mode="tiresias")
    assert [at(tir, "first_start", j) for j in (2, 3, 4)] == [2, 7, 2]
    assert at(tir, "finish", 3) == 12


def test_lpjf_exact_equals_fifo_on_a_loaded_trace():
    from conftest import random_loaded_trace
    df, cap = random_loaded_trace(5, 60, 2, gangs=True)
    a = fitgpp.simulate(df, cluster_of(cap), "lpjf")
    b = fitgpp.simulate(df, cluster_of(cap), "fifo")
    for v in ("first_start", "finish", "node"):
        assert (a[v] == b[v]).all()


@pytest.mark.parametrize("cls", [Shortest, ShortestGpu, Lpjf])
def test_bad_modes(cls):
    with pytest.raises(PolicyError, match=f"{cls.name}: mode must be 'exact' or 'tiresias'"):
        cls(mode="late")


def test_dlas_demotes_on_attained_time_not_gpu_time():
    """2 GPUs, threshold 120 (GPU-)seconds. A (2 GPUs, 5 ticks) runs from 0; B (2 GPUs, 1
    tick) arrives at 1. LAS: A has 2 x 60 = 120 GPU-s at 1, moves to queue 1, B starts at 1
    and A is preempted; B is done at 2, A at 6. DLAS: A has run 60 s at 1, still queue 0
    ahead of B; at 2 it has 120 s and moves down: B starts at 2, done at 3; A resumes with
    3 ticks left, done at 6."""
    df = gang_frame([be(1, 0, 5, 2), be(2, 1, 1, 2)])
    dlas = run(df, TWO, "dlas", thresholds=(120.0,))
    assert (at(dlas, "first_start", 2), at(dlas, "finish", 1), at(dlas, "preemptions", 1)) == \
        (2, 6, 1)
    las = fitgpp.simulate(df, cluster_of(TWO), "las", tick=T, thresholds=(120.0,))
    assert at(las, "first_start", 2) == 1


def test_dlas_queue_order_preempted_job_goes_ahead_of_waiting_ones():
    """2 GPUs, DLAS threshold 60 s: every job moves to queue 1 after one tick of running.
    A (2 GPUs, 4 ticks) runs from 0. At 1 A moves down (to queue 1's tail) and B (2 GPUs, 3
    ticks) arrives in queue 0: B starts, A is preempted and stays at queue 1's tail. At 2 B
    moves down behind A, C (2 GPUs, 3 ticks) arrives and starts, B is preempted: queue 1 is
    A, B. At 3 C moves down behind them: A (waiting longest in queue 1) starts, C is
    preempted. So A runs 3..6, B 6..8, C 8..10."""
    df = gang_frame([be(1, 0, 4, 2), be(2, 1, 3, 2), be(3, 2, 3, 2)])
    ds = run(df, TWO, "dlas", thresholds=(60.0,))
    assert [at(ds, "finish", j) for j in (1, 2, 3)] == [6, 8, 10]


def test_dlas_bad_thresholds():
    from fitgpp.sim.policies import Dlas
    with pytest.raises(PolicyError, match="dlas: thresholds must be increasing"):
        Dlas(thresholds=(5.0, 5.0))
    assert Dlas(thresholds=[1, 2.5]).thresholds == (1.0, 2.5)
