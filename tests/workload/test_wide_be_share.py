"""``be_8gpu_share``: the share of BE jobs asking for 8 GPUs, a declared knob of synthesis, of
sweeps and of the command line, recorded in the recipe (a rerun draws the same trace)."""

from __future__ import annotations

import numpy as np
import pytest

import fitgpp
from fitgpp.sweep import Experiment, run_sweep
from fitgpp.workload import SynthesisError, from_recipe, synthesize

N = 20000
CL = fitgpp.DEFAULT_CLUSTER


@pytest.mark.parametrize("share", [0.0, 0.05, 0.3, 1.0])
def test_the_share_of_8_gpu_be_jobs_is_drawn_the_rest_keeping_their_ratios(share):
    t = synthesize("paper-default", n_jobs=N, seed=1, be_8gpu_share=share, cluster=CL)
    be = t.jobs[t.jobs["cls"] == "BE"]
    freq = be["gpu"].value_counts(normalize=True)
    assert freq.get(8, 0.0) == pytest.approx(share, abs=3.5 / np.sqrt(len(be)))
    if 0 < share < 1:   # paper-default's other BE sizes: 1, 2, 4 GPUs at 0.40 : 0.25 : 0.20
        rest = freq.drop(8) / freq.drop(8).sum()
        assert rest.to_dict() == pytest.approx({1: 0.4 / 0.85, 2: 0.25 / 0.85, 4: 0.2 / 0.85},
                                               abs=0.02)
    te = t.jobs[t.jobs["cls"] == "TE"]
    base = synthesize("paper-default", n_jobs=N, seed=1, cluster=CL)
    # TE jobs, run times and arrivals are those of the default draw
    assert te.equals(base.jobs[base.jobs["cls"] == "TE"])
    assert np.array_equal(t.jobs["duration"], base.jobs["duration"])
    assert t.source["be_8gpu_share"] == share and "be_8gpu_share" not in base.source


def test_the_recipe_draws_the_same_trace_again():
    t = synthesize("paper-wide-te", n_jobs=500, seed=2, load=0.85, te_fraction=0.7,
                   be_8gpu_share=0.3, cluster=CL, restart_overhead=600.0)
    again = from_recipe(t.source)
    assert again.jobs.equals(t.jobs)


@pytest.mark.parametrize("kw, match", [
    ({"be_8gpu_share": 1.5}, r"be_8gpu_share must be in \[0, 1.0\], got 1.5"),
    ({"be_8gpu_share": "wide"}, "be_8gpu_share must be"),
])
def test_bad_values_are_named(kw, match):
    with pytest.raises(SynthesisError, match=match):
        synthesize("paper-default", n_jobs=10, **kw)


def test_a_model_without_8_gpu_be_jobs_is_refused_by_name():
    small = fitgpp.Cluster.from_groups([{"count": 4, "gpu": 4, "cpu_milli": 96000,
                                         "mem_mib": 786432}])
    with pytest.raises(SynthesisError, match="no 8-GPU BE demand that fits"):
        synthesize("paper-default", n_jobs=10, cluster=small, on_unfit="restrict",
                   be_8gpu_share=0.2)
    # no 8-GPU jobs asked for: fine, the 8-GPU demand left out
    t = synthesize("paper-default", n_jobs=200, cluster=small, on_unfit="restrict",
                   be_8gpu_share=0.0)
    assert t.jobs["gpu"].max() <= 4


def test_a_sweep_sweeps_it_and_a_bad_value_names_the_key(tmp_path):
    exp = Experiment(workload={"model": "paper-default", "n_jobs": 200, "load": 0.8,
                               "be_8gpu_share": [0.05, 0.3]},
                     policies={"fifo": {}}, seeds=[0])
    ds = run_sweep(exp, cache=tmp_path, progress=False, serial=True)
    assert list(ds["be_8gpu_share"].values) == [0.05, 0.3]
    assert ds["be_8gpu_share"].attrs["description"] == "share of BE jobs that ask for 8 GPUs"
    from fitgpp.sweep import ExperimentError
    with pytest.raises(ExperimentError, match="key 'be_8gpu_share' must be <= 1"):
        Experiment(workload={"model": "paper-default", "be_8gpu_share": 2},
                   policies={"fifo": {}})


def test_the_command_line_draws_what_python_draws(tmp_path, capsys):
    from fitgpp.cli.main import main
    out = tmp_path / "t.csv"
    assert main(["synth", "paper-default", "--jobs", "300", "--seed", "4",
                 "--be-8gpu-share", "0.3", "--out", str(out)]) == 0
    import pandas as pd
    got = pd.read_csv(out)
    want = synthesize("paper-default", n_jobs=300, seed=4, be_8gpu_share=0.3).jobs
    pd.testing.assert_frame_equal(got[list(want.columns)], want, check_dtype=False)
    assert main(["synth", "paper-default", "--jobs", "5", "--be-8gpu-share", "2",
                 "--out", str(tmp_path / "u.csv")]) == 2
    assert "--be-8gpu-share" in capsys.readouterr().err
