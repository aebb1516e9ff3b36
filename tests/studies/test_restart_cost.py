"""RQ6 (restart cost): the metrics of one run by hand, the comparisons against PRIO and the
findings on a constructed table, and the quick size end to end."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
import re

import pandas as pd
import pytest

from fitgpp.studies import restart_cost as rc
from fitgpp.analysis.metrics import METRICS
from fitgpp.studies import rq6
from fitgpp.sim.policies import FitGpp


def test_cell_metrics_by_hand():
    jobs = pd.DataFrame({
        "te":          [True, True, False, False, False],
        "slowdown":    [1.0, 3.0, 2.0, 4.0, 10.0],
        "preemptions": [0, 0, 1, 0, 2],
        "duration":    [600.0, 600.0, 3600.0, 7200.0, 3600.0],
        "reload":      [0.0, 0.0, 600.0, 0.0, 1800.0],
        "gpu":         [1, 2, 8, 4, 2],
        "tasks":       [1, 1, 2, 1, 1],
    })
    m = rc.cell_metrics(jobs)
    assert m["te_p95"] == pytest.approx(1.0 + 0.95 * 2.0)
    assert m["be_median"] == 4.0 and m["be_p95"] == pytest.approx(4.0 + 0.9 * 6.0)
    assert m["preemptions_per_be"] == pytest.approx(3 / 3)
    # 600 s x 8 GPUs x 2 tasks + 1800 s x 2 GPUs = 9600 + 3600 GPU-s... in hours:
    lost = (600 * 8 * 2 + 1800 * 2) / 3600
    assert m["reload_gpu_h"] == pytest.approx(lost)
    work = (3600 * 16 + 7200 * 4 + 3600 * 2) / 3600
    assert m["reload_share"] == pytest.approx(lost / work)     # a fraction, like every share
    with pytest.raises(rc.RestartCostError, match=r"per-job column\(s\) \['reload'\]"):
        rc.cell_metrics(jobs.drop(columns="reload"))


def _runs(te_fit, be_fit, ovh=(0.0, 600.0, 1800.0), seeds=(0, 1, 2)):
    """PRIO fixed (TE p95 10, BE p95 20); every preempting policy follows te_fit(o), be_fit(o)."""
    return _seeded(lambda _label, o, _seed: te_fit(o), lambda _label, o, _seed: be_fit(o),
                   ovh, seeds)


def test_comparisons_against_prio_and_where_preempting_stops_paying():
    # TE gain 80 % at every overhead; BE p95 cost 0 %, +50 %, +100 %: stops paying at 30 min
    runs = _runs(lambda o: 2.0, lambda o: 20.0 * (1 + o / 1800))
    table = rc.across_seeds(runs)
    row = table[(table["policy"] == "LRTP") & (table["overhead_s"] == 600)].iloc[0]
    # fractions, as metrics.change gives them (CHANGE_NOTE): 0.8 is an 80 % cut
    assert row["te_gain"] == pytest.approx(0.8) and row["be_p95_cost"] == pytest.approx(1 / 3)
    assert row["net"] == pytest.approx(0.8 - 1 / 3)
    assert row["overhead_min"] == 10 and row["seeds"] == 3
    f = rc.findings_table(table).set_index("policy")
    assert set(f.index) == {"FitGpp s=1", "FitGpp s=4", "FitGpp s=8", "LRTP", "RAND"}
    assert f.loc["RAND", "stops_paying_min"] == 30.0
    assert math.isnan(f.loc["RAND", "stops_helping_te_min"])
    assert f.loc["RAND", "be_p95_growth"] == pytest.approx(1.0)
    text = rc.describe(f.reset_index())
    assert "stops paying off at 30 min" in text and "80 % [80 %, 80 %] -> 80 % [80 %, 80 %]" in text
    assert "BE p95 change +0 % [+0 %, +0 %] -> +100 % [+100 %, +100 %]" in text
    # reload_share 0.018 at 30 min, in percent
    assert "(1.8 % [1.8 %, 1.8 %] of BE work)" in text
    assert ("stops paying off at 30 min (the net's interval: above 0 at 0, 10 min; below 0 at "
            "30 min) for FitGpp s=1, FitGpp s=4, FitGpp s=8, LRTP, RAND") in rc.summary(f.reset_index())


def test_tables_for_reading_show_fractions_in_percent():
    df = pd.DataFrame({"te_gain": [0.8], "te_gain_lo": [0.75], "te_gain_hi": [0.85],
                       "reload_share": [0.05], "be_p95": [2.345678], "policy": ["LRTP"]})
    r = rc.readable(df).shown.iloc[0]
    assert r["te_gain"] == "+80.0 % [+75.0 %, +85.0 %]" and "te_gain_lo" not in r
    assert r["reload_share"] == "5.0 %" and r["be_p95"] == "2.35" and r["policy"] == "LRTP"
    # 07 showed the overhead as 600 (seconds) while its prose says minutes
    o = rc.readable(pd.DataFrame({"restart_overhead": [0.0, 600.0], "policy": ["A", "B"]})).shown
    assert list(o.columns) == ["restart cost (min)", "policy"]
    assert list(o["restart cost (min)"]) == ["0", "10"]


def test_a_policy_that_never_helps_te_is_named_at_zero():
    runs = _runs(lambda o: 12.0, lambda o: 20.0)
    f = rc.findings_table(rc.across_seeds(runs)).set_index("policy")
    assert f.loc["FitGpp s=4", "stops_helping_te_min"] == 0.0
    assert f.loc["FitGpp s=4", "stops_paying_min"] == 0.0
    assert "never pays off: a net loss already at 0 min" in rc.describe(f.reset_index())
    assert "no detectable TE gain even at 0 min" in rc.describe(f.reset_index())


def test_charts_have_one_panel_per_metric_and_the_net_chart():
    table = rc.across_seeds(_runs(lambda o: 2.0 + o / 600, lambda o: 20.0 + o / 100))
    ch = rc.charts(table)
    assert set(ch) == {"rq6_w_slowdowns", "rq6_w_reloads", "rq6_net"}
    plain, shares = ch["rq6_w_slowdowns"].to_dict(), ch["rq6_w_reloads"].to_dict()
    metrics = [set(pd.concat([pd.DataFrame(v) for v in sp["datasets"].values()])["metric"])
               for sp in (plain, shares)]
    titles = {METRICS[k].title for k in rc.RUN_METRICS}   # the declared titles
    # a metric constant throughout (BE median 1 here) is said in the subtitle, not drawn
    said = " ".join(plain["title"].get("subtitle", []))
    flat = {t for t in titles - metrics[0] - metrics[1] if f"{t}: " in said}
    assert flat <= {METRICS["be_median"].title} and "throughout (not drawn)" in said or not flat
    assert metrics[0] | metrics[1] | flat == titles and not metrics[0] & metrics[1]
    # the share of BE GPU-hours (a fraction) is drawn on a percent axis, the slowdowns and
    # the counts beside it not
    fmt = {title: _layers(sp)[title]["encoding"]["y"].get("axis", {}).get("format")
           for sp in (plain, shares) for title in _layers(sp)}
    share = METRICS["reload_share"].title
    assert re.fullmatch(r"\.\d~?%", fmt.pop(share))        # a share: unsigned percent
    assert set(fmt.values()) == {None}
    net = _first_layer(ch["rq6_net"].to_dict())["encoding"]["y"]["axis"]["format"]
    assert net.startswith("+") and net.endswith("%")      # a change: signed percent


def _layers(spec: dict) -> dict:
    """``{y title: first layer}`` of each panel of a concatenation of panels."""
    out = {}
    for panel in spec.get("concat", [spec]):
        y = panel["layer"][0]["encoding"]["y"]
        t = y.get("title", "")
        out[" ".join(t) if isinstance(t, list) else t] = panel["layer"][0]
    return out


def _first_layer(spec: dict) -> dict:
    """The first layer of a chart's first panel (panels are concatenated or faceted)."""
    while "layer" not in spec:
        spec = next(spec[k][0] if isinstance(spec[k], list) else spec[k]
                    for k in ("concat", "hconcat", "vconcat", "spec") if k in spec)
    return spec["layer"][0]


