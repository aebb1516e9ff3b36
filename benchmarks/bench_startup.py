"""Start-up: how long small commands take as whole processes, and which imports cost most.

Each case runs as a fresh process (``python -m fitgpp ...`` or ``python -c ...``) in a
temporary directory, ``--repeat`` times after one warm-up run (which fills the OS file cache
and writes bytecode); the median and the spread of wall times are printed, and the median
CPU time (user + system) of the process, which a busy machine inflates much less. Then one run of
the 10-job ``simulate`` under ``python -X importtime`` lists the imports that cost most:
the top-level ones (cumulative, what a command pays for each package it imports) and the
modules with the most time of their own.

The cases: ``import fitgpp``; ``fitgpp --help``; ``fitgpp synth paper-default --jobs 10``;
``fitgpp simulate`` of that 10-job trace on 2 nodes with ``--out x.nc`` (the issue's target:
at most 0.7 s on an idle machine); ``import xarray, altair`` plainly and after ``import fitgpp``
(which defers jsonschema's RFC 3987 grammars), and ``import fitgpp.studies`` (target: within
1.5 x the deferred one). Then a first and a second ``simulate()`` of a 200-job trace in one
process, imports done before either: the modules ``fitgpp.simulate`` imports on its first
call (the run and the steadiness verdict), so that what is left is one-time work of the call
itself (target: first within 1.5 x the second; the difference is printed in ms too, since a
cheaper call raises the ratio of the same one-time work). Wall time depends on the machine's
load: the load average is printed with the results.

    python benchmarks/bench_startup.py [--repeat 7] [--top 15]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = {
    "import fitgpp": ["-c", "import fitgpp"],
    "fitgpp --help": ["-m", "fitgpp", "--help"],
    "fitgpp synth (10 jobs)": ["-m", "fitgpp", "synth", "paper-default", "--jobs", "10",
                               "--seed", "0", "--out", "s.csv", "--overwrite"],
    "fitgpp simulate (10 jobs) --out x.nc": ["-m", "fitgpp", "simulate", "t10.csv",
                                             "--nodes", "2", "--out", "x.nc", "--overwrite"],
    "import xarray, altair": ["-c", "import xarray, altair"],
    "import xarray, altair (IRI deferred)": ["-c", "import fitgpp, xarray, altair"],
    "import fitgpp.studies": ["-c", "import fitgpp.studies"],
}

#: The children's environment: bytecode written and read, as on an installed copy (pip
#: compiles a wheel's modules; an editable one writes them at the first import). Some
#: machines set PYTHONDONTWRITEBYTECODE, which makes every process compile each module it
#: imports from source: about 1 ms per module of fitgpp, a third of a first simulate().
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
DROPPED = "PYTHONDONTWRITEBYTECODE" in os.environ

#: a first and a second simulate() in one process (imports done before either): CPU seconds
FIRST_SECOND = """
import json, sys, time
import fitgpp, fitgpp.sim.run, fitgpp.analysis.stability  # what fitgpp.simulate imports
from fitgpp.workload import synthesize
cluster = fitgpp.Cluster.homogeneous(8, 8, 96000, 786432)
trace = synthesize("paper-default", n_jobs=int(sys.argv[1]), seed=0, cluster=cluster)
cpu = []
for _ in range(2):
    c = time.process_time()
    fitgpp.simulate(trace, cluster, "fitgpp", segments=True)
    cpu.append(time.process_time() - c)
print(json.dumps(cpu))
"""


def first_second(jobs: int, repeat: int) -> tuple[float, float, float]:
    """Medians over ``repeat`` fresh processes: (first call, second call, first / second)."""
    runs = []
    for k in range(repeat + 1):  # the first writes the bytecode; not counted
        out = subprocess.run([sys.executable, "-c", FIRST_SECOND, str(jobs)], check=True,
                             capture_output=True, text=True, env=ENV).stdout
        if k:
            runs.append(json.loads(out.splitlines()[-1]))
    return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
            statistics.median(r[0] / r[1] for r in runs))


def timed(args: list[str], cwd: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=ENV)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def importtime(args: list[str], cwd: Path) -> list[tuple[int, int, int, str]]:
    """(self us, cumulative us, depth, module) for each import of one run."""
    r = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=cwd, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
    rows = []
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$", line)
        if m:
            rows.append((int(m[1]), int(m[2]), (len(m[3]) - 1) // 2, m[4]))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per case (default 7)")
    ap.add_argument("--top", type=int, default=15, help="import offenders to list (default 15)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        subprocess.run([sys.executable, "-m", "fitgpp", "synth", "paper-default", "--jobs", "10",
                        "--seed", "0", "--out", "t10.csv"], cwd=cwd, check=True,
                       stdout=subprocess.DEVNULL, env=ENV)
        print(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f} "
              f"(1 min) before the runs; {args.repeat} runs per case after a warm-up")
        if DROPPED:
            print("PYTHONDONTWRITEBYTECODE is set here: unset for the measured processes, so "
                  "that they read bytecode as an installed copy does")
        print(f"{'case':<40} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU s':>7}")
        for name, case in CASES.items():
            timed(case, cwd)
            runs = [timed(case, cwd) for _ in range(args.repeat)]
            walls = [w for w, _ in runs]
            print(f"{name:<40} {statistics.median(walls):>9.3f} {min(walls):>7.3f} "
                  f"{max(walls):>7.3f} {statistics.median(c for _, c in runs):>7.3f}")
        print(f"load average {os.getloadavg()[0]:.2f} (1 min) after the runs")
        print(f"\nfirst and second simulate() in one process, 200-job trace, segments (CPU s, "
              f"medians of {args.repeat} processes): ", end="")
        first, second, ratio = first_second(200, args.repeat)
        print(f"first {first:.4f}, second {second:.4f}, first/second {ratio:.2f}, first - "
              f"second {(first - second) * 1000:.1f} ms")
        rows = importtime(CASES["fitgpp simulate (10 jobs) --out x.nc"], cwd)
    total = sum(r[0] for r in rows)
    print(f"\n-X importtime of the simulate case: {total / 1e6:.3f} s in {len(rows)} imports")
    print("top-level imports by cumulative time:")
    for self_us, cum_us, depth, mod in sorted((r for r in rows if r[2] == 0),
                                              key=lambda r: -r[1])[:args.top]:
        print(f"  {cum_us / 1e3:8.1f} ms  {mod}")
    print("modules by time of their own:")
    for self_us, cum_us, depth, mod in sorted(rows, key=lambda r: -r[0])[:args.top]:
        print(f"  {self_us / 1e3:8.1f} ms  {mod}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
