"""Sweeps on Dask: a LocalCluster gives exactly the serial result, even when a
worker process is killed in the middle of the sweep."""

from __future__ import annotations

import os
import signal

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import fitgpp
from fitgpp.sweep import Experiment, Workload, run_sweep

distributed = pytest.importorskip("distributed", reason="dask.distributed is a dependency of "
                                  "fitgpp; reinstall with pip install -e .")


@pytest.fixture(scope="module")
def exp(tmp_path_factory):
    """A trace busy enough that each cell takes a noticeable moment; 9 distinct cells."""
    path = tmp_path_factory.mktemp("trace") / "t.csv"
    rng = np.random.default_rng(11)
    n = 500
    te = rng.random(n) < 0.4
    pd.DataFrame({
        "job_id": np.arange(n), "cls": np.where(te, "TE", "BE"),
        "submit_time": np.sort(rng.uniform(0, 24 * 3600, n)),
        "duration": np.where(te, rng.exponential(600, n), rng.lognormal(8.0, 1.0, n)) + 1,
        "gpu": np.where(te, rng.integers(1, 3, n), rng.choice([1, 2, 4], n)),
        "cpu_milli": 1000, "mem_mib": 1024,
        "grace_period": np.where(te, np.nan, rng.uniform(0, 600, n)),
    }).to_csv(path, index=False)
    return Experiment(workload=Workload(trace=str(path)),
                      policies={"fifo": {}, "fitgpp": {"s": [1.0, 4.0], "max_preemptions": [1, 3]},
                                "lrtp": {}, "rand": {}},
                      seeds=[0, 1, 2], cluster=fitgpp.Cluster.homogeneous(4, gpu=4))


@pytest.fixture(scope="module")
def serial(exp):
    return run_sweep(exp, workers=0, cache=False, progress=False)


def test_two_worker_local_cluster_equals_serial(tmp_path):
    """Synthesized workloads: the model travels to the workers, which draw the jobs."""
    from fitgpp.workload import paper_default
    model = tmp_path / "m.json"
    paper_default().save(model)
    exp = Experiment(workload=Workload(model=str(model), n_jobs=300, load=0.9,
                                       te_fraction=[0.3, 0.5]),
                     policies={"fifo": {}, "fitgpp": {}, "rand": {}}, seeds=[0, 1])
    serial = run_sweep(exp, workers=0, cache=False, progress=False)
    st = {}
    ds = run_sweep(exp, workers=2, cache=tmp_path / "c", progress=False, stats=st)
    assert st["computed"] == st["unique"] == 12
    xr.testing.assert_identical(ds, serial)


def test_worker_killed_mid_sweep_gives_the_identical_result(exp, serial, tmp_path):
    from distributed import Client, LocalCluster
    killed = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        pids = client.run(os.getpid)

        def kill_a_busy_worker(done, total):
            if done == 1 and not killed:  # the first cell is in: kill a worker that is busy
                busy = [w for w, keys in client.processing().items() if keys]
                assert busy, "no task in flight when the worker was to be killed"
                killed.update(addr=busy[0], pid=pids[busy[0]], done=done, total=total)
                os.kill(pids[busy[0]], signal.SIGKILL)

        st = {}
        ds = run_sweep(exp, scheduler=cluster.scheduler_address, cache=tmp_path / "c",
                       progress=kill_a_busy_worker, stats=st)
        assert killed and killed["done"] < killed["total"]
        assert killed["pid"] not in client.run(os.getpid).values()
    assert st["computed"] == 9
    xr.testing.assert_identical(ds, serial)
