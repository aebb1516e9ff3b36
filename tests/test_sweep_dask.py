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
        assert st["cached"] == 5 and st["computed"] == 11
        ran = {str(t[0]) for t in cluster.scheduler.transition_log
               if str(t[0]).startswith("fitgpp-cell-") and t[2] == "memory"}
        assert len(ran) == 16, "the cells should have run on this cluster"
    xr.testing.assert_identical(ds, serial)
