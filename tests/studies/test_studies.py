"""A study over a researcher's own policy: every swept field of it is a configuration of its
own (a row, a control value, an interval), never pooled with the other values."""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pytest

from fitgpp.studies import reproduce
from fitgpp.sim.policies import FitGpp
from fitgpp.studies.reproduce import RQResult, Size, Study

# load 0.9, above the default: a TE job must preempt often enough for patience to show in its tail
TINY = Size(n_jobs=600, seeds=(0, 1, 2), timeline_jobs=50, real_jobs=200, load=0.9)


@dataclass(frozen=True)
class Patient(FitGpp):
    """FitGpp that preempts for a TE job only once it has waited ``patience`` ticks."""

    patience: int = field(default=10, metadata={"min": 0, "max": 120, "units": "ticks"})
    name = "patient"

    def choose(self, eng, i, t):
        due = eng.submit[i] + self.patience
        if t < due:
            eng.wake(due)
            return None
        return super().choose(eng, i, t)


def _analyze(o) -> RQResult:
    return RQResult(o.study.key, o.study.title, o.study.question, o.table(), {}, finding="-")


STUDY = Study(key="rqp", title="RQP: patience", question="Does waiting before preempting help?",
              policies={"fifo": {}, "patient": {"policy": Patient, "patience": [0, 80]}},
              analyze=_analyze)


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    return STUDY.run(TINY, cache=tmp_path_factory.mktemp("studies-cache"))


def test_a_swept_user_field_is_a_dimension_of_the_study():
    assert STUDY.dimensions(TINY)["patience"] == (0, 80)


def test_each_field_value_is_its_own_row_with_its_own_numbers(outcome):
    table = outcome.table()
    rows = table[table["name"] == "patient"]
    assert sorted(rows["patience"]) == [0, 80]
    assert rows["policy"].nunique() == 2          # the label tells them apart
    for _, r in rows.iterrows():
        conf = next(c for c in outcome.configurations()
                    if c["name"] == "patient" and c["params"]["patience"] == r["patience"])
        per_seed = outcome.values(conf, "slowdown_p95", "TE")
        assert per_seed.shape == (len(TINY.seeds),)   # one value per seed, not pooled
        assert r["te_p95"] == pytest.approx(np.mean(per_seed))
        assert np.isfinite(r["te_p95_lo"]) and r["te_p95_lo"] <= r["te_p95"] <= r["te_p95_hi"]
    assert rows["te_p95"].nunique() == 2          # waiting 80 ticks shows in the TE tail
    # the per-seed values are those of the cell run at that patience
    for p in (0, 80):
        ds = outcome.run("patient", seed=1, patience=p)
        assert int(ds.attrs.get("patience", p)) == p


def test_the_panel_offers_the_field_and_shows_an_interval_per_value(tmp_path_factory):
    from fitgpp.workbook.panels import Panel
    from fitgpp.workbook.views import selection_numbers
    p = Panel(STUDY, TINY, cache=tmp_path_factory.mktemp("panel-cache"), charts=False)
    assert [v for _, v in p.controls["patience"].options] == [0, 80]
    p.controls["policy"].value = "patient"
    shown = {}
    for v in (0, 80):
        p.controls["patience"].value = v
        assert not p.messages.outputs, p.messages.outputs
        nums = selection_numbers(p.o, p._selection_for_outcome())
        shown[v] = nums.iloc[:, 0].tolist()
        assert all("[" in x for x in shown[v])        # an interval, not a pooled range
        assert f"patience={v}" in p.numbers.value
    assert shown[0] != shown[80]


def test_results_md_has_one_row_per_field_value(outcome, tmp_path):
    r = _analyze(outcome)
    path = reproduce.write_results({"rqp": r}, tmp_path, TINY, 1.0, [])
    text = path.read_text()
    for v in (0, 80):
        assert f"patience={v}" in text


