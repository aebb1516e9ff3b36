"""FIFO's backfilling readings (SPEC "FIFO (no preemption)", field ``backfill``): the package
agrees job by job with the independent slow reference (tests/reference.py), and the
invariants hold: ``"none"`` starts jobs in ``(submit, job_id)`` order; under ``"easy"`` no
later job delays the head past its shadow tick, checked from the package's own run; every
job is done once; jumping over quiet ticks gives what stepping every tick gives."""

import json

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import fitgpp
from conftest import (assert_agrees, busy_cases, cluster_of, gang_cases, random_loaded_trace,
                      scaled, small_cases)
from fitgpp.sim.policies import PolicyError, registry
from reference import Reference, reference_simulate

EXAMPLES = scaled(40)
N_TRACES = scaled(6)
READINGS = ("none", "easy", "greedy")
cases = st.one_of(small_cases(), busy_cases(), gang_cases())


def run_both(df, cap, backfill, tick=60, **kw):
    ds = fitgpp.simulate(df, cluster_of(cap), "fifo", backfill=backfill, tick=tick, **kw)
    return ds, reference_simulate(df, cap, "fifo", tick=tick, backfill=backfill)


@settings(max_examples=EXAMPLES)
@given(case=cases, backfill=st.sampled_from(READINGS))
def test_backfill_agrees_with_the_reference(case, backfill):
    """Random traces: unlike node types, CPU- and memory-bound jobs, gangs, restart
    overheads (which FIFO never pays: it never preempts)."""
    df, cap, tick = case
    ds, ref = run_both(df, cap, backfill, tick=tick, check=True)
    assert_agrees(ds, ref, tick, f"fifo backfill={backfill}")
    assert int(ds.preemptions.sum()) == 0 and float(ds.reload.sum()) == 0


@pytest.mark.parametrize("backfill", ["easy", "greedy"])
def test_loaded_traces_agree_and_backfill_happens(backfill):
    """Busy 8-GPU clusters of 40-80 jobs, half of them with gangs and restart overheads:
    the readings agree with the reference, and backfilling really happens (some job starts
    before one ahead of it in the queue) in most traces: the agreement is not vacuous."""
    out_of_order = 0
    for k in range(N_TRACES):
        df, cap = random_loaded_trace(2000 + k, n_jobs=40 + (k * 37) % 41, n_nodes=2 + k % 3,
                                      gangs=k % 2 == 1)
        ds, ref = run_both(df, cap, backfill)
        assert_agrees(ds, ref, 60, f"{backfill} trace {k}")
        first = ds.first_start.values
        out_of_order += bool((np.diff(first) < 0).any())
    assert out_of_order >= 0.6 * N_TRACES, out_of_order


@settings(max_examples=EXAMPLES)
@given(case=cases, backfill=st.sampled_from(READINGS))
def test_jump_equals_step(case, backfill):
    """No reading needs a wake-up: its decisions change only when a job arrives or
    finishes (docs/model.md), so jumping over quiet ticks changes nothing."""
    df, cap, tick = case
    jumped = fitgpp.simulate(df, cluster_of(cap), "fifo", backfill=backfill, tick=tick)
    stepped = fitgpp.simulate(df, cluster_of(cap), "fifo", backfill=backfill, tick=tick,
                              jump=False)
    xr.testing.assert_identical(jumped, stepped)


@settings(max_examples=EXAMPLES)
@given(case=cases, backfill=st.sampled_from(READINGS))
def test_every_job_done_once_and_none_keeps_the_order(case, backfill):
    df, cap, tick = case
    ds = fitgpp.simulate(df, cluster_of(cap), "fifo", backfill=backfill, tick=tick, check=True)
    assert sorted(ds.job.values.tolist()) == sorted(df.job_id.tolist())
    assert (ds.finish.values - ds.first_start.values == ds.work.values).all()  # one run each
    if backfill == "none":   # starts in (submit, job_id) order: the Dataset's job order
        assert (np.diff(ds.first_start.values) >= 0).all()