def test_overheads_are_validated():
    with pytest.raises(rc.RestartCostError, match="must include 0"):
        rq6.study(overheads=(60.0,))
    with pytest.raises(rc.RestartCostError, match="seconds >= 0"):
        rq6.study(overheads=(0.0, -1.0))


def test_one_experiment_per_workload_from_one_declaration():
    from fitgpp.studies.reproduce import QUICK
    exps = rq6.RQ6.experiments(QUICK)
    assert list(exps) == list(rc.WORKLOADS)
    exp = exps["paper-wide-te"]
    assert exp.workload.swept == {"restart_overhead": rc.REPRODUCE_OVERHEADS}
    assert set(exp.policy_names) == {"prio", "fitgpp", "lrtp", "rand"}
    assert exp.grid_values("s") == (1.0, 4.0, 8.0)
    assert np.isclose(exp.workload.load, QUICK.load) and exp.workload.n_jobs == QUICK.n_jobs
    assert rq6.RQ6.baseline == "prio"


def test_a_small_run_end_to_end_counts_reloads_as_the_datasets_do():
    import fitgpp
    from fitgpp.studies.reproduce import Size
    from fitgpp.workload import synthesize
    st = rq6.study(overheads=(0.0, 900.0), workloads=("paper-wide-te",))
    size = Size(n_jobs=150, seeds=(0,))
    o = st.run(size, cache=False)
    r = st.analyze(o)
    t = r.table.set_index(["policy", "overhead_s"])
    assert len(r.table) == len(rc.POLICIES) * 2
    assert (t.xs(0.0, level="overhead_s")["reload_gpu_h"] == 0).all()
    assert t.loc[("PRIO", 900.0), "preemptions_per_be"] == 0
    # the same cell simulated directly gives the same GPU-hours lost
    tr = synthesize("paper-wide-te", n_jobs=150, seed=0, load=size.load,
                    cluster=fitgpp.DEFAULT_CLUSTER, restart_overhead=900.0)
    ds = fitgpp.simulate(tr, fitgpp.DEFAULT_CLUSTER, "lrtp")
    lost = float((ds["reload"] * ds["gpu"] * ds["tasks"]).sum()) / 3600
    assert t.loc[("LRTP", 900.0), "reload_gpu_h"] == pytest.approx(lost)
    assert lost > 0, "the run must preempt for this test to mean something"
    # the declared metric (fitgpp.analysis.metrics) gives the same number from the study's own table
    generic = o.table().set_index(["policy", "restart_overhead"])
    assert generic.loc[("LRTP", 900.0), "reload_gpu_h"] == pytest.approx(lost)
    assert set(r.charts) == {"rq6_paper-wide-te_slowdowns", "rq6_paper-wide-te_reloads",
                             "rq6_net"} and r.finding.startswith("paper-wide-te")
    assert "| FitGpp s=4 |" in r.details