def test_a_metric_is_one_declaration(outcome, tmp_path, monkeypatch, tmp_path_factory):
    """Declared once in fitgpp.analysis.metrics, a metric reaches the table, the panel and the report."""
    from fitgpp.analysis import metrics, tables
    from fitgpp.workbook.panels import Panel
    waits = metrics.Metric("te_wait_max", "longest TE wait", unit="s",
                           per_run=lambda ds: float(ds["wait"].where(ds["cls"] == "TE").max()))
    monkeypatch.setitem(metrics.METRICS, waits.name, waits)
    outcome.memo.clear()
    table = outcome.table()
    assert {"te_wait_max", "change_te_wait_max"} <= set(table.columns)
    fifo = table.set_index("policy").loc["FIFO"]
    want = np.mean([float(outcome.run("fifo", seed=s)["wait"].where(
        outcome.run("fifo", seed=s)["cls"] == "TE").max()) for s in TINY.seeds])
    assert fifo["te_wait_max"] == pytest.approx(want) and fifo["change_te_wait_max"] == 0
    r = _analyze(outcome)
    assert "longest TE wait" in tables.rq_table(r).shown.columns
    p = Panel(STUDY, TINY, cache=tmp_path_factory.mktemp("metric-cache"), charts=False)
    assert "longest TE wait" in p.numbers.value
    text = reproduce.write_results({"rqp": r}, tmp_path, TINY, 1.0, []).read_text()
    assert "longest TE wait" in text and "longest TE wait vs FIFO" in text


def test_the_baseline_is_part_of_the_study(outcome):
    """Changes are against the declared baseline (here a configuration of the user's policy)."""
    o = STUDY.replace(baseline={"policy": "patient", "patience": 0}).run(TINY, cache=outcome.cache_dir)
    t = o.table().set_index("policy")
    assert o.baseline_label() == "patient s=4 patience=0"
    assert t.loc["patient s=4 patience=0", "change_te_p95"] == 0
    conf = next(c for c in o.configurations() if c["params"].get("patience") == 80)
    base = next(c for c in o.configurations() if c["params"].get("patience") == 0)
    per_seed = (o.metric_values(conf, reproduce.METRICS["te_p95"])
                / o.metric_values(base, reproduce.METRICS["te_p95"]) - 1)
    assert t.loc["patient s=4 patience=80", "change_te_p95"] == pytest.approx(per_seed.mean())


