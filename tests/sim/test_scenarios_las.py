"""Hand-worked cases for SPEC "Class-neutral policies: LAS", one rule each.

Every case is checked against numbers worked out by hand (in the docstring) and against the
independent reference. Ticks of 60 s; ``T(k)`` is k ticks in seconds; thresholds in
GPU-seconds, so a 2-GPU job earns 120 GPU-s per tick of progress.
"""

import numpy as np
import pytest

import fitgpp
from conftest import assert_agrees, cluster_of, gang_frame
from fitgpp.sim.policies import Las, PolicyError
from reference import reference_simulate

T = 60.0
ONE_NODE = np.array([[2, 8, 8]])


def frame(rows, tasks=None, ro=None):
    return gang_frame(rows, tasks, ro, T)


def las(df, cap, thresholds, **kw):
    """Simulate, check against the reference, return the Dataset."""
    ds = fitgpp.simulate(df, cluster_of(cap), "las", tick=T, thresholds=thresholds,
                         check=True, segments=True, **kw)
    assert_agrees(ds, reference_simulate(df, cap, "las", tick=T, thresholds=thresholds), T)
    return ds


def at(ds, var, job):
    return ds[var].sel(job=job).item()


def test_demotion_at_the_crossing_tick_lets_a_newcomer_preempt():
    """One node of 2 GPUs, threshold 120 GPU-s. A (2 GPUs, 5 ticks) runs from tick 0 and
    reaches 120 GPU-s at tick 1: it moves to queue 1 then. B (2 GPUs, 1 tick) arrives at
    tick 1 in queue 0, ahead of A: B starts, A is preempted (grace 0). B is done at 2; A
    starts again at 2 with 4 ticks left, done at 6. Demoting one tick late would leave B
    waiting behind A until tick 5."""
    df = frame([(1, "BE", 0, T * 5, 2, 0, 0, 0.0), (2, "BE", T, T, 2, 0, 0, 0.0)])
    ds = las(df, ONE_NODE, (120.0,))
    assert (at(ds, "first_start", 2), at(ds, "finish", 2)) == (T, 2 * T)
    assert (at(ds, "finish", 1), at(ds, "preemptions", 1)) == (6 * T, 1)


def test_no_demotion_before_the_crossing():
    """The same jobs with a threshold of 121 GPU-s: A is still in queue 0 at tick 1 (120 <
    121), running ahead of B, which waits; A crosses at tick 2 (240 GPU-s), B starts then
    and is done at 3; A, preempted with 3 ticks left, is done at 6."""
    df = frame([(1, "BE", 0, T * 5, 2, 0, 0, 0.0), (2, "BE", T, T, 2, 0, 0, 0.0)])
    ds = las(df, ONE_NODE, (121.0,))
    assert (at(ds, "first_start", 2), at(ds, "finish", 1)) == (2 * T, 6 * T)


def test_skip_ahead():
    """One node of 4 GPUs, one queue. A (3 GPUs), B (2 GPUs), C (1 GPU), all at tick 0:
    A starts (1 left), B does not fit and is skipped, C fits and starts at 0; B starts
    when A is done at 10."""
    df = frame([(1, "BE", 0, T * 10, 3, 0, 0, 0.0), (2, "BE", 0, T, 2, 0, 0, 0.0),
                (3, "BE", 0, T, 1, 0, 0, 0.0)])
    ds = las(df, np.array([[4, 8, 8]]), (1e9,))
    assert [at(ds, "first_start", j) for j in (1, 2, 3)] == [0, 10 * T, 0]


def test_preempt_with_grace_then_resume():
    """2 GPUs, threshold 120. A (2 GPUs, 10 ticks, grace 2 ticks) is in queue 1 from tick
    1. B (2 GPUs, 1 tick) arrives at 3: A is preempted and stops until 5, holding its GPUs,
    so B cannot be placed at 3 or 4 and starts at 5, done at 6. A starts again at 6 with
    10 - 3 = 7 ticks left: done at 13, 2 ticks stopped."""
    df = frame([(1, "BE", 0, T * 10, 2, 0, 0, 2 * T), (2, "BE", 3 * T, T, 2, 0, 0, 0.0)])
    ds = las(df, ONE_NODE, (120.0,))
    assert (at(ds, "first_start", 2), at(ds, "finish", 2)) == (5 * T, 6 * T)
    assert (at(ds, "finish", 1), at(ds, "stopped", 1), at(ds, "preemptions", 1)) == \
        (13 * T, 2 * T, 1)


