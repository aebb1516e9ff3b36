"""Multi-node jobs and restart overhead on the workload side: synthesis draws them as the
model and the knobs say (frequency and KS checks), leaves old traces untouched, and the
knobs pass through the CLI and the sweep configuration."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from scipy import stats

import fitgpp
from fitgpp.cli import main
from fitgpp.sweep import Experiment, ExperimentError, Workload
from fitgpp.sweep.cell import _trace_for, cells_of, resolve_source
from fitgpp.workload import STREAMS, SynthesisError, from_recipe, synthesize
from fitgpp.workload.synth import offered_load

from conftest import model_with_gangs

OLD = ["job_id", "cls", "submit_time", "duration", "gpu", "cpu_milli", "mem_mib",
       "grace_period"]
N = 20_000



def test_defaults_write_no_new_column_and_new_streams_come_last():
    t = synthesize("paper-default", n_jobs=300, seed=2)
    assert list(t.jobs.columns) == OLD
    assert STREAMS[:9] == ("arrival", "class", "run_time_TE", "run_time_BE", "gpu_TE",
                           "gpu_BE", "cpu_mem_TE", "cpu_mem_BE", "grace_period")
    assert "gang_fraction" not in t.source and "restart_overhead" not in t.source
    # zero knobs are the defaults: still no new column
    z = synthesize("paper-default", n_jobs=300, seed=2, gang_fraction=0.0, restart_overhead=0)
    assert list(z.jobs.columns) == OLD
    pd.testing.assert_frame_equal(z.jobs, t.jobs)


def test_gangs_and_reloads_leave_every_other_draw_alone():
    base = synthesize("paper-default", n_jobs=2000, seed=4)
    g = synthesize("paper-default", n_jobs=2000, seed=4, gang_fraction=0.3, gang_tasks=3,
                   restart_overhead=600.0, restart_sigma=0.5)
    pd.testing.assert_frame_equal(g.jobs[OLD], base.jobs)
    assert {"tasks", "restart_overhead"} <= set(g.jobs.columns)


def test_gang_fraction_frequency_and_uniform_tasks():
    t = synthesize("paper-default", n_jobs=N, seed=11, gang_fraction=0.2, gang_tasks=4)
    j = t.jobs
    be, te = j[j["cls"] == "BE"], j[j["cls"] == "TE"]
    assert (te["tasks"] == 1).all()
    n = len(be)
    gang = be["tasks"] > 1
    # share of gangs: binomial(n, 0.2), within 4 standard deviations
    assert abs(gang.sum() - 0.2 * n) < 4 * np.sqrt(n * 0.2 * 0.8)
    counts = be.loc[gang, "tasks"].value_counts().reindex([2, 3, 4], fill_value=0)
    assert set(be["tasks"]) <= {1, 2, 3, 4}
    assert stats.chisquare(counts.to_numpy()).pvalue > 1e-3  # uniform on 2..4
    # a larger fraction keeps the earlier gangs, with the same number of tasks
    t2 = synthesize("paper-default", n_jobs=N, seed=11, gang_fraction=0.5, gang_tasks=4)
    was = j["tasks"] > 1
    np.testing.assert_array_equal(t2.jobs.loc[was, "tasks"], j.loc[was, "tasks"])
    assert (t2.jobs["tasks"] > 1).sum() > was.sum()


def test_model_tasks_distribution_is_reproduced():
    t = synthesize(model_with_gangs(), n_jobs=N, seed=5)
    j = t.jobs
    be8 = j[(j["cls"] == "BE") & (j["gpu"] == 8)]
    assert (j.loc[j["gpu"] < 8, "tasks"] == 1).all() and (j.loc[j["cls"] == "TE", "tasks"] == 1).all()
    obs = be8["tasks"].value_counts().reindex([1, 2, 4], fill_value=0).to_numpy()
    assert set(be8["tasks"]) == {1, 2, 4}
    assert stats.chisquare(obs, obs.sum() * np.array([0.6, 0.3, 0.1])).pvalue > 1e-3


def test_load_counts_every_task():
    cl = fitgpp.DEFAULT_CLUSTER
    t = synthesize("paper-default", n_jobs=3000, seed=1, load=0.8, cluster=cl,
                   gang_fraction=0.3)
    j = t.jobs
    rate = t.source["arrival_rate_per_s"]
    want = (j["gpu"] * j["tasks"] * j["duration"]).sum() / (cl.total_gpus * 3000 / rate)
    assert want == pytest.approx(0.8) and t.source["offered_load"] == pytest.approx(0.8)
    plain = synthesize("paper-default", n_jobs=3000, seed=1, load=0.8, cluster=cl)
    assert rate < plain.source["arrival_rate_per_s"]  # more GPUs per job, fewer arrivals
    assert offered_load(t, cl) == pytest.approx(0.8, rel=0.1)


def test_fixed_and_lognormal_restart_overhead():
    t = synthesize("paper-default", n_jobs=N, seed=3, restart_overhead=300.0)
    j = t.jobs
    assert (j.loc[j["cls"] == "BE", "restart_overhead"] == 300.0).all()
    assert (j.loc[j["cls"] == "TE", "restart_overhead"] == 0.0).all()
    t = synthesize("paper-default", n_jobs=N, seed=3, restart_overhead=300.0, restart_sigma=0.8)
    ro = t.jobs.loc[t.jobs["cls"] == "BE", "restart_overhead"].to_numpy()
    ks = stats.kstest(ro, stats.lognorm(s=0.8, scale=300.0).cdf)
    assert ks.pvalue > 1e-3, ks
    assert np.median(ro) == pytest.approx(300.0, rel=0.05)
    # against a wrong spread the same test fails: it can tell
    assert stats.kstest(ro, stats.lognorm(s=0.4, scale=300.0).cdf).pvalue < 1e-6


def test_recipe_reruns_gangs_and_reloads():
    t = synthesize(model_with_gangs(), n_jobs=500, seed=9, gang_fraction=0.1, restart_overhead=120,
                   restart_sigma=0.3, gang_tasks=5, cluster=fitgpp.DEFAULT_CLUSTER, load=0.9)
    again = from_recipe(t.source, model=model_with_gangs())
    pd.testing.assert_frame_equal(again.jobs, t.jobs)
    assert t.source["gang_tasks"] == 5 and t.source["restart_sigma"] == 0.3


@pytest.mark.parametrize("kw, match", [
    ({"gang_fraction": 1.5}, "gang_fraction must be in"),
    ({"gang_fraction": -0.1}, "gang_fraction must be in"),
    ({"gang_tasks": 3}, "gang_tasks needs gang_fraction"),
    ({"gang_fraction": 0.1, "gang_tasks": 1}, "gang_tasks must be an integer >= 2"),
    ({"gang_fraction": 0.1, "gang_tasks": 2.5}, "gang_tasks must be an integer >= 2"),
    ({"restart_overhead": -1}, "restart_overhead must be a number >= 0"),
    ({"restart_overhead": float("inf")}, "restart_overhead must be a number >= 0"),
    ({"restart_sigma": 0.5}, "restart_sigma needs restart_overhead"),
    ({"restart_overhead": 60, "restart_sigma": "wide"}, "restart_sigma must be"),
])
def test_bad_knobs_are_named(kw, match):
    with pytest.raises(SynthesisError, match=match):
        synthesize("paper-default", n_jobs=10, **kw)


def test_gangs_larger_than_the_cluster_are_refused():
    small = fitgpp.Cluster.homogeneous(3)
    with pytest.raises(SynthesisError, match="gang of 4 tasks .* only 3 node"):
        synthesize("paper-default", n_jobs=10, cluster=small, gang_fraction=0.1)
    with pytest.raises(SynthesisError, match="class BE: a gang of 4 tasks of \\(8 GPU"):
        synthesize(model_with_gangs(), n_jobs=10, cluster=small)
    synthesize("paper-default", n_jobs=10, cluster=small, gang_fraction=0.1, gang_tasks=3)


def test_synth_cli_flags_match_python(tmp_path, capsys):
    out = tmp_path / "t.csv"
    assert main(["synth", "paper-default", "--jobs", "400", "--seed", "6", "--gang-fraction",
                 "0.25", "--gang-tasks", "3", "--restart-overhead", "900", "--restart-sigma",
                 "0.5", "--nodes", "8", "--load", "0.7", "--out", str(out)]) == 0
    assert "multi-node" in capsys.readouterr().out
    got = pd.read_csv(out)
    want = synthesize("paper-default", n_jobs=400, seed=6, gang_fraction=0.25, gang_tasks=3,
                      restart_overhead=900.0, restart_sigma=0.5, load=0.7,
                      cluster=fitgpp.Cluster.homogeneous(8)).jobs
    pd.testing.assert_frame_equal(got[list(want.columns)], want, check_dtype=False)
    assert main(["synth", "paper-default", "--jobs", "5", "--restart-sigma", "1",
                 "--out", str(tmp_path / "u.csv")]) == 2
    assert "restart_sigma needs restart_overhead" in capsys.readouterr().err
    assert not (tmp_path / "u.csv").exists()


def test_sweep_config_sweeps_the_new_knobs(tmp_path):
    doc = {"workload": {"model": "paper-default", "n_jobs": 300, "gang_fraction": [0.0, 0.2],
                        "restart_overhead": [0, 600], "restart_sigma": 0.5, "gang_tasks": 3},
           "policies": {"fitgpp": {}}, "cluster": {"nodes": 4}}
    exp = Experiment.from_dict(doc)
    assert set(exp.workload.swept) == {"gang_fraction", "restart_overhead"}
    assert exp.workload.fixed["gang_tasks"] == 3
    cells = cells_of(exp)
    assert len(cells) == 4
    src = resolve_source(exp)
    c = next(c for c in cells if dict(c.knobs)["gang_fraction"] == 0.2
             and dict(c.knobs)["restart_overhead"] == 600)
    tr = _trace_for(src, c, exp.cluster)
    assert tr.jobs["tasks"].max() == 3 and tr.jobs["restart_overhead"].max() > 0
    assert Experiment.from_dict(exp.to_dict()).to_json() == exp.to_json()


@pytest.mark.parametrize("wl, message", [
    ({"gang_fraction": 2}, "key 'gang_fraction' must be <= 1"),
    ({"gang_fraction": 0.1, "gang_tasks": 1}, "key 'gang_tasks' must be >= 2"),
    ({"restart_overhead": -5}, "key 'restart_overhead' must be >= 0"),
    ({"gang_tasks": 3}, "key 'gang_tasks' needs key 'gang_fraction'"),
    ({"restart_sigma": [0.1, 0.2]}, "key 'restart_sigma' needs key 'restart_overhead'"),
])
def test_sweep_config_refuses_bad_knobs(wl, message):
    with pytest.raises(ExperimentError, match=message):
        Workload(model="paper-default", **wl)
    with pytest.raises(ExperimentError, match="applies to a workload model"):
        Workload(trace="t.csv", restart_overhead=60)


def test_shipped_philly_model_draws_its_gangs():
    from fitgpp.workload import load_model
    m = load_model("philly-chronus-mix1")
    be = m.classes["BE"]
    assert be.tasks is not None and max(be.tasks_given_gpu(8).values) == 4
    t = synthesize(m, n_jobs=N, seed=2, cluster=fitgpp.DEFAULT_CLUSTER, load=0.9)
    j = t.jobs
    be8 = j[(j["cls"] == "BE") & (j["gpu"] == 8)]
    want = be.tasks_given_gpu(8)
    obs = be8["tasks"].value_counts().reindex(want.values, fill_value=0).to_numpy()
    assert stats.chisquare(obs, obs.sum() * np.asarray(want.probs)).pvalue > 1e-3
    assert (j.loc[j["gpu"] < 6, "tasks"] == 1).all()


def test_fit_cli_splits_chronus_gangs_for_the_node_size_given(tmp_path, capsys):
    from fitgpp.workload import models_dir
    mix1 = models_dir() / "philly-chronus-derived" / "trace_job_Philly_MIX1.csv.gz"
    bad = tmp_path / "t.csv"
    fitgpp.write_trace(synthesize("paper-default", n_jobs=50, seed=0), bad)
    assert main(["fit", str(bad), "--nodes", "4", "--out", str(tmp_path / "x.json")]) == 2
    assert "apply to --format philly-chronus only" in capsys.readouterr().err
    out = tmp_path / "m.json"
    assert main(["fit", str(mix1), "--format", "philly-chronus", "--nodes", "16",
                 "--node-gpu", "4", "--out", str(out)]) == 0
    assert "16 GPUs -> 4 tasks x 4 GPUs" in capsys.readouterr().out
    from fitgpp.workload import WorkloadModel
    m = WorkloadModel.load(out)
    assert max(m.classes["BE"].gpu.values) == 4
    assert max(m.classes["BE"].tasks_given_gpu(4).values) == 8  # 32 GPUs on 4-GPU nodes
