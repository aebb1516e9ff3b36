"""Hand-worked scenarios: each expected start, finish and preemption count below
was worked out by hand from SPEC.md, tick by tick (the comment in each test), not
read off the simulator.

Unless a test says otherwise: ``tick = 1`` s, so seconds are ticks; nodes have
4 GPUs and jobs ask for GPUs only (size = gpu / 4); ``gp`` is in ticks.
Every scenario is run twice, jumping over quiet ticks with the ledger checked
every tick, and stepping every tick; both runs must be identical.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import fitgpp
from fitgpp import Cluster, simulate

COLS = list(fitgpp.COLUMNS)


def te(job_id, submit, duration, gpu, cpu=0, mem=0):
    return (job_id, "TE", float(submit), float(duration), gpu, cpu, mem, np.nan)


def be(job_id, submit, duration, gpu, gp=0, cpu=0, mem=0):
    return (job_id, "BE", float(submit), float(duration), gpu, cpu, mem, float(gp))


def nodes(n, gpu=4, cpu=0, mem=0):
    # cpu/mem 0 on the nodes would reject any job asking for them; GPU-only scenarios
    # still give nodes some CPU and memory that no job uses.
    return Cluster.homogeneous(n, gpu=gpu, cpu_milli=cpu or 1000, mem_mib=mem or 1024)


def run(rows, cluster, policy, *, tick=1.0, **params):
    df = pd.DataFrame(rows, columns=COLS)
    ds = simulate(df, cluster, policy, tick=tick, check=True, **params)
    stepped = simulate(df, cluster, policy, tick=tick, jump=False, **params)
    xr.testing.assert_identical(ds, stepped)
    return ds


def outcome(ds):
    """job_id -> (first_start, finish, preemptions), times in ticks."""
    tick = ds.attrs["tick"]
    return {int(j): (int(ds.first_start.sel(job=j)) // tick, int(ds.finish.sel(job=j)) // tick,
                     int(ds.preemptions.sel(job=j)))
            for j in ds.job.values}


def node_of(ds, j):
    return int(ds.node.sel(job=j))


# ------------------------------------------------------------------ FIFO

def test_fifo_head_of_line_blocking():
    # 1 node, 4 GPUs. t0: job 1 (3 GPU) starts, free 1; head job 2 (4 GPU) fits nowhere,
    # so the queue stops: job 3 (1 GPU, a TE job; FIFO has one queue) waits although it fits.
    # t5: 1 done, 2 starts (free 0), 3 still blocked. t7: 2 done, 3 starts, done at 8.
    ds = run([be(1, 0, 5, 3), be(2, 0, 2, 4), te(3, 0, 1, 1)], nodes(1), "fifo")
    assert outcome(ds) == {1: (0, 5, 0), 2: (5, 7, 0), 3: (7, 8, 0)}


def test_fifo_order_is_submit_tick_then_job_id():
    # 1 node, every job takes all 4 GPUs for 1 tick, so they run one after another.
    # Rows are shuffled. Job 9 submits at 0.0 s and job 4 at 0.5 s: both tick 0, so 4 goes
    # first (lower id) although it came later; then 9; then tick-1 jobs 3 and 7.
    ds = run([be(7, 1, 1, 4), te(3, 1, 1, 4), be(9, 0, 1, 4), te(4, 0.5, 1, 4)],
             nodes(1), "fifo")
    assert outcome(ds) == {4: (0, 1, 0), 9: (1, 2, 0), 3: (2, 3, 0), 7: (3, 4, 0)}
    assert ds.job.values.tolist() == [4, 9, 3, 7]


def test_fifo_lowest_id_node():
    # 3 nodes of 4 GPUs, all jobs at t0 in id order, each on the lowest node with free >= demand:
    # 1 (3) -> n0 [free 1,4,4]; 2 (2) -> n1 [1,2,4]; 3 (1) -> n0 [0,2,4]; 4 (2) -> n1 [0,0,4];
    # 5 (1) -> n2.
    ds = run([be(1, 0, 10, 3), be(2, 0, 10, 2), be(3, 0, 10, 1), be(4, 0, 10, 2),
              be(5, 0, 10, 1)], nodes(3), "fifo")
    assert [node_of(ds, j) for j in (1, 2, 3, 4, 5)] == [0, 1, 0, 1, 2]
    assert all(v[0] == 0 for v in outcome(ds).values())


# ------------------------------------------------------------------ two-queue skeleton

def test_te_jobs_do_not_block_each_other():
    # PRIO, 1 node. t0: BE 1 (2 GPU) runs to 10. t1: TE 2 (4 GPU) fits nowhere and waits,
    # TE 3 (1 GPU) behind it starts at once (free 2) and is done at 2. t10: 1 done, TE 2 starts.
    ds = run([be(1, 0, 10, 2), te(2, 1, 1, 4), te(3, 1, 1, 1)], nodes(1), "prio")
    assert outcome(ds) == {1: (0, 10, 0), 2: (10, 11, 0), 3: (1, 2, 0)}


def test_te_before_be_in_the_same_tick():
    # 1 node. t0: BE 1 (4 GPU) runs to 2. t1: BE 2 and TE 3 (4 GPU each) arrive; nothing fits.
    # PRIO at t2: the TE pass runs first, so TE 3 starts (done 3), BE 2 starts at 3 (done 5).
    # FIFO at t2: one queue in (submit, id) order, so BE 2 starts (done 4), then TE 3 (4..5).
    rows = [be(1, 0, 2, 4), be(2, 1, 2, 4), te(3, 1, 1, 4)]
    assert outcome(run(rows, nodes(1), "prio")) == {1: (0, 2, 0), 2: (3, 5, 0), 3: (2, 3, 0)}
    assert outcome(run(rows, nodes(1), "fifo")) == {1: (0, 2, 0), 2: (2, 4, 0), 3: (4, 5, 0)}


def test_be_head_of_line_blocking():
    # PRIO, 1 node. t0: BE 1 (3) starts, free 1; BE 2 (2) fits nowhere and blocks BE 3 (1).
    # t1: TE 4 (1) is not blocked by the BE queue: it starts (free 0), done at 2; BE 3 still
    # waits behind BE 2. t5: 1 done (free 4): 2 starts (free 2), then 3 (free 1).
    ds = run([be(1, 0, 5, 3), be(2, 0, 1, 2), be(3, 0, 1, 1), te(4, 1, 1, 1)], nodes(1), "prio")
    assert outcome(ds) == {1: (0, 5, 0), 2: (5, 6, 0), 3: (5, 6, 0), 4: (1, 2, 0)}


def test_prio_never_preempts():
    # 1 node. BE 1 (4 GPU) runs 0..10; TE 2 (1 GPU, t1) cannot start and PRIO has no preempt
    # step: it waits to t10. FitGpp on the same input preempts BE 1 at t1 (gp 0: released at
    # once, TE 2 starts at 1; BE 1 resumes at 2 with 9 ticks left: done 11).
    rows = [be(1, 0, 10, 4), te(2, 1, 1, 1)]
    assert outcome(run(rows, nodes(1), "prio")) == {1: (0, 10, 0), 2: (10, 11, 0)}
    assert outcome(run(rows, nodes(1), "fitgpp")) == {1: (0, 11, 1), 2: (1, 2, 0)}


# ------------------------------------------------------------------ FitGpp node key

def test_fitgpp_grace_period_beats_victim_count():
    # n0: BE 1 (4 GPU, gp 5); n1: BE 2 and 3 (2 GPU each, gp 2). t1: TE 4 (4 GPU) fits nowhere.
    # Keys: n0 (5, 1, 1.0, 0); n1 victims in (gp, size, id) order [2, 3] -> (2, 2, 1.0, 1).
    # Smaller max gp wins: n1, two victims, released at 1+2 = 3; TE 4 starts at 3, done 5.
    # t5: BE 2 and 3 resume on n1 with 10-1 = 9 ticks left: done 14.
    ds = run([be(1, 0, 10, 4, gp=5), be(2, 0, 10, 2, gp=2), be(3, 0, 10, 2, gp=2),
              te(4, 1, 2, 4)], nodes(2), "fitgpp")
    assert outcome(ds) == {1: (0, 10, 0), 2: (0, 14, 1), 3: (0, 14, 1), 4: (3, 5, 0)}
    assert node_of(ds, 4) == 1


def test_fitgpp_victim_count_beats_summed_size():
    # All gp 1. n0: BE 1, 2 (1 GPU) and 3 (2 GPU); n1: BE 4 (4 GPU). t1: TE 5 (2 GPU).
    # n0: order [1, 2, 3] by size, prefix [1, 2] frees 2 -> key (1, 2, 0.5, 0);
    # n1: [4] -> (1, 1, 1.0, 1). Fewer victims wins over smaller size: BE 4 is preempted,
    # released at 2; TE 5 starts at 2 (done 4); BE 4 (avail 2 < 4 at t2) resumes at 4: 4+9 = 13.
    ds = run([be(1, 0, 10, 1, gp=1), be(2, 0, 10, 1, gp=1), be(3, 0, 10, 2, gp=1),
              be(4, 0, 10, 4, gp=1), te(5, 1, 2, 2)], nodes(2), "fitgpp")
    assert outcome(ds) == {1: (0, 10, 0), 2: (0, 10, 0), 3: (0, 10, 0), 4: (0, 13, 1),
                           5: (2, 4, 0)}
    assert node_of(ds, 5) == 1


def test_fitgpp_summed_size_beats_node_id():
    # gp 1. n0: BE 1 (4 GPU, size 1.0); n1: BE 2 (3 GPU, size 0.75), 1 GPU free. t1: TE 3 (3 GPU).
    # n0 key (1, 1, 1.0, 0); n1 key (1, 1, 0.75, 1): the smaller victim wins. BE 2 released at 2,
    # TE 3 starts at 2 (done 4); BE 2 (avail 1 < 3) resumes at 4 on n1: 4+9 = 13.
    ds = run([be(1, 0, 10, 4, gp=1), be(2, 0, 10, 3, gp=1), te(3, 1, 2, 3)], nodes(2), "fitgpp")
    assert outcome(ds) == {1: (0, 10, 0), 2: (0, 13, 1), 3: (2, 4, 0)}
    assert node_of(ds, 3) == 1 and node_of(ds, 2) == 1


def test_fitgpp_node_id_breaks_full_ties():
    # gp 1. n0: BE 1 (4 GPU); n1: BE 2 (4 GPU). t1: TE 3 (4 GPU): keys (1, 1, 1.0, 0) and
    # (1, 1, 1.0, 1): n0 wins. BE 1 released at 2, TE 3 runs 2..4, BE 1 resumes at 4: 13.
    ds = run([be(1, 0, 10, 4, gp=1), be(2, 0, 10, 4, gp=1), te(3, 1, 2, 4)], nodes(2), "fitgpp")
    assert outcome(ds) == {1: (0, 13, 1), 2: (0, 10, 0), 3: (2, 4, 0)}
    assert node_of(ds, 3) == 0


@pytest.mark.parametrize("gpu1, gp1, gpu2, gp2, victim", [
    (2, 3, 2, 1, 2),  # shorter grace period first, though job 2 has the higher id
    (3, 1, 1, 1, 2),  # same gp: smaller size first
    (2, 1, 2, 1, 1),  # same gp and size: lower job id first
])
def test_fitgpp_victim_order_within_a_node(gpu1, gp1, gpu2, gp2, victim):
    # 1 node, BE 1 and BE 2 fill it from t0 (10 ticks each). t1: TE 3 (1 GPU if job 2 has
    # 1 GPU, else 2) fits nowhere; victims are taken in (gp, size, id) order and the first
    # one already covers the demand, so exactly one job is preempted. It is released at
    # 1 + gp, TE 3 starts then (1 tick), and the victim resumes with 9 ticks left.
    te_gpu = min(gpu1, gpu2)
    ds = run([be(1, 0, 10, gpu1, gp=gp1), be(2, 0, 10, gpu2, gp=gp2), te(3, 1, 1, te_gpu)],
             nodes(1), "fitgpp")
    gp = gp1 if victim == 1 else gp2
    other = 3 - victim
    assert outcome(ds) == {victim: (0, 1 + gp + 1 + 9, 1), other: (0, 10, 0),
                           3: (1 + gp, 1 + gp + 1, 0)}


# ------------------------------------------------------------------ FitGpp's s and P

def test_fitgpp_s_at_the_threshold_preempts():
    # 1 node of 8 GPUs. BE 1 (8 GPU, size 1.0, gp 1). t1: TE 2 (2 GPU, size 0.25).
    # s = 4: 1.0 <= 4 * 0.25, eligible: preempted at 1, released at 2, TE 2 runs 2..3;
    # BE 1 (avail 6 < 8 at t2) resumes at 3 with 9 left: done 12.
    rows = [be(1, 0, 10, 8, gp=1), te(2, 1, 1, 2)]
    ds = run(rows, nodes(1, gpu=8), "fitgpp", s=4.0)
    assert outcome(ds) == {1: (0, 12, 1), 2: (2, 3, 0)}


@pytest.mark.parametrize("s", [0.0, 3.99])
def test_fitgpp_s_filter_skips_larger_jobs(s):
    # Same input; s = 3.99 puts BE 1 (size 1.0) just above s * 0.25 = 0.9975, and s = 0
    # excludes every job: no candidate, TE 2 waits for BE 1 to finish at 10.
    rows = [be(1, 0, 10, 8, gp=1), te(2, 1, 1, 2)]
    ds = run(rows, nodes(1, gpu=8), "fitgpp", s=s)
    assert outcome(ds) == {1: (0, 10, 0), 2: (10, 11, 0)}


def test_te_job_that_found_no_candidate_retries_next_tick():
    # 1 node of 8 GPUs, s = 4. BE 1 (8 GPU, size 1.0, gp 0) runs from 0.
    # t1: TE 2 (1 GPU, size 0.125) comes first: BE 1 is above 4 * 0.125, no candidate, waits.
    # TE 3 (2 GPU, size 0.25) may preempt BE 1 (1.0 <= 1.0): released at once, TE 3 runs 1..6.
    # The pass does not go back to TE 2; it retries at t2 (avail 6 >= 1): runs 2..3.
    # BE 1 (9 left) needs all 8 GPUs: resumes at 6, done 15.
    ds = run([be(1, 0, 10, 8), te(2, 1, 1, 1), te(3, 1, 5, 2)], nodes(1, gpu=8), "fitgpp")
    assert outcome(ds) == {1: (0, 15, 1), 2: (2, 3, 0), 3: (1, 6, 0)}


def test_fitgpp_preemption_limit():
    # 1 node, BE 1 (4 GPU, gp 0). P = 1. t1: TE 2 (4) preempts 1 (count 1), released at once,
    # TE 2 runs 1..2. t2: BE 1 resumes with 9 left -> ends 11. t3: TE 3 (4): BE 1 was preempted
    # P times, not eligible, no candidate: TE 3 waits to 11, done 12.
    # With P = 2, TE 3 preempts it again at 3 (8 left), runs 3..4, BE 1 resumes at 4: done 12.
    rows = [be(1, 0, 10, 4), te(2, 1, 1, 4), te(3, 3, 1, 4)]
    p1 = run(rows, nodes(1), "fitgpp", max_preemptions=1)
    assert outcome(p1) == {1: (0, 11, 1), 2: (1, 2, 0), 3: (11, 12, 0)}
    p2 = run(rows, nodes(1), "fitgpp", max_preemptions=2)
    assert outcome(p2) == {1: (0, 12, 2), 2: (1, 2, 0), 3: (3, 4, 0)}


# ------------------------------------------------------------------ grace periods

def test_zero_grace_victim_restarts_elsewhere_in_the_same_tick():
    # t0: TE 1 (2 GPU, to 10) -> n0; BE pass: 2 (2 GPU, ends 1) -> n0; 3, 4 (2 GPU, gp 0) -> n1.
    # t1: 2 done, n0 free 2. TE 5 (4 GPU) fits nowhere; n0 has no BE to preempt (projected 2);
    # n1 victims [3, 4] -> preempted, gp 0: released at once; TE 5 starts on n1 (done 3).
    # Same tick's BE pass: 3 (head, 9 left) starts on n0 (avail 2): done 1+9 = 10; 4 waits.
    # t3: TE 5 done, 4 resumes on n1: 3+9 = 12.
    ds = run([te(1, 0, 10, 2), be(2, 0, 1, 2), be(3, 0, 10, 2), be(4, 0, 10, 2),
              te(5, 1, 2, 4)], nodes(2), "fitgpp")
    assert outcome(ds) == {1: (0, 10, 0), 2: (0, 1, 0), 3: (0, 10, 1), 4: (0, 12, 1),
                           5: (1, 3, 0)}
    assert node_of(ds, 3) == 0 and node_of(ds, 4) == 1 and node_of(ds, 5) == 1


def test_grace_period_holds_demand_and_resume_keeps_remaining_work():
    # 1 node. BE 1 (4 GPU, 10 ticks, gp 3). t2: TE 2 (4) preempts it: 10-2 = 8 ticks left,
    # it holds its 4 GPUs while stopping over t2, t3, t4; released at 2+3 = 5; TE 2 runs 5..6;
    # BE 1 resumes at 6 and needs exactly its remaining 8: done 14.
    ds = run([be(1, 0, 10, 4, gp=3), te(2, 2, 1, 4)], nodes(1), "fitgpp", sample_every=1)
    assert outcome(ds) == {1: (0, 14, 1), 2: (5, 6, 0)}
    assert float(ds.stopped.sel(job=1)) == 3
    assert float(ds.wait.sel(job=1)) == 14 - 0 - 10 - 3  # waited t5 only
    stopping = ds.gpu_stopping.sel(time=[1, 2, 3, 4, 5]).values.tolist()
    reserved = ds.gpu_reserved.sel(time=[1, 2, 3, 4, 5]).values.tolist()
    assert stopping == [0.0, 1.0, 1.0, 1.0, 0.0]
    assert reserved == [0.0, 1.0, 1.0, 1.0, 0.0]


# ------------------------------------------------------------------ reservations

def test_reservation_holds_resources_against_be_jobs():
    # 1 node. t0: BE 1 (2 GPU, gp 3) runs, 2 free. t1: TE 2 (4): avail 2 < 4; victim [1]
    # (projected 2+2 = 4), released at 4; TE 2 reserves 4: avail = free 2 - 4 < 0.
    # BE 3 (2 GPU, t1) would fit in the 2 free GPUs but not in avail: it waits.
    # t4: 1 released, TE 2 starts (done 6); BE pass: head is 1 (submit 0): avail 0, stop.
    # t6: 1 resumes (9 left, done 15), then 3 (2 free): done 7.
    ds = run([be(1, 0, 10, 2, gp=3), te(2, 1, 2, 4), be(3, 1, 1, 2)], nodes(1), "fitgpp")
    assert outcome(ds) == {1: (0, 15, 1), 2: (4, 6, 0), 3: (6, 7, 0)}


def test_candidate_without_victims_reserves_without_preempting():
    # n0: BE 1 (4 GPU, gp 5); n1: BE 2 (4 GPU, gp 8, 20 ticks). t1: TE 3 (2): keys
    # (5, 1, 1.0, 0) vs (8, 1, 1.0, 1): BE 1 preempted, released at 6; TE 3 reserves 2 on n0.
    # t2: TE 4 (2): projected(n0) = 4 - 0 running - 2 reserved = 2 >= 2: a candidate with no
    # victims, which beats preempting BE 2; TE 4 reserves on n0 and waits (free 0 - 2 earlier).
    # t6: both start on n0: TE 4 done 7, TE 3 done 16; BE 1 resumes at 16 (9 left): 25.
    ds = run([be(1, 0, 10, 4, gp=5), be(2, 0, 20, 4, gp=8), te(3, 1, 10, 2), te(4, 2, 1, 2)],
             nodes(2), "fitgpp")
    assert outcome(ds) == {1: (0, 25, 1), 2: (0, 20, 0), 3: (6, 16, 0), 4: (6, 7, 0)}
    assert node_of(ds, 4) == 0


def test_two_reservations_on_one_node_start_in_order():
    # 1 node. BE 1 (2 GPU, gp 3) runs from 0, 2 free. t1: TE 2 (3) preempts 1 (projected 4),
    # reserves 3; free 2 < 3, waits. TE 3 (1): avail 2 - 3 < 1; projected 4 - 0 - 3 = 1 >= 1,
    # so it reserves 1 without victims; free 2 would fit it, but the earlier unstarted
    # reservation (3) comes first: 2 - 3 < 1, it waits. t4: 1 released, free 4: TE 2 starts
    # (done 6), then TE 3 (free 1, done 9). t6: BE 1 resumes (9 left): done 15.
    ds = run([be(1, 0, 10, 2, gp=3), te(2, 1, 2, 3), te(3, 1, 5, 1)], nodes(1), "fitgpp")
    assert outcome(ds) == {1: (0, 15, 1), 2: (4, 6, 0), 3: (4, 9, 0)}


# ------------------------------------------------------------------ LRTP and RAND

def test_lrtp_longest_remaining_first():
    # gp 0. n0: BE 1 (2 GPU, 5 ticks), BE 2 (2 GPU, 30 ticks); n1: BE 3 (4 GPU, 20 ticks).
    # t1: TE 4 (2). LRTP: n0 victim order by remaining [2 (29), 1 (4)], prefix [2] -> key
    # (1, -29, 0); n1 [3] -> (1, -19, 1). n0 wins, BE 2 preempted (released at once), TE 4
    # runs 1..3 on n0; BE 2 resumes at 3 with 29 left: 32.
    # FitGpp instead takes the smallest, shortest-gp job: n0 order [1, 2], key (0, 1, 0.5, 0)
    # beats n1's (0, 1, 1.0, 1): BE 1 preempted, resumes at 3 with 4 left: 7.
    rows = [be(1, 0, 5, 2), be(2, 0, 30, 2), be(3, 0, 20, 4), te(4, 1, 2, 2)]
    lrtp = run(rows, nodes(2), "lrtp")
    assert outcome(lrtp) == {1: (0, 5, 0), 2: (0, 32, 1), 3: (0, 20, 0), 4: (1, 3, 0)}
    fit = run(rows, nodes(2), "fitgpp")
    assert outcome(fit) == {1: (0, 7, 1), 2: (0, 30, 0), 3: (0, 20, 0), 4: (1, 3, 0)}


def test_lrtp_node_key_prefers_longest_first_victim_across_nodes():
    # gp 0. n0: BE 1 (4 GPU, 10 ticks); n1: BE 2 (4 GPU, 20 ticks). t1: TE 3 (4): keys
    # (1, -9, 0) vs (1, -19, 1): n1. BE 2 resumes after TE 3 (1..3) with 19 left: 22.
    # Equal remaining work (both 10 ticks) falls back to the lower node id.
    ds = run([be(1, 0, 10, 4), be(2, 0, 20, 4), te(3, 1, 2, 4)], nodes(2), "lrtp")
    assert outcome(ds) == {1: (0, 10, 0), 2: (0, 22, 1), 3: (1, 3, 0)}
    assert node_of(ds, 3) == 1
    tie = run([be(1, 0, 10, 4), be(2, 0, 10, 4), te(3, 1, 2, 4)], nodes(2), "lrtp")
    assert outcome(tie) == {1: (0, 12, 1), 2: (0, 10, 0), 3: (1, 3, 0)}


RAND_ROWS = [be(1, 0, 10, 4), be(2, 0, 10, 4), be(3, 0, 10, 4), be(4, 0, 10, 4),
             te(5, 1, 2, 4)]


def test_rand_same_seed_is_identical():
    a = run(RAND_ROWS, nodes(4), "rand", seed=7)
    b = run(RAND_ROWS, nodes(4), "rand", seed=7)
    xr.testing.assert_identical(a, b)


def test_rand_seeds_choose_per_documented_draw():
    # Four nodes each run one BE job (4 GPU, gp 0); t1: TE 5 (4) must preempt one of them.
    # All four are candidates, none without victims, so RAND draws the node with
    # default_rng(seed).integers(4) (its documented protocol); the victim is that node's job.
    chosen = {}
    for seed in range(6):
        ds = run(RAND_ROWS, nodes(4), "rand", seed=seed)
        victims = [j for j in (1, 2, 3, 4) if int(ds.preemptions.sel(job=j)) == 1]
        assert len(victims) == 1
        expected_node = int(np.random.default_rng(seed).integers(4))
        assert victims[0] == expected_node + 1, f"seed {seed}"
        assert node_of(ds, 5) == expected_node
        chosen[seed] = victims[0]
    assert len(set(chosen.values())) > 1, "all seeds chose the same victim"


# ------------------------------------------------------------------ time and slowdown

def test_slowdown_is_one_when_started_on_arrival():
    # tick 60: submit 30 s -> tick 0, duration 90 s -> 2 ticks; starts at 0, done at 2: (2-0)/2.
    # submit 150 s -> tick 2, duration 60 s -> 1 tick: starts at 2, done 3: slowdown 1.
    ds = run([be(1, 30, 90, 1), te(2, 150, 60, 1)], nodes(1), "fitgpp", tick=60)
    assert ds.slowdown.values.tolist() == [1.0, 1.0]
    assert ds.finish.values.tolist() == [120.0, 180.0]


def test_quantization_at_tick_boundaries():
    # tick 60, one big node, all start on arrival, so finish = submit tick + work.
    # submit_time: 0 -> 0, 59.9 -> 0, 60 -> 1, 119.99 -> 1; duration: 60 -> 1 tick, 61 -> 2,
    # 0.5 -> 1, 120 -> 2, 120.001 -> 3.
    rows = [be(1, 0, 60, 1), be(2, 59.9, 61, 1), be(3, 60, 0.5, 1), be(4, 119.99, 120, 1),
            be(5, 0, 120.001, 1)]
    ds = run(rows, nodes(1, gpu=8), "fifo", tick=60)
    got = {int(j): (int(ds.submit.sel(job=j)) // 60, int(ds.work.sel(job=j)) // 60,
                    int(ds.finish.sel(job=j)) // 60) for j in ds.job.values}
    assert got == {1: (0, 1, 1), 2: (0, 2, 2), 3: (1, 1, 2), 4: (1, 2, 3), 5: (0, 3, 3)}


@pytest.mark.parametrize("grace, gp_ticks", [(0, 0), (1, 1), (60, 1), (61, 2), (0.001, 1)])
def test_grace_quantization(grace, gp_ticks):
    # tick 60, 1 node. BE 1 (4 GPU, 10 ticks) from 0; TE 2 (4) at tick 2 preempts it;
    # gp = ceil(grace / 60) ticks later it is released and TE 2 starts (at 2 + gp).
    rows = [be(1, 0, 600, 4, gp=grace), te(2, 120, 60, 4)]
    ds = run(rows, nodes(1), "fitgpp", tick=60)
    assert int(ds.first_start.sel(job=2)) // 60 == 2 + gp_ticks
    assert int(ds.stopped.sel(job=1)) // 60 == gp_ticks


# ------------------------------------------------------------------ other resources

def test_cpu_and_memory_bound_jobs_placed_by_cpu_and_memory():
    # FIFO, 2 nodes of (8 GPU, 4000 mCPU, 8192 MiB); GPU-free jobs in id order:
    # 1 (3000 mCPU) -> n0 [cpu left 1000]; 2 (2000 mCPU) -> n1; 3 (1000 mCPU) -> n0 [cpu 0];
    # 4 (8192 MiB, 0 CPU) -> n0 (its memory is untouched); 5 (1 MiB) -> n1.
    cl = Cluster.homogeneous(2, gpu=8, cpu_milli=4000, mem_mib=8192)
    rows = [be(1, 0, 5, 0, cpu=3000), be(2, 0, 5, 0, cpu=2000), be(3, 0, 5, 0, cpu=1000),
            be(4, 0, 5, 0, mem=8192), be(5, 0, 5, 0, mem=1)]
    ds = run(rows, cl, "fifo")
    assert [node_of(ds, j) for j in (1, 2, 3, 4, 5)] == [0, 1, 0, 0, 1]
    # a sixth CPU job that fits in no node's remaining CPU waits for job 1 (t5)
    ds = run(rows + [be(6, 0, 5, 0, cpu=2500)], cl, "fifo")
    assert outcome(ds)[6] == (5, 10, 0)


def test_cpu_bound_preemption():
    # 1 node (8 GPU, 4000 mCPU, 8192 MiB). BE 1 takes all CPU (0 GPU, size 1.0, gp 0).
    # t1: TE 2 (1 GPU + 1000 mCPU, size max(1/8, 0.25) = 0.25) fits nowhere by CPU;
    # s = 4: 1.0 <= 1.0, BE 1 preempted and released at once; TE 2 runs 1..2;
    # BE 1 resumes at 2 with 9 left: 11.
    cl = Cluster.homogeneous(1, gpu=8, cpu_milli=4000, mem_mib=8192)
    ds = run([be(1, 0, 10, 0, cpu=4000), te(2, 1, 1, 1, cpu=1000)], cl, "fitgpp")
    assert outcome(ds) == {1: (0, 11, 1), 2: (1, 2, 0)}