def test_notebook_07_and_reproduce_run_one_declaration_and_agree(tmp_path):
    """RQ6 is an ordinary study: the notebook's panel and ``fitgpp reproduce`` run the same
    declaration at the same sizes and print the same numbers (here at the quick size)."""
    import json
    from pathlib import Path

    import pandas as pd

    from fitgpp.workbook.panels import SIZES, Panel
    nb = json.loads((Path(__file__).parents[2] / "notebooks" / "07_rq6_restart_cost.ipynb")
                    .read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert 'reproduce.STUDIES["rq6"]' in code and "Panel(study, size)" in code
    assert SIZES["quick"] is reproduce.QUICK and SIZES["full"] is reproduce.FULL
    cache = tmp_path / "cache"
    cmd = reproduce.run_all(tmp_path / "out", size=reproduce.QUICK, which=["rq6"], cache=cache,
                            formats=(), log=lambda *_: None)["rq6"]
    panel = Panel(reproduce.STUDIES["rq6"], "quick", cache=cache, charts=False)
    assert panel.o.stats["computed"] == 0     # the same cells: all read from the cache
    pd.testing.assert_frame_equal(panel.result.table, cmd.table)
    assert panel.result.finding == cmd.finding


def test_reproduce_figures_go_through_export(tmp_path):
    """One figure path: checked, configuration embedded, in the manifest, never overwritten."""
    import json

    from fitgpp.figures.files import MANIFEST
    from fitgpp.figures.export import read_config
    size = Size(n_jobs=150, seeds=(0, 1, 2), timeline_jobs=50)
    out = tmp_path / "out"
    for _ in range(2):
        reproduce.run_all(out, size=size, which=["rq3"], formats=(".png",),
                          cache=tmp_path / "cache", log=lambda *_: None)
    png = out / "rq3_change_vs_grace.png"
    cfg = read_config(png)["config"]
    assert cfg["study"] == "rq3" and cfg["knobs"]["grace_scale"] == [1.0, 4.0, 16.0]
    assert (out / "rq3_change_vs_grace-2.png").is_file()       # the second run: a new name
    manifest = json.loads((out / MANIFEST).read_text())["figures"]
    assert {"rq3_change_vs_grace.png", "rq3_change_vs_grace-2.png"} <= set(manifest)
    assert "rq3_change_vs_grace-2.png" in (out / "results.md").read_text()


# ---------------------------------------------------------------- findings a reviewer accepts
# Each statement issue 18 quotes as wrong, rebuilt from its numbers at the study level: the
# study's own finding function gets the table (or per-seed values) its analysis computes.
import pandas as pd  # noqa: E402


def _row(policy, name, te_p95, changes, width=0.01):
    r = {"policy": policy, "name": name, "te_p95": te_p95}
    for k, v in changes.items():
        r.update({f"change_{k}": v, f"change_{k}_lo": v - width, f"change_{k}_hi": v + width})
    return r


def _rq1_table(be_median, be_p95, prio_te=1.0):
    none = {"te_p95": 0.0, "be_median": 0.0, "be_p95": 0.0}
    return pd.DataFrame([
        _row("FIFO", "fifo", 500.0, none),
        _row("PRIO", "prio", prio_te, {"te_p95": -0.998, "be_median": -0.1, "be_p95": -0.1}),
        _row("FitGpp s=4", "fitgpp", 1.0,
             {"te_p95": -0.998, "be_median": be_median, "be_p95": be_p95})])


def test_rq1_does_not_agree_when_the_be_changes_have_the_other_sign():
    """02 printed "Agrees: matches or beats on all three" on BE -17.5 % / -20.4 % against the
    paper's +18.0 % / +23.9 %, and did not say PRIO reaches the same TE p95."""
    from fitgpp.studies.rq1 import headline_finding
    te = {"FIFO": [480.0, 500.0, 520.0], "PRIO": [1.0, 1.0, 1.0], "FitGpp s=4": [1.0, 1.0, 1.0]}
    text = headline_finding(_rq1_table(-0.175, -0.204), 10000, 5, te)
    assert "Agrees" not in text and "differs in sign: BE median slowdown, BE p95 slowdown" in text
    assert "PRIO, which never preempts, is not detectably worse than FitGpp s=4" in text
    assert "(10,000 jobs, 5 seeds)" in text
    # the same sign and size as the paper's: now it agrees, and PRIO above FitGpp is not noted
    te["PRIO"] = [3.0, 3.1, 2.9]
    text = headline_finding(_rq1_table(0.17, 0.24, prio_te=3.0), 10000, 5, te)
    assert "Agrees with the paper on all 3 numbers" in text and "never preempts" not in text
    assert "higher than FitGpp s=4: FIFO (500), PRIO (3)" in text
    # without per-seed values each policy is one run: no order is claimed
    assert "lower" not in headline_finding(_rq1_table(0.17, 0.24, prio_te=3.0), 10000, 5)


def test_the_headline_table_gives_each_number_its_verdict_by_direction():
    r = RQResult("rq1", "t", "q", _rq1_table(-0.175, 0.30), {})
    lines = reproduce.headline_table(r).splitlines()
    said = [ln.rsplit("|", 2)[1].strip() for ln in lines[2:5]]
    # -96.6 % outside [-100, -98.8], which lies within the band: confirmed by equivalence
    assert said[0].startswith("matches: the interval lies within the closeness band")
    assert said[1] == "differs in sign"
    assert said[2] == "same sign, larger (the interval lies wholly outside the closeness band of " \
        "+-5.0 pp)"
    assert "Does not reproduce the paper's headline" in lines[-1]
    # a change interval stops at -100 %, its clipped bound marked
    assert "-99.8 % [-100.0 %*, -98.8 %]" in lines[2]
    assert "mean [95 % CI]" in lines[0]
    # after seed rounds the header names their level (it said 95 % at 98.75 %)
    rounds = SimpleNamespace(level=0.9875)
    head = reproduce.headline_table(dataclasses.replace(r, rounds=rounds)).splitlines()[0]
    assert "mean [98.75 % CI]" in head and "95 %" not in head, head


def test_rq3_calls_s8_better_only_when_the_paired_test_says_so():
    """04 said "s=8 is the better setting" on -17.1 % [-28, -6] against -21.2 % [-33, -9.5]."""
    from fitgpp.studies.rq3 import s8_against_s4
    s8 = {"te_p95": np.array([-0.06, -0.28, -0.17]), "be_p95": np.array([0.1, 0.2, 0.15])}
    s4 = {"te_p95": np.array([-0.30, -0.10, -0.236]), "be_p95": np.array([0.12, 0.18, 0.15])}
    text = s8_against_s4(s8, s4)
    assert "no detectable difference between s=8 and s=4" in text and "is better" not in text
    assert "cannot confirm the paper" in text
    # a consistent gain on both, seed by seed: now the test says better, and the paper agrees
    s8 = {k: v - np.array([0.05, 0.051, 0.049]) for k, v in s4.items()}
    assert "agrees with the paper: s=8 is better on every metric" in s8_against_s4(s8, s4)


def test_rq4_never_calls_a_gain_the_largest_cost():
    """05 called -11.1 % the largest BE cost."""
    from fitgpp.studies.rq4 import mix_finding
    rows = [_row("FitGpp s=4", "fitgpp", 1.0, {"te_p95": te, "be_p95": be})
            for te, be in ((-0.9, -0.111), (-0.8, -0.05), (-0.7, -0.02))]
    fit = pd.DataFrame(rows).assign(te_fraction=[0.2, 0.5, 0.8], grace="narrow", seeds=5)
    text = mix_finding(fit, 10000, 5)
    assert "No setting has a detectable BE p95 cost" in text
    assert "largest BE p95 gain: TE share 0.2, narrow grace (-11.1 % [" in text
    assert "direction holds in every mix" in text
    fit.loc[2, ["change_be_p95", "change_be_p95_lo", "change_be_p95_hi"]] = [0.04, 0.03, 0.05]
    assert "Largest BE p95 cost: TE share 0.8, narrow grace (+4.0 % [" in mix_finding(fit, 10, 5)
    two = fit.assign(seeds=2)       # the quick size: no interval, no direction
    assert "Cannot tell whether FitGpp keeps a TE gain" in mix_finding(two, 600, 2)


def test_rq4_says_the_direction_does_not_hold_only_where_a_mix_refutes_it():
    """RQ4 said "The paper's direction does not hold everywhere: 1 of 3 mixes show no detectable
    TE gain" of a mix whose interval runs through 0: undecided is not "no"."""
    from fitgpp.studies.rq4 import mix_finding
    rows = [_row("FitGpp s=4", "fitgpp", 1.0, {"te_p95": te, "be_p95": 0.1}, width=w)
            for te, w in ((-0.9, 0.01), (-0.8, 0.01), (-0.05, 0.2))]
    fit = pd.DataFrame(rows).assign(te_fraction=[0.2, 0.5, 0.8], grace="narrow", seeds=5)
    text = mix_finding(fit, 10000, 5)
    assert "does not hold" not in text
    assert "2 confirmed, 0 contradicted, 1 undecided" in text
    assert "Cannot tell whether FitGpp keeps a TE gain in every mix: 1 of 3 mixes are undecided" \
        in text
    fit.loc[2, ["change_te_p95", "change_te_p95_lo", "change_te_p95_hi"]] = [0.2, 0.1, 0.3]
    assert "does not hold everywhere: 1 of 3 mixes contradict it" in mix_finding(fit, 10000, 5)


def test_rq2_says_the_direction_does_not_hold_only_when_the_test_refutes_it():
    from fitgpp.studies.rq2 import s_tradeoff_verdict
    te, be = np.array([3.0, 3.2, 2.9]), np.array([5.0, 5.5, 4.8])
    same = {("te_p95", 0.5): te, ("te_p95", 16.0): te + [0.3, -0.4, 0.1],
            ("be_p95", 0.5): be, ("be_p95", 16.0): be + [0.5, 0.6, 0.45]}
    text = s_tradeoff_verdict(same, 0.5, 16.0)
    assert "does not hold" not in text and "The paper's direction is not shown" in text
    worse = {**same, ("te_p95", 16.0): te + [1.0, 1.1, 0.9]}
    assert "The paper's direction does not hold: larger s is worse on TE p95." in \
        s_tradeoff_verdict(worse, 0.5, 16.0)


def test_rq5_counts_the_jobs_run_and_names_gains_as_gains():
    """06 headed its finding "(10000 jobs, 1 seed)" for a 6,957-job trace, said "small BE
    cost" where BE improved by 18.8 % / 44.2 %, and did not note that FitGpp's TE p95 (11.5)
    is above LRTP's (10.5) and RAND's (9.5)."""
    from fitgpp.studies.rq5 import real_trace_finding
    none = {"te_p95": 0.0, "be_median": 0.0, "be_p95": 0.0}
    t = pd.DataFrame([_row("FIFO", "fifo", 80.0, none), _row("PRIO", "prio", 12.0, none),
                      _row("FitGpp s=4", "fitgpp", 11.5,
                           {"te_p95": -0.856, "be_median": -0.188, "be_p95": -0.442}),
                      _row("LRTP", "lrtp", 10.5, none), _row("RAND", "rand", 9.5, none)])
    text = real_trace_finding(t, 6957, 3)
    assert "(6,957 jobs, 1 seed)" in text and "10000" not in text and "10,000" not in text
    # one run of one trace: the changes are given, with "cannot tell" and no direction word
    assert "BE median slowdown changes by -18.8 % (one run): cannot tell" in text
    assert "improves" not in text and "cost" not in text and "lower" not in text
    assert "LRTP (10.5), RAND (9.5)" in text


def test_a_slowdown_interval_stays_at_or_above_1_in_results_md():
    """A slowdown interval read "1.01 [0.982, 1.04]"; a slowdown is at least 1."""
    row = {"policy": "FIFO", "be_median": 1.01, "be_median_lo": 0.982, "be_median_hi": 1.04,
           "change_be_median": 0.0, "change_be_median_lo": 0.0, "change_be_median_hi": 0.0}
    md = reproduce._md_table(pd.DataFrame([row]), ["policy"], ["be_median"])
    assert "1.01 [1*, 1.04]" in md and "0.982" not in md


def test_each_configuration_says_whether_it_reached_a_steady_state():
    """At offered load 1.3 FIFO's queue grows for the whole run; at 0.3 nothing waits."""
    from fitgpp.studies.steady import steady_markdown
    study = Study(key="rqs", title="steady?", question="q", policies={"fifo": {}},
                  knobs={"load": (0.3, 1.3)})
    r = study.result(Size(n_jobs=2000, seeds=(0,)), cache=False)
    st = r.steadiness.set_index("load")
    assert st.loc[0.3, "steady"] == 1 and st.loc[1.3, "steady"] == 0
    assert st.loc[1.3, "slope"] > 0 and (st["jobs"] == 2000).all()
    assert "1 of 2 configurations reached one in every seed" in r.finding
    assert "FIFO (load 1.3) 0/1" in r.finding
    assert "| FIFO (load 1.3) | 2,000 | 0/1 |" in steady_markdown(r.steadiness)


# ---------------------------------------------------------------- the run-length study
def test_usable_capacity_stops_at_the_first_load_that_is_not_steady():
    from fitgpp.studies.run_length import usable_capacity
    rows = [{"policy": "FitGpp s=4", "load": lo, "n_jobs": n, "seeds": 2, "steady": st}
            for lo, n, st in [(0.5, 100, 2), (0.5, 900, 2), (0.8, 900, 2), (0.9, 900, 1),
                              (1.0, 900, 2), (0.9, 100, 2)]]
    t = pd.DataFrame(rows)
    assert usable_capacity(t) == 0.8     # 1.0 steady again does not count: 0.9 was not
    t.loc[0, "steady"] = 0               # a short run does not decide it
    assert usable_capacity(t) == 0.8
    t.loc[1, "steady"] = 1
    assert np.isnan(usable_capacity(t))


def test_the_run_length_study_grid_follows_the_size_and_finds_the_capacity():
    from fitgpp.studies import STUDIES
    st = STUDIES["runlen"]
    size = Size(n_jobs=600, seeds=(0,), run_lengths=(500, 1500), run_loads=(0.3, 1.3))
    dims = st.dimensions(size)
    assert dims["n_jobs"] == (500, 1500) and dims["load"] == (0.3, 1.3)
    r = st.result(size, cache=False)
    assert len(r.table) == 2 * 2 * 2 and set(r.steadiness["jobs"]) == {500, 1500}
    assert "FitGpp s=4's runs of 1,500 jobs stay steady up to load 0.3" in r.finding
    # one seed: every cell "cannot tell", so nothing says the numbers hold nowhere
    assert "hold together cannot be told at any cell of this grid" in r.finding
    fifo = r.table.set_index(["policy", "load", "n_jobs"]).loc["FIFO"]
    # overloaded, FIFO's TE tail grows with the run length; at 0.3 nothing waits
    assert fifo.loc[(1.3, 1500), "te_p95"] > fifo.loc[(1.3, 500), "te_p95"] > 1.0
    assert fifo.loc[(0.3, 1500), "te_p95"] < 1.5


def test_the_steady_window_measures_the_same_jobs_for_a_run_and_its_baseline():
    import dataclasses
    from fitgpp.analysis.metrics import METRICS
    from fitgpp.analysis.stability import stability
    size = Size(n_jobs=1500, seeds=(0,), load=0.7)
    o = Study(key="rqw", title="w", question="q", policies={"fifo": {}, "prio": {}}).run(
        dataclasses.replace(size, steady_window=True), cache=False)
    conf = next(c for c in o.configurations() if c["name"] == "prio")
    base = o.baseline(conf)
    runs = [o.run(c["name"]) for c in (conf, base)]
    start = max(stability(ds).warmup_end for ds in runs)
    end = stability(runs[0]).drain_start
    assert start > 0, "the test needs a run with a warm-up to cut"
    for c, ds in zip((conf, base), runs):
        submit = ds["submit"].to_numpy()
        want = METRICS["be_p95"].of_run(ds.isel(job=(submit >= start) & (submit < end)))
        assert o.metric_values(c, METRICS["be_p95"])[0] == want
    full = Study(key="rqw", title="w", question="q", policies={"fifo": {}, "prio": {}}).run(
        size, cache=False)
    assert full.metric_values(conf, METRICS["be_p95"])[0] != o.metric_values(conf, METRICS["be_p95"])[0]


def test_rq6_names_the_fitgpp_settings_that_lose_fewer_gpu_hours():
    """07 said "every FitGpp setting loses no fewer GPU-hours than LRTP and RAND" where s=4
    (505) and s=8 (497) lose fewer than RAND (526)."""
    from fitgpp.studies import restart_cost as rc
    found = pd.DataFrame({"workload": "paper-default", "max_overhead_min": 60.0,
                          "policy": ["FitGpp s=1", "FitGpp s=4", "FitGpp s=8", "LRTP", "RAND"],
                          "reload_gpu_h_max": [540.0, 505.0, 497.0, 450.0, 526.0],
                          "te_gain_max": 0.5, "be_p95_cost_max": [0.3, 0.2, 0.1, 0.25, 0.4],
                          "net_max": 0.2, "stops_paying_min": np.nan, "seeds": 3,
                          "pays_off": "cannot tell whether it pays off at any overhead"})
    jitter = np.array([-1.0, 0.0, 1.2])
    per_seed = {"paper-default": {(p, "reload_gpu_h_max"): v + jitter for p, v in
                                  zip(found["policy"], found["reload_gpu_h_max"])}}
    text = rc.summary(found, per_seed)
    assert "no fewer" not in text
    assert ("each of 3 FitGpp settings against RAND (526): lower than RAND: FitGpp s=4 (505), "
            "FitGpp s=8 (497); higher than RAND: FitGpp s=1 (540)") in text
    assert "against LRTP (450): higher than LRTP: FitGpp s=1 (540), FitGpp s=4 (505)" in text


def test_rq2_agrees_on_the_s_trade_off_only_by_the_paired_test():
    from fitgpp.studies.rq2 import s_tradeoff_verdict
    te_lo, be_lo = np.array([3.0, 3.2, 2.9]), np.array([5.0, 5.5, 4.8])
    moved = {("te_p95", 0.5): te_lo, ("te_p95", 16.0): te_lo - [1.0, 1.1, 0.9],
             ("be_p95", 0.5): be_lo, ("be_p95", 16.0): be_lo + [0.5, 0.6, 0.45]}
    text = s_tradeoff_verdict(moved, 0.5, 16.0, " at P=3")
    # a direction by the paired test, never "agrees with the paper" (03, paper-wide-te, full:
    # "Agrees with the paper: larger s buys TE latency with BE slowdown" printed right after
    # "0 of 18 settings match all three of the paper's numbers")
    assert "The paper's direction holds at P=3" in text and "Agrees" not in text
    noisy = {**moved, ("be_p95", 16.0): be_lo + [1.0, -1.2, 0.3]}
    text = s_tradeoff_verdict(noisy, 0.5, 16.0)
    # an undecided BE half is not shown, not refuted ("Only half ... holds: ... BE p95 is no
    # detectable difference")
    assert "Only the TE half of the paper's direction is shown" in text and \
        "its BE half cannot be told" in text and "holds" not in text.split("BE p95 slowdown:")[-1]
    two = {k: v[:2] for k, v in moved.items()}
    assert "Cannot tell" in s_tradeoff_verdict(two, 0.5, 16.0)


def test_rq2_says_it_does_not_agree_only_when_every_setting_is_detectably_off():
    """A cold panel's first draw (one seed) said "0 of 18 settings match ..., so this study
    does not agree with the paper's headline": at one seed nothing can be told."""
    from fitgpp.studies.rq2 import RQ2, _headline_clause
    assert "does not agree" in _headline_clause(18, 0, 18, 5)
    one = _headline_clause(18, 0, 0, 1)
    assert "does not agree" not in one and "cannot be told (1 seed: fewer than 3)" in one
    assert _headline_clause(18, 2, 16, 5) == ""
    from fitgpp.studies.size import Size
    finding = RQ2.analysis(RQ2.run(Size(n_jobs=200, seeds=(0,)), cache=False)).finding
    assert "does not agree" not in finding and "(1 seed: fewer than 3)" in finding, finding
    # issue 34: the count says all three numbers, undecided apart from "no"
    assert finding.startswith("Of 18 FitGpp (s, P) settings judged against the paper's three "
                              "numbers (200 jobs, 1 seed): 0 confirmed, 0 contradicted, 18 "
                              "undecided"), finding


def test_package_docstring_lists_every_study_and_no_other():
    """The list of studies in ``fitgpp.studies``'s docstring is the registry: every key of
    STUDIES with its title, in order, and no key that is not registered."""
    import re

    import fitgpp.studies as studies
    listed = re.findall(r"^- ``([^`]+)`` \(``(\w+)``\): (.+)$", studies.__doc__, re.M)
    assert [k for k, _, _ in listed] == list(studies.STUDIES)
    for key, module, title in listed:
        assert title == studies.STUDIES[key].title
        assert key in {s.key for s in importlib.import_module(f"fitgpp.studies.{module}").STUDIES}
    assert {"rq7", "rq7a", "rq7a10", "runlen"} <= {k for k, _, _ in listed}


def test_size_and_result_import_from_every_old_path():
    """``Size``, ``QUICK``, ``FULL``, ``RQResult`` and ``ReproduceError`` live in
    ``fitgpp.studies.size``; the older paths name the same objects."""
    import fitgpp.studies as studies
    from fitgpp.studies import base, size
    for name in ("Size", "QUICK", "FULL", "RQResult", "ReproduceError"):
        got = {id(getattr(m, name)) for m in (size, base, studies, reproduce)}
        assert got == {id(getattr(size, name))}, name
    assert base.Study is studies.Study is reproduce.Study


def test_every_study_line_chart_knows_the_least_value_of_its_quantity():
    """A study's long table gives each slowdown row ``lowest`` 1 (its whiskers stop there and
    its axis does not pad below it, as RQ6's do) and a change NaN (cut at -100 % anyway)."""
    from fitgpp.studies.base import _long
    t = pd.DataFrame({"x": [1, 2], "be_long_p95": [1.02, 1.5], "be_long_p95_lo": [0.7, 1.1],
                      "be_long_p95_hi": [1.3, 1.9], "change_be_median": [-0.1, 0.2],
                      "change_be_median_lo": [-0.3, 0.1], "change_be_median_hi": [0.1, 0.3]})
    long = _long(t, {"be_long_p95": "long BE p95", "change_be_median": "BE median vs FIFO (%)"},
                 ["x"])
    assert long.loc[long["metric"] == "long BE p95", "lowest"].tolist() == [1.0, 1.0]
    assert long.loc[long["metric"] != "long BE p95", "lowest"].isna().all()
    from fitgpp.figures import plots
    spec = plots.metric_lines(long[long["metric"] == "long BE p95"], x="x", series="x",
                              y_title="slowdown").to_dict()
    assert "cut at the least value the quantity can take" in str(spec)


def test_one_seed_findings_do_not_say_the_paper_fails_where_nothing_can_be_told():
    """At one seed (a cold panel's first draw) RQ8 said "holds in 0 of 12 cells" and the
    run-length study "hold together nowhere on this grid" with every cell "cannot tell"."""
    from fitgpp.studies.size import Size
    from fitgpp.studies import STUDIES
    size = Size(n_jobs=300, seeds=(0,), run_lengths=(300, 600), run_loads=(0.7, 0.9))
    rq8 = STUDIES["rq8"].analysis(STUDIES["rq8"].run(size, cache=False)).finding
    assert "0 confirmed, 0 contradicted, 12 undecided" in rq8, rq8   # issue 34: three counts
    assert "12 of the undecided from fewer than 3 seeds" in rq8, rq8
    rl = STUDIES["runlen"].analysis(STUDIES["runlen"].run(size, cache=False)).finding
    assert "nowhere" not in rl and "cannot be told at any cell of this grid" in rl, rl


@pytest.mark.parametrize("off, said", [
    ([True, True], "The paper's three numbers hold together nowhere on this grid"),
    ([True, False], "hold together at no cell of this grid where it can be told"),
    ([False, False], "Whether the paper's three numbers hold together cannot be told at any cell"),
])
def test_the_run_length_finding_says_nowhere_only_when_every_cell_is_off(monkeypatch, off, said):
    from fitgpp.studies import run_length
    cells = pd.DataFrame({"load": [0.7, 0.9], "n_jobs": [1000, 1000], "holds": [False, False],
                          "off": off, "verdicts": ["v", "v"],
                          "category": ["contradicted" if x else "undecided" for x in off]})
    monkeypatch.setattr(run_length, "paper_cells", lambda table: cells)
    monkeypatch.setattr(run_length, "usable_capacity", lambda steady, *a: 0.7)
    monkeypatch.setattr(run_length, "movement", lambda table, steady: "moves")
    text = run_length.run_length_finding(pd.DataFrame({"n_jobs": [1000], "load": [0.7]}), None)
    assert said in text, text
    assert ("nowhere" in text) == all(off)
    n = sum(off)   # issue 34: the count states all three numbers
    assert (f"Of 2 cells of the grid judged against the paper's three numbers: 0 confirmed, {n} "
            f"contradicted, {2 - n} undecided.") in text, text