def _declared_label(policy: str, params: dict) -> str:
    """RQ6's own name for a built-in configuration (rc.POLICIES)."""
    return next(label for label, name, p in rc.POLICIES
                if name == policy and all(params.get(k) == v for k, v in p.items()))


def test_runs_of_gives_each_cell_its_cell_metrics_exactly():
    """The rows RQ6's analysis reads (per-class numbers from the sweep's Dataset, reloads from
    the Outcome's per-run metrics) are, number for number, cell_metrics of each cell's
    per-job columns, in the order of the cells."""
    from fitgpp.studies.reproduce import Size
    st = rq6.study(overheads=(0.0, 900.0), workloads=("paper-wide-te", "paper-default"))
    o = st.run(Size(n_jobs=120, seeds=(0, 1)), cache=False)
    got = rc.runs_of(o)
    want = pd.DataFrame([
        {"workload": variant, "policy": _declared_label(cell.policy, dict(cell.params)),
         "overhead_s": float(dict(cell.knobs)["restart_overhead"]), "seed": cell.seed,
         **rc.cell_metrics({k: np.asarray(res[k]) for k in
                            ("te", "slowdown", "preemptions", "duration", "reload", "gpu",
                             "tasks")})}
        for (variant, cell), res in o.runs.items()])
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert (got["reload_gpu_h"] > 0).any() and got["te_p95"].nunique() > 1


