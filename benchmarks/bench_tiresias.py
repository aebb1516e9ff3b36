"""fitgpp against Tiresias's own simulator, job by job, on the same traces.

Tiresias (Gu et al., NSDI '19) ships a Python simulator (github.com/SymbioticLab/Tiresias,
folder ``simulator``). Give its folder as ``--tiresias PATH`` or in ``TIRESIAS_SIM``; without
it this script says so and exits 0. It is Python-2-era code: the script copies it to a
temporary folder and, for python3, replaces ``sys.maxint`` by ``sys.maxsize`` there (the
only change it needs); nothing of it is kept.

For each trace (Poisson arrivals at an offered GPU load, 1-s times; GPUs 1-32 in powers of
two; lognormal durations with a heavy tail) it writes the trace in Tiresias's format with
:func:`fitgpp.sim.tiresias.to_tiresias`, reads that file back with
:func:`fitgpp.sim.tiresias.from_tiresias`, and runs three pairs:

- Tiresias ``fifo`` (yarn placement) vs fitgpp FIFO, 64 nodes x 8 GPUs;
- Tiresias ``fjf`` (yarn) vs fitgpp PRIO with every job TE, 64 x 8;
- Tiresias ``dlas-gpu`` (count placement) vs fitgpp LAS, one node of 512 GPUs (with
  ``--demotion exact tiresias``, one row per LAS demotion mode),

all with tick 1 s, printing mean / median / p95 job completion time (JCT = finish - submit)
of each, the per-job Pearson correlation of JCTs and the share of identical JCTs.

    python benchmarks/bench_tiresias.py [--tiresias PATH] [--jobs 1000 5000]
                                        [--loads 0.9 1.5] [--seed 0]
                                        [--demotion exact tiresias]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

#: (tiresias schedule, tiresias placement, cluster spec row, fitgpp policy, fitgpp class, nodes, gpus)
PAIRS = [("fifo", "yarn", "1,64,8,64,256", "fifo", "BE", 64, 8),
         ("fjf", "yarn", "1,64,8,64,256", "prio", "TE", 64, 8),
         ("dlas-gpu", "count", "1,1,512,64,256", "las", "BE", 1, 512)]


def make_trace(n: int, load: float, seed: int) -> pd.DataFrame:
    """A GPU-only BE trace in the SPEC schema, whole seconds, offered load ``load`` on 512 GPUs."""
    rng = np.random.default_rng(seed)
    gpu = rng.choice([1, 2, 4, 8, 16, 32], n, p=[0.45, 0.2, 0.15, 0.12, 0.05, 0.03])
    dur = np.ceil(np.minimum(rng.lognormal(np.log(1200), 1.6, n), 20 * 86400))
    rate = load * 512 / float((gpu * dur).mean())
    submit = np.floor(np.cumsum(rng.exponential(1 / rate, n)))
    tasks = np.where(gpu > 8, gpu // 8, 1)
    return pd.DataFrame({"job_id": np.arange(n), "cls": "BE", "submit_time": submit,
                         "duration": dur, "gpu": np.minimum(gpu, 8), "cpu_milli": 0,
                         "mem_mib": 0, "grace_period": 0.0, "tasks": tasks})


def tiresias_copy(src: Path, into: Path) -> Path:
    sim = into / "tiresias"
    shutil.copytree(src, sim, ignore=shutil.ignore_patterns("*.pyc", "__pycache__"))
    if sys.version_info >= (3,):
        for f in sim.glob("*.py"):
            f.write_text(f.read_text().replace("sys.maxint", "sys.maxsize"))
    return sim


def run_tiresias(sim: Path, trace: Path, schedule: str, scheme: str, spec: str,
                 work: Path) -> pd.Series:
    spec_file = work / f"spec-{schedule}.csv"
    spec_file.write_text("num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,"
                         f"mem_p_node\n{spec}\n")
    log = work / f"log-{schedule}"
    cmd = [sys.executable, "run_sim.py", f"--cluster_spec={spec_file}", f"--scheme={scheme}",
           f"--trace_file={trace}", f"--schedule={schedule}", f"--log_path={log}"]
    done = subprocess.run(cmd, cwd=sim, capture_output=True, text=True)
    if done.returncode != 0 or not (log / "job.csv").exists():
        raise RuntimeError(f"Tiresias {schedule} failed:\n{done.stderr[-2000:]}")
    jobs = pd.read_csv(log / "job.csv")
    return jobs.set_index("job_id")["JCT"].astype(float).sort_index()


def run_fitgpp(trace: Path, policy, cls: str, nodes: int, gpus: int) -> pd.Series:
    import fitgpp
    from fitgpp.sim.tiresias import from_tiresias
    jobs = from_tiresias(trace, node_gpu=gpus, cls=cls)
    cluster = fitgpp.Cluster.homogeneous(nodes, gpus, 96_000, 786_432)
    ds = fitgpp.simulate(jobs, cluster, policy, tick=1)
    jct = ds["finish"].to_series() - ds["submit_time"].to_series()
    return jct.astype(float).sort_index()


def row(name: str, a: pd.Series, b: pd.Series, secs: tuple[float, float]) -> str:
    a, b = a.align(b, join="inner")
    stats = [f(x) for x in (a, b) for f in (np.mean, np.median, lambda v: np.percentile(v, 95))]
    rel = [100 * (stats[3 + k] / stats[k] - 1) for k in range(3)]
    corr = float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else float("nan")
    same = 100 * float((np.abs(a - b) < 1e-9).mean())
    return (f"{name:<24} {stats[0]:>10.0f} {stats[3]:>10.0f} {rel[0]:>+7.2f}% "
            f"{stats[1]:>9.0f} {stats[4]:>9.0f} {rel[1]:>+7.2f}% "
            f"{stats[2]:>10.0f} {stats[5]:>10.0f} {rel[2]:>+7.2f}% "
            f"{corr:>9.5f} {same:>7.2f}% {secs[0]:>6.1f} {secs[1]:>6.1f}")


HEADER = (f"{'pair (Tiresias = fitgpp)':<24} {'T mean':>10} {'f mean':>10} {'d':>8} "
          f"{'T med':>9} {'f med':>9} {'d':>8} {'T p95':>10} {'f p95':>10} {'d':>8} "
          f"{'corr':>9} {'same':>8} {'T s':>6} {'f s':>6}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiresias", default=os.environ.get("TIRESIAS_SIM"),
                    help="Tiresias's simulator folder (default: $TIRESIAS_SIM)")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1000, 5000])
    ap.add_argument("--loads", type=float, nargs="+", default=[0.9, 1.5])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pairs", nargs="+", default=[p[0] for p in PAIRS],
                    choices=[p[0] for p in PAIRS])
    ap.add_argument("--demotion", nargs="+", default=["exact"], choices=["exact", "tiresias"],
                    help="LAS demotion mode(s) compared with dlas-gpu, one row each "
                         "(default: exact)")
    args = ap.parse_args(argv)
    src = Path(args.tiresias) if args.tiresias else None
    if src is None or not (src / "run_sim.py").is_file():
        print("Tiresias's simulator is not available (give --tiresias PATH or TIRESIAS_SIM, "
              "the folder holding run_sim.py); nothing compared.")
        return 0
    from fitgpp.sim.tiresias import to_tiresias
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sim = tiresias_copy(src, work)
        print(HEADER)
        for n in args.jobs:
            for load in args.loads:
                trace = work / f"trace-{n}-{load}.csv"
                to_tiresias(make_trace(n, load, args.seed), trace)
                for schedule, scheme, spec, policy, cls, nodes, gpus in PAIRS:
                    if schedule not in args.pairs:
                        continue
                    t0 = time.perf_counter()
                    a = run_tiresias(sim, trace, schedule, scheme, spec, work)
                    t1 = time.perf_counter()
                    modes = args.demotion if policy == "las" else [None]
                    for mode in modes:
                        t2 = time.perf_counter()
                        pol = policy
                        if mode is not None:
                            from fitgpp.sim.policies.las import Las
                            pol = Las(demotion=mode)
                        b = run_fitgpp(trace, pol, cls, nodes, gpus)
                        t3 = time.perf_counter()
                        name = f"{n} jobs, load {load} {schedule}"
                        if len(modes) > 1 or mode not in (None, "exact"):
                            name += f" ({mode})"
                        print(row(name, a, b, (t1 - t0, t3 - t2)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
