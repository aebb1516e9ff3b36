"""docs/cluster.md's cluster started by hand, run as the page writes it (issue 36): a ``dask
scheduler`` and two ``dask worker`` processes on 127.0.0.1 (on a free port instead of the
page's 8786), a sweep on them with one worker killed mid-sweep (the same Dataset as in one
process, every cell cached, no finished cell computed again), then the page's own ``fitgpp
sweep`` command on the worker left. Every process is stopped at the end, whatever happens."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import xarray as xr
from counted_policy import PAUSE, RUNS_DIR, Counted

import fitgpp
from fitgpp.cli import main
from fitgpp.sweep import Experiment, Workload, run_sweep

distributed = pytest.importorskip("distributed")
ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "cluster.md"
DASK = str(Path(sys.executable).with_name("dask"))


def page_commands() -> list[list[str]]:
    """The commands of the page's block that names this test, without comments and ``&``."""
    text = PAGE.read_text()
    start = text.index("```sh\n", text.index("tests/sweep/test_cluster_page.py")) + len("```sh\n")
    block = text[start:text.index("```", start)]
    return [shlex.split(line.strip().rstrip("&")) for line in block.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def processes():
    """Start processes with ``start(argv, env)``; all are killed, and waited for, at the end."""
    started = []

    def start(argv, env, log):
        p = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        started.append(p)
        return p
    try:
        yield start
    finally:
        for p in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
        for p in started:
            p.wait(timeout=60)


def test_the_pages_cluster_by_hand_with_a_worker_killed(tmp_path, monkeypatch):
    cmds = page_commands()
    assert [c[:2] for c in cmds] == [["dask", "scheduler"], ["dask", "worker"],
                                     ["dask", "worker"], ["fitgpp", "sweep"]], cmds
    assert all(a.startswith(("127.0.0.1", "tcp://127.0.0.1")) for c in cmds for a in c
               if "127." in a or "://" in a), "the page's example must stay on the loopback"
    port = str(free_port())
    cmds = [[a.replace("8786", port) for a in c] for c in cmds]
    address = f"tcp://127.0.0.1:{port}"
    runs = tmp_path / "runs"
    runs.mkdir()
    env = {**os.environ, RUNS_DIR: str(runs), PAUSE: "0.3"}   # the workers count their runs
    exp = Experiment(workload=Workload(model="paper-default", n_jobs=1000, load=0.9,
                                       te_fraction=[0.3, 0.5]),
                     policies={"counted": {"policy": Counted, "tag": [0, 1, 2, 3]}},
                     seeds=[0, 1], cluster=fitgpp.DEFAULT_CLUSTER)
    serial = run_sweep(exp, workers=0, cache=False, progress=False)
    with processes() as start, open(tmp_path / "dask.log", "w") as log:
        # (each also stops by itself if this test dies: the scheduler idle, a worker without it)
        start([DASK, *cmds[0][1:], "--idle-timeout", "300"], env, log)
        workers = [start([DASK, *c[1:], "--death-timeout", "60"], env, log) for c in cmds[1:3]]
        with distributed.Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
            killed = {}

            def kill_a_busy_worker(done, total):
                if done == total // 2 and not killed:
                    busy = [w for w, keys in client.processing().items() if keys]
                    assert busy, "no task in flight when the worker was to be killed"
                    pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
                    assert pid in {w.pid for w in workers}
                    killed["pid"] = pid
                    os.kill(pid, signal.SIGKILL)
            st = {}
            ds = run_sweep(exp, scheduler=address, cache=tmp_path / "c",
                           progress=kill_a_busy_worker, stats=st)
            assert killed and st["computed"] == 16
            xr.testing.assert_identical(ds, serial)
            simulated = len(list(runs.iterdir()))
            assert 16 <= simulated <= 17, f"{simulated} simulations of 16 cells"
            assert len(list((tmp_path / "c" / "sweep-cells").rglob("*.cell"))) == 16
            for _ in range(100):   # the scheduler notices the worker is gone
                if len(client.nthreads()) == 1:
                    break
                time.sleep(0.1)
            assert len(client.nthreads()) == 1

        # the page's fitgpp command, as written, on the worker left
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("FITGPP_CACHE", str(tmp_path / "cache"))
        (tmp_path / "my-sweep.toml").write_text(
            (ROOT / "docs" / "examples" / "sweep-quick.toml").read_text())
        assert main(cmds[3][1:] + ["--quiet"]) == 0
        here = run_sweep(tmp_path / "my-sweep.toml", workers=0, cache=False, progress=False)
        with xr.open_dataset(tmp_path / "my-sweep.nc", engine="h5netcdf") as got:
            xr.testing.assert_identical(got.load(), here)