def test_a_warm_run_from_the_cells_summaries_gives_the_same_result(tmp_path):
    """Cold (cells computed, their numbers kept beside them), warm (each class's statistics,
    steadiness and the reloads read from the summaries, no cell array read) and without a
    cache: the same table, steadiness, finding and figures."""
    from fitgpp.studies.reproduce import Size
    from fitgpp.sweep.cache import Summarized
    st = rq6.study(overheads=(0.0, 900.0), workloads=("paper-wide-te",))
    size = Size(n_jobs=120, seeds=(0, 1, 2))
    got = {}
    for how in ("none", "cold", "warm"):
        o = st.run(size, cache=False if how == "none" else tmp_path)
        r = st.analysis(o)
        got[how] = (r, o.table())
        if how == "warm":
            assert all(isinstance(res, Summarized) and res._full is None
                       for res in o.runs.values()), "a warm run read a cell's arrays"
            names = set(next(iter(o.runs.values())).summary.values)
            assert names == {"cell_metrics", "stability", "metric reload_gpu_h",
                             "metric reload_share"}
    for how in ("cold", "warm"):
        r, t = got[how]
        pd.testing.assert_frame_equal(t, got["none"][1], check_exact=True)
        pd.testing.assert_frame_equal(r.table, got["none"][0].table, check_exact=True)
        pd.testing.assert_frame_equal(r.steadiness, got["none"][0].steadiness, check_exact=True)
        assert r.finding == got["none"][0].finding and r.details == got["none"][0].details
        assert {k: c.to_dict() for k, c in r.charts.items()} == \
            {k: c.to_dict() for k, c in got["none"][0].charts.items()}


def test_reproduce_runs_rq6_and_writes_its_own_columns(tmp_path, monkeypatch):
    from fitgpp.studies import reproduce
    monkeypatch.setenv("FITGPP_CACHE", str(tmp_path / "cache"))
    assert "rq6" in reproduce.STUDIES and "rq6" in reproduce.RQS
    assert reproduce.STUDIES["rq6"].knobs["restart_overhead"] == rc.REPRODUCE_OVERHEADS
    size = reproduce.Size(n_jobs=150, seeds=(0,))
    st = rq6.study(overheads=(0.0, 900.0), workloads=("paper-wide-te",))
    r = st.result(size, cache=False)
    md = reproduce.write_results({"rq6": r}, tmp_path, size, 1.0, []).read_text()
    # declared metrics are headed by their titles (fitgpp.analysis.metrics.METRICS)
    head = ("| workload | restart cost (min) | policy | seeds | TE p95 slowdown | BE median slowdown | "
            "BE p95 slowdown | preemptions per BE job")
    assert head + " | GPU-hours lost to reloads | te_gain | be_p95_cost |" in md
    row = r.table[(r.table["policy"] == "LRTP") & (r.table["overhead_s"] == 900.0)].iloc[0]
    from fitgpp.analysis.metrics import percent
    assert (f"| paper-wide-te | 15 | LRTP | 1 | {row['te_p95']:.3g} |" in md
            and f"| {percent(row['te_gain'])} | {percent(row['be_p95_cost'])} |" in md)
    assert "change_te_p95" not in md and "stops paying off" in md


def test_a_be_gain_is_no_negative_cost_and_pays_off_on_net():
    """RQ6 (quick): "preempting stops paying off against PRIO already at 0 min ... (TE gain
    +0.0 %, BE p95 cost -10 % to -6 %)" where rq6_net shows a net gain at the same cells."""
    runs = _runs(lambda o: 10.0, lambda o: 15.0)   # TE as PRIO's; BE p95 15 against PRIO's 20
    f = rc.findings_table(rc.across_seeds(runs))
    assert (f["te_gain_0"] == 0).all() and (f["net_0"] > 0).all()
    assert f["stops_paying_min"].isna().all()       # the net's interval lies above 0
    text = rc.summary(f)
    assert "already at 0 min" not in text and "cost -" not in text
    assert ("never pays off for TE (TE p95 as PRIO's in every seed at every overhead), and the "
            "net is the BE p95 change alone (the net's interval lies above 0 at every overhead)") \
        in text
    assert "BE p95 gain 25 %" in text
    assert "BE p95 cost -" not in rc.describe(f)


def test_two_seeds_cannot_tell_where_preempting_stops_paying():
    runs = _runs(lambda o: 2.0, lambda o: 20.0 * (1 + o / 1800), seeds=(0, 1))
    f = rc.findings_table(rc.across_seeds(runs))
    text = rc.summary(f)
    assert "preempting against PRIO: cannot tell whether it stops paying off (2 seeds: fewer than 3)" in text
    assert "at 30 min for" not in text

@dataclass(frozen=True)
class _Patient(FitGpp):
    """FitGpp with a field of its own (RQ6 never declares it)."""

    patience: int = field(default=10, metadata={"min": 0, "max": 120, "units": "ticks"})
    name = "patient-rq6"

    def choose(self, eng, i, t):
        due = eng.submit[i] + self.patience
        if t < due:
            eng.wake(due)
            return None
        return super().choose(eng, i, t)


