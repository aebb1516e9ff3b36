"""What the capacity ledger costs the simulator: the code before it and after it, in one run.

Runs ``benchmarks/bench_simulator.py``'s child (one ``simulate`` on its heavy workload, in a
fresh process, after a warm-up) from two source trees alternately, ``--repeat`` times each,
and prints the medians of CPU and wall seconds and their ratio (after / before). CPU time is
what to read on a shared machine (wall time moves with the load of other work).

    git archive <commit before the ledger> | tar -x -C /tmp/before
    python benchmarks/bench_ledger.py --before /tmp/before --after . [--sizes 100000]
                                      [--policies fifo fitgpp las] [--repeat 5] [--gangs]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path


def child(tree: Path, policy: str, n: int, gangs: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, str(tree / "benchmarks" / "bench_simulator.py"),
                          "--child", policy, str(n), *(["--gangs"] if gangs else [])],
                         capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--policies", nargs="+", default=["fifo", "fitgpp", "las"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--gangs", action="store_true")
    a = ap.parse_args()
    print(f"before: {a.before.resolve()}\nafter:  {a.after.resolve()}"
          + ("\ngangs and restart overheads" if a.gangs else ""))
    print(f"{'policy':<8}{'jobs':>9}{'CPU s before':>14}{'CPU s after':>13}{'ratio':>8}"
          f"{'wall before':>13}{'wall after':>12}", flush=True)
    for n in a.sizes:
        for p in a.policies:
            got = {"before": [], "after": []}
            for _ in range(a.repeat):  # alternate, so both see the same machine load
                for k in ("before", "after"):
                    got[k].append(child(getattr(a, k), p, n, a.gangs))
            med = {k: {m: statistics.median(r[m] for r in v) for m in ("cpu", "wall")}
                   for k, v in got.items()}
            print(f"{p:<8}{n:>9}{med['before']['cpu']:>14.2f}{med['after']['cpu']:>13.2f}"
                  f"{med['after']['cpu'] / med['before']['cpu']:>8.3f}"
                  f"{med['before']['wall']:>13.2f}{med['after']['wall']:>12.2f}", flush=True)


if __name__ == "__main__":
    main()