def shadow_ticks(ds, cluster) -> dict[int, tuple[int, int]]:
    """From a FIFO run's own Dataset (``segments=True``): for every job that waited at the
    head of the queue (did not start the tick every job ahead of it had started), ``{job_id: (tick it became the head, its shadow tick then)}``. It
    became the head when every job ahead of it had started; its shadow tick is the first
    tick at which it fits on ``tasks`` nodes with the jobs running then (those that started
    earlier, or this tick ahead of it) ending when they did. Ticks of ``ds.attrs["tick"]``."""
    tick = ds.attrs["tick"]
    ids = ds.job.values.tolist()
    first = (ds.first_start.values / tick).round().astype(int)
    fin = (ds.finish.values / tick).round().astype(int)
    sub = (ds.submit.values / tick).round().astype(int)
    dem = np.stack([ds.gpu.values, ds.cpu_milli.values, ds.mem_mib.values], axis=1)
    nodes = {}
    for j, n in zip(ds.segment_job.values.tolist(), ds.segment_node.values.tolist()):
        nodes.setdefault(j, set()).add(n)
    cap = cluster.capacity
    out, ahead = {}, -1
    for h, jid in enumerate(ids):
        became = max(sub[h], ahead)
        ahead = max(ahead, first[h])
        if first[h] <= became:   # started as it became the head, or backfilled before
            continue
        running = [j for j in range(len(ids)) if first[j] <= became < fin[j]
                   and (first[j] < became or j < h)]
        T = became + 1
        while True:
            free = cap.copy()
            for j in running:
                if fin[j] > T:
                    for n in nodes[ids[j]]:
                        free[n] -= dem[j]
            if int((free >= dem[h]).all(axis=1).sum()) >= int(ds.tasks.values[h]):
                break
            T += 1
        out[jid] = (became, T)
    return out


@settings(max_examples=EXAMPLES)
@given(case=cases)
def test_easy_never_delays_the_head_past_its_shadow_tick(case):
    """SPEC's invariant, read off the package's run: every job that had to wait at the head
    starts at the shadow tick it had when it became the head (not later; not earlier
    either, since the ends are exact and backfilling only takes room away)."""
    df, cap, tick = case
    cluster = cluster_of(cap)
    ds = fitgpp.simulate(df, cluster, "fifo", backfill="easy", tick=tick, segments=True)
    first = dict(zip(ds.job.values.tolist(), (ds.first_start.values / tick).round()))
    for jid, (became, shadow) in shadow_ticks(ds, cluster).items():
        assert first[jid] == shadow, (jid, became, shadow, first[jid])


def test_the_shadow_check_catches_greedy():
    """The check above can fail: greedy backfilling delays some head past its shadow tick
    on a loaded trace (the head may starve)."""
    df, cap = random_loaded_trace(2001, n_jobs=77, n_nodes=3)
    cluster = cluster_of(cap)
    ds = fitgpp.simulate(df, cluster, "fifo", backfill="greedy", segments=True)
    first = dict(zip(ds.job.values.tolist(), (ds.first_start.values / 60).round()))
    late = [j for j, (_, s) in shadow_ticks(ds, cluster).items() if first[j] > s]
    assert late


@settings(max_examples=scaled(20))
@given(case=cases)
def test_reference_easy_keeps_every_shadow(case):
    """The reference's own record: at every step where the head blocked, the head's
    shadow tick then is no earlier than its start."""
    df, cap, tick = case
    ref = Reference(df, cap, "fifo", tick=tick, backfill="easy")
    out = ref.run()
    for t, jid, shadow in ref.shadows:
        assert out[jid].first_start <= shadow, (t, jid, shadow)


# ---------------------------------------------------------------- the field at the edge
def test_backfill_is_validated_with_a_clear_error():
    with pytest.raises(PolicyError, match=r"fifo: backfill must be one of 'none', 'easy', "
                                          r"'greedy', got 'EASY'"):
        fitgpp.Fifo(backfill="EASY")
    with pytest.raises(PolicyError, match="backfill"):
        fitgpp.simulate(random_loaded_trace(1, 10, 2)[0], cluster_of([[8, 32000, 131072]] * 2),
                        "fifo", backfill=True)
    assert registry.declared("fifo") == {"backfill": (str, "none")}
    assert registry.choices("fifo", "backfill") == ("none", "easy", "greedy")
    with pytest.raises(PolicyError, match="expected one of none, easy, greedy"):
        registry.parse_value("fifo", "backfill", "eas")


def test_default_is_strict_and_recorded():
    df, cap = random_loaded_trace(5, 60, 3)
    default = fitgpp.simulate(df, cluster_of(cap), "fifo")
    strict = fitgpp.simulate(df, cluster_of(cap), fitgpp.Fifo(backfill="none"))
    xr.testing.assert_identical(default, strict)
    assert json.loads(default.attrs["policy_params"]) == {"backfill": "none"}
    trace = fitgpp.synthesize("paper-default", 400, seed=1, load=0.9,
                              cluster=fitgpp.DEFAULT_CLUSTER)
    easy = fitgpp.simulate(trace, fitgpp.DEFAULT_CLUSTER, "fifo", backfill="easy")
    assert json.loads(easy.attrs["policy_params"]) == {"backfill": "easy"}
    xr.testing.assert_identical(easy, fitgpp.rerun(easy))   # rebuilt from its attrs
