"""benchmarks/replay.py, which bench_las uses to split LAS's CPU into the engine's work and the
deciding: replaying a run's recorded decisions gives that run's result, job for job, so the
replay's CPU is the cost of exactly those decisions; a replay missing one decision does not."""

import sys
from pathlib import Path

import pytest

import fitgpp
from conftest import cluster_of, random_loaded_trace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import replay  # noqa: E402

PER_JOB = ("finish", "first_start", "preemptions", "node", "stopped", "reload")


def _replayed(df, cluster, decisions):
    replay.DECISIONS.clear()
    replay.DECISIONS.update(decisions)
    try:
        return fitgpp.simulate(df, cluster, replay.Replay(), tick=60)
    finally:
        replay.DECISIONS.clear()


@pytest.mark.parametrize("gangs", [False, True])
def test_replay_gives_the_recorded_run(gangs):
    df, cap = random_loaded_trace(7, n_jobs=250, n_nodes=4, gangs=gangs)
    cluster = cluster_of(cap)
    las = fitgpp.simulate(df, cluster, "las", tick=60, thresholds=(120.0, 900.0))
    decisions = replay.record(df, cluster, fitgpp.Las(thresholds=(120.0, 900.0)), 60)
    assert sum(n is None for d in decisions.values() for _, n in d) == int(las.preemptions.sum()) > 0
    again = _replayed(df, cluster, decisions)
    for k in PER_JOB:
        assert (again[k].values == las[k].values).all(), k


def test_a_replay_missing_a_tick_is_refused():
    """The check above can fail: without the decisions of the first tick that preempted, the
    replay does not carry out LAS's run; the engine refuses a later start on the room the
    missing preemption would have freed."""
    df, cap = random_loaded_trace(7, n_jobs=250, n_nodes=4)
    cluster = cluster_of(cap)
    decisions = replay.record(df, cluster, "las", 60)
    del decisions[min(t for t, d in decisions.items() if any(n is None for _, n in d))]
    with pytest.raises(fitgpp.PolicyError, match=r"replay: cannot (start|preempt) job \d+"):
        _replayed(df, cluster, decisions)
