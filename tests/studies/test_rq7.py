"""RQ7 (FitGpp against LAS): the declaration has every configuration as its own row (both
LAS threshold settings included), its LAS is the built-in LAS, its threshold choices hold
for the workloads they are anchored to, and its findings follow the numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fitgpp.sim.cluster import DEFAULT_CLUSTER
from fitgpp.studies.reproduce import STUDIES, Size
from fitgpp.studies import rq7

TINY = Size(n_jobs=150, seeds=(0, 1, 2), timeline_jobs=50, real_jobs=200)


def test_reproduce_finds_the_studies():
    assert {"rq7", "rq7a", "rq7a10"} <= set(STUDIES)
    assert STUDIES["rq7"].baseline == "prio"


def test_the_declaration_offers_every_setting():
    dims = STUDIES["rq7"].dimensions(TINY)
    assert set(dims["policy"]) == {"fifo", "prio", "fitgpp", "LAS", "gittins",
                                   "shortest"}
    assert dims["threshold"] == rq7.THRESHOLDS and len(set(rq7.THRESHOLDS)) == 2
    assert dims["s"] == rq7.FITGPP_S
    assert dims["workload"] == rq7.WORKLOADS
    assert dims["restart_overhead"] == (0.0, 600.0)


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    st = rq7.study(workloads=("paper-wide-te",))
    return st.result(TINY, cache=tmp_path_factory.mktemp("rq7-cache"))


def test_every_configuration_is_a_row_of_its_own(result):
    t = result.table
    labels = set(t["policy"])
    expected = {"FIFO", "PRIO", *(f"FitGpp s={s:g}" for s in rq7.FITGPP_S),
                *(f"LAS threshold={x:g}" for x in rq7.THRESHOLDS), "Gittins", "SRTF"}
    assert labels == expected
    assert len(t) == len(expected) * len(rq7.OVERHEADS)   # one row per policy and overhead
    las = t[t["name"] == "LAS"]
    assert sorted(las["threshold"].unique()) == sorted(rq7.THRESHOLDS)
    # the two LAS settings are not pooled: their per-seed numbers are their own runs
    runs = result.datasets["runs"]
    for x in rq7.THRESHOLDS:
        per = runs[(runs["policy"] == f"LAS threshold={x:g}") & (runs["overhead_min"] == 0)]
        row = las[(las["threshold"] == x) & (las["restart_overhead"] == 0)].iloc[0]
        assert len(per) == len(TINY.seeds)
        assert row["te_p95"] == pytest.approx(per["te_p95"].mean())
    comp = result.datasets["comparisons"]
    assert len(comp) == len(rq7.FITGPP_S) * len(rq7.THRESHOLDS) * len(rq7.OVERHEADS) \
        * len(rq7.COMPARED)
    assert result.finding.startswith(rq7.summary(comp))


def test_the_oracle_is_the_bound(result):
    """SRTF runs on the same seeds; the finding counts FitGpp s=4's TE p95 verdicts against
    it (one per overhead) and the details say each, TE and BE, with its paired interval."""
    from fitgpp.studies.oracle import against_oracle
    runs = result.datasets["runs"]
    srtf = runs[runs["policy"] == "SRTF"]
    assert len(srtf) == len(TINY.seeds) * len(rq7.OVERHEADS)
    assert f"over {len(rq7.OVERHEADS)} workload and overhead cells" in result.finding
    for ro in (0.0, 10.0):
        g = runs[runs["overhead_min"] == ro]
        a, b = (g[g["policy"] == p].sort_values("seed") for p in ("FitGpp s=4", "SRTF"))
        for m, t in (("te_p95", "TE p95 slowdown"), ("be_p95", "BE p95 slowdown")):
            line = against_oracle(a[m], b[m], a="FitGpp s=4",
                                  title=f"paper-wide-te, {ro:g} min restarts, {t}")
            assert line in result.details


def test_las_threshold_is_the_built_in_las():
    from fitgpp.sim.run import simulate
    from fitgpp.workload import load_model, synthesize
    tr = synthesize(load_model("paper-wide-te"), 200, seed=3, load=0.9, cluster=DEFAULT_CLUSTER)
    x = 14000.0
    a = simulate(tr, DEFAULT_CLUSTER, rq7.LasThreshold(threshold=x))
    b = simulate(tr, DEFAULT_CLUSTER, "las", thresholds=(x, x * rq7.RATIO))
    assert int(a["preemptions"].sum()) > 0          # the comparison is not vacuous
    for v in ("first_start", "finish", "preemptions"):
        np.testing.assert_array_equal(a[v].to_numpy(), b[v].to_numpy())


@pytest.mark.parametrize("model, threshold", [("paper-default", rq7.THRESHOLDS[0]),
                                              ("paper-wide-te", rq7.THRESHOLDS[1])])
def test_each_threshold_is_near_the_te_p95_service_it_is_anchored_to(model, threshold):
    from fitgpp.workload import load_model, synthesize
    j = synthesize(load_model(model), 3000, seed=0, load=0.9, cluster=DEFAULT_CLUSTER).jobs
    te = j["cls"] == "TE"
    service = (j["duration"] * j["gpu"] * j.get("tasks", 1))[te]
    assert np.percentile(service, 95) == pytest.approx(threshold, rel=0.15)


def _runs(fit_te, las_te, seeds=5, noise=0.05):
    """A per-seed frame as :func:`rq7.per_seed` gives it: one FitGpp and one LAS setting."""
    rng = np.random.default_rng(0)
    rows = []
    for policy, family, te in (("FitGpp s=4", "fitgpp", fit_te), ("LAS threshold=3250", "LAS",
                                                                   las_te)):
        for seed in range(seeds):
            rows.append({"workload": "w", "overhead_min": 0.0, "policy": policy,
                         "family": family, "seed": seed,
                         "te_p95": te + noise * rng.standard_normal(), "be_median": 2.0,
                         "be_p95": 5.0, "preemptions_per_be": 0.1})
    return pd.DataFrame(rows)


def test_the_finding_says_las_is_better_when_its_numbers_are():
    comp = rq7.comparisons(_runs(fit_te=4.0, las_te=1.5))
    te = comp[comp["metric"] == "te_p95"].iloc[0]
    assert te["verdict"] == "worse"   # FitGpp worse than LAS
    text = rq7.summary(comp)
    assert ("TE p95 slowdown: of 1 pairings judged against \"FitGpp is better than LAS\": 0 "
            "confirmed, 1 contradicted, 0 undecided (FitGpp better in 0, LAS better in 1") in text
    assert "LAS threshold=3250 is better" not in te["sentence"]   # sentences say a vs b
    assert "FitGpp s=4 is worse than LAS threshold=3250" in te["sentence"]


def test_the_finding_says_fitgpp_is_better_when_its_numbers_are():
    comp = rq7.comparisons(_runs(fit_te=1.2, las_te=3.0))
    text = rq7.summary(comp)
    assert "1 confirmed, 0 contradicted, 0 undecided (FitGpp better in 1, LAS better in 0" in text
    # identical numbers are no detectable difference, never "better"
    assert "0 confirmed, 0 contradicted, 1 undecided (FitGpp better in 0, LAS better in 0, " \
           "no detectable difference in 1" in text


def test_too_few_seeds_cannot_tell():
    comp = rq7.comparisons(_runs(fit_te=1.2, las_te=3.0, seeds=2))
    assert set(comp["verdict"]) == {"cannot tell"}
    assert "too few seeds to tell in 1" in rq7.summary(comp)


def test_pairings_use_the_seeds_both_ran():
    """Seeds added in rounds (issue 34) give some configurations more seeds than others: a
    FitGpp setting on seeds 0-9 against a LAS setting on 0-4 is compared on 0-4, paired."""
    runs = _runs(fit_te=1.2, las_te=3.0, seeds=10)
    runs = runs[(runs["family"] == "fitgpp") | (runs["seed"] < 5)]
    comp = rq7.comparisons(runs)
    assert set(comp["seeds"]) == {5}
    assert set(comp["category"]) <= {"confirmed", "contradicted", "undecided"}
