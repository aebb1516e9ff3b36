"""fitgpp against Tiresias's own simulator, job by job, on the same traces.

Tiresias (Gu et al., NSDI '19) ships a Python simulator (github.com/SymbioticLab/Tiresias,
folder ``simulator``). Give its folder as ``--tiresias PATH`` or in ``TIRESIAS_SIM``; without
it this script says so and exits 0. It is Python-2-era code: the script copies it to a
temporary folder and, for python3, replaces ``sys.maxint`` by ``sys.maxsize`` there, and
makes ``gittins`` store its distribution where its rank lookup reads it (:data:`GITTINS_FIX`;
as shipped it fails at its first event); nothing of it is kept.

For each trace (Poisson arrivals at an offered GPU load, 1-s times; GPUs 1-32 in powers of
two; lognormal durations with a heavy tail) it writes the trace in Tiresias's format with
:func:`fitgpp.sim.tiresias.to_tiresias`, reads that file back with
:func:`fitgpp.sim.tiresias.from_tiresias`, and runs three pairs:

- Tiresias ``fifo`` (yarn placement) vs fitgpp FIFO, 64 nodes x 8 GPUs;
- Tiresias ``fjf`` (yarn) vs fitgpp PRIO with every job TE, 64 x 8;
- Tiresias ``dlas-gpu`` (count placement) vs fitgpp LAS, one node of 512 GPUs;
- Tiresias ``sjf``, ``lpjf``, ``shortest``, ``shortest-gpu``, ``dlas``, ``gittins`` (count
  placement) vs fitgpp ``sjf``, ``lpjf``, ``shortest``, ``shortest-gpu``, ``dlas``,
  ``gittins``, one node of 512 GPUs

Tiresias's ``gittins`` reads its job-size distribution from ``yarn-gput1000.csv`` in its
folder: the script writes there the sizes fitted from the trace
(:func:`fitgpp.sim.policies.gittins_index.fit_trace`, GPUs x duration), which is what
fitgpp's ``gittins`` fits by default, so both know the same distribution.

(with ``--modes exact tiresias``, one row per ``mode`` of the policies that have that field:
LAS, SRTF, SRSF, LPJF, Gittins), all with tick 1 s, printing mean / median / p95
job completion time (JCT = finish - submit) of each, the per-job Pearson correlation of
JCTs, the share of identical JCTs, and the seconds each simulator took in its own process
(Tiresias: its ``main()``; fitgpp: ``simulate``, after the same run untimed:
:func:`warm_up`; with ``--repeat N`` the median of N such runs), their ratio, and per
trace fitgpp's time
per job of each policy against LAS's on the same trace.

    python benchmarks/bench_tiresias.py [--tiresias PATH] [--jobs 1000 5000]
                                        [--loads 0.9 1.5] [--seed 0] [--pairs ...]
                                        [--modes exact tiresias] [--repeat N]
                                        [--fitgpp-only N]
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
         ("dlas-gpu", "count", "1,1,512,64,256", "las", "BE", 1, 512),
         ("sjf", "count", "1,1,512,64,256", "sjf", "BE", 1, 512),
         ("lpjf", "count", "1,1,512,64,256", "lpjf", "BE", 1, 512),
         ("shortest", "count", "1,1,512,64,256", "shortest", "BE", 1, 512),
         ("shortest-gpu", "count", "1,1,512,64,256", "shortest-gpu", "BE", 1, 512),
         ("dlas", "count", "1,1,512,64,256", "dlas", "BE", 1, 512),
         ("gittins", "count", "1,1,512,64,256", "gittins", "BE", 1, 512)]
#: runs Tiresias's main() in its process and writes the seconds it took (our wrapper)
TIMER = """import sys, time
out = sys.argv[1]
sys.argv = ["run_sim.py"] + sys.argv[2:]
import run_sim
t0 = time.perf_counter()
run_sim.main()
with open(out, "w") as f:
    f.write(repr(time.perf_counter() - t0))