def test_a_gang_is_preempted_whole_and_jobs_start_on_the_lowest_nodes():
    """Two nodes of 2 GPUs, threshold 240. Gang A (2 tasks x 2 GPUs, 5 ticks) earns 240
    GPU-s per tick and is in queue 1 from tick 1. B (2 GPUs, 1 tick) arrives at 1: it fits
    the plan on node 0, so A, which no longer fits node 0, is preempted on both nodes; B
    starts on node 0 (lowest id), done at 2; A starts again on nodes 0 and 1 at 2 with 4
    ticks left, done at 6."""
    df = frame([(1, "BE", 0, T * 5, 2, 0, 0, 0.0), (2, "BE", T, T, 2, 0, 0, 0.0)],
               tasks={1: 2})
    ds = las(df, np.array([[2, 8, 8]] * 2), (240.0,))
    assert (at(ds, "node", 2), at(ds, "first_start", 2)) == (0, T)
    assert (at(ds, "finish", 1), at(ds, "preemptions", 1)) == (6 * T, 1)


def test_reload_is_not_service():
    """As the first case, with A reloading 2 ticks after its preemption, thresholds 120 and
    360. A restarts at 2, reloads at 2 and 3, makes progress from 4: its service (1 tick
    before) reaches 360 GPU-s after 2 more ticks of progress, at tick 6, not 4; it is done
    at 2 + 2 + 4 = 8."""
    levels = []

    class Probe(Las):
        def schedule(self, eng, t):
            super().schedule(eng, t)
            levels.append((t, eng.scratch["las"]["level"][0]))

    df = frame([(1, "BE", 0, T * 5, 2, 0, 0, 0.0), (2, "BE", T, T, 2, 0, 0, 0.0)], ro={1: 2})
    cap = ONE_NODE
    ds = fitgpp.simulate(df, cluster_of(cap), Probe(thresholds=(120.0, 360.0)), tick=T,
                         check=True)
    ref = reference_simulate(df, cap, "las", tick=T, thresholds=(120.0, 360.0))
    assert_agrees(ds, ref, T)
    assert at(ds, "finish", 1) == 8 * T and at(ds, "reload", 1) == 2 * T
    assert [t for t, q in levels if q == 2][0] == 6


def test_a_running_te_job_is_never_preempted():
    """2 GPUs, threshold 120. TE job A (2 GPUs, 10 ticks) is in queue 1 from tick 1; B (BE,
    2 GPUs) arrives at 1 in queue 0 and would be ahead, but A keeps running: B starts when
    A is done at 10."""
    df = frame([(1, "TE", 0, T * 10, 2, 0, 0, float("nan")), (2, "BE", T, T, 2, 0, 0, 0.0)])
    ds = las(df, ONE_NODE, (120.0,))
    assert (at(ds, "preemptions", 1), at(ds, "first_start", 2)) == (0, 10 * T)


@pytest.mark.parametrize("bad", [(0.0,), (5.0, 5.0), (7.0, 3.0), ("x",), "12",
                                 (float("inf"),), (True,)])
def test_bad_thresholds(bad):
    with pytest.raises(PolicyError, match="thresholds"):
        Las(thresholds=bad)


def test_thresholds_from_a_list():
    assert Las(thresholds=[1, 2.5]).thresholds == (1.0, 2.5)


def test_a_start_held_by_a_kept_te_job_is_planned_again_next_tick():
    """2 nodes x 2 GPUs, threshold 60 GPU-s, tick 60 s. At tick 3 the 2-GPU job 3 is planned on
    node 0, where the running TE job 6 (demoted that tick, visited last) is kept: its start is
    held. The step's new queue order puts job 6 ahead, so the plan at tick 4 (a tick where
    nothing arrives, finishes or is released) skips job 3 and starts job 4 on node 0's free
    GPU. Jumping must visit that tick: job 4 finishes at tick 7 (found by hypothesis; the
    jumping engine once finished it at tick 8)."""
    import pandas as pd
    df = pd.DataFrame({"job_id": range(8), "cls": ["BE"] * 6 + ["TE"] * 2,
                       "submit_time": [0, 60, 0, 0, 0, 0, 60, 60.0],
                       "duration": [240.0] * 6 + [180.0, 60.0],
                       "gpu": [1, 1, 1, 2, 1, 1, 1, 1], "cpu_milli": [0] * 8, "mem_mib": [0] * 8,
                       "grace_period": [0.0] * 6 + [np.nan] * 2,
                       "tasks": [1, 1, 1, 1, 1, 2, 1, 1], "restart_overhead": [0.0] * 8})
    cap = np.array([[2, 2, 2], [2, 2, 2]])
    kw = dict(tick=60, thresholds=(60.0,))
    jumped = fitgpp.simulate(df, cluster_of(cap), "las", **kw)
    stepped = fitgpp.simulate(df, cluster_of(cap), "las", jump=False, **kw)
    assert int(jumped["finish"].sel(job=4)) == 420
    assert (jumped["finish"] == stepped["finish"]).all()
    assert_agrees(jumped, reference_simulate(df, cap, "las", **kw), 60, "las held start")
