"""The capacity ledger (fitgpp.sim.ledger): its parts add up to the capacity exactly on every
policy (built in or a researcher's own, gangs and restarts included), each part has the value
worked out by hand in a small case, and jumping over quiet ticks gives the same ledger as
stepping every tick."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import fitgpp
from conftest import cluster_of, gang_frame
from fitgpp.sim import ledger
from fitgpp.sim.policies import FitGpp, make_policy
from fitgpp.sim.policies.base import first_fit, first_fit_nodes
from fitgpp.workload import load_model, synthesize

T = 60.0
PARTS = [f"ledger_{k}" for k in ledger.PARTS]
CLUSTER = fitgpp.Cluster.homogeneous(4, gpu=8, cpu_milli=96000, mem_mib=786432)


def ticks_of(ds) -> dict[str, int]:
    return {k: int(ds[k].attrs["gpu_ticks"]) for k in [*PARTS, "ledger_capacity"]}


def assert_balanced(ds):
    """The parts add up to the capacity in GPU-ticks, the capacity is all GPUs over the run's
    span, and the running and grace parts are the per-job sums of the result."""
    t = ticks_of(ds)
    assert sum(t[k] for k in PARTS) == t["ledger_capacity"]
    span = (ds["finish"].max() - ds["submit"].min()).item() / ds.attrs["tick"]
    assert t["ledger_capacity"] == ds.attrs["total_gpus"] * span
    gpus = ds["gpu"].to_numpy() * ds["tasks"].to_numpy()
    be = ds["cls"].to_numpy() == "BE"
    tick = ds.attrs["tick"]
    per_job = {"ledger_useful_be": (gpus * ds["work"].to_numpy())[be].sum(),
               "ledger_useful_te": (gpus * ds["work"].to_numpy())[~be].sum(),
               "ledger_reload": (gpus * ds["reload"].to_numpy()).sum(),
               "ledger_grace": (gpus * ds["stopped"].to_numpy()).sum()}
    for k, seconds in per_job.items():
        assert t[k] * tick == pytest.approx(seconds), k
    for k in [*PARTS, "ledger_capacity"]:
        assert float(ds[k]) == pytest.approx(t[k] * tick / 3600)
        assert t[k] >= 0


@pytest.fixture(scope="module")
def gang_trace():
    """Gangs (a third of BE jobs, up to 4 tasks), a 10-minute reload after every
    preemption, wide TE jobs that preempt often, a loaded cluster."""
    return synthesize(load_model("paper-wide-te"), n_jobs=400, seed=2, load=0.9, cluster=CLUSTER,
                      gang_fraction=0.3, gang_tasks=4, restart_overhead=600.0)


@dataclass(frozen=True)
class Backfill:
    """A researcher's policy: every waiting job (TE first) starts wherever it fits, in queue
    order, skipping those that do not (backfilling); a BE job running longer than
    ``patience`` ticks is preempted when a TE job fits nowhere."""

    patience: int = 30
    name = "backfill"
    max_preemptions = 2

    def bind(self, eng) -> None:
        pass

    def schedule(self, eng, t: int) -> None:
        for i in [*eng.waiting_te, *sorted(eng.waiting_be)]:
            nodes = first_fit_nodes(eng, i, reserved=False) if eng.tasks[i] > 1 else \
                first_fit(eng, i, reserved=False)
            if nodes is not None and nodes != -1:
                eng.start(i, nodes, t)
            elif eng.te[i]:
                for v in range(eng.n):
                    if (eng.state[v] == 2 and not eng.te[v] and eng.preemptions[v] < 2
                            and t - eng.started_at[v] > self.patience):
                        eng.preempt(v, t)
                        break


def test_every_built_in_policy_balances_with_gangs_and_reloads(gang_trace):
    seen = {}
    for policy in ("fifo", "prio", "fitgpp", "lrtp", "rand", "las"):
        ds = fitgpp.simulate(gang_trace, CLUSTER, policy)
        assert_balanced(ds)
        seen[policy] = ticks_of(ds)
    # the case is not trivial: preempting policies reload and hold grace periods, FIFO does not
    for p in ("fitgpp", "lrtp", "rand", "las"):
        assert seen[p]["ledger_reload"] > 0 and seen[p]["ledger_grace"] > 0, p
    assert seen["fifo"]["ledger_reload"] == seen["fifo"]["ledger_grace"] == 0
    assert seen["fifo"]["ledger_idle_fits"] > 0  # FIFO's blocked head leaves room unused
    assert seen["fitgpp"]["ledger_reserved"] > 0


@pytest.mark.parametrize("policy", [Backfill(), Backfill(patience=0)], ids=["patient", "eager"])
def test_a_researchers_policy_balances(gang_trace, policy):
    ds = fitgpp.simulate(gang_trace, CLUSTER, policy)
    assert_balanced(ds)
    assert int(ds["preemptions"].sum()) > 0


@dataclass(frozen=True)
class Waits(FitGpp):
    """A FitGpp subclass that decides by time: a TE job preempts only after waiting 2 ticks
    (so it asks for a wake-up)."""

    def choose(self, eng, i, t):
        if t - eng.submit[i] < 2:
            eng.wake(eng.submit[i] + 2)
            return None
        return super().choose(eng, i, t)


@pytest.mark.parametrize("policy", ["fitgpp", "las", Waits()], ids=["fitgpp", "las", "waits"])
def test_jumping_gives_the_ledger_stepping_gives(gang_trace, policy):
    small = synthesize(load_model("paper-wide-te"), n_jobs=120, seed=5, load=0.9,
                       cluster=CLUSTER, gang_fraction=0.3, restart_overhead=300.0)
    a = fitgpp.simulate(small, CLUSTER, policy)
    b = fitgpp.simulate(small, CLUSTER, policy, jump=False)
    assert ticks_of(a) == ticks_of(b)
    assert_balanced(a)


def test_hand_worked_case():
    """One node of 4 GPUs, FitGpp (s=4, P=3), ticks of 60 s.

    A (BE, 2 GPUs, work 10, grace 2, reload 3) starts at 0. TE B (4 GPUs, work 2) arrives at
    2, fits nowhere: A is preempted at 2 (grace until 4) and B reserves the node, whose 2
    free GPUs idle reserved over [2, 4). B runs [4, 6). A restarts at 6: reload 3 + 8 work
    left, done at 17. C (BE, 4 GPUs, work 1) arrives at 7 and fits nowhere (2 free); D (BE,
    1 GPU, work 1) arrives at 8 and would fit, but waits behind C: 2 GPUs idle over [8, 17)
    while a waiting job fits. C runs [17, 18), D [18, 19).

    Capacity 4 x 19 = 76 GPU-ticks: useful TE 4x2 = 8, useful BE 2x10 + 4 + 1 = 25, reload
    2x3 = 6, grace 2x2 = 4, reserved 2x2 = 4, idle while C alone waits [7, 8): 2 (none
    fits), idle while D fits [8, 17): 18, idle with nothing waiting [0, 2) 4 + [6, 7) 2 +
    [18, 19) 3 = 9.
    """
    rows = [(1, "BE", 0, T * 10, 2, 1, 1, T * 2), (2, "TE", T * 2, T * 2, 4, 1, 1, 0.0),
            (3, "BE", T * 7, T, 4, 1, 1, 0.0), (4, "BE", T * 8, T, 1, 1, 1, 0.0)]
    ds = fitgpp.simulate(gang_frame(rows, ro={1: 3}), cluster_of([[4, 10, 10]]), "fitgpp",
                         s=4.0, max_preemptions=3)
    assert ds["finish"].sel(job=1).item() == 17 * T  # the case runs as described
    want = {"useful_te": 8, "useful_be": 25, "reload": 6, "grace": 4, "reserved": 4,
            "idle_fits": 18, "idle_nofit": 2, "idle_empty": 9, "capacity": 76}
    assert ticks_of(ds) == {f"ledger_{k}": v for k, v in want.items()}
    assert float(ds["ledger_capacity"]) == pytest.approx(76 / 60)
    tab = ledger.table(ds)
    assert tab.loc["idle_fits", "share"] == pytest.approx(18 / 76)


def test_a_waiting_job_fits_only_where_cpu_and_memory_fit_too():
    """Two nodes of 2 GPUs. BE A (1 GPU, all of node 0's CPU) runs [0, 5); BE X (2 GPUs) holds
    node 1 over [0, 5); BE G (1 GPU, 1 CPU), arriving at 1, heads the queue and fits
    nowhere (node 0's free GPU has no CPU left): 1 GPU idle over [1, 5) counts as
    'none fits', though a GPU is free."""
    rows = [(1, "BE", 0, T * 5, 1, 10, 1, 0.0), (2, "BE", 0, T * 5, 2, 1, 1, 0.0),
            (3, "BE", T, T, 1, 1, 1, 0.0)]
    ds = fitgpp.simulate(gang_frame(rows), cluster_of([[2, 10, 10], [2, 10, 10]]), "fifo")
    t = ticks_of(ds)
    assert t["ledger_idle_nofit"] == 4 and t["ledger_idle_fits"] == 0
    assert_balanced(ds)


def _fits_somewhere(eng) -> bool:
    """The definition of 'some waiting job fits', by brute force over both queues: as many
    nodes as its tasks have its GPUs, CPU and memory free and unreserved."""
    for i in [*eng.waiting_te, *eng.waiting_be]:
        room = sum(eng.dg[i] <= eng.avail_g[n] and eng.dc[i] <= eng.free_c[n] - eng.res_c[n]
                   and eng.dm[i] <= eng.free_m[n] - eng.res_m[n] for n in range(eng.n_nodes))
        if room >= eng.tasks[i]:
            return True
    return False


@pytest.mark.parametrize("policy", ["fifo", "fitgpp", "las", Backfill()],
                         ids=["fifo", "fitgpp", "las", "backfill"])
def test_some_fit_answers_as_a_scan_of_every_waiting_job(gang_trace, policy, monkeypatch):
    """some_fit looks only at the waiting jobs of at most as many GPUs as some node has
    free (the engine's per-GPU-count groups): at every check it answers what a scan of both
    queues answers (a heap-ordered queue, LAS's dict, gangs)."""
    seen, quick = [], ledger.some_fit

    def both(eng):
        got, want = quick(eng), _fits_somewhere(eng)
        seen.append((got, want))
        return got

    monkeypatch.setattr(ledger, "some_fit", both)
    fitgpp.simulate(gang_trace, CLUSTER, policy)
    assert all(got == want for got, want in seen), [p for p in seen if p[0] != p[1]][:5]
    # (backfilling starts every job that fits: only 'none fits' is left for it)
    assert {want for _, want in seen} == ({False} if isinstance(policy, Backfill)
                                          else {True, False})


def test_the_ledger_is_kept_by_sweep_cells_and_files(gang_trace, tmp_path):
    from fitgpp.sweep.runs import reduce_run, run_dataset
    ds = fitgpp.simulate(gang_trace, CLUSTER, "fitgpp", segments=True)
    back = run_dataset(reduce_run(ds))
    fitgpp.save(ds, tmp_path / "r.nc")
    read = fitgpp.load(tmp_path / "r.nc")
    for k in [*PARTS, "ledger_capacity"]:
        assert float(back[k]) == float(ds[k]) and float(read[k]) == float(ds[k])
        assert int(back[k].attrs["gpu_ticks"]) == int(ds[k].attrs["gpu_ticks"])


def test_ledger_metrics_are_declared_and_read_a_run(gang_trace):
    from fitgpp.analysis.metrics import METRICS
    ds = fitgpp.simulate(gang_trace, CLUSTER, "fitgpp")
    for k in [*PARTS, "ledger_capacity"]:
        assert METRICS[k].of_run(ds) == float(ds[k])
        assert METRICS[k].unit == "GPU-h"


def test_an_unbalanced_engine_is_refused():
    """The per-job sums and the engine's integral must agree; a tampered ledger is caught."""
    from fitgpp.sim.engine import Engine
    from fitgpp.sim.run import to_ticks
    df = gang_frame([(1, "BE", 0, T * 3, 1, 1, 1, 0.0)])
    eng = Engine(to_ticks(df, T), np.array([[2, 10, 10]]), make_policy("fifo"))
    eng.run()
    assert ledger.ticks(eng)["useful_be"] == 3
    eng.stop_ticks[0] += 1   # a grace period the engine never integrated
    with pytest.raises(RuntimeError, match="out of balance"):
        ledger.ticks(eng)
    eng.stop_ticks[0] -= 1
    eng.ledger[1] += 1       # idle while jobs wait, where none waited
    with pytest.raises(RuntimeError, match="out of balance"):
        ledger.ticks(eng)


def test_the_workbench_shows_the_ledger(tmp_path):
    """The workbench's numbers list every ledger part (declared metrics read from each run),
    with the values of the runs it holds."""
    from fitgpp.workbook import workbench as wb
    cur, pin = wb.compare(wb.Values(model="paper-wide-te", n_jobs=200, n_seeds=1, load=0.9),
                          wb.Values(policy="fifo", model="paper-wide-te", n_jobs=200, n_seeds=1,
                                    load=0.9), cache=tmp_path)
    table = wb.numbers(cur, pin)
    from fitgpp.analysis.metrics import METRICS
    for k in [*PARTS, "ledger_capacity"]:
        assert METRICS[k].label in table.index, k
    ds = cur.runs()[0]   # a sweep cell's Dataset: the ledger, not every per-job column
    t = ticks_of(ds)
    assert sum(t[k] for k in PARTS) == t["ledger_capacity"] > 0
    assert f"{float(ds['ledger_capacity']):,.0f}" in table.loc[METRICS["ledger_capacity"].label].iloc[0]
