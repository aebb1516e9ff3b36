"""A sweep past one machine (issue 36, docs/cluster.md): workers keep the cache, a lost worker
loses nothing that finished, a cell that kills its worker ends the sweep in one line, a script
without the ``__main__`` guard is told what to add, and a cluster closes without a word.

Every cluster here listens on 127.0.0.1 only, every subprocess has a timeout, and every
cluster is closed by the test that starts it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import xarray as xr
from counted_policy import PAUSE, RUNS_DIR, Counted

import fitgpp
from fitgpp.sweep import CellCache, Experiment, Workload, run_sweep

distributed = pytest.importorskip("distributed", reason="dask.distributed is a dependency of "
                                  "fitgpp; reinstall with pip install -e .")


def counted_exp(n_jobs: int) -> Experiment:
    """16 cells: 4 tags x 2 TE shares x 2 seeds."""
    return Experiment(workload=Workload(model="paper-default", n_jobs=n_jobs, load=0.9,
                                        te_fraction=[0.3, 0.5]),
                      policies={"counted": {"policy": Counted, "tag": [0, 1, 2, 3]}},
                      seeds=[0, 1], cluster=fitgpp.DEFAULT_CLUSTER)


def local(n: int, processes: bool = True):
    from distributed import LocalCluster
    where = {"host": "127.0.0.1"} if processes else {}   # threads talk in process
    return LocalCluster(n_workers=n, threads_per_worker=1, processes=processes,
                        dashboard_address="127.0.0.1:0", **where)


def entries(cache) -> list:
    return sorted(p.name for p in (cache / "sweep-cells").rglob("*.cell"))


# ---------------------------------------------------------------- the cache, kept by workers
def test_workers_write_the_cells_themselves_and_the_result_is_the_same(tmp_path, monkeypatch):
    exp = counted_exp(150)
    serial = run_sweep(exp, workers=0, cache=False, progress=False)

    def client_writes(*a, **k):
        raise AssertionError("the client wrote a cell its workers could write")
    monkeypatch.setattr(CellCache, "place", client_writes)   # in this process only
    runs = {}
    with local(2) as cluster:
        ds = run_sweep(exp, scheduler=cluster.scheduler_address, cache=tmp_path / "c",
                       progress=False, runs=runs)
    xr.testing.assert_identical(ds, serial)
    assert len(entries(tmp_path / "c")) == 16
    assert not list((tmp_path / "c" / "sweep-cells").glob(".client-*")), "token left behind"
    monkeypatch.undo()
    st, again = {}, {}
    warm = run_sweep(exp, workers=0, cache=tmp_path / "c", progress=False, stats=st, runs=again)
    assert st["computed"] == 0
    xr.testing.assert_identical(warm, serial)
    for cell, res in runs.items():   # every array a figure reads, read back from the cache
        assert set(res) == set(again[cell])
        for k in res:
            np.testing.assert_array_equal(np.asarray(res[k]), np.asarray(again[cell][k]),
                                          err_msg=f"{cell} {k}")


def test_workers_that_cannot_see_the_cache_send_it_back(tmp_path, monkeypatch):
    """A worker on another machine (here: told it cannot see the cache) sends the entry's
    bytes; the client writes them in the background; the same cells, readable, as in process."""
    from fitgpp.sweep import remote
    exp = counted_exp(150)
    serial = run_sweep(exp, workers=0, cache=False, progress=False)
    monkeypatch.setattr(remote.Target, "visible", lambda self: False)
    with local(2, processes=False) as cluster:   # threads: the patch holds on the workers
        ds = run_sweep(exp, scheduler=cluster.scheduler_address, cache=tmp_path / "c",
                       progress=False)
    xr.testing.assert_identical(ds, serial)
    assert len(entries(tmp_path / "c")) == 16
    st = {}
    xr.testing.assert_identical(run_sweep(exp, workers=0, cache=tmp_path / "c",
                                          progress=False, stats=st), serial)
    assert st["computed"] == 0


def test_a_client_of_the_same_scheduler_is_used_and_left_open(tmp_path, monkeypatch):
    """A notebook's own Client of the scheduler: the sweep uses it (a second Client of one
    scheduler in a process held the sweep's results back by seconds) and leaves it open."""
    exp = counted_exp(150)
    made = []
    real = distributed.Client.__init__

    def counted(self, *a, **k):
        made.append(a)
        real(self, *a, **k)
    with local(2) as cluster, distributed.Client(cluster) as client:
        monkeypatch.setattr(distributed.Client, "__init__", counted)
        ds = run_sweep(exp, scheduler=cluster.scheduler_address.replace("tcp://", ""),
                       cache=tmp_path / "c", progress=False)
        assert made == [] and client.status == "running"
        assert client.submit(sum, [1, 2]).result() == 3
    xr.testing.assert_identical(ds, run_sweep(exp, workers=0, cache=False, progress=False))


