"""gittins in a sweep: a ``[policies.gittins]`` table with no keys runs its defaults (the
distribution fitted from the trace), its mode sweeps, and each cell equals a direct run."""

from __future__ import annotations

import numpy as np

import fitgpp
from fitgpp.sweep import load_experiment, run_sweep
from test_sweep_run import CLUSTER, small_trace


def _experiment(tmp_path, policies: str):
    """A sweep file over a small trace on 4 nodes x 4 GPUs, seed 0, with ``policies``."""
    trace = small_trace(tmp_path / "t.csv")
    (tmp_path / "exp.toml").write_text(f"""
name = "g"
seeds = [0]
[workload]
trace = "{trace}"
[cluster]
nodes = 4
gpu = 4
{policies}""")
    return trace


def test_an_empty_gittins_table_sweeps(tmp_path):
    trace = _experiment(tmp_path, "[policies.fifo]\n[policies.gittins]\n")
    exp = load_experiment(tmp_path / "exp.toml")
    assert [g.name for g in exp.policies] == ["fifo", "gittins"]
    ds = run_sweep(exp, workers=0, cache=tmp_path / "cache", progress=False)
    direct = fitgpp.simulate(str(trace), CLUSTER, "gittins")
    got = ds.sel(policy="gittins", seed=0)
    for c in ("TE", "BE"):
        sd = direct["slowdown"].where(direct["cls"] == c, drop=True).values
        assert float(got["slowdown_median"].sel(cls=c).squeeze()) == np.median(sd)


def test_gittins_mode_is_a_sweep_coordinate(tmp_path):
    trace = _experiment(tmp_path, '[policies.gittins]\nmode = ["exact", "tiresias"]\n'
                                  'delta = [600, 3250]\n')
    ds = run_sweep(load_experiment(tmp_path / "exp.toml"), workers=0,
                   cache=tmp_path / "cache", progress=False)
    assert set(ds["mode"].values) == {"exact", "tiresias"}
    direct = fitgpp.simulate(str(trace), CLUSTER, "gittins", mode="tiresias", delta=600)
    sd = direct["slowdown"].where(direct["cls"] == "BE", drop=True).values
    got = ds.sel(policy="gittins", seed=0, mode="tiresias", delta=600)
    assert float(got["slowdown_p95"].sel(cls="BE").squeeze()) == np.percentile(sd, 95)
