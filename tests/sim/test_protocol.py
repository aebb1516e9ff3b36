"""The policy protocol (fitgpp.sim.policies.base.Policy): what a class-neutral policy may do,
and what the engine refuses before anything changes."""

from dataclasses import dataclass

import numpy as np
import pytest

import fitgpp
from conftest import cluster_of, jobs_frame
from fitgpp.sim.engine import RUNNING
from fitgpp.sim.policies import Las, PolicyError, POLICIES
from fitgpp.sim.policies.base import Policy

T = 60.0


def two_jobs(cls_a="BE"):
    return jobs_frame([(1, cls_a, 0, T * 5, 1, 0, 0, 0.0), (2, "BE", T, T * 2, 1, 0, 0, 0.0)])


@dataclass(frozen=True)
class LastFirst:
    """Starts the newest waiting job first; preempts every running BE job at tick 2;
    declares no max_preemptions (so it has no limit)."""
    name = "lastfirst"

    def bind(self, eng):
        pass

    def schedule(self, eng, t):
        if t == 2:
            for i in range(eng.n):
                if eng.state[i] == RUNNING and not eng.te[i]:
                    eng.preempt(i, t)
        for i in sorted(eng.waiting_be, reverse=True):
            if eng.free_g[0] >= eng.dg[i]:
                eng.start(i, 0, t)


def test_every_built_in_policy_follows_the_protocol():
    for cls in POLICIES.values():
        assert isinstance(cls(), Policy), cls
        assert hasattr(cls(), "max_preemptions"), cls


def test_a_policy_may_start_any_waiting_job_and_needs_no_max_preemptions():
    df = jobs_frame([(1, "BE", 0, T, 1, 0, 0, 0.0), (2, "BE", 0, T, 1, 0, 0, 0.0),
                     (3, "BE", T, T * 3, 1, 0, 0, 0.0)])
    ds = fitgpp.simulate(df, cluster_of([(1, 1, 1)]), LastFirst(), check=True, jump=False)
    # tick 0: job 2 before job 1; tick 1: job 3 (newest) before job 1; tick 2: job 3 is
    # preempted and, newest again, restarts; job 1 waits until job 3 is done at 4
    assert [ds.first_start.sel(job=j).item() for j in (1, 2, 3)] == [4 * T, 0, T]
    assert ds.preemptions.sel(job=3).item() == 1


@dataclass(frozen=True)
class PreemptTe:
    name = "preempt-te"
    max_preemptions = None

    def bind(self, eng):
        pass

    def schedule(self, eng, t):
        for i in list(eng.waiting_te) + list(eng.waiting_be):
            if eng.free_g[0] >= eng.dg[i]:
                eng.start(i, 0, t)
        if t == 1:
            eng.preempt(0, t)  # job 1, a TE job, runs


def test_preempting_a_te_job_is_refused_before_anything_changes():
    from fitgpp.sim.engine import Engine
    from fitgpp.sim.run import to_ticks
    eng = Engine(to_ticks(two_jobs("TE"), T), np.array([[2, 0, 0]]), PreemptTe())
    with pytest.raises(PolicyError, match=r"cannot preempt job 1 at tick 1: it is a TE job"):
        eng.run()
    assert eng.state[0] == RUNNING and eng.preemptions[0] == 0 and eng.free_g[0] == 0


def test_preempting_beyond_max_preemptions_or_a_waiting_job_is_refused():
    @dataclass(frozen=True)
    class Twice(PreemptTe):
        max_preemptions = 0
    with pytest.raises(PolicyError, match="already preempted 0 times"):
        fitgpp.simulate(two_jobs("BE"), cluster_of([(2, 1, 1)]), Twice())


@dataclass(frozen=True)
class Greedy:
    """Starts every waiting job on node 0 whether it fits or not (``also``: the job to start
    again, running or not, at tick 1)."""
    name = "greedy"
    max_preemptions = None
    also: int = -1

    def bind(self, eng):
        pass

    def schedule(self, eng, t):
        for i in list(eng.waiting_te) + list(eng.waiting_be):
            eng.start(i, 0, t)
        if t == 1 and self.also >= 0:
            eng.start(self.also, 0, t)


@pytest.mark.parametrize("tasks", [1, 2])
def test_starting_on_a_node_without_room_is_refused_before_anything_changes(tasks):
    from fitgpp.sim.engine import Engine
    from fitgpp.sim.run import to_ticks
    df = jobs_frame([(1, "BE", 0, T * 5, 1, 0, 0, 0.0), (2, "BE", 0, T * 2, 1, 0, 0, 0.0)])
    df["tasks"] = [1, tasks]
    policy = Greedy()
    if tasks == 2:  # a gang's nodes are given as a list
        policy = type("GreedyGang", (Greedy,), {"schedule": lambda self, eng, t: [
            eng.start(i, 0, t) if eng.tasks[i] == 1 else eng.start(i, [0, 1], t)
            for i in list(eng.waiting_be)]})()
    eng = Engine(to_ticks(df, T), np.array([[1, 0, 0], [1, 0, 0]]), policy)
    with pytest.raises(PolicyError, match=r"greedy: cannot start job 2 at tick 0: node 0 has "
                                          r"0 GPU, 0 mCPU, 0 MiB free, and each task needs 1 GPU"):
        eng.run()
    assert eng.free_g == [0, 1] and eng.state[1] != RUNNING and eng.run_gpu == 1


def test_starting_a_job_that_is_not_waiting_is_refused():
    df = jobs_frame([(1, "BE", 0, T * 5, 1, 0, 0, 0.0)])
    with pytest.raises(PolicyError, match="cannot start job 1 at tick 1: it is running, not "
                                          "waiting"):
        fitgpp.simulate(df, cluster_of([(4, 1, 1)]), Greedy(also=0), jump=False)


def test_tick_and_attained_service():
    seen = {}

    @dataclass(frozen=True)
    class Look(Las):
        def schedule(self, eng, t):
            super().schedule(eng, t)
            seen[t] = (eng.tick, eng.progress(0, t), eng.attained(0, t))
    fitgpp.simulate(jobs_frame([(1, "BE", 0, 30 * 4, 2, 0, 0, 0.0)]), cluster_of([(2, 1, 1)]),
                    Look(), tick=30, jump=False)
    assert seen[0] == (30.0, 0, 0.0) and seen[3] == (30.0, 3, 2 * 3 * 30.0)


def test_rekey_refiles_a_running_job():
    from fitgpp.sim.engine import Engine
    from fitgpp.sim.run import to_ticks

    @dataclass(frozen=True)
    class Keyed:
        name = "keyed"
        max_preemptions = None

        def bind(self, eng):
            eng.scratch["k"] = {0: 1, 1: 2}

        def victim_key(self, eng, i):
            return eng.scratch["k"][i]

        def schedule(self, eng, t):
            for i in list(eng.waiting_be):
                eng.start(i, 0, t)
            if t == 1:
                eng.scratch["k"][0] = 9
                eng.rekey(0)
                assert [i for _, i in eng.running_be[0]] == [1, 0]
    df = jobs_frame([(1, "BE", 0, T * 5, 1, 0, 0, 0.0), (2, "BE", 0, T * 5, 1, 0, 0, 0.0)])
    eng = Engine(to_ticks(df, T), np.array([[2, 1, 1]]), Keyed(), check=True)
    eng.run(jump=False)
    assert eng.n_done == 2
