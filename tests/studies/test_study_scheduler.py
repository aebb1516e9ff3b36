"""A study's cells run where the one rule says (issue 36, docs/cluster.md): on the scheduler
``$FITGPP_SCHEDULER`` names, at every size (a size that runs in process included), or on the
one given to the study, the report or a panel."""

from __future__ import annotations

import pytest

from fitgpp.studies import Size, Study

distributed = pytest.importorskip("distributed")
#: in process, unless a scheduler says otherwise
TINY = Size(n_jobs=60, seeds=(0,), timeline_jobs=20, real_jobs=60, workers=0)
STUDY = Study(key="where", title="where cells run", question="Where?",
              policies={"fifo": {}, "fitgpp": {"s": [2.0, 4.0]}})


def ran_on(cluster) -> set:
    return {str(t[0]) for t in cluster.scheduler.transition_log
            if str(t[0]).startswith("fitgpp-cell-") and t[2] == "processing"}


def threads():
    from distributed import LocalCluster
    return LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                        dashboard_address="127.0.0.1:0")


def test_a_study_runs_on_the_scheduler_of_the_environment_at_every_size(tmp_path,
                                                                        monkeypatch):
    with threads() as cluster:
        monkeypatch.setenv("FITGPP_SCHEDULER", cluster.scheduler_address)
        o = STUDY.run(TINY, cache=tmp_path / "c")
        assert o.stats["computed"] == 3 and len(ran_on(cluster)) == 3


def test_a_panel_runs_on_the_scheduler_it_is_given(tmp_path, monkeypatch):
    from fitgpp.workbook.panels import Panel
    monkeypatch.delenv("FITGPP_SCHEDULER", raising=False)
    with threads() as cluster:
        p = Panel(STUDY, TINY, cache=tmp_path / "c", charts=False,
                  scheduler=cluster.scheduler_address)
        assert p.result is not None and len(ran_on(cluster)) == 3


def test_run_all_closes_the_local_cluster_it_started(tmp_path):
    """reproduce's session cluster is closed, in order, when run_all ends (it was left to the
    interpreter's exit, where a closing cluster's heartbeats could print tracebacks)."""
    from fitgpp.studies import reproduce
    from fitgpp.studies._lazy import shared
    lazy = shared(2)
    lazy.close()   # (not started by an earlier test of this session)
    size = Size(n_jobs=60, seeds=(0,), timeline_jobs=20, real_jobs=60, workers=2)
    results = reproduce.run_all(tmp_path / "out", size=size, which=["rq3"], formats=(".svg",),
                                log=lambda *_: None, cache=tmp_path / "c")
    assert results["rq3"].stats["computed"] > 0   # its cells ran on that cluster
    assert lazy.cluster is None


def test_seeds_added_in_rounds_run_on_the_scheduler_given_to_run_all(tmp_path, monkeypatch):
    """With a seed budget (``Size.max_seeds``, adaptive replication), every round's cells run
    on the scheduler given to ``run_all`` (as ``fitgpp reproduce --scheduler`` gives it), at a
    size that would otherwise run in this process: none in this process, none twice."""
    from fitgpp.studies import reproduce
    monkeypatch.delenv("FITGPP_SCHEDULER", raising=False)
    size = Size(n_jobs=150, seeds=(0, 1, 2), timeline_jobs=20, real_jobs=150, workers=0,
                load=0.9, max_seeds=6)
    with threads() as cluster:
        results = reproduce.run_all(tmp_path / "out", size=size, which=["rq3"],
                                    formats=(".svg",), log=lambda *_: None,
                                    cache=tmp_path / "c", scheduler=cluster.scheduler_address)
        on_cluster = ran_on(cluster)
    r = results["rq3"]
    assert r.rounds is not None and r.rounds.rounds, "no round added seeds: nothing checked"
    assert max(r.rounds.final.values()) == 6           # some configuration got the 6 seeds
    # every cell of every round, and only those, ran on the scheduler (a cold cache)
    assert r.stats["computed"] == r.stats["unique"] == len(on_cluster)
    assert len(on_cluster) > len(r.rounds.final) * 3   # more than the first round's cells