def test_a_value_added_to_s_and_a_users_policy_get_rows_of_their_own():
    """A value added to RQ6's s (the panel's "add a value") and a policy of the user's with a
    field of its own at two values: each configuration its own row in the table (all its
    seeds, nothing pooled) and in every figure; RQ6 named only its declared policies before
    and refused the rest."""
    from fitgpp.studies.reproduce import Size
    from fitgpp.workbook.panel_values import extend
    st = rq6.study(overheads=(0.0, 900.0), workloads=("paper-wide-te",))
    size = Size(n_jobs=120, seeds=(0, 1, 2))
    st, size = extend(st, size, "s", "2")
    st = st.replace(policies={**st.policies,
                              "patient-rq6": {"policy": _Patient, "patience": [0, 80]}})
    r = st.analyze(st.run(size, cache=False))
    labels = list(dict.fromkeys(r.table["policy"]))
    assert "FitGpp s=2" in labels and "FitGpp s=4" in labels
    mine = [x for x in labels if "patience" in x]
    assert len(mine) == 2 and len(set(labels)) == len(labels) == 9, labels
    assert (r.table.groupby("policy")["seeds"].sum() == 3 * 2).all()   # 3 seeds x 2 overheads
    for key, chart in r.charts.items():
        spec = json.dumps(chart.to_dict())
        assert "FitGpp s=2" in spec and all(x in spec for x in mine), key


# ---------------------------------------------------------------- issue 35: words by interval
def _seeded(te, be, ovh=(0.0, 600.0, 1800.0), seeds=(0, 1, 2)):
    """Runs where PRIO has TE p95 10 and BE p95 20 and each preempting policy's TE and BE p95
    are ``te(label, overhead, seed)`` and ``be(label, overhead, seed)``."""
    rows = []
    for label, _, _ in rc.POLICIES:
        for o in ovh:
            for seed in seeds:
                prio = label == "PRIO"
                rows.append({"workload": "w", "policy": label, "overhead_s": o, "seed": seed,
                             "te_p95": 10.0 if prio else te(label, o, seed), "be_median": 5.0,
                             "be_p95": 20.0 if prio else be(label, o, seed),
                             "preemptions_per_be": 0.0 if prio else 0.5,
                             "reload_gpu_h": 0.0 if prio else o / 100,
                             "reload_share": 0.0 if prio else o / 100_000})
    return pd.DataFrame(rows)


#: RAND at full size: net -392.1 % [-799.5 %, +15.2 %] at 60 min, "does not stop paying
#: off up to 60 min (no detectable net loss)"; here its BE p95 cost at 30 min is +20 %, +90 %
#: and +160 % over the seeds (a net of +60 %, -10 %, -80 %: an interval through 0).
def _rand_like(label, o, seed):
    return 20.0 * (1 + (0.2 + 0.7 * seed if o == 1800 else 0.1 * seed) * (label == "RAND"))


def test_a_net_whose_interval_includes_0_is_cannot_tell_not_does_not_stop():
    f = rc.findings_table(rc.across_seeds(_seeded(lambda *a: 2.0, _rand_like))).set_index("policy")
    rand, fit = f.loc["RAND"], f.loc["FitGpp s=4"]
    assert rand["net_max_lo"] < 0 < rand["net_max_hi"]
    assert math.isnan(rand["stops_paying_min"]) and rand["not_paying_min"] == 30.0
    assert rand["pays_off"] == ("pays off up to 10 min, then cannot tell whether it stops paying "
                                "off (the net's interval: above 0 at 0, 10 min; includes 0 at "
                                "30 min)")
    assert "does not stop paying off" not in rand["pays_off"]
    # shown: the net's interval lies above 0 at every overhead
    assert fit["pays_off"] == ("does not stop paying off up to 30 min (the net's interval lies "
                               "above 0 at every overhead)")
    text = rc.summary(f.reset_index())
    assert "then cannot tell whether it stops paying off" in text and "no detectable net loss" \
        not in text


