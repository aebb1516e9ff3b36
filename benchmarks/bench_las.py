"""LAS against FIFO on three traces, and LAS as it is against LAS at an earlier commit, in one
process: issue 26's goal, LAS within 3x FIFO's CPU on the same trace, as printed ratios.

The traces: ``heavy`` (``bench_simulator.py``'s workload: 64 nodes x 8 GPUs, offered load
0.95, ``--jobs`` jobs), ``paper`` (``paper-default`` drawn by :func:`fitgpp.synthesize` at the
studies' load on their 16-node cluster, ``--paper-jobs`` jobs: RQ7's workload at its full
size) and ``one-node`` (``bench_tiresias.py``'s trace on one node of 512 GPUs, tick 1 s,
``--node-jobs`` jobs, each gang one task there). On each it times whole ``fitgpp.simulate``
calls in CPU seconds, FIFO, LAS now and LAS at ``--before`` taking turns, ``--repeat`` times
each after one discarded round (the first long run imports what the steadiness check needs),
and prints the medians and their ratios. The earlier LAS (``las.py``, and ``las_plan.py`` if it
uses one) is read with ``git show`` into temporary modules; nothing of it stays in the package.
Both LAS results are compared variable by variable (attributes aside: the policy's digest
hashes its code) and the script fails if they differ. A fourth run, ``las replayed``, carries
out LAS's own decisions recorded on that trace (:mod:`replay`) without deciding anything: the
engine's work for those decisions, a floor under any LAS on this engine; the script fails if
its finishes, starts, preemptions or nodes differ from LAS's, and prints how much of LAS's
ratio is that floor and how much is the deciding, per tick with a decision against what the
goal leaves for it. A fifth, timed run (:func:`anatomy`) bounds what a plan kept across ticks
and reused up to its first change could save: most plans follow an arrival, which changes the
plan from queue 0 on.

Then the growth: FIFO and LAS on the ``heavy`` workload at each of ``--growth`` sizes (one
run each, CPU microseconds per job): a policy whose cost per job grows with the run's length
has something that scales with the queue. ``--million`` adds one 1,000,000-job LAS run on
the same workload (CPU seconds of the simulate call, drawing aside; issue 26's goal: under
60), which takes minutes.

    python benchmarks/bench_las.py [--jobs 20000] [--paper-jobs 10000] [--node-jobs 5000]
                                   [--repeat 3] [--before COMMIT] [--traces heavy paper one-node]
                                   [--growth 10000 100000] [--million]

Run with ``PYTHONPATH`` at another tree (and ``--before ''``) to time that tree's FIFO and LAS.
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
import replay  # noqa: E402

#: main before this round of issue 26's LAS work (the waiting lists split by GPU demand)
BEFORE = "e17b7d5"
PATHS = ("fitgpp/sim/policies/las.py", "fitgpp/policies/las.py")
GOAL = 3.0  # LAS's CPU within this many times FIFO's
MILLION_GOAL = 60.0  # CPU seconds for a 1M-job LAS run


def _git_show(commit: str, path: str) -> str | None:
    got = subprocess.run(["git", "-C", str(HERE.parent), "show", f"{commit}:{path}"],
                         capture_output=True, text=True)
    return got.stdout if got.returncode == 0 else None


def _load(name: str, src: str):
    tmp = Path(tempfile.mkdtemp()) / f"{name}.py"
    tmp.write_text(src)
    spec = importlib.util.spec_from_file_location(name, tmp)
    mod = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def old_las(commit: str):
    """The ``Las`` class of ``las.py`` at ``commit`` (with its ``las_plan.py`` of then)."""
    import fitgpp
    engine_mod = _engine_module()
    base_mod = fitgpp.PolicyError.__module__
    for path in PATHS:
        src = _git_show(commit, path)
        if src is not None:
            break
    else:
        raise SystemExit(f"no las.py at commit {commit}")
    tag = "".join(c for c in commit if c.isalnum())
    src = (src.replace("from ..engine import", f"from {engine_mod} import")
           .replace("from .base import", f"from {base_mod} import"))
    plan_ref = "fitgpp.sim.policies.las_plan import"
    if plan_ref in src:
        plan = _git_show(commit, "fitgpp/sim/policies/las_plan.py")
        _load(f"las_plan_{tag}", plan)
        src = src.replace(plan_ref, f"las_plan_{tag} import")
    return _load(f"las_{tag}", src).Las


def _engine_module() -> str:
    """Where the engine lives now (before and after the layout move)."""
    for name in ("fitgpp.sim.engine", "fitgpp.engine"):
        try:
            __import__(name)
            return name
        except ImportError:
            continue
    raise SystemExit("cannot find fitgpp's engine module")


def traces(a) -> dict:
    """name -> (jobs, cluster, tick, description)."""
    import fitgpp
    from bench_simulator import CPU, GPU, MEM, NODES, heavy_workload
    out = {}
    if "heavy" in a.traces:
        out["heavy"] = (heavy_workload(a.jobs, seed=a.seed),
                        fitgpp.Cluster.homogeneous(NODES, GPU, CPU, MEM), 60,
                        f"{a.jobs} jobs, 64 nodes x 8 GPUs, load 0.95")
    if "paper" in a.traces:
        from fitgpp.sim.cluster import DEFAULT_CLUSTER, DEFAULT_LOAD
        from fitgpp.workload.synth import synthesize
        tr = synthesize("paper-default", a.paper_jobs, seed=a.seed, load=DEFAULT_LOAD,
                               cluster=DEFAULT_CLUSTER)
        out["paper"] = (tr, DEFAULT_CLUSTER, 60, f"paper-default, {a.paper_jobs} jobs, "
                        f"{DEFAULT_CLUSTER.describe()}, load {DEFAULT_LOAD}")
    if "one-node" in a.traces:
        from bench_tiresias import make_trace
        df = make_trace(a.node_jobs, 0.9, a.seed)
        df["gpu"], df["tasks"] = df["gpu"] * df["tasks"], 1
        out["one-node"] = (df, fitgpp.Cluster.homogeneous(1, 512, 96_000, 786_432), 1,
                           f"{a.node_jobs} jobs, one node of 512 GPUs, load 0.9, tick 1 s")
    return out


def measure(jobs, cluster, tick, runs: dict, repeat: int) -> tuple[dict, dict]:
    """Medians of CPU seconds per run name (after one discarded round), and the results."""
    import fitgpp
    cpu = {k: [] for k in runs}
    out = {}
    for r in range(repeat + 1):
        for name, policy in runs.items():
            c0 = time.process_time()
            out[name] = fitgpp.simulate(jobs, cluster, policy, tick=tick)
            if r:
                cpu[name].append(time.process_time() - c0)
    return {k: statistics.median(v) for k, v in cpu.items()}, out


def anatomy(jobs, cluster, tick) -> dict:
    """What a plan kept across ticks, reused up to where it changed, could save: one LAS run
    with its plans timed, whole and queue 0's part (around ``las_plan``'s per-queue calls),
    each plan marked if it places a job that arrived at this step. Such a job joins queue 0's
    tail, so the plan changes from there on: a kept plan could reuse at most queue 0's part
    of it. The timers (CPU time, as the run's) add their own cost: only shares are read."""
    import fitgpp
    from fitgpp.sim.policies import las, las_plan
    got = {"plans": 0, "after_arrival": 0, "plan_s": 0.0, "plan_arrival_s": 0.0,
           "q0_arrival_s": 0.0}
    arrived = [0, 0.0]  # the first job arriving at this step, queue 0's time in this plan
    sched, plan, keep, place = las.Las.schedule, las.plan, las_plan._keep_queue, \
        las_plan._place_waiting

    def schedule(self, eng, t):
        arrived[0] = eng.scratch["las"]["arrived"]
        return sched(self, eng, t)

    def timed_plan(eng, s):
        got["plans"] += 1
        arrived[1] = 0.0
        c = time.process_time()
        out = plan(eng, s)
        d = time.process_time() - c
        # an arrival changes the plan only if the plan places it (else the ledger is as it was)
        lo, hi = arrived[0], s["arrived"]
        if any(lo <= i < hi for i, _ in out[0]):
            got["after_arrival"] += 1
            got["plan_arrival_s"] += d
            got["q0_arrival_s"] += arrived[1]
        got["plan_s"] += d
        return out

    def per_queue(f):
        def g(eng, s, q, *rest):
            c = time.process_time()
            f(eng, s, q, *rest)
            if q == 0:
                arrived[1] += time.process_time() - c
        return g

    las.Las.schedule, las.plan = schedule, timed_plan
    las_plan._keep_queue, las_plan._place_waiting = per_queue(keep), per_queue(place)
    try:
        c = time.process_time()
        fitgpp.simulate(jobs, cluster, "las", tick=tick)
        got["run_s"] = time.process_time() - c
    finally:
        las.Las.schedule, las.plan = sched, plan
        las_plan._keep_queue, las_plan._place_waiting = keep, place
    return got


def print_anatomy(got: dict, cut: float) -> None:
    """A kept plan's best case: a plan that places no new arrival costs nothing, and neither
    does queue 0's part of one that does; only queues 1 and on of those are planned again.
    ``cut``: the share of LAS's CPU the 3x goal needs cut."""
    redo = got["plan_arrival_s"] - got["q0_arrival_s"]
    plan_share = got["plan_s"] / got["run_s"]
    best = (got["plan_s"] - redo) / got["run_s"]
    print(f"  plans: {got['plans']}, {got['after_arrival'] / max(got['plans'], 1):.0%} of them "
          f"place a job that just arrived; plans take {plan_share:.0%} of LAS's CPU (timed "
          f"run). A plan kept across ticks and reused up to where it changed would save at "
          f"most {best:.0%} of LAS's CPU; the {GOAL:g}x goal needs {cut:.0%} cut")


def cpu_of(jobs, cluster, policy, tick=60) -> float:
    import fitgpp
    c0 = time.process_time()
    fitgpp.simulate(jobs, cluster, policy, tick=tick)
    return time.process_time() - c0


def growth(a) -> None:
    """CPU microseconds per job of FIFO and LAS on the heavy workload at each size."""
    import fitgpp
    from bench_simulator import CPU, GPU, MEM, NODES, heavy_workload
    cluster = fitgpp.Cluster.homogeneous(NODES, GPU, CPU, MEM)
    print("\ngrowth: heavy workload, one run each, CPU microseconds per job")
    rows = []
    for n in a.growth:
        jobs = heavy_workload(n, seed=a.seed)
        us = {p: 1e6 * cpu_of(jobs, cluster, p) / n for p in ("fifo", "las")}
        rows.append((n, us))
        print(f"  {n:>9} jobs   FIFO {us['fifo']:7.1f} us/job   LAS {us['las']:7.1f} us/job   "
              f"LAS / FIFO = {us['las'] / us['fifo']:.2f} x")
    if len(rows) > 1:
        (n0, u0), (n1, u1) = rows[0], rows[-1]
        print(f"  per job, {n1} vs {n0} jobs: FIFO {u1['fifo'] / u0['fifo']:.2f} x, "
              f"LAS {u1['las'] / u0['las']:.2f} x")
    if a.million:
        n = 1_000_000
        jobs = heavy_workload(n, seed=a.seed)
        c = cpu_of(jobs, cluster, "las")
        verdict = "met" if c < MILLION_GOAL else "not met"
        print(f"  1,000,000 jobs: LAS {c:.1f} CPU s ({1e6 * c / n:.1f} us/job); goal under "
              f"{MILLION_GOAL:g} CPU s: {verdict}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=20_000)
    ap.add_argument("--paper-jobs", type=int, default=10_000)
    ap.add_argument("--node-jobs", type=int, default=5_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", default=BEFORE, help="commit of the earlier LAS ('' for none)")
    ap.add_argument("--traces", nargs="+", default=["heavy", "paper", "one-node"],
                    choices=["heavy", "paper", "one-node"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--growth", type=int, nargs="*", default=[10_000, 100_000],
                    help="sizes of the heavy workload for per-job cost (none: skip)")
    ap.add_argument("--million", action="store_true", help="time a 1M-job LAS run")
    a = ap.parse_args()
    import xarray as xr
    runs = {"fifo": "fifo", "las": "las"}
    old = f"las@{a.before}"
    if a.before:
        runs[old] = old_las(a.before)()
    print(f"CPU s of whole simulate calls, medians of {a.repeat} (after one discarded round), "
          "FIFO and LAS taking turns in one process")
    summary = []
    for tname, (jobs, cluster, tick, what) in traces(a).items():
        replay.DECISIONS.clear()
        replay.DECISIONS.update(replay.record(jobs, cluster, "las", tick))
        med, out = measure(jobs, cluster, tick, {**runs, "las replayed": replay.Replay()},
                           a.repeat)
        print(f"\n{tname}: {what}")
        for k, v in med.items():
            print(f"  {k:<16}{v:>8.3f} s   {v / med['fifo']:>6.2f} x FIFO")
        for k in ("finish", "first_start", "preemptions", "node"):
            if not (out["las replayed"][k].values == out["las"][k].values).all():
                raise SystemExit(f"{tname}: the replay's {k} differs from LAS's")
        floor = med["las replayed"]
        print(f"  the engine's work for LAS's decisions alone (replayed): {floor / med['fifo']:.2f}"
              f" x FIFO; LAS's deciding: {(med['las'] - floor) / med['fifo']:.2f} x FIFO "
              f"({len(replay.DECISIONS)} ticks with a decision)")
        ticks = max(len(replay.DECISIONS), 1)
        now_us = (med["las"] - floor) / ticks * 1e6
        budget_us = (GOAL * med["fifo"] - floor) / ticks * 1e6
        left = (f"may take {budget_us:.1f} us ({budget_us / now_us:.0%} of today's)"
                if budget_us > 0 else "leaves nothing for it (the replay alone is over it)")
        print(f"  deciding per tick with a decision: {now_us:.1f} us; {GOAL:g} x FIFO {left}")
        print_anatomy(anatomy(jobs, cluster, tick), 1 - GOAL * med["fifo"] / med["las"])
        if a.before:
            new, prev = out["las"].copy(), out[old].copy()
            new.attrs, prev.attrs = {}, {}
            xr.testing.assert_identical(new, prev)
            print(f"  LAS now is {med[old] / med['las']:.2f} x faster than at {a.before}; results "
                  f"identical ({int(out['las'].preemptions.sum())} preemptions)")
        summary.append((tname, med["las"] / med["fifo"],
                        med[old] / med["fifo"] if a.before else None))
    print(f"\ngoal: LAS within {GOAL:g} x FIFO's CPU on the same trace")
    for tname, ratio, before in summary:
        was = f" (at {a.before}: {before:.2f} x)" if before is not None else ""
        verdict = "met" if ratio <= GOAL else "not met"
        print(f"  {tname:<10} LAS / FIFO = {ratio:.2f} x{was}: {verdict}")
    if a.growth or a.million:
        growth(a)


if __name__ == "__main__":
    main()
