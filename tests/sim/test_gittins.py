"""Gittins (docs/model.md, "Gittins, exactly"): hand-worked cases, agreement with the
independent reference (tests/reference.py) in both modes, jumping equals stepping, and the
job-size distribution file (Tiresias's format): round trip and bad input.

Ticks of 60 s. The hand-worked cases use sizes (60, 60, 180, 600) GPU-s and a quantum of
60 GPU-s (one tick of one GPU), so by hand: G(0) = 2 / 240 = 1/120 (two of four sizes end
within the first quantum; each of the four takes at most 60 of it); G(60) = 0 (no size in
(60, 120]); G(120) = 1 / 120 (of 180 and 600, one ends in (120, 180], each takes 60);
G(180) = 0. Tiresias's table from the same sizes: rank 8333.3333 at 0 attained,
4166.6667 at 60 to 179, 0 from 180 on, lowest first.
"""

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import fitgpp
from conftest import (assert_agrees, busy_cases, cluster_of, gang_cases, gang_frame,
                      random_loaded_trace, scaled, small_cases)
from fitgpp.sim.policies import Gittins, PolicyError
from fitgpp.sim.policies.gittins_index import (DistributionError, ExactIndex, TiresiasIndex,
                                               fit_trace, read_distribution,
                                               write_distribution)
from reference import reference_simulate

T = 60.0
ONE = np.array([[1, 8, 8]])
SIZES = (60, 60, 180, 600)


@pytest.fixture
def sizes_file(tmp_path):
    path = tmp_path / "sizes.csv"
    write_distribution(SIZES, path)
    return str(path)


def be(jid, submit, work, gpu=1):
    return (jid, "BE", submit * T, work * T, gpu, 0, 0, 0.0)


def run(df, cap, **kw):
    """Simulate (jumping and stepping), check against the reference, return the Dataset."""
    ds = fitgpp.simulate(df, cluster_of(cap), "gittins", tick=T, check=True, **kw)
    stepped = fitgpp.simulate(df, cluster_of(cap), "gittins", tick=T, jump=False, **kw)
    assert (ds["finish"] == stepped["finish"]).all()
    ref_kw = {k: kw[k] for k in ("thresholds", "mode", "delta") if k in kw}
    if kw.get("distribution"):
        ref_kw["sizes"] = read_distribution(kw["distribution"])
    assert_agrees(ds, reference_simulate(df, cap, "gittins", tick=T, **ref_kw), T, "gittins")
    return ds


def at(ds, var, job):
    return ds[var].sel(job=job).item() / (T if var in ("first_start", "finish") else 1)


def test_the_index_by_hand():
    g = ExactIndex(SIZES, 60)
    assert [g(k) for k in range(5)] == [1 / 120, 0.0, 1 / 120, 0.0, 0.0]
    r = TiresiasIndex(SIZES, 60)
    assert [r(a) for a in (0, 59, 60, 179, 180, 599, 600, 601)] == \
        [8333.3333, 8333.3333, 4166.6667, 4166.6667, 0.0, 0.0, 0.0, 0]


def test_index_falls_and_rises_with_the_quantum(sizes_file):
    """One GPU, one queue. A and C (4 ticks each) arrive at 0, tied at G(0): A first. At 1
    A has one quantum, G = 0 < C's 1/120: C preempts A. At 2 C too has one quantum: tied
    at 0, A (earlier) goes first and C is preempted. At 3 A has two quanta, G(120) = 1/120:
    it stays; at 4 G(180) = 0, tied with C, A stays. A is done at 5 (1 + 3 ticks), C runs
    its last 3 ticks from 5 to 8. LAS would never put A, with more service, ahead of C."""
    df = gang_frame([be(1, 0, 4), be(2, 0, 4)])
    ds = run(df, ONE, distribution=sizes_file, delta=60, thresholds=())
    assert (at(ds, "finish", 1), at(ds, "finish", 2)) == (5, 8)
    assert (at(ds, "preemptions", 1), at(ds, "preemptions", 2)) == (1, 1)


def test_queues_come_before_the_index(sizes_file):
    """A (4 ticks) from 0, C (2 ticks) at 2. At 2 A has 120 GPU-s: G(120) = 1/120 = C's
    G(0). With a threshold at 120 A is in queue 1 and C, in queue 0, preempts it: C is done
    at 4, A at 6. With one queue they tie and A, earlier, keeps running; at 3 its G(180) = 0
    and C preempts it then; at 4 C has one quantum, G(60) = 0, tied with A, and A (earlier)
    runs its last tick, done at 5; C runs its last from 5 to 6."""
    df = gang_frame([be(1, 0, 4), be(2, 2, 2)])
    two = run(df, ONE, distribution=sizes_file, delta=60, thresholds=(120.0,))
    assert (at(two, "finish", 2), at(two, "first_start", 2), at(two, "finish", 1)) == (4, 2, 6)
    one = run(df, ONE, distribution=sizes_file, delta=60, thresholds=())
    assert (at(one, "finish", 2), at(one, "first_start", 2), at(one, "finish", 1)) == (6, 3, 5)


