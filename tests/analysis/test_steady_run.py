"""Every run says whether it reached a steady state (issue 23): ``fitgpp.simulate`` puts the
verdict of fitgpp.analysis.stability in the Dataset's attrs, ``fitgpp simulate`` prints it, the
workbench shows it. The run the issue names, at its full size: 20,000 ``paper-default`` jobs
at load 0.9 under FIFO (about 1 s to simulate), whose queue grows for the whole run."""

from __future__ import annotations

import pytest

import fitgpp
from fitgpp.cli import main
from fitgpp.workload import load_model, synthesize

CLUSTER = fitgpp.DEFAULT_CLUSTER


def _trace(n, load, seed=0):
    return synthesize(load_model("paper-default"), n_jobs=n, seed=seed, load=load,
                      cluster=CLUSTER)


@pytest.fixture(scope="module")
def overloaded():
    return _trace(20_000, 0.9)


def test_a_growing_queue_is_flagged_in_the_dataset(overloaded, tmp_path):
    ds = fitgpp.simulate(overloaded, CLUSTER, "fifo")
    assert ds.attrs["steady_state"] == "not steady"
    assert ds.attrs["steady_state_text"].startswith("not steady: the queue changes by +")
    assert ds.attrs["queue_slope_low"] > 0 and "MSER-5" in ds.attrs["steady_state_rule"]
    fitgpp.save(ds, tmp_path / "r.nc")        # the verdict travels with the file
    assert fitgpp.load(tmp_path / "r.nc").attrs["steady_state"] == "not steady"


def test_a_light_run_is_steady():
    ds = fitgpp.simulate(_trace(3000, 0.5), CLUSTER, "fifo")
    assert ds.attrs["steady_state"] == "steady"


def test_fitgpp_simulate_prints_the_verdict(overloaded, tmp_path, capsys):
    from fitgpp.sim.trace import write_trace
    csv = tmp_path / "t.csv"
    write_trace(overloaded, csv)
    rc = main(["simulate", str(csv), "--policy", "fifo", "--nodes", "16", "--out",
               str(tmp_path / "r.nc")])
    out = capsys.readouterr().out
    assert rc == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("steady state:"))
    assert line.startswith("steady state: not steady: the queue changes by +")
    assert fitgpp.load(tmp_path / "r.nc").attrs["steady_state"] == "not steady"


def test_the_workbench_shows_the_verdict(tmp_path):
    from fitgpp.workbook import workbench as wbf
    from fitgpp.workbook.workbench import Values
    cur, pin = wbf.compare(Values(policy="fifo", n_jobs=300, load=0.5, n_seeds=1),
                           Values(policy="fitgpp", n_jobs=300, load=0.5, n_seeds=1),
                           cache=tmp_path)
    text = wbf.summary_text(cur, pin)
    said = [ln for ln in text.splitlines() if "steady state:" in ln]
    assert len(said) == 2 and all("in 1 of 1 seed" in ln for ln in said)
