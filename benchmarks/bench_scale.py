"""How far a sweep scales with Dask workers, and at how many its client saturates.

    python benchmarks/bench_scale.py [--workers 0 1 2 4 ...] [--quick]

Runs a fixed grid -- RQ8's full grid (FIFO, PRIO and FitGpp s=4 on ``paper-wide-te`` at
10,000 jobs: restart cost x TE share x load x 5 seeds, 540 cells), or with ``--quick`` a slice
of it (one load, three TE shares, three restart costs, two seeds: 54 cells of the same size) --
through :func:`fitgpp.sweep.run_sweep` on a cluster of separate processes on 127.0.0.1 (a
``dask scheduler`` and a ``dask worker --nworkers N --nthreads 1``, as docs/cluster.md starts
one by hand, so the scheduler's work is not the client's), started before the clock starts,
into an empty cache each time; checks that every run's Dataset is identical to the first one's.
With ``--workers 0 ...`` the first run is in this process, without Dask, as a sweep runs by
default under 3 CPUs.

Per run: workers, wall seconds, speedup against the first run, cells per second, and the
client's serial work -- the CPU seconds of the client's thread (the one that called
``run_sweep``), measured with ``time.thread_time`` so that waiting costs nothing -- in its
three phases, read at the calls of the sweep's progress callback: "before" (the cells' cache
keys and the cache lookup, up to the first call), "per cell" (taking in each computed cell,
from the first to the last call, per cell) and "after" (assembling the Dataset).

The client saturates where, taking in one cell, it spends as long as the workers together
take to compute one: at ``N = X / Y`` workers, ``X`` a cell's compute (the mean CPU seconds
each cell records of its simulation, workload drawing included, in the first run on Dask)
and ``Y`` its work per cell (the largest of the runs'); before and after are serial time
added once to the sweep, not per cell. On a few workers each result comes alone and wakes
the client from its sleep, cache-cold; a saturated client is never asleep: results wait for
it and it takes them in batches. Both are measured in each run: the first half of the cells
as they come ("as they come"), then the progress callback waits until the scheduler has
computed every cell (the CPU of that wait is not counted) and the client takes the other
half in batches ("batched", the ``Y`` of the last line). The line before it says where the
client would saturate if it took every result as it comes.

Before those lines, what Dask's own scheduler (a process of its own, not fitgpp's client)
spends per task: the CPU of the ``dask scheduler`` process beyond its idle rate, for 600 tasks
of 15 ms on 2 workers whose results are taken as a sweep takes them (``as_completed``, one by
one), and the workers it keeps up with at that rate for these cells. See docs/cluster.md.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import xarray as xr

DASK = str(Path(sys.executable).with_name("dask"))


def grid(quick: bool):
    """The Experiment: RQ8's full grid, or a slice of it at the same size."""
    from fitgpp.studies import FULL, STUDIES
    study = STUDIES["rq8"].at_size(FULL)
    size = FULL
    if quick:
        study = study.replace(knobs={"restart_overhead": (0.0, 900.0, 1800.0),
                                     "te_fraction": (0.3, 0.5, 0.7), "load": (0.85,)})
        size = replace(FULL, seeds=(0, 1))
    (exp,) = study.experiments(size).values()
    return exp


@contextlib.contextmanager
def cluster(workers: int):
    """A ``dask scheduler`` and ``workers`` single-threaded worker processes on 127.0.0.1:
    ``(address, scheduler pid)``; every process stopped at the end."""
    from distributed import Client
    with tempfile.TemporaryDirectory() as d:
        file = os.path.join(d, "scheduler.json")
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
                 "start_new_session": True}
        # (both also stop by themselves if this process dies: idle, or without a scheduler)
        procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                   "--no-dashboard", "--scheduler-file", file,
                                   "--idle-timeout", "600"], **quiet)]
        try:
            for _ in range(600):
                if os.path.exists(file):
                    break
                time.sleep(0.1)
            procs.append(subprocess.Popen(
                [DASK, "worker", "--scheduler-file", file, "--nworkers", str(workers),
                 "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard",
                 "--local-directory", d, "--death-timeout", "60"], **quiet))
            address = json.load(open(file))["address"]
            with Client(address, timeout="60s") as client:
                client.wait_for_workers(workers, timeout=120)
                client.run(_warm)
            yield address, procs[0].pid
        finally:
            for p in reversed(procs):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()


def _warm() -> None:
    """A worker's first imports, done before the clock starts."""
    import fitgpp.sweep  # noqa: F401
    import fitgpp.workload  # noqa: F401


def cpu_of(pid: int) -> float:
    import psutil
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def _unfinished(dask_scheduler=None) -> int:
    """On the scheduler: the cells' tasks not yet computed."""
    return sum(1 for k, ts in dask_scheduler.tasks.items()
               if str(k).startswith("fitgpp-cell-") and ts.state not in ("memory", "erred"))


class Probe:
    """The sweep's progress callback: the client thread's CPU clock at each call; half way
    through the cells, it waits until the scheduler has computed them all (``held``: the CPU
    seconds of that wait), asking through the sweep's own Client (a second Client of the
    scheduler in this process would change how results reach the sweep's)."""

    def __init__(self):
        self.held, self.marks = 0.0, []

    def __call__(self, done: int, total: int) -> None:
        from distributed import default_client
        now = time.thread_time()
        self.marks.append(now - self.held)
        if done == total // 2:
            while default_client().run_on_scheduler(_unfinished):
                time.sleep(0.25)
            self.held += time.thread_time() - now


