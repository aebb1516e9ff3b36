"""FIFO's ``backfill`` on every surface above the simulator: one name per configuration in
labels ("FIFO" for the default, "FIFO backfill=easy"), a dropdown of its values in the
workbench (enabled for FIFO only), the command line's ``--param``, and a sweep's grid."""

from __future__ import annotations

import json

import ipywidgets as W
import pytest

import fitgpp
from fitgpp.figures import plots
from fitgpp.workbook import workbench as wbf
from fitgpp.workbook.widgets import Values, Workbench, param_control


def test_a_reading_is_named_exactly_when_it_is_not_the_default():
    """One name per configuration: strict FIFO is "FIFO" alone or beside another reading;
    EASY is "FIFO backfill=easy" alone too (not a bare "FIFO" that hides the reading)."""
    assert plots.config_label("fifo", {"backfill": "easy"}) == "FIFO backfill=easy"
    assert plots.config_label("fifo", {"backfill": "none"}, ["backfill"]) == "FIFO"
    assert plots.config_label("fifo", {"backfill": "greedy"}, ["backfill"]) == \
        "FIFO backfill=greedy"
    trace = fitgpp.synthesize("paper-default", 200, seed=0, load=0.9,
                              cluster=fitgpp.DEFAULT_CLUSTER)
    runs = [fitgpp.simulate(trace, fitgpp.DEFAULT_CLUSTER, "fifo", backfill=b)
            for b in ("none", "easy")]
    assert [plots.policy_label(ds) for ds in runs] == ["FIFO", "FIFO backfill=easy"]
    assert plots.run_labels(runs) == ["FIFO", "FIFO backfill=easy"]
    # other policies' fields keep the old rule: named only where they vary
    assert plots.config_label("las", {"demotion": "tiresias"}) == "LAS"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cells")


def test_the_workbench_offers_the_readings_for_fifo_only(cache):
    control = param_control("fifo", "backfill")
    assert isinstance(control, W.Dropdown)
    assert list(control.options) == ["none", "easy", "greedy"] and control.value == "none"
    wb = Workbench(Values(policy="fifo", n_jobs=300), cache=cache)
    assert isinstance(wb.w["backfill"], W.Dropdown) and not wb.w["backfill"].disabled
    wb.w["backfill"].value = "easy"     # against its baseline, strict FIFO
    assert (wb.cur.label, wb.base.label) == ("FIFO backfill=easy", "FIFO")
    assert json.loads(wb.ds.attrs["policy_params"]) == {"backfill": "easy"}
    wb.w["policy"].value = "fitgpp"
    assert wb.w["backfill"].disabled and "backfill" not in wbf.Values(
        policy="fitgpp", params=(("backfill", "easy"),)).policy_params()


def test_the_command_line_takes_backfill(tmp_path, capsys):
    from fitgpp.cli.main import main
    trace = fitgpp.synthesize("paper-default", 200, seed=0, load=0.9,
                              cluster=fitgpp.DEFAULT_CLUSTER)
    path = tmp_path / "t.csv"
    trace.jobs.to_csv(path, index=False)
    out = tmp_path / "r.nc"
    assert main(["simulate", str(path), "--policy", "fifo", "--param", "backfill=easy",
                 "--nodes", "16", "--out", str(out)]) == 0
    assert json.loads(fitgpp.load(out).attrs["policy_params"]) == {"backfill": "easy"}
    capsys.readouterr()
    assert main(["simulate", str(path), "--policy", "fifo", "--param", "backfill=eas",
                 "--nodes", "16", "--out", str(tmp_path / "x.nc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "expected one of none, easy, greedy" in err[0]


def test_a_sweep_grid_takes_the_readings(tmp_path):
    from fitgpp.sweep import load_experiment, run_sweep
    toml = tmp_path / "exp.toml"
    toml.write_text('seeds = [0]\n[workload]\nmodel = "paper-default"\nn_jobs = 200\n'
                    'load = 0.9\n[policies.fifo]\nbackfill = ["none", "easy"]\n')
    ds = run_sweep(load_experiment(toml), cache=False, serial=True)
    assert sorted(ds["backfill"].values.tolist()) == ["easy", "none"]
    bad = tmp_path / "bad.toml"
    bad.write_text(toml.read_text().replace('"easy"]', '"EASY"]'))
    with pytest.raises(fitgpp.FitgppError, match=r"\[policies.fifo\] key 'backfill'.*"
                                                 r"must be one of"):
        load_experiment(bad)


def test_a_users_literal_field_gets_the_same_treatment():
    """A researcher's policy with a Literal field of its own: typed str for --param and sweeps,
    its values in a dropdown, a value outside them refused with the values named."""
    from dataclasses import dataclass, field
    from typing import Literal

    from fitgpp.sim.policies import FitGpp, PolicyError, registry

    @dataclass(frozen=True)
    class Picky(FitGpp):
        order: Literal["gp", "size"] = field(default="gp", metadata={"description": "victims"})

    assert registry.declared(Picky)["order"] == (str, "gp")
    assert registry.choices(Picky, "order") == ("gp", "size")
    control = param_control(Picky, "order")
    assert isinstance(control, W.Dropdown) and list(control.options) == ["gp", "size"]
    assert registry.parse_value(Picky, "order", "size") == "size"
    with pytest.raises(PolicyError, match="expected one of gp, size"):
        registry.parse_value(Picky, "order", "age")
    # refused however it is given (the class itself checks nothing), in sweeps too
    with pytest.raises(PolicyError, match="order must be one of 'gp', 'size', got 'age'"):
        registry.resolve(Picky, order="age")
    from fitgpp.sweep import Experiment
    with pytest.raises(fitgpp.FitgppError, match="order must be one of"):
        Experiment(workload={"model": "paper-default"},
                   policies={"picky": {"policy": Picky, "order": ["gp", "age"]}})