def test_tiresias_mode_serves_the_lowest_rank_first(sizes_file):
    """A (4 ticks) from 0; B (1 tick) arrives at 1. Tiresias ranks A (60 GPU-s attained)
    4166.6667 and B (0) 8333.3333 and serves the lowest first: A keeps running (the unit
    event at 120 s re-sorts: the same) and B waits until A is done at 4, then runs to 5.
    The exact rule: at 1 A's G(60) = 0 < B's G(0), B preempts A: B done at 2, A at 5."""
    df = gang_frame([be(1, 0, 4), be(2, 1, 1)])
    tir = run(df, ONE, distribution=sizes_file, delta=60, mode="tiresias")
    assert (at(tir, "finish", 1), at(tir, "finish", 2), at(tir, "preemptions", 1)) == (4, 5, 0)
    ex = run(df, ONE, distribution=sizes_file, delta=60, thresholds=())
    assert (at(ex, "finish", 1), at(ex, "finish", 2), at(ex, "preemptions", 1)) == (5, 2, 1)


def test_fitted_from_the_trace_equals_the_file_of_the_fit(tmp_path):
    df, cap = random_loaded_trace(4, 40, 2)
    path = tmp_path / "fit.csv"
    write_distribution(fit_trace(df, tick=T), path)
    for mode in ("exact", "tiresias"):
        a = fitgpp.simulate(df, cluster_of(cap), "gittins", tick=T, mode=mode)
        b = fitgpp.simulate(df, cluster_of(cap), "gittins", tick=T, mode=mode,
                            distribution=str(path))
        xr.testing.assert_identical(a.drop_dims("time").drop_attrs(),
                                    b.drop_dims("time").drop_attrs())


# ---- agreement with the reference, jumping equals stepping ----------------------------
cases = st.one_of(small_cases(), busy_cases(), gang_cases())
PARAMS = st.fixed_dictionaries({
    "mode": st.sampled_from(["exact", "tiresias"]),
    "delta": st.sampled_from([60, 120, 600, 3250]),
    "thresholds": st.sampled_from([(), (120.0,), (600.0, 3000.0), (3250.0, 7200.0)])})


@settings(max_examples=scaled(60), deadline=None)
@given(case=cases, kw=PARAMS)
def test_agrees_with_the_reference(case, kw):
    df, cap, tick = case
    ds = fitgpp.simulate(df, cluster_of(cap), "gittins", tick=tick, check=True, **kw)
    assert_agrees(ds, reference_simulate(df, cap, "gittins", tick=tick, **kw), tick,
                  f"gittins {kw}")


@settings(max_examples=scaled(30), deadline=None)
@given(case=cases, kw=PARAMS)
def test_jumping_equals_stepping(case, kw):
    df, cap, tick = case
    jumped = fitgpp.simulate(df, cluster_of(cap), "gittins", tick=tick, **kw)
    stepped = fitgpp.simulate(df, cluster_of(cap), "gittins", tick=tick, jump=False, **kw)
    xr.testing.assert_identical(jumped.drop_dims("time"), stepped.drop_dims("time"))


@pytest.mark.parametrize("mode", ["exact", "tiresias"])
@pytest.mark.parametrize("seed, gangs, nodes", [(1, False, 1), (2, False, 3), (3, True, 4)])
def test_loaded_traces_agree(mode, seed, gangs, nodes):
    df, cap = random_loaded_trace(seed, 50, nodes, gangs=gangs)
    kw = dict(tick=60, mode=mode, thresholds=(600.0, 3000.0), delta=1000)
    ds = fitgpp.simulate(df, cluster_of(cap), "gittins", check=True, **kw)
    assert int(ds.preemptions.sum()) > 0
    assert_agrees(ds, reference_simulate(df, cap, "gittins", **kw), 60,
                  f"gittins {mode} seed {seed}")


# ---- the distribution file ------------------------------------------------------------
def test_distribution_round_trip(tmp_path):
    path = tmp_path / "d.csv"
    sizes = [5, 0, 121, 7, 7, 3250]
    write_distribution(sizes, path)
    assert path.read_text().splitlines()[:2] == ["duration", "0"]
    assert read_distribution(path) == tuple(sorted(sizes))
    write_distribution(np.array([3.0, 1.0]), path)
    assert read_distribution(path) == (1, 3)


def test_reads_tiresias_shaped_files(tmp_path):
    path = tmp_path / "yarn.csv"
    path.write_text("job,duration\na, 121\nb,122\n")
    assert read_distribution(path) == (121, 122)


