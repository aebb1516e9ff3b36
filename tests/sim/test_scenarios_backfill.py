"""Hand-worked scenarios for FIFO's three readings (SPEC "FIFO (no preemption)", field
``backfill``): each expected start and finish below was worked out by hand from SPEC.md,
tick by tick (the comment in each test), not read off the simulator.

``tick = 1`` s, so seconds are ticks; nodes have 4 GPUs and jobs ask for GPUs only. Every
scenario runs jumping over quiet ticks with the ledger checked every tick, and stepping
every tick (identical), and is checked against the independent reference too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import fitgpp
from fitgpp import Cluster, simulate
from conftest import assert_agrees
from reference import reference_simulate


def be(job_id, submit, duration, gpu, tasks=1):
    return (job_id, "BE", float(submit), float(duration), gpu, 0, 0, 0.0, tasks)


def te(job_id, submit, duration, gpu):
    return (job_id, "TE", float(submit), float(duration), gpu, 0, 0, np.nan, 1)


def run(rows, cluster, backfill):
    df = pd.DataFrame(rows, columns=[*fitgpp.COLUMNS, "tasks"])
    ds = simulate(df, cluster, "fifo", backfill=backfill, tick=1.0, check=True, segments=True)
    stepped = simulate(df, cluster, "fifo", backfill=backfill, tick=1.0, jump=False,
                       segments=True)
    xr.testing.assert_identical(ds, stepped)
    ref = reference_simulate(df, cluster.capacity, "fifo", tick=1.0, backfill=backfill)
    assert_agrees(ds, ref, 1.0, backfill)
    return ds


def outcome(ds):
    """job_id -> (first_start, finish) in ticks."""
    return {int(j): (int(ds.first_start.sel(job=j)), int(ds.finish.sel(job=j)))
            for j in ds.job.values}


def nodes_of(ds, job):
    return sorted(set(ds.segment_node.values[ds.segment_job.values == job].tolist()))


ONE = Cluster.homogeneous(1, gpu=4, cpu_milli=1000, mem_mib=1024)

#: One node of 4 GPUs. Job 1 (2 GPUs, 4 ticks) starts at 0; head job 2 (3 GPUs) does not
#: fit in the 2 left; behind it job 3 (1 GPU, 10 ticks), job 4 (1 GPU, 1 tick), job 5
#: (1 GPU, 10 ticks), all at tick 0.
EXTRA = [be(1, 0, 4, 2), be(2, 0, 2, 3), be(3, 0, 10, 1), be(4, 0, 1, 1), be(5, 0, 10, 1)]


def test_none_blocks_everything_behind_the_head():
    # t0: 1 starts (free 2); head 2 (3) blocks: 3, 4, 5 wait though they fit.
    # t4: 1 done, free 4: 2 starts (free 1, ends 6); 3 starts (free 0, ends 14); 4 blocks.
    # t6: 2 done, free 2: 4 starts (ends 7), 5 starts (ends 16).
    ds = run(EXTRA, ONE, "none")
    assert outcome(ds) == {1: (0, 4), 2: (4, 6), 3: (4, 14), 4: (6, 7), 5: (6, 16)}


def test_easy_backfills_into_the_extra_and_before_the_shadow_tick():
    # t0: 1 starts (free 2); head 2 blocks. Shadow: 1 ends at 4, then 4 GPUs free >= 3:
    #     shadow tick 4 on node 0, extra 4 - 3 = 1 GPU.
    #     3 (1 GPU, ends 10 > 4) fits now and in the extra (1): starts; extra 0, free 1.
    #     4 (1 GPU, ends 1 <= 4) fits now: starts (ends before the head needs it); free 0.
    #     5 fits nowhere now.
    # t1: 4 done, free 1. Shadow again: 1 ends at 4 (2 GPUs) -> free 3 >= 3: tick 4,
    #     extra 3 - 3 = 0 (job 3 runs past it). 5 (ends 11 > 4) needs 1 of extra 0: waits.
    # t4: 1 done, free 3: head 2 starts, at its shadow tick (ends 6), free 0; 5 is the head.
    # t6: 2 done: 5 starts (ends 16).
    ds = run(EXTRA, ONE, "easy")
    assert outcome(ds) == {1: (0, 4), 2: (4, 6), 3: (0, 10), 4: (0, 1), 5: (6, 16)}


def test_easy_uses_the_extra_up():
    # Job 4 of EXTRA made long (10 ticks). t0: 1 starts (free 2); head 2 blocks, shadow tick
    # 4 with extra 1. 3 (ends 10) takes the extra: 0 left. 4 (ends 10) fits now (free 1)
    # but the extra is gone: waits (so does 5), so the head still starts at 4.
    # t4: 1 done, free 3: 2 starts (ends 6, free 0); head 4 blocks (shadow tick 6).
    # t6: 2 done, free 3: 4 and 5 start, end 16.
    rows = [*EXTRA[:3], be(4, 0, 10, 1), EXTRA[4]]
    ds = run(rows, ONE, "easy")
    assert outcome(ds) == {1: (0, 4), 2: (4, 6), 3: (0, 10), 4: (6, 16), 5: (6, 16)}


def test_greedy_starts_whatever_fits_and_delays_the_head():
    # t0: 1 starts (free 2); head 2 blocks; 3 starts (free 1); 4 starts (free 0); 5 waits.
    # t1: 4 done, free 1: 2 still blocks (3 GPUs); 5 fits: starts (ends 11), free 0.
    # t4: 1 done, free 2: 2 still blocks. t10: 3 done, free 3: 2 starts (ends 12),
    # six ticks after EASY started it.
    ds = run(EXTRA, ONE, "greedy")
    assert outcome(ds) == {1: (0, 4), 2: (10, 12), 3: (0, 10), 4: (0, 1), 5: (1, 11)}


#: One node. Job 1 (2 GPUs, 4 ticks) at 0, head job 2 (4 GPUs, 2 ticks), then TE job 3
#: (1 GPU, 3 ticks) and BE job 4 (1 GPU, 6 ticks), all at tick 0.
DIFFER = [be(1, 0, 4, 2), be(2, 0, 2, 4), te(3, 0, 3, 1), be(4, 0, 6, 1)]


def test_easy_and_greedy_differ():
    # EASY. t0: 1 starts (free 2); head 2 (4 GPUs) blocks: shadow tick 4 (1 ends), extra 0.
    #   3 ends at 3 <= 4: starts (free 1). 4 ends at 6 > 4 and the extra is 0: waits.
    # t3: 3 done; shadow still 4, extra 0: 4 (would end 9) waits.
    # t4: 1 done: 2 starts (ends 6); 4 blocks (free 0). t6: 4 starts, ends 12.
    easy = outcome(run(DIFFER, ONE, "easy"))
    assert easy == {1: (0, 4), 2: (4, 6), 3: (0, 3), 4: (6, 12)}
    # greedy. t0: 1 starts (free 2); 2 blocks; 3 starts (free 1); 4 starts (free 0, ends 6).
    # t3: 3 done (free 1); t4: 1 done (free 3): 2 still blocks. t6: 4 done: 2 starts, ends 8.
    greedy = outcome(run(DIFFER, ONE, "greedy"))
    assert greedy == {1: (0, 4), 2: (6, 8), 3: (0, 3), 4: (0, 6)}
    # strict. t0: 1 starts; 2 blocks, so do 3 and 4. t4: 2 starts (free 0). t6: 3 and 4.
    assert outcome(run(DIFFER, ONE, "none")) == {1: (0, 4), 2: (4, 6), 3: (6, 9), 4: (6, 12)}


#: One node. Job 1 (2 GPUs, 3 ticks) at 0, head job 2 (4 GPUs, 1 tick) at 0, then a chain
#: of 2-GPU jobs of 3 ticks arriving at ticks 1, 2, 3, 4 (jobs 3-6).
CHAIN = [be(1, 0, 3, 2), be(2, 0, 1, 4)] + [be(k, k - 2, 3, 2) for k in range(3, 7)]


def test_greedy_starves_the_head():
    # greedy. t0: 1 starts (ends 3, free 2); 2 blocks. t1: 3 arrives, fits: starts (ends 4),
    # free 0. t2: 4 waits. t3: 1 done (free 2): 2 blocks, 4 starts (ends 6). t4: 3 done:
    # 2 blocks, 5 starts (ends 7). t6: 4 done: 2 blocks, 6 starts (ends 9). t7: 5 done, free 2:
    # 2 blocks. t9: 6 done, free 4: 2 starts at last, ends 10: nine ticks for one tick's work.
    greedy = outcome(run(CHAIN, ONE, "greedy"))
    assert greedy == {1: (0, 3), 2: (9, 10), 3: (1, 4), 4: (3, 6), 5: (4, 7), 6: (6, 9)}
    # EASY. t0: shadow tick 3, extra 0. t1: 3 would end at 4 > 3: waits; t2: 4 (ends 5) waits.
    # t3: 2 starts (ends 4); head 3 blocks: shadow 4, extra 2; 4 and 5 fit nowhere now.
    # t4: 3 and 4 start (end 7); head 5: shadow 7. t7: 5 and 6 start (end 10).
    easy = outcome(run(CHAIN, ONE, "easy"))
    assert easy == {1: (0, 3), 2: (3, 4), 3: (4, 7), 4: (4, 7), 5: (7, 10), 6: (7, 10)}
    assert easy == outcome(run(CHAIN, ONE, "none"))   # here nothing could be backfilled


def test_easy_gang_head_and_node_types():
    # Nodes 0, 1: 4 GPUs; node 2: 2 GPUs. t0: 1 (4 GPUs, 5 ticks) -> node 0; 2 (2 GPUs, 3
    # ticks) -> node 1 (free: 0, 2, 2). Head 3, a gang of 2 tasks x 4 GPUs, fits nowhere.
    # Shadow: t3 2 ends (node 1: 4), t5 1 ends (node 0: 4): two nodes, shadow tick 5 on
    # nodes 0 and 1, extra 0 on both.
    #   4 (2 GPUs, 9 ticks) goes where it would go, node 1, a shadow node, past tick 5 with
    #     no extra: waits (the rule is a condition on its usual nodes, not a search for
    #     others; node 2 had room).
    #   5 (2 GPUs, 5 ticks) -> node 1, ends at 5 <= 5: starts (node 1 free 0).
    #   6 (2 GPUs, 9 ticks) -> node 2, not a shadow node: starts (ends 9).
    # t3: 2 done (node 1: 2). Shadow tick 5 again; 4 -> node 1 past it, no extra: waits.
    # t5: 1 and 5 done: gang 3 starts on nodes 0 and 1 (ends 7); head 4 fits nowhere
    #     (free 0, 0, 0). t7: 3 done: 4 starts on node 0, ends 16.
    cluster = Cluster.from_groups([{"count": 2, "gpu": 4, "cpu_milli": 1000, "mem_mib": 1024},
                                   {"count": 1, "gpu": 2, "cpu_milli": 1000, "mem_mib": 1024}])
    rows = [be(1, 0, 5, 4), be(2, 0, 3, 2), be(3, 0, 2, 4, tasks=2), be(4, 0, 9, 2),
            be(5, 0, 5, 2), be(6, 0, 9, 2)]
    ds = run(rows, cluster, "easy")
    assert outcome(ds) == {1: (0, 5), 2: (0, 3), 3: (5, 7), 4: (7, 16), 5: (0, 5), 6: (0, 9)}
    assert nodes_of(ds, 3) == [0, 1] and nodes_of(ds, 5) == [1] and nodes_of(ds, 6) == [2]
    assert nodes_of(ds, 4) == [0]


@pytest.mark.parametrize("backfill", ["none", "easy", "greedy"])
def test_restart_overhead_never_applies(backfill):
    """FIFO never preempts, so a trace's restart overhead changes nothing (EASY's ends
    included): the same run with and without the column."""
    df = pd.DataFrame(EXTRA, columns=[*fitgpp.COLUMNS, "tasks"])
    plain = simulate(df, ONE, "fifo", backfill=backfill, tick=1.0)
    costly = simulate(df.assign(restart_overhead=5.0), ONE, "fifo", backfill=backfill,
                      tick=1.0)
    assert outcome(plain) == outcome(costly)
    assert float(costly.reload.sum()) == 0
