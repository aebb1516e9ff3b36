"""Experiment descriptions: TOML and Python agree, bad input is refused naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fitgpp
from fitgpp.sweep import Experiment, ExperimentError, PolicyGrid, Workload, load_experiment
from fitgpp.sweep.cell import cells_of

REPO = Path(__file__).resolve().parents[2]

GOOD = """
name = "t"
seeds = [0, 1]
tick = 30
[workload]
model = "m.json"
n_jobs = 200
load = [0.5, 0.9]
[cluster]
nodes = 4
gpu = 4
[policies.fifo]
[policies.fitgpp]
s = [8, 2.0]
max_preemptions = [1, 3]
[policies.rand]
seed = 7
"""


def write(tmp_path, text, name="exp.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_toml_and_python_describe_the_same_experiment(tmp_path):
    exp = load_experiment(write(tmp_path, GOOD))
    py = Experiment(
        workload=Workload(model=str(tmp_path / "m.json"), n_jobs=200, load=[0.5, 0.9]),
        policies={"fifo": {}, "fitgpp": {"s": [2.0, 8.0], "max_preemptions": [1, 3]},
                  "rand": {"seed": 7}},
        seeds=[0, 1], cluster=fitgpp.Cluster.homogeneous(4, gpu=4), tick=30, name="t")
    assert exp == py
    assert exp.workload.swept == {"load": (0.5, 0.9)}
    assert exp.grid_values("s") == (2.0, 8.0)
    assert exp.grid_values("max_preemptions") == (1, 3)  # rand's default P=3 joins the union
    assert Experiment.from_dict(json.loads(exp.to_json())) == exp


def test_cells_cover_the_grid_and_rand_takes_its_seed(tmp_path):
    exp = load_experiment(write(tmp_path, GOOD))
    cells = cells_of(exp)
    # fifo: 1, fitgpp: 2 s x 2 P, rand: 1 (P=3) -> 6 configurations x 2 loads x 2 seeds
    assert len(cells) == 6 * 2 * 2
    assert len(set(cells)) == len(cells)
    rand = [c for c in cells if c.policy == "rand"]
    assert {dict(c.params)["seed"] for c in rand} == {7}
    exp2 = Experiment(workload=exp.workload, policies=["rand"], seeds=[3, 4])
    assert {(dict(c.params)["seed"], c.seed) for c in cells_of(exp2)} == {(3, 3), (4, 4)}


def test_relative_paths_resolve_against_the_toml_file(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    exp = load_experiment(write(sub, GOOD.replace('model = "m.json"', 'trace = "../t.csv"')
                                .replace("n_jobs = 200\nload = [0.5, 0.9]\n", "")))
    assert exp.workload.trace == str(tmp_path / "t.csv")


@pytest.mark.parametrize("edit, message", [
    (("s = [8, 2.0]", "ss = [8, 2.0]"), "exp.toml: [policies.fitgpp] unknown key 'ss'"),
    (("[policies.fifo]", "[policies.fifoo]"), "unknown policy 'fifoo'"),
    (("s = [8, 2.0]", 's = ["big"]'), "[policies.fitgpp] key 's' must be a number"),
    (("s = [8, 2.0]", "s = [-1.0]"), "[policies.fitgpp] key 's'"),
    (("max_preemptions = [1, 3]", "max_preemptions = [0]"),
     "[policies.fitgpp] key 'max_preemptions': fitgpp: max_preemptions must be an integer >= 1"),
    (("max_preemptions = [1, 3]", "max_preemptions = [1.5]"),
     "key 'max_preemptions' must be an integer"),
    (("load = [0.5, 0.9]", "load = []"), "[workload] key 'load' is an empty list"),
    (("load = [0.5, 0.9]", "load = [0.5, 0.5]"), "[workload] key 'load' lists a value twice"),
    (("load = [0.5, 0.9]", "lod = 0.5"), "[workload] unknown key 'lod'"),
    (("load = [0.5, 0.9]", "te_fraction = 1.5"), "[workload] key 'te_fraction' must be <= 1"),
    (("n_jobs = 200", 'n_jobs = "many"'), "[workload] key 'n_jobs' must be an integer"),
    (("seeds = [0, 1]", "seeds = []"), "key 'seeds' is an empty list"),
    (("seeds = [0, 1]", "seeds = 3"), "key 'seeds' must be a list"),
    (("tick = 30", "tick = 0"), "key 'tick' must be >= 0.001"),
    (("tick = 30", "tikc = 30"), "unknown key 'tikc'"),
    (("gpu = 4", "gpus = 4"), "[cluster] unknown key 'gpus'"),
    (("nodes = 4", "nodes = 0"), "[cluster]"),
    (("[policies.rand]\nseed = 7", "[policies.prio]\nmax_preemptions = 2"),
     "[policies.prio] unknown key 'max_preemptions'"),
    (('model = "m.json"', 'model = "m.json"\ntrace = "t.csv"'), "needs exactly one of"),
])
def test_bad_configs_are_refused_naming_the_key(tmp_path, edit, message):
    old, new = edit
    assert old in GOOD
    with pytest.raises(ExperimentError) as err:
        load_experiment(write(tmp_path, GOOD.replace(old, new)))
    assert message in str(err.value)
    assert isinstance(err.value, fitgpp.FitgppError)


def test_empty_policy_grid_and_missing_tables(tmp_path):
    no_policies = GOOD[:GOOD.index("[policies.fifo]")] + "[policies]\n"
    with pytest.raises(ExperimentError, match="'policies' is empty"):
        load_experiment(write(tmp_path, no_policies))
    with pytest.raises(ExperimentError, match=r"missing \[policies\] table"):
        load_experiment(write(tmp_path, GOOD[:GOOD.index("[policies.fifo]")]))
    with pytest.raises(ExperimentError, match="not valid TOML"):
        load_experiment(write(tmp_path, "seeds = [0,"))
    with pytest.raises(ExperimentError, match="no such file"):
        load_experiment(tmp_path / "absent.toml")


def test_python_objects_are_validated_too():
    wl = Workload(model="paper-default")
    with pytest.raises(ExperimentError, match="unknown policy 'srpt'"):
        Experiment(workload=wl, policies=["srpt"])
    with pytest.raises(ExperimentError, match="key 'knob'|unknown key 'knob'"):
        Experiment(workload={"model": "x", "knob": 1}, policies=["fifo"])
    with pytest.raises(ExperimentError, match="given twice"):
        Experiment(workload=wl, policies=[PolicyGrid("fifo"), PolicyGrid("FIFO")])
    with pytest.raises(ExperimentError, match="applies to a workload model, not to a trace"):
        Workload(trace="t.csv", load=0.5)
    with pytest.raises(ExperimentError, match="key 's': fitgpp: s must be a finite number >= 0"):
        PolicyGrid("fitgpp", s=[-2.0])
    assert PolicyGrid("fitgpp").s == (4.0,) and PolicyGrid("fitgpp").max_preemptions == (3,)


def test_shipped_quick_example_is_valid():
    exp = load_experiment(REPO / "docs" / "examples" / "sweep-quick.toml")
    assert len(exp.policies) >= 3 and len(exp.seeds) >= 2
