"""LAS against FIFO, and LAS as it is against LAS at an earlier commit, in one process.

On the heavy workload of ``bench_simulator.py`` (64 nodes x 8 GPUs, offered load 0.95) it
times whole ``fitgpp.simulate`` calls in CPU seconds, FIFO, LAS now and LAS at ``--before``
(default: the commit before LAS was made incremental) taking turns, ``--repeat`` times each,
and prints the medians and their ratios. The earlier LAS is read with ``git show`` into a
temporary module (its relative imports pointed at this package's engine and policy base);
nothing of it stays in the package. Both LAS results are compared variable by variable
(job and time variables) and the script fails if they differ.

    python benchmarks/bench_las.py [--jobs 20000] [--repeat 3] [--before COMMIT] [--seed 0]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: the last commit with the LAS that re-planned every running job on every visit
BEFORE = "9747320"
PATHS = ("fitgpp/sim/policies/las.py", "fitgpp/policies/las.py")


def old_las(commit: str):
    """The ``Las`` class of ``las.py`` at ``commit``, loaded from a temporary file."""
    import fitgpp
    engine_mod = _engine_module()
    base_mod = fitgpp.PolicyError.__module__
    for path in PATHS:
        got = subprocess.run(["git", "-C", str(HERE.parent), "show", f"{commit}:{path}"],
                             capture_output=True, text=True)
        if got.returncode == 0:
            break
    else:
        raise SystemExit(f"no las.py at commit {commit}")
    src = (got.stdout.replace("from ..engine import", f"from {engine_mod} import")
           .replace("from .base import", f"from {base_mod} import"))
    tmp = Path(tempfile.mkdtemp()) / f"las_{commit}.py"
    tmp.write_text(src)
    spec = importlib.util.spec_from_file_location(tmp.stem, tmp)
    mod = sys.modules[tmp.stem] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Las


def _engine_module() -> str:
    """Where the engine lives now (before and after the layout move)."""
    for name in ("fitgpp.sim.engine", "fitgpp.engine"):
        try:
            __import__(name)
            return name
        except ImportError:
            continue
    raise SystemExit("cannot find fitgpp's engine module")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", default=BEFORE)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    import xarray as xr

    import fitgpp
    from bench_simulator import CPU, GPU, MEM, NODES, heavy_workload
    Old = old_las(a.before)
    df = heavy_workload(a.jobs, seed=a.seed)
    cluster = fitgpp.Cluster.homogeneous(NODES, GPU, CPU, MEM)
    fitgpp.simulate(heavy_workload(200), cluster, "las")  # the first call's imports
    runs = {"fifo": "fifo", "las": "las", f"las@{a.before}": Old()}
    cpu = {k: [] for k in runs}
    out = {}
    for _ in range(a.repeat):
        for name, policy in runs.items():
            c0 = time.process_time()
            out[name] = fitgpp.simulate(df, cluster, policy)
            cpu[name].append(time.process_time() - c0)
    new, old = out["las"].copy(), out[f"las@{a.before}"].copy()
    new.attrs, old.attrs = {}, {}
    xr.testing.assert_identical(new, old)
    med = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"{a.jobs} jobs, 64 nodes x 8 GPUs, offered load 0.95, seed {a.seed}; "
          f"CPU s of whole simulate calls, medians of {a.repeat}")
    for k, v in med.items():
        print(f"{k:<16}{v:>8.2f} s   {v / med['fifo']:>6.1f} x FIFO")
    print(f"LAS now is {med[f'las@{a.before}'] / med['las']:.2f} x faster than at {a.before}; "
          f"results identical ({int(out['las'].preemptions.sum())} preemptions)")


if __name__ == "__main__":
    main()
