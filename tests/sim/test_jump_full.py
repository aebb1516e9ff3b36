"""Jumping over quiet ticks gives the same Dataset as stepping every tick, every variable of
it (per job, per sampled time, the ledger, the attributes), on a few hundred busy jobs for
each built-in policy: the engine's and the policies' shortcuts (skipped plans, wake-ups,
memos) must not change a result."""

import pytest
import xarray as xr

import fitgpp
from conftest import cluster_of, random_loaded_trace

CASES = [("fifo", {}), ("prio", {}), ("fitgpp", {"s": 4.0}), ("lrtp", {}), ("rand", {"seed": 3}),
         ("las", {"thresholds": (120.0, 900.0)}),
         ("las", {"thresholds": (60.0, 300.0, 1800.0), "mode": "tiresias"}),
         ("dlas", {"thresholds": (300.0, 1200.0)}), ("shortest", {}), ("shortest-gpu", {"mode": "tiresias"}), ("sjf", {}), ("lpjf", {})]


@pytest.mark.parametrize("policy,params", CASES, ids=[f"{p}-{i}" for i, (p, _) in enumerate(CASES)])
@pytest.mark.parametrize("gangs", [False, True])
def test_jump_equals_step_whole_dataset(policy, params, gangs):
    df, cap = random_loaded_trace(25 if gangs else 21, n_jobs=300, n_nodes=4, gangs=gangs)
    jumped = fitgpp.simulate(df, cluster_of(cap), policy, **params)
    stepped = fitgpp.simulate(df, cluster_of(cap), policy, jump=False, **params)
    assert int(jumped.preemptions.sum()) > 0 or policy in ("fifo", "sjf", "lpjf", "prio")
    assert jumped.sizes["time"] > 10 and len(jumped.data_vars) > 20
    xr.testing.assert_identical(jumped, stepped)
