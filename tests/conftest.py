"""Shared helpers for the reference cross-checks: trace builders, a hypothesis
strategy for small random traces, and the job-by-job comparison."""

from __future__ import annotations

import os
import sys

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(__file__))  # so test modules can `import reference`

import fitgpp  # noqa: E402
from reference import reference_simulate  # noqa: E402

# Reproducible in CI: derandomized examples, no per-example deadline.
settings.register_profile("fitgpp", derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("fitgpp")

POLICIES = ("fifo", "prio", "fitgpp", "lrtp", "rand")
HUGE_P = 10**9
#: Multiplies every example / trace count (FITGPP_TEST_SCALE=8 for a thorough run).
SCALE = float(os.environ.get("FITGPP_TEST_SCALE", "1"))


def scaled(n: int) -> int:
    return max(1, round(n * SCALE))


def jobs_frame(rows) -> pd.DataFrame:
    """Rows ``(job_id, cls, submit_time, duration, gpu, cpu_milli, mem_mib, grace_period)``."""
    return pd.DataFrame(rows, columns=list(fitgpp.COLUMNS)).astype(
        {"submit_time": float, "duration": float, "grace_period": float})



def gang_frame(rows, tasks=None, ro=None, tick=60.0) -> pd.DataFrame:
    """:func:`jobs_frame` with the optional columns: ``tasks`` and ``ro`` (restart overhead in
    ticks of ``tick`` seconds) as {job_id: value}."""
    df = jobs_frame(rows)
    if tasks is not None:
        df["tasks"] = [tasks.get(j, 1) for j in df.job_id]
    if ro is not None:
        df["restart_overhead"] = [ro.get(j, 0) * tick for j in df.job_id]
    return df

def policy_kwargs(policy, *, s=4.0, P=3, seed=0) -> dict:
    """The ``simulate`` keyword arguments of ``policy`` for these parameters."""
    return {"fifo": {}, "prio": {}, "fitgpp": {"s": s, "max_preemptions": P},
            "lrtp": {"max_preemptions": P}, "rand": {"max_preemptions": P, "seed": seed}}[policy]


def cluster_of(capacity) -> fitgpp.Cluster:
    """A cluster with one node per row ``(gpu, cpu_milli, mem_mib)`` of ``capacity``."""
    return fitgpp.Cluster.from_groups([{"count": 1, "gpu": int(g), "cpu_milli": int(c),
                                        "mem_mib": int(m)} for g, c, m in capacity])


def assert_agrees(ds, ref, tick, what=""):
    """``ds`` (fitgpp.simulate) equals the reference result ``ref``, job by job."""
    assert sorted(int(j) for j in ds.job.values) == sorted(ref), f"{what}: job sets differ"
    order = sorted(ref, key=lambda j: (ref[j].submit, j))
    assert [int(j) for j in ds.job.values] == order, f"{what}: job order is not (submit, job_id)"
    got = {
        "first_start": ds.first_start.values, "finish": ds.finish.values,
        "preemptions": ds.preemptions.values, "slowdown": ds.slowdown.values,
        "stopped": ds.stopped.values, "node": ds.node.values,
        "wait": ds.wait.values, "reload": ds.reload.values,
    }
    want = {
        "first_start": [ref[j].first_start * tick for j in order],
        "finish": [ref[j].finish * tick for j in order],
        "preemptions": [ref[j].preemptions for j in order],
        "slowdown": [ref[j].slowdown for j in order],
        "stopped": [ref[j].stopped * tick for j in order],
        "node": [ref[j].node for j in order],
        "wait": [(ref[j].finish - ref[j].submit - ref[j].work - ref[j].stopped
                  - ref[j].reloaded) * tick for j in order],
        "reload": [ref[j].reloaded * tick for j in order],
    }
    for k in got:
        g, w = list(got[k]), want[k]
        if g != w:
            bad = [(order[i], g[i], w[i]) for i in range(len(order)) if g[i] != w[i]]
            raise AssertionError(f"{what}: {k} differs for {len(bad)} job(s); "
                                 f"(job_id, engine, reference) first: {bad[:5]}")


def run_both(df, capacity, policy, *, tick=60, s=4.0, P=3, seed=0, **sim_kw):
    """Run the engine and the reference on the same input; return ``(ds, ref)``."""
    ds = fitgpp.simulate(df, cluster_of(capacity), policy, tick=tick,
                         **policy_kwargs(policy, s=s, P=P, seed=seed), **sim_kw)
    ref = reference_simulate(df, capacity, policy, tick=tick, s=s, P=P, seed=seed)
    return ds, ref


# ---- hypothesis: small random traces -----------------------------------------------------

@st.composite
def small_cases(draw, max_jobs=25, max_nodes=4):
    """``(df, capacity, tick)``: 1..max_jobs jobs on 1..max_nodes (maybe unlike) nodes.

    Small integer resources (zero-GPU jobs, CPU- or memory-bound jobs), many
    submit-time collisions, durations and grace periods on and near tick
    boundaries, grace periods of 0, TE grace periods left empty.
    """
    tick = draw(st.sampled_from([60, 60, 60, 1, 7.5]))
    n_nodes = draw(st.integers(1, max_nodes))
    node = st.tuples(st.integers(0, 4), st.integers(1, 4), st.integers(1, 4))
    if draw(st.booleans()):
        capacity = [draw(node)] * n_nodes
    else:
        capacity = [draw(node) for _ in range(n_nodes)]
    n_jobs = draw(st.integers(1, max_jobs))
    ids = draw(st.lists(st.integers(0, 10 * max_jobs), min_size=n_jobs, max_size=n_jobs,
                        unique=True))
    frac = st.sampled_from([0.0, 0.0, 0.25, 0.999])
    rows = []
    for jid in ids:
        host = capacity[draw(st.integers(0, n_nodes - 1))]
        dem = [draw(st.integers(0, c)) for c in host]
        if not any(dem):
            dem[int(np.argmax(host))] = 1
        cls = draw(st.sampled_from(["TE", "BE", "BE"]))
        submit = (draw(st.integers(0, 6)) + draw(frac)) * tick
        k = draw(st.integers(1, 6))
        duration = draw(st.sampled_from([k * tick, k * tick + 0.001 * tick,
                                         k * tick - 0.001 * tick, 0.5 * tick]))
        gp = draw(st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.0, 3.01])) * tick
        if cls == "TE" and draw(st.booleans()):
            gp = float("nan")
        rows.append((jid, cls, submit, duration, *dem, gp))
    return jobs_frame(rows), np.array(capacity, dtype=np.int64), tick