# ---------------------------------------------------------------- a lost worker
def test_a_killed_worker_costs_only_the_cells_it_was_running(tmp_path, monkeypatch):
    """A worker killed after half the cells: every cell that finished is kept (not run again
    because the dead worker held its result), so at most the one it was running runs twice."""
    exp = counted_exp(1000)
    serial = run_sweep(exp, workers=0, cache=False, progress=False)
    runs = tmp_path / "runs"
    runs.mkdir()
    monkeypatch.setenv(RUNS_DIR, str(runs))   # before the workers start: they inherit it
    monkeypatch.setenv(PAUSE, "0.3")          # each cell runs for at least 0.3 s
    killed = {}
    with local(2) as cluster, distributed.Client(cluster) as client:
        def kill_a_busy_worker(done, total):
            if done == total // 2 and not killed:
                busy = [w for w, keys in client.processing().items() if keys]
                assert busy, "no task in flight when the worker was to be killed"
                pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
                killed.update(pid=pid, done=done, total=total)
                os.kill(pid, signal.SIGKILL)
        st = {}
        ds = run_sweep(exp, scheduler=cluster.scheduler_address, cache=tmp_path / "c",
                       progress=kill_a_busy_worker, stats=st)
    assert killed["done"] == 8 and killed["total"] == 16
    assert st["computed"] == 16
    xr.testing.assert_identical(ds, serial)
    simulated = len(list(runs.iterdir()))
    assert 16 <= simulated <= 17, f"{simulated} simulations for 16 cells (at most 1 in flight)"
    assert len(entries(tmp_path / "c")) == 16


# ---------------------------------------------------------------- a cell that kills its worker
CRASHY = '''
import os
from dataclasses import dataclass, field
from fitgpp.sim.policies.fifo import StrictFifo


@dataclass(frozen=True)
class Crashy(StrictFifo):   # (StrictFifo: no backfill field to inherit)
    boom: int = field(default=0, metadata={"min": 0, "max": 1})
    name = "crashy"

    def bind(self, eng):
        if self.boom:
            os._exit(3)   # what an out-of-memory kill looks like from the client
        super().bind(eng)
'''


def test_a_cell_that_kills_its_worker_ends_the_sweep_in_one_line(tmp_path):
    (tmp_path / "crashy.py").write_text(CRASHY)
    (tmp_path / "exp.toml").write_text(textwrap.dedent('''
        seeds = [0]
        [workload]
        model = "paper-default"
        n_jobs = 200
        [policies.fifo]
        [policies.crashy]
        policy = "crashy:Crashy"
        boom = [0, 1]
        [policies.fitgpp]
        s = [2.0, 4.0]
        '''))
    p = subprocess.run([sys.executable, "-m", "fitgpp", "sweep", "exp.toml", "--out", "o.nc",
                        "--workers", "2", "--cache", "c", "--quiet"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("fitgpp sweep: error: cell crashy (boom=1), seed 0, workload "
                               "n_jobs=200: its Dask worker died each of the 4 times it ran it"), \
        lines[0]
    assert "exited with status 3" in lines[0] and "finished are cached" in lines[0]
    assert len(entries(tmp_path / "c")) == 4   # fifo, crashy boom=0, fitgpp s=2 and s=4
    assert not (tmp_path / "o.nc").exists()


# ---------------------------------------------------------------- start and end
SWEEP = '''
from fitgpp.sweep import Experiment, Workload, run_sweep
exp = Experiment(workload=Workload(model="paper-default", n_jobs=100, load=0.9),
                 policies={"fifo": {}, "fitgpp": {"s": [2.0, 4.0]}}, seeds=[0, 1])
'''


def script(tmp_path, name: str, body: str) -> subprocess.CompletedProcess:
    (tmp_path / name).write_text(SWEEP + textwrap.dedent(body))
    return subprocess.run([sys.executable, name], cwd=tmp_path, capture_output=True, text=True,
                          timeout=240, env={**os.environ, "FITGPP_CACHE": str(tmp_path / "c")})


def test_a_script_without_the_main_guard_is_told_what_to_add(tmp_path):
    """Workers spawned by a cluster import the script again; without the guard Dask failed with
    'Nanny failed to start.' and about 290 lines. Now: the line, and what to put it under."""
    p = script(tmp_path, "unguarded.py", '''
        ds = run_sweep(exp, workers=2, progress=False)
        print("ran")
        ''')
    assert p.returncode == 1 and "ran" not in p.stdout
    assert "Nanny failed" not in p.stderr and len(p.stderr.splitlines()) < 20, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("fitgpp.sweep.sink.SweepError: ") and \
        'unguarded.py:6: this line starts Dask workers' in last and \
        'put it under if __name__ == "__main__":' in last, last


def test_where_the_guard_is_looked_for(tmp_path):
    """Under the guard (alone or in an ``and``), the line is fine; at the top level, or in a
    function called from there, it is named; outside a script nothing is said."""
    p = script(tmp_path, "where.py", '''
        from fitgpp.sweep.local import unguarded_line


        def inner():
            return unguarded_line()


        print("top", unguarded_line())
        print("function", inner())
        if __name__ == "__main__":
            print("guarded", unguarded_line())
        if "__main__" == __name__ and True:
            print("and", unguarded_line())
        ''')
    assert p.returncode == 0, p.stderr
    got = dict(line.split(" ", 1) for line in p.stdout.splitlines())
    assert got["top"].endswith("where.py:13") and got["function"].endswith("where.py:14")
    assert got["guarded"] == got["and"] == "None"
    from fitgpp.sweep.local import unguarded_line
    assert unguarded_line() is None   # pytest's own entry point is guarded


def test_a_guarded_script_runs_and_its_clusters_close_without_a_word(tmp_path):
    """A sweep's own cluster, and a study's session cluster closed as the interpreter exits:
    nothing on stderr (a closing cluster printed a CommClosedError heartbeat traceback)."""
    p = script(tmp_path, "guarded.py", '''
        import dataclasses

        from fitgpp.studies import QUICK, STUDIES

        if __name__ == "__main__":
            ds = run_sweep(exp, workers=2, progress=False)
            size = dataclasses.replace(QUICK, n_jobs=100, seeds=(0,), workers=2)
            o = STUDIES["rq3"].run(size)
            print("ran", ds.sizes["policy"], o.stats["computed"])
        ''')
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ran 2 ")
    assert p.stderr == ""
