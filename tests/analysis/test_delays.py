"""Each job's delay split into queueing, grace, waiting after preemptions, reloads and the
tick rounding of its run time: the parts add up to the whole, agree with the run's own
intervals (segments), with a case worked by hand, and with a sweep cell's columns (which lack
``stopped``); two runs of one trace compared job by job; signs agreeing per seed with an
exact interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fitgpp
from fitgpp.analysis import delays
from fitgpp.workload import synthesize

from conftest import cluster_of, gang_frame

NODE = [(8, 96000, 786432)]


@pytest.fixture(scope="module")
def busy():
    """FitGpp and FIFO on one trace with wide TE jobs, grace periods, reloads and run times
    that are not whole ticks."""
    cl = fitgpp.DEFAULT_CLUSTER
    tr = synthesize("paper-wide-te", n_jobs=1500, seed=3, load=0.9, te_fraction=0.7,
                    cluster=cl, restart_overhead=330.0)
    return (fitgpp.simulate(tr, cl, "fitgpp", segments=True), fitgpp.simulate(tr, cl, "fifo"))


def test_a_case_worked_by_hand():
    """One node of 8 GPUs. A BE job of 150 s (3 ticks of work, 30 s of rounding), grace 60 s,
    reload 120 s, runs from tick 0; a TE job of 8 GPUs arrives at tick 1 and preempts it
    (released at tick 2), runs ticks 2-3; the BE job waits ticks 2-3, reloads ticks 4-5, works
    ticks 6-7 and is done at tick 8: 480 - 0 - 150 = 330 s = 0 + 60 + 120 + 120 + 30."""
    df = gang_frame([(0, "BE", 0.0, 150.0, 8, 1000, 1000, 60.0),
                     (1, "TE", 60.0, 120.0, 8, 1000, 1000, float("nan"))], ro={0: 2})
    ds = fitgpp.simulate(df, cluster_of(NODE), "fitgpp")
    d = delays.of_jobs(ds)
    assert d.loc[0, ["delay", *delays.PARTS]].tolist() == [330.0, 0.0, 60.0, 120.0, 120.0, 30.0]
    assert d.loc[1, ["delay", "queued", "grace", "requeued", "reload", "rounding"]].tolist() == \
        [60.0, 60.0, 0.0, 0.0, 0.0, 0.0]
    fifo = delays.of_jobs(fitgpp.simulate(df, cluster_of(NODE), "fifo"))
    assert fifo.loc[0, "delay"] == fifo.loc[0, "rounding"] == 30.0   # runs at once, unbroken
    g = delays.by_group(d, fifo).set_index("group")
    assert g.loc["preempted", "jobs"] == 1 and g.loc["never preempted", "jobs"] == 0
    assert g.loc["preempted", "delay_diff"] == 300.0 and g.loc["preempted", "rounding_diff"] == 0
    assert math.isnan(g.loc["never preempted", "delay"])


def test_the_parts_add_up_to_the_delay_and_match_the_runs_intervals(busy):
    ds, _ = busy
    d = delays.of_jobs(ds)
    assert (d["preemptions"] > 0).sum() > 20 and (d["reload"] > 0).sum() > 10
    assert np.allclose(d[list(delays.PARTS)].sum(axis=1), d["delay"], atol=1e-6)
    tick = ds.attrs["tick"]
    assert ((d["rounding"] >= 0) & (d["rounding"] < tick)).all()
    never = d["preemptions"] == 0
    assert (d.loc[never, ["grace", "requeued", "reload"]] == 0).all().all()
    # independently, from each job's run and grace intervals: the gap before the first is
    # its queueing, the gaps after it its waiting again, the grace intervals its grace
    seg = ds[["segment_job", "segment_kind", "segment_start", "segment_end"]].to_dataframe()
    submit = ds["submit"].to_series()
    for job, s in seg.groupby("segment_job"):
        s = s.sort_values("segment_start")
        start, end = s["segment_start"].to_numpy(), s["segment_end"].to_numpy()
        assert d.loc[job, "queued"] == start[0] - submit[job]
        assert d.loc[job, "requeued"] == (start[1:] - end[:-1]).sum()
        grace = s["segment_kind"] == "grace"
        assert d.loc[job, "grace"] == (s["segment_end"] - s["segment_start"])[grace].sum()


def test_a_sweep_cells_columns_give_the_same_parts(busy):
    """A sweep cell keeps no ``stopped`` or ``work``: they are computed, and equal the run's."""
    ds, _ = busy
    kept = ds[[c for c in delays.COLUMNS]]
    assert "stopped" not in kept and "work" not in kept
    got = delays.of_jobs(kept, tick=ds.attrs["tick"])
    want = delays.of_jobs(ds)
    assert got.equals(want)
    assert (got["grace"] == ds["stopped"].to_numpy()).all()


def test_two_runs_of_one_trace_compared_job_by_job(busy):
    ds, fifo_ds = busy
    fit, fifo = delays.of_jobs(ds), delays.of_jobs(fifo_ds)
    g = delays.by_group(fit, fifo).set_index("group")
    be = fit["cls"] == "BE"
    assert g["jobs"].sum() == be.sum() and g.loc["preempted", "jobs"] == \
        ((fit["preemptions"] > 0) & be).sum()
    assert g["share"].sum() == pytest.approx(1.0)
    for group in delays.GROUPS:
        row = g.loc[group]
        assert row["delay_diff"] == pytest.approx(sum(row[f"{p}_diff"] for p in delays.PARTS))
        assert row["rounding_diff"] == 0   # the same jobs: rounding cancels
        assert row["grace_base"] == row["requeued_base"] == row["reload_base"] == 0  # FIFO
    assert g.loc["never preempted", "grace"] == 0
    with pytest.raises(delays.DelayError, match="different jobs"):
        delays.by_group(fit, fifo.iloc[1:])


def test_columns_that_do_not_decompose_are_refused(busy):
    ds, _ = busy
    with pytest.raises(delays.DelayError, match="no per-job column 'first_start'"):
        delays.of_jobs(ds.drop_vars("first_start"))
    bad = ds.copy()
    bad["wait"] = bad["wait"] + 7.0
    with pytest.raises(delays.DelayError, match="not a whole number of ticks"):
        delays.of_jobs(bad)
    with pytest.raises(delays.DelayError, match="tick"):
        delays.of_jobs({k: ds[k].values for k in delays.COLUMNS})


@pytest.mark.parametrize("k, n", [(0, 5), (3, 5), (5, 5), (168, 180), (19, 20)])
def test_the_share_interval_is_clopper_pearsons(k, n):
    from scipy import stats
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert delays.clopper_pearson(k, n) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_sign_agreement_counts_misses_by_direction():
    a = delays.sign_agreement([1.0, -2.0, 3.0, -1.0, 0.0, 2.0, np.nan],
                              [0.5, -0.1, -0.2, 0.3, 1.0, 0.1, 1.0])
    assert (a.agree, a.n, a.misses_pos, a.misses_neg, a.zero) == (3, 5, 1, 1, 2)
    assert a.share == 0.6 and 0 < a.low < 0.6 < a.high < 1
    with pytest.raises(delays.DelayError, match="pair them"):
        delays.sign_agreement([1.0], [1.0, 2.0])