@st.composite
def busy_cases(draw, max_nodes=3):
    """``(df, capacity, tick)`` built to preempt: many small long BE jobs fill 4..8-unit
    nodes early, then TE jobs of all sizes arrive; victims often need to be combined."""
    n_nodes = draw(st.integers(1, max_nodes))
    g, c, m = (draw(st.integers(4, 8)) for _ in range(3))
    capacity = [(g, c, m)] * n_nodes
    rows = []
    n_be = draw(st.integers(1, 6 * n_nodes))
    n_te = draw(st.integers(1, 6))
    ids = draw(st.permutations(range(n_be + n_te)))
    for k, jid in enumerate(ids):
        te = k >= n_be
        hi = (g, c, m) if te else (3, 3, 3)
        dem = [draw(st.integers(0, h)) for h in hi]
        if not any(dem):
            dem[0] = 1
        submit = draw(st.integers(1, 8) if te else st.integers(0, 2)) * 60.0
        duration = draw(st.integers(1, 5) if te else st.integers(5, 20)) * 60.0
        gp = float("nan") if te else draw(st.sampled_from([0, 0, 1, 2, 3])) * 60.0
        rows.append((jid, "TE" if te else "BE", submit, duration, *dem, gp))
    return jobs_frame(rows), np.array(capacity, dtype=np.int64), 60


@st.composite
def gang_cases(draw, max_nodes=4):
    """``(df, capacity, tick)`` with gangs and restart overheads, built to preempt: BE jobs
    (some of them 2-3-task gangs) fill 2..max_nodes maybe-unlike nodes early, then TE jobs
    (a few of them gangs) arrive; restart overheads on and off tick boundaries, some empty."""
    tick = draw(st.sampled_from([60, 60, 30]))
    n_nodes = draw(st.integers(2, max_nodes))
    node = st.tuples(st.integers(2, 6), st.integers(2, 6), st.integers(2, 6))
    capacity = ([draw(node)] * n_nodes if draw(st.booleans())
                else [draw(node) for _ in range(n_nodes)])
    cap = np.array(capacity)
    n_be = draw(st.integers(2, 5 * n_nodes))
    n_te = draw(st.integers(1, 6))
    rows, tasks, ros = [], [], []
    for k, jid in enumerate(draw(st.permutations(range(n_be + n_te)))):
        te = k >= n_be
        hi = cap.max(axis=0) if te else np.minimum(cap.max(axis=0), 3)
        dem = [draw(st.integers(0, int(h))) for h in hi]
        if not any(dem):
            dem[0] = 1
        fits = int((np.array(dem) <= cap).all(axis=1).sum())
        if fits == 0:  # shrink onto node 0
            dem = [min(d, int(c)) for d, c in zip(dem, cap[0])]
            dem[0] = max(dem[0], 1) if not any(dem) else dem[0]
            fits = int((np.array(dem) <= cap).all(axis=1).sum())
        tasks.append(min(fits, draw(st.sampled_from([1, 1, 2] if te else [1, 1, 2, 2, 3]))))
        submit = draw(st.integers(1, 8) if te else st.integers(0, 2)) * tick
        duration = draw(st.integers(1, 5) if te else st.integers(4, 16)) * tick
        gp = float("nan") if te else draw(st.sampled_from([0, 0, 1, 2])) * float(tick)
        ros.append(draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 2.5, 4.0, float("nan")])) * tick)
        rows.append((jid, "TE" if te else "BE", float(submit), float(duration), *dem, gp))
    df = jobs_frame(rows)
    df["tasks"] = tasks
    df["restart_overhead"] = ros
    return df, np.array(capacity, dtype=np.int64), tick


