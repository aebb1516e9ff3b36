"""How far a sweep scales with Dask workers, and at how many its client saturates.

    python benchmarks/bench_scale.py [--workers 1 2 4 ...] [--quick]

Runs a fixed grid -- RQ8's full grid (FIFO, PRIO and FitGpp s=4 on ``paper-wide-te`` at
10,000 jobs: restart cost x TE share x load x 5 seeds, 540 cells), or with ``--quick`` a slice
of it (one load, two TE shares, three restart costs, two seeds: 36 cells of the same size) --
through :func:`fitgpp.sweep.run_sweep` on a cluster of separate processes on 127.0.0.1 (a
``dask scheduler`` and a ``dask worker --nworkers N --nthreads 1``, as docs/cluster.md starts
one by hand, so the scheduler's work is not the client's), started before the clock starts,
into an empty cache each time; checks that every run's Dataset is identical to the first one's.

Per run: workers, wall seconds, speedup against the first run, cells per second, and the
client's serial work: the CPU seconds of the client's thread (the one that called
``run_sweep``: cache keys, handing out the cells, taking in each result, assembling the
Dataset), measured with ``time.thread_time`` so that waiting costs nothing; for information,
the CPU of the whole client process (Dask's communication thread too) and of the scheduler's
process, per cell, beyond what each spends idle.

The client's serial work per cell, ``Y``, is what each cell adds to it: each run is followed,
on the same cluster, by three runs of a corner of the grid (its first restart cost, TE share,
load and seed: 3 cells, each into another empty cache). Per run, its client-thread CPU seconds
less the least of all the corner runs', over the difference of their cells, is its work per
cell: what does not grow with the cells (loading the workload model, connecting to the
scheduler, the Dataset's summaries over seeds) cancels out, and is printed as "fixed s". ``Y``
is the mean over the runs (one run's figure moves by about 0.1 ms per cell on a loaded
machine). The last line: the client saturates when it spends as long on each cell as the
workers together take to compute one, at ``N = X / Y`` workers, ``X`` a cell's compute (the
mean CPU seconds each cell records of its simulation, workload drawing included, in the first
run). See docs/cluster.md.
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


def grid(quick: bool, corner: bool = False):
    """The Experiment: RQ8's full grid, or a slice of it at the same size; ``corner``: the
    first value of every knob and the first seed only (3 cells)."""
    from fitgpp.studies import FULL, STUDIES
    study = STUDIES["rq8"].at_size(FULL)
    size = FULL
    if quick:
        study = study.replace(knobs={"restart_overhead": (0.0, 900.0, 1800.0),
                                     "te_fraction": (0.3, 0.7), "load": (0.85,)})
        size = replace(FULL, seeds=(0, 1))
    if corner:
        study = study.replace(knobs={k: tuple(v)[:1] for k, v in study.knobs.items()})
        size = replace(size, seeds=size.seeds[:1])
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
        procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                   "--no-dashboard", "--scheduler-file", file], **quiet)]
        try:
            for _ in range(600):
                if os.path.exists(file):
                    break
                time.sleep(0.1)
            procs.append(subprocess.Popen(
                [DASK, "worker", "--scheduler-file", file, "--nworkers", str(workers),
                 "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard",
                 "--local-directory", d], **quiet))
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


def timed(exp, address: str, scheduler_pid: int | None = None) -> dict:
    """One sweep of ``exp`` on the scheduler at ``address`` into an empty cache."""
    from fitgpp.sweep import run_sweep
    with tempfile.TemporaryDirectory() as cache:
        runs, st = {}, {}
        gc.collect()   # each run starts from the same collector's state
        s0 = cpu_of(scheduler_pid) if scheduler_pid else 0.0
        t0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
        ds = run_sweep(exp, scheduler=address, cache=cache, progress=False, runs=runs, stats=st)
        wall = time.perf_counter() - t0
        serial, process = time.thread_time() - c0, time.process_time() - p0
        sched = cpu_of(scheduler_pid) - s0 if scheduler_pid else 0.0
        compute = [float(r["compute_cpu_s"]) for r in runs.values()]
    return {"ds": ds, "wall": wall, "serial": serial, "process": process, "scheduler": sched,
            "cells": st["computed"], "compute": sum(compute) / len(compute)}


def one_run(exp, corner, workers: int) -> tuple[dict, list[float]]:
    """``exp`` on a fresh cluster of ``workers`` workers, then ``corner`` three times on the
    same cluster: the first run's figures, and the corner runs' client seconds. The client
    process's and the scheduler's CPU per cell leave out what they spend idle (heartbeats,
    monitors), measured for 3 s before the run."""
    with cluster(workers) as (address, pid):
        s0, p0, t0 = cpu_of(pid), time.process_time(), time.perf_counter()
        time.sleep(3)
        idle = time.perf_counter() - t0
        s_idle, p_idle = (cpu_of(pid) - s0) / idle, (time.process_time() - p0) / idle
        r = timed(exp, address, pid)
        r["process"] -= p_idle * r["wall"]
        r["scheduler"] -= s_idle * r["wall"]
        small = [timed(corner, address) for _ in range(3)]
    return r, [c["serial"] for c in small]


def warm_client() -> None:
    """The client's first imports and first sweep on Dask, before any clock starts."""
    from fitgpp.sweep import Experiment, Workload
    with cluster(1) as (address, _):
        timed(Experiment(workload=Workload(model="paper-wide-te", n_jobs=50),
                         policies={"fifo": {}, "fitgpp": {}}, seeds=[9]), address)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, nargs="+", default=None,
                    help="worker counts to run, the first the reference (default: 1, 2, 4, ... "
                         "up to the CPUs)")
    ap.add_argument("--quick", action="store_true",
                    help="a slice of the grid (36 cells), in under 3 minutes on 2 cores")
    a = ap.parse_args()
    cpus = len(os.sched_getaffinity(0))
    counts = a.workers or [w for w in (1, 2, 4, 8, 16, 32, 64) if w <= max(cpus, 2)]
    from fitgpp.sweep import cells_of
    exp, corner = grid(a.quick), grid(a.quick, corner=True)
    print(f"{time.strftime('%Y-%m-%d %H:%M')}; {cpus} CPUs; load average "
          f"{os.getloadavg()[0]:.1f}; grid: {'a slice of ' if a.quick else ''}RQ8's full grid, "
          f"{len(cells_of(exp))} cells of {exp.workload.n_jobs} jobs", flush=True)
    warm_client()
    print(f"{'workers':>7}{'wall s':>8}{'speedup':>9}{'cells/s':>9}{'client serial s':>17}"
          f"{'fixed s':>9}{'ms/cell':>9}{'client process ms/cell':>24}"
          f"{'scheduler ms/cell':>19}  identical", flush=True)
    n_corner = len(cells_of(corner))
    first, rows, corners = None, [], []
    for w in counts:
        r, small = one_run(exp, corner, w)
        corners += small
        r["per_cell"] = (r["serial"] - min(corners)) / (r["cells"] - n_corner)
        rows.append(r)
        same = "reference"
        if first is None:
            first = r
        else:
            xr.testing.assert_identical(r["ds"], first["ds"])
            same = "yes"
        print(f"{w:>7}{r['wall']:>8.1f}{first['wall'] / r['wall']:>9.2f}"
              f"{r['cells'] / r['wall']:>9.2f}{r['serial']:>17.3f}"
              f"{min(corners) - n_corner * r['per_cell']:>9.3f}{1e3 * r['per_cell']:>9.2f}"
              f"{1e3 * r['process'] / r['cells']:>24.2f}"
              f"{1e3 * r['scheduler'] / r['cells']:>19.2f}  {same}", flush=True)
    x = first["compute"]
    y = sum((r["serial"] - min(corners)) / (r["cells"] - n_corner) for r in rows) / len(rows)
    print(f"client saturates at {int(x / y)} workers (a cell: {1e3 * x:.0f} ms of compute, "
          f"{1e3 * y:.2f} ms of client work)")


if __name__ == "__main__":
    main()
