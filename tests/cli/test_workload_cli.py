"""``fitgpp fit`` -> ``fitgpp synth`` -> ``fitgpp simulate`` end to end, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import fitgpp
from fitgpp.cli import main
from fitgpp.workload import WorkloadModel, models_dir, synthesize

TRACES = models_dir()  # the real traces shipped in traces/, gzip-compressed
REAL = [
    ("alibaba-v2023", TRACES / "alibaba-gpu-v2023" / "openb_pod_list_default.csv.gz", []),
    ("alibaba-v2023", TRACES / "alibaba-gpu-v2023" / "openb_pod_list_default.csv.gz",
     ["--runtimes", "philly", "--seed", "1"]),
    ("philly-chronus", TRACES / "philly-chronus-derived" / "trace_job_Philly_MIX1.csv.gz", []),
]


@pytest.mark.parametrize("fmt, path, opts", REAL, ids=["alibaba", "alibaba-philly", "mix1"])
def test_fit_synth_simulate_on_each_real_trace(tmp_path, capsys, fmt, path, opts):
    model, trace, result = tmp_path / "m.json", tmp_path / "t.csv", tmp_path / "r.nc"
    assert main(["fit", str(path), "--format", fmt, "--out", str(model), *opts]) == 0
    out = capsys.readouterr().out
    assert "dropped" in out and "AIC" in out
    m = WorkloadModel.load(model)
    assert m.provenance["source"]["format"] == fmt
    # Alibaba has an 8-GPU pod asking 120200 mCPU: more than a default node, so restrict.
    assert main(["synth", str(model), "--jobs", "150", "--seed", "2", "--load", "0.7",
                 "--nodes", "4", "--on-unfit", "restrict", "--out", str(trace)]) == 0
    recipe = json.loads(Path(str(trace) + ".source.json").read_text())
    assert recipe["n_jobs"] == 150 and recipe["load"] == 0.7
    assert recipe["model_file_sha256"] == m.file_sha256
    assert len(fitgpp.read_trace(trace).jobs) == 150
    assert main(["simulate", str(trace), "--nodes", "4", "--out", str(result)]) == 0
    ds = fitgpp.load(result)
    assert ds.sizes["job"] == 150 and int(ds["finish"].isnull().sum()) == 0


def test_fit_spec_trace_round_trip(tmp_path, capsys):
    t = synthesize("paper-default", n_jobs=400, seed=1)
    csv = tmp_path / "t.csv"
    fitgpp.write_trace(t, csv)
    assert main(["fit", str(csv), "--out", str(tmp_path / "m.json"), "--name", "mine"]) == 0
    m = WorkloadModel.load(tmp_path / "m.json")
    assert m.name == "mine" and m.provenance["source"]["sha256"]
    assert m.provenance["rows"] == 400


def test_synth_by_shipped_name_matches_python(tmp_path, capsys):
    out = tmp_path / "t.csv"
    assert main(["synth", "paper-default", "--jobs", "100", "--seed", "5", "--te-fraction",
                 "0.4", "--grace-scale", "2", "--out", str(out)]) == 0
    got = fitgpp.read_trace(out).jobs
    want = synthesize("paper-default", n_jobs=100, seed=5, te_fraction=0.4,
                      grace_scale=2.0).jobs
    pd.testing.assert_frame_equal(got, want)
    assert main(["synth", "--list"]) == 0
    assert "paper-default" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["synth", "nope", "--jobs", "5", "--out", "{tmp}/t.csv"], "no model file or shipped model"),
    (["synth", "paper-default", "--jobs", "5", "--load", "0.5", "--out", "{tmp}/t.csv"],
     "--load needs a cluster"),
    (["synth", "paper-default", "--jobs", "5", "--te-fraction", "2", "--out", "{tmp}/t.csv"],
     "te_fraction must be in [0, 1]"),
    (["synth", "paper-default", "--out", "{tmp}/t.csv"], "--jobs is required"),
    (["synth", "{tmp}/bad.json", "--jobs", "5", "--out", "{tmp}/t.csv"], "field 'version'"),
    (["synth", "paper-default", "--jobs", "5", "--out", "{tmp}/no/dir/t.csv"],
     "does not exist"),
    (["fit", "{tmp}/none.csv", "--format", "philly-chronus", "--out", "{tmp}/m.json"],
     "no such file"),
    (["fit", "{tmp}/none.csv", "--out", "{tmp}/m.json", "--seed", "1"],
     "--format spec takes no adapter options"),
    (["fit", "{tmp}/none.csv", "--format", "philly-chronus", "--sharing", "drop",
      "--out", "{tmp}/m.json"], "applies to --format alibaba-v2023 only"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, argv, message):
    (tmp_path / "bad.json").write_text(json.dumps({"format": "fitgpp-workload", "version": 9}))
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "t.csv").exists() and not (tmp_path / "m.json").exists()