@pytest.mark.parametrize("text, match", [
    ("", "empty file"),
    ("size\n1\n", "line 1: no 'duration' column"),
    ("duration\n", "no sizes"),
    ("duration\n12\n1.5\n", "line 3: duration '1.5' is not a whole number"),
    ("duration\n-4\n", "line 2: duration '-4' is not a whole number"),
    ("duration\n12\n\n13\n", "line 3: empty line"),
    ("duration\nabc\n", "line 2: duration 'abc'"),
    ("a,duration\n1\n", "line 2: 1 field\\(s\\), the header has 2"),
])
def test_bad_distribution_files_name_file_and_line(tmp_path, text, match):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(DistributionError, match=match) as info:
        read_distribution(path)
    assert str(path) in str(info.value)
    with pytest.raises(PolicyError, match=match):  # and so does the policy, at once
        Gittins(distribution=str(path))


def test_missing_file_and_bad_sizes_to_write(tmp_path):
    with pytest.raises(DistributionError, match="nowhere.csv: no such file"):
        Gittins(distribution=str(tmp_path / "nowhere.csv"))
    with pytest.raises(DistributionError, match=r"size #1 is -1"):
        write_distribution([1, -1], tmp_path / "x.csv")
    with pytest.raises(DistributionError, match=r"size #0 is 2.5"):
        write_distribution([2.5], tmp_path / "x.csv")
    with pytest.raises(DistributionError, match="no sizes"):
        write_distribution([], tmp_path / "x.csv")


@pytest.mark.parametrize("kw, match", [
    ({"delta": 0}, "delta must be a number > 0"),
    ({"delta": "60"}, "delta must be a number > 0"),
    ({"thresholds": (5.0, 1.0)}, "gittins: thresholds must be increasing"),
    ({"mode": "fast"}, "mode must be 'exact' or 'tiresias'"),
    ({"distribution": 3}, "distribution must be a file name"),
])
def test_bad_parameters(kw, match):
    with pytest.raises(PolicyError, match=match):
        Gittins(**kw)


def test_parameters_rerun(sizes_file, tmp_path):
    """What a result records is enough to build the same policy again."""
    trace = tmp_path / "t.csv"
    gang_frame([be(1, 0, 4), be(2, 0, 4)]).to_csv(trace, index=False)
    ds = fitgpp.simulate(str(trace), cluster_of(ONE), "gittins", tick=T,
                         distribution=sizes_file, delta=60, thresholds=())
    again = fitgpp.rerun(ds)
    assert again["finish"].values.tolist() == ds["finish"].values.tolist() == [5 * T, 8 * T]
    assert Gittins(delta=60.0).delta == 60 and isinstance(Gittins(delta=60.0).delta, int)


@pytest.mark.parametrize("policy, kw", [
    ("gittins", {"mode": "tiresias", "delta": 120}), ("gittins", {"delta": 120}),
    ("gittins", {"mode": "tiresias", "delta": 600}), ("shortest", {"mode": "tiresias"}),
    ("shortest-gpu", {"mode": "tiresias"}), ("sjf", {})])
@pytest.mark.parametrize("seed", [2, 3, 4, 5])
def test_gpu_only_pool_agrees(policy, kw, seed):
    """One node, GPUs only (the single-list step's pool path, Tiresias's modes included),
    TE jobs kept beyond the plan, grace periods: agrees with the reference, jump = step."""
    from test_agreement_tiresias import gpu_only_pool
    df, cap = gpu_only_pool(seed)
    ds = fitgpp.simulate(df, cluster_of(cap), policy, tick=60, check=True, **kw)
    stepped = fitgpp.simulate(df, cluster_of(cap), policy, tick=60, jump=False, **kw)
    assert (ds["finish"] == stepped["finish"]).all()
    assert int(ds.preemptions.sum()) > 0
    ref_kw = {"mode": kw.get("mode", "exact")}
    if "delta" in kw:
        ref_kw["delta"] = kw["delta"]
    assert_agrees(ds, reference_simulate(df, cap, policy, tick=60, **ref_kw), 60,
                  f"{policy} {kw} gpu-only seed {seed}")


def test_a_changed_distribution_file_changes_the_digest(tmp_path):
    """Sweep cells are keyed by the policy's digest: the same path with other sizes in it is
    another policy (else a cached cell of the old file would be served)."""
    from fitgpp.sim.policies.registry import digest
    path = tmp_path / "d.csv"
    write_distribution([60, 120], path)
    a = digest(Gittins(distribution=str(path)))
    assert digest(Gittins(distribution=str(path))) == a
    write_distribution([60, 121], path)
    assert digest(Gittins(distribution=str(path))) != a
    assert digest(Gittins()) == digest(Gittins())