def test_each_verdict_column_holds_its_own_phrase():
    """results.md's "stops helping TE" column held "stops paying off" phrases (both columns
    went through one formatter): "does not stop paying off up to 60 min | stops paying off
    already at 0 min"."""
    def te(label, o, seed):       # LRTP's TE gain ends at 30 min; everyone else's holds
        return 10.0 + seed if label == "LRTP" and o == 1800 else 2.0
    f = rc.findings_table(rc.across_seeds(_seeded(te, _rand_like)))
    md = rc.details(f)
    head = next(ln for ln in md.splitlines() if ln.startswith("| workload"))
    cols = [c.strip() for c in head.strip("|").split("|")]
    pay, helps = cols.index("pays off against PRIO"), cols.index("helps TE")
    rows = {r.split("|")[2].strip(): [c.strip() for c in r.strip("|").split("|")]
            for r in md.splitlines() if r.startswith("| w |")}
    assert set(rows) == set(f["policy"])
    for r in rows.values():
        assert "pay" in r[pay] and "helping TE" not in r[pay], r[pay]
        assert "helping TE" in r[helps] and "pay" not in r[helps], r[helps]
    assert rows["LRTP"][helps].startswith("stops helping TE at 30 min")
    assert rows["FitGpp s=1"][helps].startswith("does not stop helping TE up to 30 min")


def test_a_te_gain_of_exactly_0_says_preempting_never_paid_off_for_te():
    """paper-default at full size: TE gain +0.0 % [+0.0, +0.0] and "does not stop paying off
    up to 60 min (no detectable net loss)"."""
    def be(label, o, seed):
        return 20.0 * (1 + 0.3 * (seed - 1))          # BE p95 change -30 %, 0, +30 %
    f = rc.findings_table(rc.across_seeds(_seeded(lambda *a: 10.0, be))).iloc[0]
    assert f["te_gain_none"] and f["te_gain_max_lo"] == f["te_gain_max_hi"] == 0
    assert f["pays_off"].startswith("never pays off for TE (TE p95 as PRIO's in every seed at "
                                    "every overhead)")
    assert f["helps_te"] == "never helps TE (TE p95 as PRIO's in every seed at every overhead)"


def test_a_range_of_changes_is_named_by_each_change_s_interval():
    """Full size: "BE p95 cost 8 % to 110 %" where three of those changes have intervals through
    0 (+8.5 % [-37.4 %, +54.4 %], ...)."""
    spread = {"FitGpp s=1": 0.9, "FitGpp s=4": 0.8, "FitGpp s=8": 1.1, "LRTP": 0.05, "RAND": 0.1}
    mean = {"FitGpp s=1": 0.085, "FitGpp s=4": 0.3, "FitGpp s=8": 1.1, "LRTP": 0.5, "RAND": 1.0}

    def be(label, o, seed):
        return 20.0 * (1 + mean[label] + spread[label] * (seed - 1)) if o == 1800 else 20.0
    f = rc.findings_table(rc.across_seeds(_seeded(lambda *a: 2.0, be)))
    text = rc.summary(f)
    assert ("BE p95 cost 50 % to 100 % for LRTP, RAND; BE p95: no detectable change (+8 % to "
            "+110 %) for FitGpp s=1, FitGpp s=4, FitGpp s=8") in text, text
    assert "BE p95 cost 8 %" not in text
    two = rc.findings_table(rc.across_seeds(_seeded(lambda *a: 2.0, be, seeds=(0, 1))))
    said = rc.summary(two)     # two seeds: no interval, so no cost, gain or "no change"
    assert re.search(r"BE p95 change [-+]\d+ % to [-+]\d+ % \(cannot tell: 2 seeds: fewer than "
                     r"3\)", said) and "BE p95 cost" not in said and "detectable" not in said


def test_readable_cuts_every_interval_at_its_quantity_s_range_and_marks_it():
    """07's rc.readable(r.table) printed TE p95 lower bounds of -2.65 and -4.21 and change
    bounds of -117.8 % and -238.7 %, unmarked; RQ6's net has no floor and is not cut."""
    df = pd.DataFrame({"policy": ["RAND"], "seeds": [5],
                       "te_p95": [1.5], "te_p95_lo": [-2.65], "te_p95_hi": [5.65],
                       "be_p95_cost": [0.4], "be_p95_cost_lo": [-1.178], "be_p95_cost_hi": [2.0],
                       "net": [-3.921], "net_lo": [-7.995], "net_hi": [0.152]})
    t = rc.readable(df)
    row = t.shown.iloc[0]
    assert row["te_p95"] == "1.5 [1*, 5.65]"
    assert row["be_p95_cost"] == "+40.0 % [-100.0 %*, +200.0 %]"
    assert row["net"] == "-392.1 % [-799.5 %, +15.2 %]"
    assert any(n.startswith("* an interval bound cut") for n in t.notes)
    assert "Cells: value [95 % interval]." in t.notes
    pd.testing.assert_frame_equal(t.full, df)
    two = df.assign(seeds=2, **{c: np.nan for c in df.columns if c.endswith(("_lo", "_hi"))})
    t2 = rc.readable(two)      # two seeds: no interval shown, and no note that says one is
    assert t2.shown.iloc[0]["te_p95"] == "1.5" and "Cells: value [95 % interval]." not in t2.notes


