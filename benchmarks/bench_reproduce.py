"""A warm ``fitgpp reproduce`` against a cold one: whole processes, a fresh cache.

One cold run fills a temporary cache (``FITGPP_CACHE``), then ``--repeat`` warm runs read it;
prints wall and CPU seconds (user + system of the process and its children: the Dask
workers of a full cold run included) of the cold run and the medians of the warm ones, the
warm / cold ratio (issue 16's target: a warm full run at most 10 % of the cold one, and no
simulation, which the command's own log states), and the simulation seconds the cache's
cells recorded (their sum: what the cold run's simulations cost, wherever they ran).

Quick size by default (on an idle 2-core machine about a minute cold, a quarter of that
warm); ``--full`` runs the paper's size: 10,000 jobs x 5 seeds per study, the run-length
study up to 100,000 jobs, RQ7's LAS, Gittins and SRTF runs; its cold run took 698 s (692
CPU-s, 1,718 cells) on this project's shared 2-core machine on 2026-12-04, a warm one 29 s,
14 s after issue 26's fourth round (before issue 26: 21 minutes, 12 CPU minutes, for 1,109
cells).
``--cache DIR`` keeps the cache in DIR (made if missing); with ``--warm-only`` the cold run
is skipped and DIR must already be filled, e.g. by a cold run that was timed by itself. On a
shared machine compare CPU seconds.

    python benchmarks/bench_reproduce.py [--full] [--repeat 3] [--cache DIR [--warm-only]]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(args: list[str], env: dict) -> tuple[float, float, str]:
    """(wall s, CPU s, output) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "fitgpp", *args], env=env, check=True,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r.stdout


def simulated(log: str) -> int:
    """Cells simulated, summed over the research questions of a reproduce log."""
    return sum(int(n) for n in re.findall(r"\((\d+) simulated", log))


def recorded(cache: Path) -> tuple[int, int, float, float]:
    """(cells, cells with a recorded cost, wall s, CPU s summed over those) of a cache."""
    from fitgpp.sweep.cache import _decode
    n = timed = 0
    wall = cpu = 0.0
    for path in (cache / "sweep-cells").glob("*/*.cell"):
        n += 1
        try:
            entry = _decode(path.read_bytes(), path.stem)
            w, c = float(entry["compute_wall_s"]), float(entry["compute_cpu_s"])
        except (KeyError, ValueError, OSError):
            continue    # written before cells recorded their cost, or unreadable
        timed, wall, cpu = timed + 1, wall + w, cpu + c
    return n, timed, wall, cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true", help="the paper's size (default: --quick)")
    ap.add_argument("--repeat", type=int, default=3, help="warm runs (default 3)")
    ap.add_argument("--cache", type=Path, help="keep the cache here (default: a temporary one)")
    ap.add_argument("--warm-only", action="store_true",
                    help="no cold run: --cache is filled already")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat must be at least 1, got {args.repeat}")
    if args.warm_only and not (args.cache and (args.cache / "sweep-cells").is_dir()):
        ap.error("--warm-only needs --cache DIR holding a filled cache (DIR/sweep-cells)")
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache or Path(tmp) / "cache"
        env = {**os.environ, "FITGPP_CACHE": str(cache)}
        size = [] if args.full else ["--quick"]
        print(f"{'full' if args.full else 'quick'} size, load average "
              f"{os.getloadavg()[0]:.2f} (1 min) before the runs")
        wall = cpu = None
        if not args.warm_only:
            wall, cpu, log = run(["reproduce", *size, "--out", str(Path(tmp) / "cold")], env)
            print(f"cold: {wall:7.1f} s wall {cpu:7.1f} s CPU, {simulated(log)} cells simulated")
        warm = [run(["reproduce", *size, "--out", str(Path(tmp) / f"warm{i}")], env)
                for i in range(args.repeat)]
        w = statistics.median(x[0] for x in warm)
        c = statistics.median(x[1] for x in warm)
        print(f"warm: {w:7.1f} s wall {c:7.1f} s CPU (medians of {args.repeat}), "
              f"{max(simulated(x[2]) for x in warm)} cells simulated")
        n, timed, sim_wall, sim_cpu = recorded(cache)
        print(f"cells in the cache: {n}; the {timed} that recorded their simulation took "
              f"{sim_wall:.1f} s wall, {sim_cpu:.1f} s CPU in all")
        if cpu is not None:
            print(f"warm / cold: {w / wall:.1%} wall, {c / cpu:.1%} CPU; load average "
                  f"{os.getloadavg()[0]:.2f} after the runs")
        elif timed:
            print(f"warm / recorded simulation alone (a lower bound of cold): {c / sim_cpu:.1%} "
                  f"CPU; load average {os.getloadavg()[0]:.2f} after the runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