def timed(exp, address: str) -> dict:
    """One sweep of ``exp`` on the scheduler at ``address`` into an empty cache."""
    from fitgpp.sweep import run_sweep
    probe = Probe()
    with tempfile.TemporaryDirectory() as cache:
        runs, st = {}, {}
        gc.collect()   # each run starts from the same collector's state
        t0, c0 = time.perf_counter(), time.thread_time()
        ds = run_sweep(exp, scheduler=address, cache=cache, progress=probe, runs=runs, stats=st)
        wall = time.perf_counter() - t0
        c1 = time.thread_time() - probe.held
        compute = [float(r["compute_cpu_s"]) for r in runs.values()]
    m, n = probe.marks, st["computed"]   # m[0]: before any cell; m[i]: after the i-th cell
    h = n // 2                           # the wait comes after the h-th cell's mark
    return {"ds": ds, "wall": wall, "serial": c1 - c0, "cells": n,
            "compute": sum(compute) / len(compute), "before": m[0] - c0,
            "as_they_come": (m[h] - m[1]) / (h - 1), "batched": (m[n] - m[h]) / (n - h),
            "after": c1 - m[n]}


def _task(i: int) -> str:
    time.sleep(0.015)
    return "x" * 5000   # about a receipt's size


def scheduler_cost(n: int = 600) -> float:
    """CPU seconds per task of a ``dask scheduler`` process beyond its idle rate, for ``n``
    tasks of 15 ms on 2 workers, their results taken one by one as they come."""
    from distributed import Client, as_completed
    with cluster(2) as (address, pid), Client(address) as client:
        s0, t0 = cpu_of(pid), time.perf_counter()
        time.sleep(3)
        idle = (cpu_of(pid) - s0) / (time.perf_counter() - t0)
        s0, t0 = cpu_of(pid), time.perf_counter()
        done = as_completed(client.map(_task, range(n), pure=False), with_results=True)
        for _ in done:
            pass
        return (cpu_of(pid) - s0 - idle * (time.perf_counter() - t0)) / n


def one_run(exp, workers: int) -> dict:
    """``exp`` on a fresh cluster of ``workers`` workers; 0: in this process, without Dask
    (where a sweep runs under 3 CPUs by default: fitgpp.sweep.runner.dask_pays)."""
    if workers:
        with cluster(workers) as (address, _):
            return timed(exp, address)
    from fitgpp.sweep import run_sweep
    st = {}
    t0, c0 = time.perf_counter(), time.thread_time()
    ds = run_sweep(exp, workers=0, cache=False, progress=False, stats=st)
    return {"ds": ds, "wall": time.perf_counter() - t0, "serial": time.thread_time() - c0,
            "cells": st["computed"]}


def warm_client() -> None:
    """The client's first imports and first sweep on Dask, before any clock starts."""
    from fitgpp.sweep import Experiment, Workload
    with cluster(1) as (address, _):
        timed(Experiment(workload=Workload(model="paper-wide-te", n_jobs=50),
                         policies={"fifo": {}, "fitgpp": {"s": [2.0, 4.0]}}, seeds=[8, 9]),
              address)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, nargs="+", default=None,
                    help="worker counts to run, the first the reference; 0 runs the grid in "
                         "this process, without Dask (default: 1, 2, 4, ... up to the CPUs)")
    ap.add_argument("--quick", action="store_true",
                    help="a slice of the grid (54 cells), in under 3 minutes on 2 cores")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # killed: stop the clusters too
    if a.workers is not None and not any(a.workers):
        ap.error("--workers: give at least one count of Dask workers (0 is in this process)")
    cpus = len(os.sched_getaffinity(0))
    counts = a.workers or [w for w in (1, 2, 4, 8, 16, 32, 64) if w <= max(cpus, 2)]
    from fitgpp.sweep import cells_of
    exp = grid(a.quick)
    print(f"{time.strftime('%Y-%m-%d %H:%M')}; {cpus} CPUs; load average "
          f"{os.getloadavg()[0]:.1f}; grid: {'a slice of ' if a.quick else ''}RQ8's full grid, "
          f"{len(cells_of(exp))} cells of {exp.workload.n_jobs} jobs", flush=True)
    warm_client()
    print(f"{'workers':>7}{'wall s':>8}{'speedup':>9}{'cells/s':>9}{'client serial s':>17}"
          f"{'before s':>10}{'per cell ms: as they come':>27}{'batched':>9}{'after s':>9}"
          "  identical", flush=True)
    first, rows = None, []
    for w in counts:
        r = one_run(exp, w)
        same = "reference"
        if first is None:
            first = r
        else:
            xr.testing.assert_identical(r["ds"], first["ds"])
            same = "yes"
        head = (f"{w:>7}{r['wall']:>8.1f}{first['wall'] / r['wall']:>9.2f}"
                f"{r['cells'] / r['wall']:>9.2f}{r['serial']:>17.3f}")
        if not w:
            print(f"{head}{'(in this process: every cell on the client)':>58}  {same}")
            continue
        rows.append(r)
        print(f"{head}{r['before']:>10.3f}{1e3 * r['as_they_come']:>27.3f}"
              f"{1e3 * r['batched']:>9.3f}{r['after']:>9.3f}  {same}", flush=True)
    x = rows[0]["compute"]
    per_task = scheduler_cost()
    print(f"Dask's scheduler: {1e3 * per_task:.2f} ms of CPU per task (600 tasks of 15 ms, taken "
          f"as they come); at that rate it keeps up with {int(x / per_task)} workers for these "
          "cells")
    slow = max(r["as_they_come"] for r in rows)
    print(f"taking every result as it comes, the client would saturate at {int(x / slow)} "
          f"workers ({1e3 * slow:.2f} ms of client work per cell)")
    y = max(r["batched"] for r in rows)
    print(f"client saturates at {int(x / y)} workers (a cell: {1e3 * x:.0f} ms of compute, "
          f"{1e3 * y:.2f} ms of client work)")


if __name__ == "__main__":
    main()
