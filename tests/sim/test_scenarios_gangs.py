"""Hand-worked cases for SPEC "Multi-node jobs" and "Restart cost", one rule each.

Every case is checked against numbers worked out by hand (in the docstring) and against the
independent reference. Ticks of 60 s; ``T(k)`` is k ticks in seconds.
"""

import numpy as np
import pytest

import fitgpp
from conftest import assert_agrees, cluster_of, gang_frame, run_both

T = 60.0


def frame(rows, tasks=None, ro=None):
    return gang_frame(rows, tasks, ro, T)


def at(ds, var, job):
    return ds[var].sel(job=job).item()


def held_nodes(ds, job, kind="run"):
    """Nodes a job held in its segments of ``kind``."""
    sel = (ds.segment_job.values == job) & (ds.segment_kind.values == kind)
    return sorted(set(ds.segment_node.values[sel].tolist()))


@pytest.mark.parametrize("policy", ["fifo", "prio", "fitgpp"])
def test_gang_starts_on_the_k_lowest_nodes_that_fit(policy):
    """Four 2-GPU nodes. BE Z (2 GPUs) takes node 0 at tick 0; gang G (2 tasks x 2 GPUs,
    same tick, later id) then fits nodes 1, 2, 3 and takes the two lowest: 1 and 2."""
    df = frame([(1, "BE", 0, T * 10, 2, 1, 1, 0.0), (2, "BE", 0, T * 10, 2, 1, 1, 0.0)],
               tasks={2: 2})
    cap = np.array([[2, 10, 10]] * 4)
    ds, ref = run_both(df, cap, policy, segments=True)
    assert_agrees(ds, ref, T, policy)
    assert held_nodes(ds, 2) == [1, 2] and at(ds, "node", 2) == 1
    assert at(ds, "first_start", 2) == 0
    # utilization counts every task: 6 of 8 GPUs busy during the first 10 ticks
    assert float(ds.gpu_util.isel(time=0)) == pytest.approx(0.75)


@pytest.mark.parametrize("policy", ["fifo", "prio"])
def test_a_gang_at_the_head_blocks_the_queue(policy):
    """Two 2-GPU nodes. BE Z (2 GPUs, 5 ticks) holds node 0. At tick 1 gang G (2 x 1 GPU)
    heads the BE queue: one node fits, it needs two, so it blocks; BE S (1 GPU, later id)
    would fit node 1 but waits behind it (no backfilling). At tick 5 Z is done: G takes
    nodes 0 and 1 (1 GPU each), and S the GPU left on node 0."""
    df = frame([(1, "BE", 0, T * 5, 2, 1, 1, 0.0), (2, "BE", T, T * 4, 1, 1, 1, 0.0),
                (3, "BE", T, T * 4, 1, 1, 1, 0.0)], tasks={2: 2})
    cap = np.array([[2, 10, 10]] * 2)
    ds, ref = run_both(df, cap, policy, segments=True)
    assert_agrees(ds, ref, T, policy)
    assert at(ds, "first_start", 2) == T * 5 and at(ds, "first_start", 3) == T * 5
    assert held_nodes(ds, 2) == [0, 1] and at(ds, "node", 3) == 0


def test_a_te_gang_waits_without_preempting_or_blocking():
    """Two 2-GPU nodes full with BE X (node 0) and Y (node 1), 20 ticks each, gp 0. At tick 1
    TE gang G (2 x 1 GPU) fits nowhere: it neither preempts nor reserves. TE A (1 GPU, later
    id) is not blocked by it: A preempts X (FitGpp, node 0 wins the tie) and starts at 1.
    At 3 A is done and X restarts (19 ticks left, ends 22). Y ends at 20; G needs two nodes
    with a free GPU and gets them only at 22."""
    df = frame([(1, "BE", 0, T * 20, 2, 1, 1, 0.0), (2, "BE", 0, T * 20, 2, 1, 1, 0.0),
                (3, "TE", T, T * 3, 1, 1, 1, None), (4, "TE", T, T * 2, 1, 1, 1, None)],
               tasks={3: 2})
    cap = np.array([[2, 10, 10]] * 2)
    ds, ref = run_both(df, cap, "fitgpp")
    assert_agrees(ds, ref, T, "te gang")
    assert at(ds, "first_start", 4) == T and at(ds, "finish", 1) == T * 22
    assert at(ds, "first_start", 3) == T * 22
    assert [at(ds, "preemptions", j) for j in (1, 2)] == [1, 0]


def test_a_gang_victim_frees_every_node_it_held():
    """Two 2-GPU nodes held by BE gang V (2 x 2 GPUs, gp 1 tick). At tick 1 TE A (2 GPUs)
    preempts V (size 2 <= 4 x 1): node 0 wins the tie, A reserves it. V stops on *both*
    nodes, so TE B (2 GPUs, later id) then finds node 1 projected free and reserves it with
    no victim. At 2 V is released on both nodes: A starts on 0 and B on 1, one preemption
    for two TE jobs. V (submit 0) heads the BE queue again and restarts at 4 when both are
    done (it needs two nodes)."""
    df = frame([(1, "BE", 0, T * 20, 2, 1, 1, T), (2, "TE", T, T * 2, 2, 1, 1, None),
                (3, "TE", T, T * 2, 2, 1, 1, None)], tasks={1: 2})
    cap = np.array([[2, 10, 10]] * 2)
    ds, ref = run_both(df, cap, "fitgpp", segments=True)
    assert_agrees(ds, ref, T, "gang victim")
    assert at(ds, "preemptions", 1) == 1
    assert held_nodes(ds, 1, "grace") == [0, 1]
    assert (at(ds, "first_start", 2), at(ds, "node", 2)) == (T * 2, 0)
    assert (at(ds, "first_start", 3), at(ds, "node", 3)) == (T * 2, 1)
    # V ran 1 tick, stopped 1, waited 2, ran its 19 left: done at 4 + 19
    assert at(ds, "finish", 1) == T * 23