def test_every_quantity_of_rq6_declares_a_range_its_values_keep():
    """RQ6's net (TE gain minus BE p95 cost) has no -100 % floor, the BE p95 growth is a
    change (at least -100 %), GPU-hours lost are at least 0; and every number of a run's table
    and findings lies in its declared range."""
    from fitgpp.analysis.metrics import CHANGE_RANGE, COUNT_RANGE, value_range
    assert value_range("net") == value_range("net_max_lo") == (-math.inf, 2.0)
    assert value_range("be_p95_growth") == CHANGE_RANGE
    assert value_range("reload_gpu_h_max") == value_range("reload_gpu_h_max_hi") == COUNT_RANGE
    assert value_range("te_gain_0") == (-math.inf, 1.0)
    assert value_range("te_p95_lo") == (1.0, math.inf)
    from fitgpp.studies.reproduce import Size
    st = rq6.study(overheads=(0.0, 1800.0), workloads=("paper-wide-te",))
    r = st.analyze(st.run(Size(n_jobs=150, seeds=(0, 1, 2)), cache=False))
    for df in (r.table, r.datasets["findings"]):
        for c in df.columns:
            if pd.api.types.is_float_dtype(df[c]) and not c.endswith(("_lo", "_hi")):
                lo, hi = value_range(c)
                x = df[c].dropna()
                assert ((x >= lo - 1e-12) & (x <= hi + 1e-12)).all(), (c, x.min(), x.max())


def test_the_net_figure_draws_each_whisker_to_its_interval_s_end():
    """rq6_net cut RAND's whisker at -100 % while its point sat at -392 %."""
    def be(label, o, seed):
        return 20.0 * (1 + (4.7 + 2.0 * (seed - 1)) * (label == "RAND" and o == 1800))
    table = rc.across_seeds(_seeded(lambda *a: 5.0, be))
    low = table["net_lo"].min()
    assert low < -4
    spec = json.dumps(rc.charts(table)["rq6_net"].to_dict())
    drawn = [v for k, v in re.findall(r'"(lo_c|cut)": (-?[\d.e+-]+)', spec) if k == "lo_c"]
    assert min(map(float, drawn)) == pytest.approx(low)
    assert '"cut": -1' not in spec and "cut at -100 %" not in spec


@pytest.mark.parametrize("nets, head", [
    ("+++", "does not stop paying off up to 60 min"),
    ("-++", "never pays off: a net loss already at 0 min"),
    ("++-", "stops paying off at 60 min"),
    ("+0-", "stops paying off between 0 and 60 min"),
    ("++0", "pays off up to 10 min, then cannot tell whether it stops paying off"),
    ("+00", "pays off at 0 min, then cannot tell whether it stops paying off"),
    ("000", "cannot tell whether it pays off at any overhead"),
    ("0+0", "cannot tell whether it pays off at 0 min, and no detectable net loss up to 60 min"),
    ("00-", "cannot tell whether it pays off at 0 min, and a net loss at 60 min"),
])
def test_each_course_of_the_net_gets_the_words_its_intervals_earn(nets, head):
    """Above 0 (+), includes 0 (0), below 0 (-) at 0, 10 and 60 min: the head says no more
    than the intervals, and the parenthesis gives every one."""
    iv = {"+": (0.1, 0.3), "0": (-0.1, 0.3), "-": (-0.3, -0.1)}
    lo, hi = zip(*(iv[c] for c in nets))
    text = rc.paying_phrase([0.0, 10.0, 60.0], lo, hi, 5)
    assert text.startswith(head + " ("), text
    said = {"+": "above 0", "0": "includes 0", "-": "below 0"}
    for c in set(nets):
        assert said[c] in text
    assert rc.paying_phrase([0.0, 10.0, 60.0], lo, hi, 2).startswith("cannot tell") and \
        "2 seeds: fewer than 3" in rc.paying_phrase([0.0, 10.0, 60.0], lo, hi, 2)
