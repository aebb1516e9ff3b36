"""One rule for where cells run (issue 36, docs/cluster.md): a scheduler -- ``--scheduler``, or
``$FITGPP_SCHEDULER`` -- runs them there at every size; ``--workers`` with a scheduler is
refused in one line; ``results.md`` says the size that ran, wherever it ran."""

from __future__ import annotations

import dataclasses

import pytest

from fitgpp.cli import main

ADDRESS = "tcp://127.0.0.1:1"   # nothing listens here: no test reaches it


def refused(argv, capsys, *needles):
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, err


@pytest.fixture
def config(tmp_path):
    (tmp_path / "t.csv").write_text("job_id,cls,submit_time,duration,gpu,cpu_milli,mem_mib,"
                                    "grace_period\n0,TE,0,60,1,1,1,\n1,BE,0,600,1,1,1,60\n")
    cfg = tmp_path / "s.toml"
    cfg.write_text(f"[workload]\ntrace = '{tmp_path / 't.csv'}'\n[cluster]\nnodes = 2\n"
                   "[policies.fifo]\n[policies.fitgpp]\n")
    return cfg


@pytest.fixture
def asked(monkeypatch):
    """``fitgpp reproduce`` without running anything: what ``run_all`` was asked."""
    from fitgpp.studies import reproduce
    got = {}

    def fake_run_all(out, **kw):
        got.update(kw)
        return {}
    monkeypatch.setattr(reproduce, "run_all", fake_run_all)
    return got


@pytest.mark.parametrize("workers", ["0", "2"])
def test_sweep_refuses_workers_with_a_scheduler_from_the_environment(config, tmp_path, capsys,
                                                                     monkeypatch, workers):
    monkeypatch.setenv("FITGPP_SCHEDULER", ADDRESS)
    refused(["sweep", config, "--out", tmp_path / "o.nc", "--no-cache", "--workers", workers],
            capsys, f"got workers={workers}, $FITGPP_SCHEDULER='{ADDRESS}'", "unset it")
    refused(["sweep", config, "--out", tmp_path / "o.nc", "--no-cache", "--workers", workers,
             "--scheduler", ADDRESS], capsys, "not both")
    assert not (tmp_path / "o.nc").exists()


@pytest.mark.parametrize("where", ["flag", "environment"])
@pytest.mark.parametrize("workers", ["0", "2"])
def test_reproduce_refuses_workers_with_a_scheduler(tmp_path, capsys, monkeypatch, asked,
                                                    where, workers):
    argv = ["reproduce", "--quick", "--workers", workers, "--out", tmp_path / "rr"]
    if where == "flag":
        argv += ["--scheduler", ADDRESS]
        needle = f"--workers {workers} and --scheduler {ADDRESS} both say where the cells run"
    else:
        monkeypatch.setenv("FITGPP_SCHEDULER", ADDRESS)
        needle = f"--workers {workers} and $FITGPP_SCHEDULER ({ADDRESS}; unset it"
    refused(argv, capsys, needle, "give one")
    assert not asked and not (tmp_path / "rr").exists()


@pytest.mark.parametrize("quick", [True, False])
def test_reproduce_runs_on_the_scheduler_at_every_size(tmp_path, capsys, monkeypatch, asked,
                                                       quick):
    size = ["--quick"] if quick else []
    assert main(["reproduce", *size, "--scheduler", ADDRESS, "--out", str(tmp_path / "a")]) == 0
    assert asked["scheduler"] == ADDRESS
    monkeypatch.setenv("FITGPP_SCHEDULER", "tcp://127.0.0.1:2")
    assert main(["reproduce", *size, "--out", str(tmp_path / "b")]) == 0
    assert asked["scheduler"] == "tcp://127.0.0.1:2"
    refused(["reproduce", "--scheduler", "nowhere", "--out", tmp_path / "c"], capsys,
            "--scheduler 'nowhere': not a Dask scheduler address")


def test_results_say_the_size_that_ran(tmp_path):
    from fitgpp.studies.reproduce import FULL, QUICK, write_results
    for size, said in ((dataclasses.replace(QUICK, workers=2), "quick"),
                       (dataclasses.replace(FULL, workers=0), "full"),
                       (dataclasses.replace(QUICK, n_jobs=100), "custom")):
        text = write_results({}, tmp_path, size, 1.0, []).read_text()
        assert text.startswith(f"# fitgpp reproduce: results ({said} size)\n"), text[:80]
