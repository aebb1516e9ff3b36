"""Sweep throughput on this machine: cells/s with 1 and 2 Dask workers and their ratio,
and the overhead of a sweep cell against a bare ``simulate`` call (medians).

    .venv/bin/python benchmarks/bench_sweep.py [--jobs 600] [--seeds 6]

Caching is off (or in a temporary directory) so every cell is simulated. "Steady"
throughput counts cells from the first result to the last, leaving out cluster
start-up and the workers' first imports; "wall" includes them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import fitgpp
from fitgpp.sweep import Experiment, Workload, cells_of, run_sweep
from fitgpp.workload import load_model, synthesize


def experiment(jobs: int, seeds: int) -> Experiment:
    return Experiment(workload=Workload(model="paper-default", n_jobs=jobs, load=0.9),
                      policies={"fifo": {}, "fitgpp": {"s": [2.0, 4.0, 8.0]}, "lrtp": {},
                                "rand": {}},
                      seeds=list(range(seeds)))


def timed_sweep(exp, **kw):
    stamps = []
    t0 = time.perf_counter()
    run_sweep(exp, progress=lambda done, total: stamps.append(time.perf_counter()), **kw)
    wall = time.perf_counter() - t0
    stamps = stamps[1:]  # the first call reports the cached cells, before any work
    return wall, stamps, t0


def bare_simulate(exp) -> list[float]:
    model = load_model(exp.workload.model)
    traces = {s: synthesize(model, n_jobs=exp.workload.n_jobs, seed=s, load=exp.workload.load,
                            cluster=exp.cluster) for s in exp.seeds}
    times = []
    for cell in cells_of(exp):
        t = time.perf_counter()
        fitgpp.simulate(traces[cell.seed], exp.cluster, cell.policy, tick=exp.tick,
                        **dict(cell.params))
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=600, help="jobs per workload (default 600)")
    ap.add_argument("--seeds", type=int, default=6, help="seeds (default 6; 6 cells per seed)")
    args = ap.parse_args()
    exp = experiment(args.jobs, args.seeds)
    n = len(cells_of(exp))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{n} cells: 6 policy configurations x {args.seeds} seeds, {args.jobs} jobs each, "
          f"on {exp.cluster.describe()}")

    bare_simulate(exp)  # warm up: imports, caches
    bare = statistics.median(bare_simulate(exp))
    with tempfile.TemporaryDirectory() as d:
        wall0, stamps, t0 = timed_sweep(exp, workers=0, cache=d)
    per_cell = statistics.median(b - a for a, b in zip([t0, *stamps], stamps))
    print(f"bare simulate: median {1e3 * bare:.1f} ms per call")
    print(f"serial sweep (workers=0, cache on): median {1e3 * per_cell:.1f} ms per cell, "
          f"overhead {1e3 * (per_cell - bare):+.1f} ms per cell "
          f"({100 * (per_cell - bare) / bare:+.0f} %), wall {wall0:.2f} s")

    rates = {}
    for w in (1, 2):
        wall, stamps, _ = timed_sweep(exp, workers=w, cache=False)
        steady = (len(stamps) - 1) / (stamps[-1] - stamps[0])
        rates[w] = (n / wall, steady)
        per = w / steady
        print(f"{w} worker{'s' if w > 1 else ' '}: wall {wall:.2f} s = {n / wall:.2f} cells/s; "
              f"steady {steady:.2f} cells/s; {1e3 * per:.1f} ms of worker time per cell, "
              f"overhead {1e3 * (per - bare):+.1f} ms vs bare simulate")
    print(f"ratio 2 workers / 1 worker: wall {rates[2][0] / rates[1][0]:.2f}x, "
          f"steady {rates[2][1] / rates[1][1]:.2f}x")


if __name__ == "__main__":
    main()
