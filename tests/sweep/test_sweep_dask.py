"""Sweeps on Dask give exactly the serial result: on the LocalCluster run_sweep
starts, even when one of its worker processes is killed mid-sweep, and on an
existing cluster reached by its address."""

from __future__ import annotations

import os
import signal

import pytest
import xarray as xr

import fitgpp
from fitgpp.sweep import Experiment, Workload, run_sweep

distributed = pytest.importorskip("distributed", reason="dask.distributed is a dependency of "
                                  "fitgpp; reinstall with pip install -e .")


@pytest.fixture(scope="module")
def exp(tmp_path_factory):
    """Synthesized workloads: the model travels to the workers, which draw the jobs."""
    from fitgpp.workload import paper_default
    model = tmp_path_factory.mktemp("model") / "m.json"
    paper_default().save(model)
    return Experiment(workload=Workload(model=str(model), n_jobs=300, load=0.9,
                                        te_fraction=[0.3, 0.5]),
                      policies={"fifo": {}, "fitgpp": {"s": [2.0, 4.0]}, "rand": {}},
                      seeds=[0, 1], cluster=fitgpp.DEFAULT_CLUSTER)


@pytest.fixture(scope="module")
def serial(exp):
    return run_sweep(exp, workers=0, cache=False, progress=False)


def test_two_worker_local_cluster_with_a_worker_killed_equals_serial(exp, serial, tmp_path):
    from distributed import default_client
    killed = {}

    def kill_a_busy_worker(done, total):
        if done == 1 and not killed:  # the first cell is in: kill a worker that is busy
            client = default_client()  # the one run_sweep opened on its LocalCluster
            busy = [w for w, keys in client.processing().items() if keys]
            assert busy, "no task in flight when the worker was to be killed"
            pid = client.run(os.getpid)[busy[0]]
            killed.update(pid=pid, done=done, total=total, workers=len(client.nthreads()))
            os.kill(pid, signal.SIGKILL)

    st = {}
    ds = run_sweep(exp, workers=2, cache=tmp_path / "c", progress=kill_a_busy_worker, stats=st)
    assert killed["workers"] == 2
    assert killed["done"] < killed["total"] == 16, "the kill must happen mid-sweep"
    assert st["computed"] == st["unique"] == 16
    xr.testing.assert_identical(ds, serial)


def test_existing_cluster_by_address_equals_serial_and_resumes(exp, serial, tmp_path,
                                                              monkeypatch):
    from distributed import LocalCluster

    def interrupt(done, total):
        if done == 5:
            raise KeyboardInterrupt  # what Ctrl-C raises in the client
    # threads instead of processes: the same client path, without spawning workers
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster:
        monkeypatch.setenv("FITGPP_SCHEDULER", cluster.scheduler_address)
        with pytest.raises(KeyboardInterrupt):
            run_sweep(exp, cache=tmp_path / "c", progress=interrupt)
        st = {}
        ds = run_sweep(exp, cache=tmp_path / "c", progress=False, stats=st)
        # the 5 cells the client had, and any its workers finished (and cached) meanwhile
        assert st["cached"] >= 5 and st["cached"] + st["computed"] == 16
        ran = {str(t[0]) for t in cluster.scheduler.transition_log
               if str(t[0]).startswith("fitgpp-cell-") and t[2] == "processing"}
        assert len(ran) == 16, "the cells should have run on this cluster"
    xr.testing.assert_identical(ds, serial)


PATIENT = '''
from dataclasses import dataclass, field
from fitgpp.sim.policies import FitGpp


@dataclass(frozen=True)
class Patient(FitGpp):
    patience: int = field(default=10, metadata={"min": 0, "max": 120})
    name = "patient"

    def choose(self, eng, i, t):
        if t < eng.submit[i] + self.patience:
            return None
        return super().choose(eng, i, t)
'''


@pytest.mark.parametrize("where", ["module_beside", "notebook_main"])
def test_policy_digest_is_the_same_in_process_and_on_1_or_2_workers(tmp_path, monkeypatch,
                                                                     where):
    """A class a worker receives by value (a notebook's __main__, a file beside it that the
    workers cannot import) is recorded with the client's digest: rerun finds no change."""
    import sys
    import types
    import warnings

    from fitgpp.sim.policies import registry
    from fitgpp.sweep import run_dataset
    if where == "module_beside":  # importable here only: the workers get it by value
        (tmp_path / "patient_beside.py").write_text(PATIENT)
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.delitem(sys.modules, "patient_beside", raising=False)
        cls = __import__("patient_beside").Patient
        assert registry.class_source(cls)[0] == "source"
    else:  # a notebook kernel's __main__: no __file__
        main = types.ModuleType("__main__")
        exec(compile(PATIENT, "<nbcell>", "exec"), main.__dict__)
        monkeypatch.setitem(sys.modules, "__main__", main)
        cls = main.Patient
    exp = Experiment(workload=Workload(model="paper-default", n_jobs=60, load=0.9),
                     policies={"patient": {"policy": cls, "patience": [0, 80]}}, seeds=[0],
                     cluster=fitgpp.DEFAULT_CLUSTER)
    want = {registry.digest(cls(patience=p)) for p in (0, 80)}
    for workers in (0, 1, 2):
        runs = {}
        run_sweep(exp, workers=workers, cache=False, progress=False, runs=runs)
        got = {run_dataset(r).attrs["policy_digest"] for r in runs.values()}
        assert got == want, workers
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "its code differs" would be a RerunWarning
            fitgpp.rerun(run_dataset(next(iter(runs.values()))), policy=cls)