@pytest.mark.parametrize("s, preempted", [(2.0, 0), (3.0, 1)])
def test_fitgpp_size_filter_sees_the_whole_gang(s, preempted):
    """Three 8-GPU nodes. BE gang V (3 x 1 GPU, gp 0) has size 3 x 1/8 = 0.375 although each
    task is 0.125; BE F0-F2 (7 GPUs, gp 1 tick, size 0.875) fill the nodes. TE A (1 GPU,
    size 0.125) arrives at 1. With s = 2 the limit is 0.25: nobody is eligible (V would be,
    were its size per task), A waits until 20. With s = 3 the limit is 0.375: V comes first
    in victim order (gp 0), one task of it covers A, and A starts at 1 on node 0."""
    df = frame([(1, "BE", 0, T * 20, 1, 1, 1, 0.0), (2, "BE", 0, T * 20, 7, 1, 1, T),
                (3, "BE", 0, T * 20, 7, 1, 1, T), (4, "BE", 0, T * 20, 7, 1, 1, T),
                (5, "TE", T, T, 1, 1, 1, None)], tasks={1: 3})
    cap = np.array([[8, 10, 10]] * 3)
    ds, ref = run_both(df, cap, "fitgpp", s=s)
    assert_agrees(ds, ref, T, f"size filter s={s}")
    assert at(ds, "preemptions", 1) == preempted
    assert int(ds.preemptions.sum()) == preempted
    assert at(ds, "first_start", 5) == (T if preempted else T * 20)


def test_a_reload_cut_short_is_lost():
    """One 2-GPU node. BE X (2 GPUs, 10 ticks of work, gp 0, restart overhead 3 ticks) runs
    from 0 (no reload on a first start). TE A (2 GPUs, 2 ticks) preempts it at 2: 8 ticks of
    work left. A is done at 4; X restarts, reload due until 7. TE B (1 tick) preempts it at
    5, one tick into the reload: that tick is lost and work left stays 8. B is done at 6; X
    restarts with a full reload: done at 6 + 3 + 8 = 17. Reload ticks 1 + 3 = 4; ran 2 + 1
    + 11 = 14 = work + reloads."""
    df = frame([(1, "BE", 0, T * 10, 2, 1, 1, 0.0), (2, "TE", T * 2, T * 2, 2, 1, 1, None),
                (3, "TE", T * 5, T, 2, 1, 1, None)], ro={1: 3})
    cap = np.array([[2, 10, 10]])
    ds, ref = run_both(df, cap, "fitgpp")
    assert_agrees(ds, ref, T, "lost reload")
    assert at(ds, "preemptions", 1) == 2
    assert at(ds, "finish", 1) == T * 17 and at(ds, "reload", 1) == T * 4
    assert at(ds, "slowdown", 1) == pytest.approx(17 / 10)
    assert (at(ds, "first_start", 2), at(ds, "first_start", 3)) == (T * 2, T * 5)


def test_lrtp_counts_the_reload_in_remaining_time():
    """Two 1-GPU nodes, LRTP. BE Y (10 ticks, restart overhead 6) on node 0 and BE W (3
    ticks) on node 1 from 0. TE A (1 tick) at 1 preempts Y (9 left > W's 2); Y restarts at
    2 (A done), due at 2 + 6 + 9 = 17. W is done at 3 and BE X (12 ticks) takes node 1,
    due at 15. TE B at 4: Y has 17 - 4 = 13 ticks to go (4 of reload, 9 of work), X 11, so
    LRTP preempts Y again, though Y has less *work* left than X. Y restarts at 5 (B done)
    with a full reload: done at 5 + 6 + 9 = 20, 2 + 6 ticks reloading."""
    df = frame([(1, "BE", 0, T * 10, 1, 1, 1, 0.0), (2, "BE", 0, T * 3, 1, 1, 1, 0.0),
                (3, "TE", T, T, 1, 1, 1, None), (4, "BE", T * 3, T * 12, 1, 1, 1, 0.0),
                (5, "TE", T * 4, T, 1, 1, 1, None)], ro={1: 6})
    cap = np.array([[1, 10, 10]] * 2)
    ds, ref = run_both(df, cap, "lrtp")
    assert_agrees(ds, ref, T, "lrtp reload")
    assert (at(ds, "preemptions", 1), at(ds, "preemptions", 4)) == (2, 0)
    assert at(ds, "finish", 1) == T * 20 and at(ds, "reload", 1) == T * 8
    assert at(ds, "first_start", 5) == T * 4


def test_without_either_column_results_are_unchanged():
    """Columns present with their defaults give exactly the result of columns absent."""
    from conftest import random_loaded_trace
    df, cap = random_loaded_trace(3, 120, 3)
    cl = cluster_of(cap)
    plain = fitgpp.simulate(df, cl, "fitgpp")
    df2 = df.assign(tasks=1, restart_overhead=0.0)
    explicit = fitgpp.simulate(df2, cl, "fitgpp")
    for v in plain.data_vars:
        np.testing.assert_array_equal(plain[v].values, explicit[v].values, err_msg=v)
    assert (plain.tasks == 1).all() and (plain.reload == 0).all()
