"""The single-list step's shortcuts (fitgpp.sim.policies.ordered) change no result.

Each against the same policy with it turned off, whole Datasets identical: a step skipped
on one node when nothing can start or stop (``_settled``: nothing arrived, finished or was
released since a step that held no start, no key moved later past a waiting job), and
SRSF's running jobs kept sorted per GPU count (``linear``) instead of keyed and sorted one
by one; and every shortcut of one node at once (a step decided without the visit,
``_quick``; the visit of the heads per demand, ``visit_pool``; the inlined bookkeeping;
no visit at ``t + 1`` after a settled step) against the plain visit of the merged list
that a cluster of several nodes runs (``visit_merged``). The runs must also take the
shortcut (counted), so that a test on traces where it never fires cannot pass for one
that holds."""

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import fitgpp
import fitgpp.sim.policies.ordered as ordered
from conftest import cluster_of
from fitgpp.sim.policies.dlas import Dlas
from fitgpp.sim.policies.gittins import Gittins
from fitgpp.sim.policies.shortest import Shortest
from fitgpp.sim.policies.shortest_gpu import ShortestGpu
from fitgpp.sim.policies.sjf import Sjf


def loaded_pool(seed, n=300, gpus=64):
    """One node, GPU-only, offered load about 1.5 with a heavy tail, 1-s tick (the shape of
    benchmarks/bench_tiresias.py's traces, small); some jobs TE, some with grace periods."""
    rng = np.random.default_rng(seed)
    gpu = rng.choice([1, 2, 4, 8, 16], n, p=[0.45, 0.2, 0.15, 0.12, 0.08])
    dur = np.ceil(np.minimum(rng.lognormal(np.log(600), 1.4, n), 86400))
    rate = 1.5 * gpus / float((gpu * dur).mean())
    te = rng.random(n) < 0.1
    return pd.DataFrame({"job_id": np.arange(n), "cls": np.where(te, "TE", "BE"),
                         "submit_time": np.floor(np.cumsum(rng.exponential(1 / rate, n))),
                         "duration": dur, "gpu": gpu, "cpu_milli": 0, "mem_mib": 0,
                         "grace_period": np.where(te, np.nan, rng.choice([0, 0, 0, 30], n))})


def without_skip(cls):
    @dataclass(frozen=True)
    class NoSkip(cls):
        @staticmethod
        def _settled(eng, s, plan, tiresias):
            s["settled"] = False
    return NoSkip


@dataclass(frozen=True)
class SortedSrsf(ShortestGpu):
    linear = None  # every running job keyed and sorted at each step


def same_run(a, b):
    """Identical Datasets but for the attributes naming the policy (its class differs)."""
    for ds in (a, b):
        for k in ("policy", "policy_digest", "title"):
            del ds.attrs[k]
    xr.testing.assert_identical(a, b)


def visits(monkeypatch, df, policy):
    """The Dataset of a 1-s-tick run on a 64-GPU node, and how many steps visited the jobs."""
    count = [0]
    inner = ordered.visit_pool

    def counted(*args, **kw):
        count[0] += 1
        return inner(*args, **kw)
    monkeypatch.setattr(ordered, "visit_pool", counted)
    ds = fitgpp.simulate(df, cluster_of([[64, 0, 0]]), policy, tick=1)
    return ds, count[0]


@pytest.mark.parametrize("cls, kw", [(Gittins, {}), (Gittins, {"delta": 600, "thresholds": (900,)}),
                                     (Dlas, {"thresholds": (300.0, 1800.0)}), (Shortest, {}),
                                     (ShortestGpu, {}), (Sjf, {})])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_skipped_steps_change_nothing(monkeypatch, cls, kw, seed):
    df = loaded_pool(seed)
    fast, n_fast = visits(monkeypatch, df, cls(**kw))
    slow, n_slow = visits(monkeypatch, df, without_skip(cls)(**kw))
    assert int(fast.preemptions.sum()) > 0 or cls is Sjf
    same_run(fast, slow)
    assert n_fast < n_slow, "no step was skipped: the test does not test the shortcut"


@pytest.mark.parametrize("mode", ["exact", "tiresias"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_srsf_merged_running_order_changes_nothing(monkeypatch, mode, seed):
    df = loaded_pool(seed)
    fast, _ = visits(monkeypatch, df, ShortestGpu(mode=mode))
    slow, _ = visits(monkeypatch, df, SortedSrsf(mode=mode))
    assert int(fast.preemptions.sum()) > 0
    same_run(fast, slow)


def plain(cls):
    """The policy with every shortcut of one node off: its step visits the merged list
    job by job against the plan, as on a cluster of several nodes."""
    @dataclass(frozen=True)
    class Plain(cls):
        def bind(self, eng):
            super().bind(eng)
            eng.scratch["ordered"].update(one=False, wait=[], pool_static=False)
    return Plain


def with_cpu(df, seed):
    """``df`` with CPU and memory asked (for a node of 32 cores and 256 GiB)."""
    rng = np.random.default_rng(seed)
    return df.assign(cpu_milli=rng.choice([500, 2000, 8000], len(df)),
                     mem_mib=rng.choice([1024, 16384, 65536], len(df)))


@pytest.mark.parametrize("cls, kw", [(Shortest, {}), (ShortestGpu, {}), (Sjf, {}),
                                     (Dlas, {"thresholds": (300.0, 1800.0)}), (Gittins, {}),
                                     (Shortest, {"mode": "tiresias"})])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("cpu", [False, True])
def test_one_node_shortcuts_change_nothing(monkeypatch, cls, kw, seed, cpu):
    df = with_cpu(loaded_pool(seed), seed) if cpu else loaded_pool(seed)
    cluster = cluster_of([[64, 32000, 262144] if cpu else [64, 0, 0]])
    quick = [0]
    inner = ordered.OrderedPolicy._quick

    def counted(self, *args):
        done = inner(self, *args)
        quick[0] += done
        return done
    monkeypatch.setattr(ordered.OrderedPolicy, "_quick", counted)
    fast = fitgpp.simulate(df, cluster, cls(**kw), tick=1)
    slow = fitgpp.simulate(df, cluster, plain(cls)(**kw), tick=1)
    assert int(fast.preemptions.sum()) > 0 or cls is Sjf
    same_run(fast, slow)
    assert quick[0] > 0 or kw.get("mode") == "tiresias", "no step was decided without the visit"
