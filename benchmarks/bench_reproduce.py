"""A warm ``fitgpp reproduce`` against a cold one: whole processes, a fresh cache.

One cold run fills a temporary cache (``FITGPP_CACHE``), then ``--repeat`` warm runs read it;
prints wall and CPU seconds (user + system of the process and its children: the Dask
workers of a full cold run included) of the cold run and the medians of the warm ones, and the
warm / cold ratio (issue 10's target: a warm full run at most 10 % of the cold one, and no
simulation, which the command's own log states). Quick size by default; ``--full`` runs the
paper's size (about 2 minutes cold on 2 cores). On a shared machine compare CPU seconds.

    python benchmarks/bench_reproduce.py [--full] [--repeat 3]
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true", help="the paper's size (default: --quick)")
    ap.add_argument("--repeat", type=int, default=3, help="warm runs (default 3)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "FITGPP_CACHE": str(Path(tmp) / "cache")}
        size = [] if args.full else ["--quick"]
        print(f"{'full' if args.full else 'quick'} size, load average "
              f"{os.getloadavg()[0]:.2f} (1 min) before the runs")
        wall, cpu, log = run(["reproduce", *size, "--out", str(Path(tmp) / "cold")], env)
        print(f"cold: {wall:7.1f} s wall {cpu:7.1f} s CPU, {simulated(log)} cells simulated")
        warm = [run(["reproduce", *size, "--out", str(Path(tmp) / f"warm{i}")], env)
                for i in range(args.repeat)]
        w = statistics.median(x[0] for x in warm)
        c = statistics.median(x[1] for x in warm)
        print(f"warm: {w:7.1f} s wall {c:7.1f} s CPU (medians of {args.repeat}), "
              f"{max(simulated(x[2]) for x in warm)} cells simulated")
        print(f"warm / cold: {w / wall:.1%} wall, {c / cpu:.1%} CPU; load average "
              f"{os.getloadavg()[0]:.2f} after the runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