def random_loaded_trace(seed, n_jobs, n_nodes, *, gangs=False):
    """A numpy-generated busy trace on ``n_nodes`` 8-GPU nodes; ``(df, capacity)``.

    ``gangs=True`` adds the optional columns: about a quarter of BE jobs and a tenth of TE
    jobs become 2..4-task gangs, and every BE job gets a restart overhead of 0-5 min."""
    rng = np.random.default_rng(seed)
    te = rng.random(n_jobs) < rng.uniform(0.15, 0.5)
    gpu = rng.choice([0, 1, 1, 2, 2, 4, 8], n_jobs)
    df = pd.DataFrame({
        "job_id": rng.permutation(n_jobs * 3)[:n_jobs],
        "cls": np.where(te, "TE", "BE"),
        "submit_time": rng.integers(0, max(1, n_jobs // (2 * n_nodes)), n_jobs) * 60.0
        + rng.choice([0.0, 30.0], n_jobs),
        "duration": rng.integers(1, 40, n_jobs) * 60.0 - rng.choice([0.0, 0.5], n_jobs),
        "gpu": gpu,
        "cpu_milli": rng.integers(1, 17, n_jobs) * 2000,
        "mem_mib": rng.integers(1, 65, n_jobs) * 2048,
        "grace_period": np.where(te, np.nan, rng.integers(0, 6, n_jobs) * 60.0),
    })
    capacity = np.array([[8, 32000, 131072]] * n_nodes, dtype=np.int64)
    if gangs:
        g = rng.random(n_jobs) < np.where(te, 0.1, 0.25)
        df["tasks"] = np.where(g, rng.integers(2, max(3, min(4, n_nodes) + 1), n_jobs), 1)
        df["tasks"] = np.minimum(df["tasks"], n_nodes)
        df["restart_overhead"] = np.where(te, 0.0, rng.choice([0, 30, 60, 90, 180, 300], n_jobs))
    return df, capacity


def model_with_gangs():
    """paper-default whose 8-GPU BE jobs are 1, 2 or 4 tasks (6 : 3 : 1)."""
    import dataclasses

    from fitgpp.workload import paper_default
    m = paper_default()
    be = m.classes["BE"]
    tasks = {g: ((1, 1.0),) for g in be.gpu.values}
    tasks[8] = ((1, 6.0), (2, 3.0), (4, 1.0))
    return dataclasses.replace(m, classes={"TE": m.classes["TE"],
                                           "BE": dataclasses.replace(be, tasks=tasks)})


def mixed_trace(seed=3, n=80, grace=None) -> pd.DataFrame:
    """``n`` jobs over 6 h, 40 % TE of minutes, BE of hours, on 1-4 GPUs; BE grace periods
    uniform in 0-600 s, or ``grace`` seconds each."""
    rng = np.random.default_rng(seed)
    te = rng.random(n) < 0.4
    return pd.DataFrame({
        "job_id": np.arange(n), "cls": np.where(te, "TE", "BE"),
        "submit_time": np.sort(rng.uniform(0, 6 * 3600, n)),
        "duration": np.where(te, rng.uniform(60, 900, n), rng.uniform(1800, 4 * 3600, n)),
        "gpu": rng.choice([1, 2, 4], n), "cpu_milli": 1000, "mem_mib": 1024,
        "grace_period": np.where(te, 0.0, rng.uniform(0, 600, n) if grace is None else grace)})
