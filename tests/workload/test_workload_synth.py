"""Synthesis: parameter recovery by refitting, reproducibility, independent streams, load."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import fitgpp
from fitgpp.workload import (Categorical, SynthesisError, fit, from_recipe, load_model,
                             offered_load, paper_default, synthesize)
from fitgpp.workload.model import ClassModel

N_BIG = 50_000
# A daily profile with a clear peak, to check it is recovered too.
PROFILE = tuple(np.r_[np.full(8, 0.5), np.full(8, 1.5), np.full(8, 1.0)] / 1.0)


@pytest.fixture(scope="module")
def known():
    """paper-default with a daily profile on TE arrivals."""
    m = paper_default()
    te = dataclasses.replace(m.classes["TE"], daily_profile=PROFILE)
    return dataclasses.replace(m, classes={"TE": te, "BE": m.classes["BE"]})


@pytest.fixture(scope="module")
def big(known):
    return synthesize(known, n_jobs=N_BIG, seed=7)


@pytest.fixture(scope="module")
def refit(big):
    return fit(big)


def test_refit_recovers_run_time_family_and_parameters(known, big, refit):
    # Tolerance: 3 % on lognormal sigma and median; the MLE's standard error at n = 15k
    # (TE) is about 0.6 %, and truncation at the model's max moves them by < 0.5 %.
    for c in ("TE", "BE"):
        true, got = known.classes[c].run_time, refit.classes[c].run_time
        assert got.family == "lognorm", (c, got.fit["candidates"])
        assert got.params["s"] == pytest.approx(true.params["s"], rel=0.03)
        assert got.params["scale"] == pytest.approx(true.params["scale"], rel=0.03)
        # KS of the synthetic sample against the true distribution: small.
        x = big.jobs.loc[big.jobs["cls"] == c, "duration"].to_numpy()
        assert stats.kstest(x, true.frozen().cdf).statistic < 0.015
        assert got.fit["ks"] < 0.015


def test_refit_recovers_demands_share_rates_and_profile(known, refit):
    assert refit.te_share == pytest.approx(known.te_share, abs=0.01)
    for c in ("TE", "BE"):
        k, r = known.classes[c], refit.classes[c]
        assert r.gpu.values == k.gpu.values
        np.testing.assert_allclose(r.gpu.probs, k.gpu.probs, atol=0.01)
        assert r.rate == pytest.approx(k.rate, rel=0.03)
        for g, pairs in k.cpu_mem.items():  # the same (cpu, mem) support, ~equal weights
            assert {p[:2] for p in r.cpu_mem[g]} == {p[:2] for p in pairs}
    # The synthesized arrivals mix the class profiles (share-weighted): each refitted class
    # profile is that mix, within 10 % per hour (about 2 % counting noise per hour).
    mix = known.te_share * np.array(PROFILE) + (1 - known.te_share)
    mix /= mix.mean()
    for c in ("TE", "BE"):
        np.testing.assert_allclose(refit.classes[c].daily_profile, mix, rtol=0.10)


def test_same_seed_same_trace_different_seed_different():
    m = load_model("paper-default")
    a = synthesize(m, n_jobs=500, seed=3, load=0.8, cluster=fitgpp.DEFAULT_CLUSTER)
    b = synthesize(m, n_jobs=500, seed=3, load=0.8, cluster=fitgpp.DEFAULT_CLUSTER)
    c = synthesize(m, n_jobs=500, seed=4, load=0.8, cluster=fitgpp.DEFAULT_CLUSTER)
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    assert a.source == b.source
    assert not a.jobs["duration"].equals(c.jobs["duration"])
    assert not a.jobs["submit_time"].equals(c.jobs["submit_time"])


def test_te_fraction_does_not_redraw_be_jobs():
    m = load_model("paper-default")
    lo = synthesize(m, n_jobs=3000, seed=11, te_fraction=0.2).jobs
    hi = synthesize(m, n_jobs=3000, seed=11, te_fraction=0.5).jobs
    cols = ["duration", "gpu", "cpu_milli", "mem_mib", "grace_period"]
    be_lo = lo.loc[lo["cls"] == "BE", cols].reset_index(drop=True)
    be_hi = hi.loc[hi["cls"] == "BE", cols].reset_index(drop=True)
    assert len(be_hi) < len(be_lo)
    # The k-th BE job is the same job whatever the TE share: a prefix.
    pd.testing.assert_frame_equal(be_lo.iloc[:len(be_hi)], be_hi)
    te_lo = lo.loc[lo["cls"] == "TE", "duration"].to_numpy()
    te_hi = hi.loc[hi["cls"] == "TE", "duration"].to_numpy()
    np.testing.assert_array_equal(te_hi[:len(te_lo)], te_lo)
    assert (lo["cls"] == "TE").mean() == pytest.approx(0.2, abs=0.03)


def test_load_changes_only_arrival_times_and_grace_scale_only_grace():
    m = load_model("paper-default")
    cl = fitgpp.DEFAULT_CLUSTER
    a = synthesize(m, n_jobs=400, seed=2, load=0.5, cluster=cl).jobs
    b = synthesize(m, n_jobs=400, seed=2, load=1.0, cluster=cl, grace_scale=2.0).jobs
    pd.testing.assert_frame_equal(a[["cls", "duration", "gpu"]], b[["cls", "duration", "gpu"]])
    np.testing.assert_allclose(b["submit_time"], a["submit_time"] / 2, rtol=1e-6, atol=2e-3)
    be = a["cls"] == "BE"
    np.testing.assert_allclose(b.loc[be, "grace_period"], 2 * a.loc[be, "grace_period"],
                               atol=2e-3)


@pytest.mark.parametrize("load", [0.3, 0.9, 1.5])
def test_load_calibration_computed(load):
    cl = fitgpp.Cluster.homogeneous(8, gpu=8)
    t = synthesize("paper-default", n_jobs=20_000, seed=5, load=load, cluster=cl)
    # Exact over the nominal window n / rate, by construction ...
    assert t.source["offered_load"] == pytest.approx(load, rel=1e-9)
    window = t.source["n_jobs"] / t.source["arrival_rate_per_s"]
    assert offered_load(t, cl, span=window) == pytest.approx(load, rel=1e-6)
    # ... and within 3 % over the realised span (1/sqrt(20000) = 0.7 % expected).
    assert offered_load(t, cl) == pytest.approx(load, rel=0.03)


def test_load_without_cluster_is_an_error():
    with pytest.raises(SynthesisError, match="load needs a cluster"):
        synthesize("paper-default", n_jobs=10, load=0.5)


@pytest.mark.parametrize("kw, match", [
    ({"n_jobs": 0}, "n_jobs"), ({"n_jobs": 5, "seed": -1}, "seed"),
    ({"n_jobs": 5, "te_fraction": 1.5}, "te_fraction"),
    ({"n_jobs": 5, "grace_scale": -1.0}, "grace_scale"),
    ({"n_jobs": 5, "on_unfit": "ignore"}, "on_unfit"),
    ({"n_jobs": 5, "load": -0.1, "cluster": fitgpp.DEFAULT_CLUSTER}, "load"),
])
def test_bad_arguments_are_named(kw, match):
    with pytest.raises(SynthesisError, match=match):
        synthesize("paper-default", **kw)


def test_schema_and_default_cluster_fit():
    t = synthesize("paper-default", n_jobs=5000, seed=1, cluster=fitgpp.DEFAULT_CLUSTER)
    j = t.jobs
    assert list(j.columns) == list(fitgpp.COLUMNS)
    for col in ("gpu", "cpu_milli", "mem_mib", "job_id"):
        assert j[col].dtype == np.int64
    assert (j["duration"] > 0).all() and (j["submit_time"] >= 0).all()
    assert j["submit_time"].is_monotonic_increasing
    be = j[j["cls"] == "BE"]
    assert (be["grace_period"] > 0).all() and (be["grace_period"] <= 900).all()
    te = j[j["cls"] == "TE"]
    assert set(te["gpu"]) <= {1, 2} and set(be["gpu"]) <= {1, 2, 4, 8}
    # paper-default's premise: TE jobs of minutes, BE jobs of hours.
    assert 300 < te["duration"].median() < 1200
    assert 3600 < be["duration"].median() < 4 * 3600
    assert fitgpp.DEFAULT_CLUSTER.fits_some_node(j[["gpu", "cpu_milli", "mem_mib"]].to_numpy()).all()


def _with_big_te_demand():
    m = paper_default()
    te = m.classes["TE"]
    te2 = ClassModel(te.rate, None, te.run_time, Categorical((1, 16), (0.9, 0.1)),
                     {1: te.cpu_mem[1], 16: ((1000, 1000, 1.0),)})
    return dataclasses.replace(m, classes={"TE": te2, "BE": m.classes["BE"]})


def test_unfit_demand_fails_loudly_or_is_restricted_and_recorded():
    m = _with_big_te_demand()
    with pytest.raises(SynthesisError, match=r"16 GPU.*fit no node.*restrict"):
        synthesize(m, n_jobs=100, seed=0, cluster=fitgpp.DEFAULT_CLUSTER)
    t = synthesize(m, n_jobs=2000, seed=0, cluster=fitgpp.DEFAULT_CLUSTER, on_unfit="restrict")
    assert t.source["restricted"] == {"TE": pytest.approx(0.1)}
    assert (t.jobs["gpu"] <= 8).all()
    # Without a cluster nothing is checked, and the 16-GPU jobs are drawn.
    assert (synthesize(m, n_jobs=2000, seed=0).jobs["gpu"] == 16).any()


def test_recipe_reruns_the_same_trace():
    t = synthesize("paper-default", n_jobs=300, seed=9, load=0.7, te_fraction=0.4,
                   grace_scale=0.5, cluster=fitgpp.DEFAULT_CLUSTER)
    src = t.source
    assert src["model"] == "paper-default" and len(src["model_file_sha256"]) == 64
    assert {"n_jobs", "seed", "load", "te_fraction", "grace_scale", "cluster"} <= set(src)
    pd.testing.assert_frame_equal(from_recipe(src).jobs, t.jobs)


def test_quick_size_simulates_well_under_a_second():
    t = synthesize("paper-default", n_jobs=2000, seed=0, load=0.9,
                   cluster=fitgpp.DEFAULT_CLUSTER)
    fitgpp.simulate(t.jobs.head(50), fitgpp.DEFAULT_CLUSTER, "fitgpp")  # warm imports
    # CPU time of this process, not wall time: the test machines are shared.
    t0 = time.process_time()
    ds = fitgpp.simulate(t, fitgpp.DEFAULT_CLUSTER, "fitgpp")
    elapsed = time.process_time() - t0
    assert ds.sizes["job"] == 2000
    assert elapsed < 1.0, f"quick workload took {elapsed:.2f} s of CPU to simulate"


def test_recipe_names_the_model_file_only_while_unchanged():
    m = load_model("paper-default")
    assert synthesize(m, n_jobs=5).source["model_file"] == m.path
    changed = dataclasses.replace(m, name="variant")
    src = synthesize(changed, n_jobs=5).source
    assert src["model_file"] is None and src["model"] == "variant"
    assert src["model_sha256"] == changed.sha256() != m.sha256()
    with pytest.raises(SynthesisError, match="built in memory"):
        from_recipe(src)
    pd.testing.assert_frame_equal(from_recipe(src, model=changed).jobs,
                                  synthesize(changed, n_jobs=5).jobs)
    with pytest.raises(SynthesisError, match="has changed since"):
        from_recipe(src, model=m)


@settings(max_examples=15)
@given(seed=st.integers(0, 2**32), n=st.integers(1, 300), te=st.floats(0, 1),
       load=st.floats(0.05, 3.0), grace=st.floats(0, 10))
def test_any_recipe_gives_a_valid_trace_at_its_load(seed, n, te, load, grace):
    cl = fitgpp.DEFAULT_CLUSTER
    t = synthesize("paper-default", n_jobs=n, seed=seed, load=load, te_fraction=te,
                   grace_scale=grace, cluster=cl)
    fitgpp.read_trace(t.jobs, cluster=cl)  # the SPEC schema holds
    assert len(t) == n and t.source["offered_load"] == pytest.approx(load, rel=1e-9)
    if te == 0:
        assert (t.jobs["cls"] == "BE").all()
    if te == 1:
        assert (t.jobs["cls"] == "TE").all()