"""


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


#: Tiresias's ``gittins`` as shipped stops at its first event: ``main`` keeps the parsed
#: distribution in a local variable, and the rank lookup reads ``JOBS.job_dist_data``, which
#: only its other schedulers set (a TypeError on None). The one fix: set it there too.
GITTINS_FIX = ("        job_dist_data = parse_job_dist()\n        gittins_sim_jobs(",
               "        job_dist_data = JOBS.job_dist_data = parse_job_dist()\n"
               "        gittins_sim_jobs(")


def tiresias_copy(src: Path, into: Path) -> Path:
    sim = into / "tiresias"
    shutil.copytree(src, sim, ignore=shutil.ignore_patterns("*.pyc", "__pycache__"))
    if sys.version_info >= (3,):
        for f in sim.glob("*.py"):
            f.write_text(f.read_text().replace("sys.maxint", "sys.maxsize"))
    run_sim = sim / "run_sim.py"
    text = run_sim.read_text()
    if text.count(GITTINS_FIX[0]) != 1:
        raise RuntimeError(f"{run_sim}: the gittins branch of main() is not as expected "
                           "(GITTINS_FIX); this Tiresias is not the one the script knows")
    run_sim.write_text(text.replace(*GITTINS_FIX))
    (sim / "fitgpp_timer.py").write_text(TIMER)
    return sim


def run_tiresias(sim: Path, trace: Path, schedule: str, scheme: str, spec: str,
                 work: Path) -> tuple[pd.Series, float]:
    """Per-job JCTs of one Tiresias run, and the seconds its main() took."""
    spec_file = work / f"spec-{schedule}.csv"
    spec_file.write_text("num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,"
                         f"mem_p_node\n{spec}\n")
    log, secs = work / f"log-{schedule}", work / f"secs-{schedule}"
    cmd = [sys.executable, "fitgpp_timer.py", str(secs), f"--cluster_spec={spec_file}",
           f"--scheme={scheme}", f"--trace_file={trace}", f"--schedule={schedule}",
           f"--log_path={log}"]
    done = subprocess.run(cmd, cwd=sim, capture_output=True, text=True)
    if done.returncode != 0 or not (log / "job.csv").exists():
        raise RuntimeError(f"Tiresias {schedule} failed:\n{done.stderr[-2000:]}")
    jobs = pd.read_csv(log / "job.csv")
    return jobs.set_index("job_id")["JCT"].astype(float).sort_index(), float(secs.read_text())


def run_fitgpp(trace: Path, policy, cls: str, nodes: int, gpus: int,
               clock=time.perf_counter, repeat: int = 1) -> tuple[pd.Series, float]:
    """Per-job JCTs of one fitgpp run, and the seconds ``simulate`` took by ``clock`` (a warm
    call: see :func:`warm_up`; the median of ``repeat`` calls)."""
    import fitgpp
    from fitgpp.sim.tiresias import from_tiresias
    jobs = from_tiresias(trace, node_gpu=gpus, cls=cls)
    cluster = fitgpp.Cluster.homogeneous(nodes, gpus, 96_000, 786_432)
    warm_up(jobs, cluster, policy)
    times = []
    for _ in range(repeat):
        t0 = clock()
        ds = fitgpp.simulate(jobs, cluster, policy, tick=1)
        times.append(clock() - t0)
    secs = float(np.median(times))
    jct = ds["finish"].to_series() - ds["submit_time"].to_series()
    return jct.astype(float).sort_index(), secs


def warm_up(jobs, cluster, policy) -> None:
    """The timed run's twin, untimed, first: a first ``simulate`` in a process also pays
    one-time imports (scipy.stats for the steadiness check of a long run: about 1 s here),
    which Tiresias's timer, started after ``import run_sim``, does not count; so each side
    times its run alone."""
    import fitgpp
    fitgpp.simulate(jobs, cluster, policy, tick=1)


def row(name: str, a: pd.Series, b: pd.Series, secs: tuple[float, float]) -> str:
    a, b = a.align(b, join="inner")
    stats = [f(x) for x in (a, b) for f in (np.mean, np.median, lambda v: np.percentile(v, 95))]
    rel = [100 * (stats[3 + k] / stats[k] - 1) for k in range(3)]
    corr = float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else float("nan")
    same = 100 * float((np.abs(a - b) < 1e-9).mean())
    return (f"{name:<34} {stats[0]:>8.0f} {stats[3]:>8.0f} {rel[0]:>+7.2f}% "
            f"{stats[1]:>7.0f} {stats[4]:>7.0f} {rel[1]:>+7.2f}% "
            f"{stats[2]:>8.0f} {stats[5]:>8.0f} {rel[2]:>+7.2f}% "
            f"{corr:>8.5f} {same:>7.2f}% {secs[0]:>7.2f} {secs[1]:>6.2f} "
            f"{secs[0] / secs[1]:>6.0f}x")


HEADER = (f"{'pair (Tiresias = fitgpp)':<34} {'T mean':>8} {'f mean':>8} {'d':>8} "
          f"{'T med':>7} {'f med':>7} {'d':>8} {'T p95':>8} {'f p95':>8} {'d':>8} "
          f"{'corr':>8} {'same':>8} {'T s':>7} {'f s':>6} {'T/f':>7}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiresias", default=os.environ.get("TIRESIAS_SIM"),
                    help="Tiresias's simulator folder (default: $TIRESIAS_SIM)")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1000, 5000])
    ap.add_argument("--loads", type=float, nargs="+", default=[0.9, 1.5])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pairs", nargs="+", default=[p[0] for p in PAIRS],
                    choices=[p[0] for p in PAIRS])
    ap.add_argument("--modes", "--demotion", nargs="+", default=["exact"],
                    choices=["exact", "tiresias"],
                    help="the mode(s) of the policies that have a mode field (LAS, SRTF, "
                         "SRSF, LPJF, Gittins), one row each (default: exact; --demotion is "
                         "its old name)")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="fitgpp's seconds: the median of N warm runs (Tiresias runs once; "
                         "on a shared machine one short run is noisy)")
    ap.add_argument("--fitgpp-only", type=int, metavar="N", default=0,
                    help="time fitgpp alone, N runs of each policy (and mode), and print "
                         "the median CPU seconds; Tiresias is not run (nor needed)")
    args = ap.parse_args(argv)
    if args.fitgpp_only:
        return fitgpp_only(args)
    src = Path(args.tiresias) if args.tiresias else None
    if src is None or not (src / "run_sim.py").is_file():
        print("Tiresias's simulator is not available (give --tiresias PATH or TIRESIAS_SIM, "
              "the folder holding run_sim.py); nothing compared.")
        return 0
    from fitgpp.sim.policies.gittins_index import fit_trace, write_distribution
    from fitgpp.sim.tiresias import to_tiresias
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sim = tiresias_copy(src, work)
        print(HEADER)
        for n in args.jobs:
            for load in args.loads:
                trace = work / f"trace-{n}-{load}.csv"
                jobs = make_trace(n, load, args.seed)
                to_tiresias(jobs, trace)
                write_distribution(fit_trace(jobs, tick=1), sim / "yarn-gput1000.csv")
                per_job = {}
                for pair in PAIRS:
                    if pair[0] in args.pairs:
                        per_job.update(compare(sim, trace, work, pair, args.modes,
                                               f"{n} jobs, load {load}", args.repeat))
                if "las" in per_job:
                    print(f"  fitgpp s per 1000 jobs ({n} jobs, load {load}): " + ", ".join(
                        f"{k} {1000 * v / n:.3f} ({v / per_job['las']:.2f} x las)"
                        for k, v in per_job.items()), flush=True)
    return 0


def fitgpp_only(args) -> int:
    """``--fitgpp-only N``: the median CPU seconds of N warm fitgpp runs per policy and mode,
    on the same traces (for before/after figures of fitgpp alone; CPU time, which varies
    less than elapsed time on a shared machine; the ratios to Tiresias need the full run)."""
    from fitgpp.sim.policies import make_policy
    from fitgpp.sim.tiresias import to_tiresias
    print(f"{'trace':<20} {'policy (mode)':<26} {'median CPU s':>12} {'s/1000 jobs':>12}  runs (s)")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.jobs:
            for load in args.loads:
                trace = Path(tmp) / f"trace-{n}-{load}.csv"
                to_tiresias(make_trace(n, load, args.seed), trace)
                for _, _, _, policy, cls, nodes, gpus in PAIRS:
                    if not any(p[0] in args.pairs and p[3] == policy for p in PAIRS):
                        continue
                    param = mode_field(policy)
                    for mode in (args.modes if param else [None]):
                        pol = make_policy(policy, **({param: mode} if param else {}))
                        secs = [run_fitgpp(trace, pol, cls, nodes, gpus, time.process_time)[1]
                                for _ in range(args.fitgpp_only)]
                        med = float(np.median(secs))
                        name = policy + (f" ({mode})" if mode else "")
                        print(f"{f'{n} jobs, load {load}':<20} {name:<26} {med:>12.3f} "
                              f"{1000 * med / n:>12.3f}  " + " ".join(f"{x:.3f}" for x in secs),
                              flush=True)
    return 0


def compare(sim: Path, trace: Path, work: Path, pair, modes, what: str,
            repeat: int = 1) -> dict:
    """One Tiresias scheduler against its fitgpp policy, one row per mode; fitgpp's seconds
    per policy (its first mode)."""
    schedule, scheme, spec, policy, cls, nodes, gpus = pair
    a, t_secs = run_tiresias(sim, trace, schedule, scheme, spec, work)
    param = mode_field(policy)
    out = {}
    for mode in (modes if param else [None]):
        from fitgpp.sim.policies import make_policy
        pol = make_policy(policy, **({param: mode} if param else {}))
        b, f_secs = run_fitgpp(trace, pol, cls, nodes, gpus, repeat=repeat)
        out.setdefault(policy, f_secs)
        name = f"{what} {schedule}" + (f" ({mode})" if param and len(modes) > 1 or
                                       mode not in (None, "exact") else "")
        print(row(name, a, b, (t_secs, f_secs)), flush=True)
    return out


def mode_field(policy: str) -> str | None:
    """``"mode"`` if the policy has that field (its exact rule or Tiresias's behaviour), else
    None."""
    from fitgpp.sim.policies.registry import declared
    return "mode" if "mode" in declared(policy) else None


if __name__ == "__main__":
    sys.exit(main())
