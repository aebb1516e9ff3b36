"""The verdict grammar (fitgpp.analysis.verdicts): each rule, and each wrong sentence issues 18 and 23
quote, fed numbers like theirs (synthetic: no study runs here)."""

import math

import numpy as np
import pytest
from scipy import stats

from fitgpp.analysis.metrics import t_interval
from fitgpp.analysis.verdicts import (CHANGE_RANGE, PAPER_CLAIMS, Estimate, VerdictError,
                                      against_paper, against_paper_all, best_of, bounded_interval,
                                      category, change_range, change_text, compare,
                                      cost_or_gain, count_sentence, cut_interval, decided_change,
                                      direction, extremes, holds_together, holm, order_against,
                                      paper_summary, percent_values, size_phrase, tally,
                                      value_range)

TE, BE_MEDIAN, BE_P95 = PAPER_CLAIMS
# 04's two settings over five seeds: means -17.1 % and -21.2 %, paired differences of both signs
S4 = [-0.10, -0.25, -0.17, -0.08, -0.255]
S8 = [-0.16, -0.20, -0.28, -0.12, -0.30]


# ------------------------------------------------------------------ against the paper
def test_an_interval_that_includes_zero_establishes_no_sign():
    """02 and results.md: "BE median slowdown -6.8 % [-18.1 %, +4.5 %] against the paper's
    +18.0 %: differs in sign" (and BE p95 -9.9 % [-25.4 %, +5.7 %])."""
    for claim, e in ((BE_MEDIAN, Estimate(-0.068, -0.181, 0.045, 5)),
                     (BE_P95, Estimate(-0.099, -0.254, 0.057, 5))):
        v = against_paper(e, claim)
        assert v.verdict == "no detectable change" and "differs in sign" not in v.sentence
        assert v.phrase == "no detectable change; does not reproduce the paper's cost"
        assert "[-18.1 %, +4.5 %]" in v.sentence or "[-25.4 %, +5.7 %]" in v.sentence
    # the paper's value inside an interval that includes 0: consistent, too wide to confirm
    v = against_paper(Estimate(0.05, -0.05, 0.25, 5), BE_MEDIAN)
    assert v.phrase.startswith("no detectable change; consistent, interval too wide to confirm")
    assert not v.matches and v.category == "undecided"


def test_a_match_outside_the_interval_says_it_is_the_band():
    """02: "TE p95 -98.0 % [-99.0 %, -97.0 %] against -96.6 %: matches", the paper's value
    outside the interval."""
    v = against_paper(Estimate(-0.98, -0.99, -0.97, 5), TE)
    assert v.matches and "closeness band of +-5.0 pp" in v.phrase
    assert "the paper's value lies outside the interval" in v.sentence
    inside = against_paper(Estimate(-0.965, -0.99, -0.94, 5), TE)
    assert inside.matches and "inside the interval" in inside.phrase
    assert v.category == inside.category == "confirmed"
    # outside the interval and outside the band: a size verdict, by where the interval lies
    assert against_paper(Estimate(0.60, 0.5, 0.7, 5), BE_MEDIAN).verdict == "same sign, larger"
    assert against_paper(Estimate(0.05, 0.03, 0.07, 5), BE_MEDIAN).verdict == "same sign, smaller"
    assert against_paper(Estimate(-0.175, -0.2, -0.15, 5), BE_MEDIAN).verdict == "differs in sign"


def test_a_wide_interval_holding_the_paper_value_is_not_confirmed():
    """Issue 34: "+46.1 % [+15.3, +76.8] 'matches' +18.0 %": the paper's value lies inside
    the interval, but the interval reaches far beyond the closeness band (+-4.5 pp), so it is
    consistent, too wide to confirm: undecided, never "matches"."""
    v = against_paper(Estimate(0.461, 0.153, 0.768, 15), BE_MEDIAN)
    assert not v.matches and v.verdict == "consistent" and v.category == "undecided"
    assert "interval too wide to confirm" in v.sentence and "(n = 15)" in v.sentence
    # issue 34's 15-seed BE median at load 0.85, TE share 0.7, 10 min: the same, narrower
    assert against_paper(Estimate(0.146, 0.069, 0.224, 15), BE_MEDIAN).category == "undecided"
    # the equivalence test: the whole interval within the band confirms
    assert against_paper(Estimate(0.17, 0.14, 0.21, 30), BE_MEDIAN).category == "confirmed"


def test_contradicted_only_without_overlap_with_the_band():
    """The paper's value outside the interval is not enough to contradict it: an interval
    that still overlaps the closeness band shows neither closeness nor distance."""
    near = against_paper(Estimate(0.25, 0.20, 0.30, 5), BE_MEDIAN)   # band 13.5 .. 22.5 %
    assert near.verdict == "inconclusive" and near.category == "undecided"
    assert "overlaps the closeness band" in near.phrase
    for e, verdict in ((Estimate(0.30, 0.25, 0.35, 5), "same sign, larger"),
                       (Estimate(0.05, 0.03, 0.07, 5), "same sign, smaller"),
                       (Estimate(-0.175, -0.2, -0.15, 5), "differs in sign"),
                       (Estimate(0.0, -0.05, 0.05, 5), "no detectable change")):
        v = against_paper(e, BE_MEDIAN)
        assert (v.verdict, v.category) == (verdict, "contradicted"), v.sentence
    # a wide interval through 0 that reaches the band: undecided, not "does not reproduce"
    reach = against_paper(Estimate(0.05, -0.05, 0.15, 5), BE_MEDIAN)
    assert reach.category == "undecided" and "does not reproduce" not in reach.phrase


def test_a_false_confirm_is_rare_at_the_band_edge_and_the_narrow_interval_rule_is_not():
    """Why only the equivalence test confirms: with the truth at the band's edge (+18.0 +
    4.5 pp) the whole 95 % interval lies within the band in at most 2.5 % of runs, while "an
    interval narrower than the band that holds the paper's value" does so in about a quarter
    (24 % here)."""
    rng = np.random.default_rng(7)
    edge, sd, n = 0.18 + 0.045, 0.055, 10
    confirmed = narrow = 0
    for _ in range(2000):
        e = Estimate.of(rng.normal(edge, sd, n))
        confirmed += against_paper(e, BE_MEDIAN).category == "confirmed"
        narrow += e.high - e.low < 2 * 0.045 and e.low <= 0.18 <= e.high
    assert confirmed / 2000 <= 0.05
    assert narrow / 2000 > 0.2


def test_counts_state_confirmed_contradicted_and_undecided():
    """Issue 34: "0 of 18 settings match" read as "no" where 4 could not tell."""
    ok = against_paper_all({c.key: Estimate(c.change, c.change - 0.01, c.change + 0.01, 5)
                            for c in PAPER_CLAIMS})
    off = against_paper_all({c.key: Estimate(-c.change, -c.change - 0.01, -c.change + 0.01, 5)
                             for c in PAPER_CLAIMS})
    wide = against_paper_all({c.key: Estimate(c.change, c.change - 0.3, c.change + 0.3, 5)
                              for c in PAPER_CLAIMS})
    assert [category(x) for x in (ok, off, wide)] == ["confirmed", "contradicted", "undecided"]
    mixed = [ok[0], off[1], wide[2]]           # one of each: contradicted wins, not confirmed
    assert category(mixed) == "contradicted" and category([ok[0], wide[2]]) == "undecided"
    assert tally([ok, off, off, wide, "undecided"]) == {"confirmed": 1, "contradicted": 2,
                                                        "undecided": 2}
    assert count_sentence([ok] + [off] * 14 + [wide] * 3, "settings") == (
        "of 18 settings judged against the paper's numbers: 1 confirmed, 14 contradicted, "
        "3 undecided")
    assert count_sentence([], "cells") == ("of 0 cells judged against the paper's numbers: 0 "
                                           "confirmed, 0 contradicted, 0 undecided")
    with pytest.raises(VerdictError, match="not a verdict category"):
        tally(["maybe"])
    with pytest.raises(VerdictError, match="cannot count"):
        tally([0.5])
    better = compare([1, 2, 3, 4], [2, 3, 4, 5.5], a="a", b="b", title="x")
    assert better.verdict == "better" and better.category == "confirmed"


def test_a_direction_and_when_a_change_is_decided():
    gain = direction(Estimate(-0.5, -0.6, -0.4, 5), "TE p95")
    assert (gain.kind, gain.category) == ("gain", "confirmed")
    assert direction(Estimate(0.2, 0.1, 0.3, 5), "TE p95").category == "contradicted"
    small = direction(Estimate(-0.01, -0.03, 0.02, 5), "TE p95")
    assert (small.kind, small.category) == ("negligible", "contradicted")
    assert "no change beyond +-5.0 pp" in small.sentence
    assert direction(Estimate(-0.1, -0.3, 0.1, 5), "TE p95").category == "undecided"
    assert direction([-0.5, -0.4], "TE p95").category == "undecided"     # 2 seeds
    with pytest.raises(VerdictError):
        direction(Estimate(-0.5, -0.6, -0.4, 5), "TE p95", expect="better")
    # decided: a sign, or within +-5 pp of 0 (a true 0 stops); not: a wide interval, 2 seeds
    assert decided_change(Estimate(-0.5, -0.6, -0.4, 5))
    assert decided_change(Estimate(0.0, -0.03, 0.04, 5))
    assert not decided_change(Estimate(0.0, -0.2, 0.2, 5))
    assert not decided_change([0.1, 0.2])


def test_one_run_or_two_seeds_cannot_tell_never_a_sign():
    """10: "load 0.8, 3,000 jobs: ... differs in sign" from a -1.1 % change with no interval;
    the quick reproduce says the same from 2 seeds."""
    for measured in (-0.011, [-0.02, -0.002], Estimate(-0.011, seeds=2)):
        v = against_paper(measured, BE_MEDIAN)
        assert v.verdict == "cannot tell" and "differs" not in v.sentence
        assert "fewer than 3" in v.sentence
    assert "2 seeds: -2.0 % to -0.2 %" in against_paper([-0.02, -0.002], BE_MEDIAN).sentence


def test_agrees_only_when_every_number_matches():
    ok = against_paper_all({c.key: Estimate(c.change, c.change - 0.01, c.change + 0.01, 5)
                            for c in PAPER_CLAIMS})
    assert holds_together(ok) and paper_summary(ok).startswith("Agrees with the paper on all 3")
    off = against_paper_all({"te_p95": Estimate(-0.98, -0.99, -0.97, 5),
                             "be_median": Estimate(-0.068, -0.181, 0.045, 5),
                             "be_p95": Estimate(-0.099, -0.254, 0.057, 5)})
    assert not holds_together(off)
    text = paper_summary(off)
    assert text.startswith("Does not reproduce the paper's headline") and "Agrees" not in text
    few = against_paper_all({c.key: c.change for c in PAPER_CLAIMS})   # the paper's, one run
    assert not holds_together(few)
    assert paper_summary(few).startswith("Cannot tell whether this reproduces")
    # the three numbers hold together only when each is confirmed: one too wide is undecided
    some = against_paper_all({"te_p95": Estimate(-0.965, -0.98, -0.95, 15),
                              "be_median": Estimate(0.18, 0.17, 0.19, 15),
                              "be_p95": Estimate(0.239, 0.1, 0.4, 15)})
    assert not holds_together(some) and category(some) == "undecided"
    assert paper_summary(some).startswith("Cannot tell whether this reproduces")


def test_a_missing_value_is_not_measured():
    assert against_paper(float("nan"), TE).verdict == "not measured"
    assert change_text(float("nan"), "BE p95 slowdown") == "BE p95 slowdown: not measured"


# ------------------------------------------------------------------ a change against a baseline
def test_improves_only_with_an_interval_that_excludes_zero():
    """08 (quick, 2 seeds): "FitGpp s=1: TE p95 improves by 63.7 %" with no range, where the
    seeds span -78 % ... -50 %."""
    two = change_text([-0.78, -0.494], "FitGpp s=1: TE p95")
    assert "improves" not in two and "cannot tell" in two
    assert "-78.0 % to -49.4 %" in two
    five = change_text([-0.78, -0.5, -0.6, -0.7, -0.65], "TE p95")
    assert five.startswith("TE p95 improves by 64.6 % [") and five.endswith("(n = 5)")
    wide = change_text(Estimate(-0.068, -0.181, 0.045, 5), "BE median slowdown")
    assert wide == "BE median slowdown: no detectable change (-6.8 % [-18.1 %, +4.5 %], n = 5)"
    assert cost_or_gain(Estimate(0.1, 0.05, 0.15, 3)) == "cost"
    assert cost_or_gain(Estimate(0.1, 0.05, 0.15, 3), "higher") == "gain"
    assert cost_or_gain(0.1) == "cannot tell"


def test_a_cost_is_never_negative():
    """RQ6 (quick): "(TE gain +0.0 %, BE p95 cost -10 % to -6 %)"."""
    def est(m):
        return Estimate(m, m - 0.01, m + 0.01, 5)
    assert change_range([est(-0.10), est(-0.06)], "BE p95") == "BE p95 gain 6 % to 10 %"
    assert change_range([est(0.06), est(0.10)], "BE p95") == "BE p95 cost 6 % to 10 %"
    assert change_range([est(-0.1), est(0.06)], "BE p95") == \
        "BE p95: cost 6 % in 1, gain 10 % in 1"
    worse = change_text(Estimate(0.2, 0.1, 0.3, 5), "BE p95")
    assert worse == "BE p95 worsens by 20.0 % [10.0 %, 30.0 %] (n = 5)"


def test_change_range_names_each_change_by_its_interval():
    """Issue 35 item 5: "BE p95 cost 8 % to 110 %" where three of the changes have intervals
    through 0 (+8.5 % [-37.4, +54.4] ...): a change whose interval includes 0 is no detectable
    change, not a cost; bare numbers (one run each, no interval) are never named cost or
    gain."""
    said = change_range([Estimate(0.085, -0.374, 0.544, 5), Estimate(0.3, -0.1, 0.7, 5),
                         Estimate(1.1, 0.6, 1.6, 5), Estimate(0.5, 0.2, 0.8, 5)], "BE p95")
    assert said == ("BE p95: cost 50 % to 110 % in 2, no detectable change in 2 (+8 % to "
                    "+30 %)")
    assert "cost 8 %" not in said
    assert change_range([0.085, 0.5, 1.1], "BE p95") == "BE p95 change +8 % to +110 %"
    assert change_range([[0.1, 0.2]], "BE p95") == "BE p95 change +15 %"     # 2 seeds
    assert change_range([float("nan")], "BE p95") == "BE p95: not measured"


def test_extremes_only_among_detectable_costs_and_gains():
    """05 called -11.1 % the largest BE cost."""
    e = extremes({"s=1": Estimate(-0.05, -0.08, -0.02, 5),
                  "s=4": Estimate(-0.111, -0.15, -0.07, 5)}, title="BE median")
    assert e.largest_cost is None and e.largest_gain == "s=4"
    assert "No setting has a detectable BE median cost" in e.sentence
    mixed = extremes({"a": Estimate(0.02, -0.01, 0.05, 5), "b": Estimate(0.08, 0.05, 0.1, 5),
                      "c": Estimate(-0.3, -0.4, -0.2, 5)}, title="BE p95")
    assert (mixed.largest_cost, mixed.largest_gain) == ("b", "c")
    assert "1 of 3 show no detectable change" in mixed.sentence


# ------------------------------------------------------------------ between settings
def test_two_seeds_say_nothing_of_equal_or_lower():
    """RQ3: "s=8 (-73.0 %) is equal to s=4 (-73.0 %) ... cannot tell whether the difference
    is real"."""
    c = compare([-0.73, -0.73], [-0.73, -0.73], a="s=8", b="s=4", title="TE p95 change",
                as_percent=True)
    assert c.verdict == "cannot tell"
    for word in ("equal", "lower", "higher", "better", "worse"):
        assert word not in c.sentence
    assert "s=8 -73.0 %, s=4 -73.0 %" in c.sentence


def test_overlapping_settings_are_not_better():
    c = compare(S8, S4, a="s=8", b="s=4", title="BE median change", as_percent=True)
    assert c.verdict == "no detectable difference" and "better" not in c.sentence
    assert c.pvalue == pytest.approx(stats.ttest_rel(S8, S4).pvalue)
    a = [1.0, 2.0, 3.0, 4.0, 5.0]
    b = [x + 0.5 + 0.01 * i for i, x in enumerate(a)]
    assert compare(a, b, a="A", b="B", title="x").verdict == "better"
    assert compare(a, b, a="A", b="B", title="x", better="higher").verdict == "worse"


def test_best_names_its_ties():
    """09: "TE p95: best FitGpp s=4 (1.11)" where another configuration ties at 1.11; "BE
    median: best FIFO (1, +0.0 %)" where all four are 1."""
    tie = best_of({"FitGpp s=4": [1.10, 1.12, 1.11], "Patient": [1.11, 1.11, 1.11],
                   "FIFO": [50.0, 61.0, 58.0]}, title="TE p95")
    assert tie.best is None and set(tie.ties) == {"FitGpp s=4", "Patient"}
    assert "best" not in tie.sentence.replace("no single best", "")
    flat = best_of({k: [1.0, 1.0, 1.0] for k in ("FIFO", "PRIO", "FitGpp s=4", "Patient")},
                   title="BE median")
    assert flat.best is None and len(flat.ties) == 4 and "no single best" in flat.sentence
    clear = best_of({"A": [1.0, 1.1, 1.05], "B": [2.0, 2.2, 2.1]}, title="x")
    assert clear.best == "A" and "best A" in clear.sentence
    assert "cannot tell" in best_of({"A": [1.0, 1.1], "B": [1.1, 1.2]}, title="x").sentence


def test_best_is_holm_corrected_over_its_comparisons():
    """09's "best" ran one paired test per other setting, each at 0.05: with three others
    each at p = 0.02 it called a best that the Holm correction (0.05/3 for the smallest)
    does not support; the sentence says the correction."""
    lead = np.array([1.0, 1.1, 1.2, 1.3, 1.0])
    d = np.array([0.1, 0.3, 0.2, 0.05, 0.15])     # paired t-test p = 0.020 against lead
    vals = {"A": lead, "B": lead + d, "C": lead + d, "D": lead + d}
    got = best_of(vals, title="TE p95")
    assert got.best is None and set(got.ties) == set(vals), got.sentence
    assert "Holm" in got.sentence and "3 comparisons" in got.sentence
    two = best_of({"A": lead, "B": lead + d}, title="TE p95")    # one comparison: 0.02 < 0.05
    assert two.best == "A" and "Holm-corrected over the 1 comparison " in two.sentence
    assert holm([0.01, 0.04, 0.03]) == [True, False, False]      # 0.03 > 0.05/2 stops it
    assert holm([0.01, 0.02, 0.04]) == [True, True, True]
    assert holm([0.2, 0.001]) == [False, True]


def test_order_only_by_the_paired_test():
    """07: settings ordered against RAND from point values."""
    text = order_against({"s=4": [505, 500, 510], "s=8": [526, 520, 530.5]}, "RAND",
                         [526, 521, 531], title="GPU-hours lost", group="FitGpp setting")
    assert "lower than RAND: s=4 (505)" in text and "no detectable difference: s=8" in text
    one = order_against({"s=4": 505.0}, "RAND", 526.0, title="GPU-hours lost")
    assert "lower" not in one and "cannot tell" in one


def test_size_phrase_counts_what_ran():
    assert size_phrase(6957, 1) == "(6,957 jobs, 1 seed)"
    assert size_phrase(10000, 3) == "(10,000 jobs, 3 seeds)"
    assert size_phrase(10000, [5, 5]) == "(10,000 jobs, 5 seeds)"
    assert size_phrase(10000, [5, 20, 10]) == "(10,000 jobs, 5 to 20 seeds per configuration)"


# ------------------------------------------------------------------ intervals, cut and marked
def test_every_cut_bound_is_marked():
    """10: "-87.8 % [-101.5 %, -74.2 %]"; 09 "-82.9 % [-105.0 %, -60.8 %]"; slowdowns "1.08
    [1, 1.28]" cut without the promised *."""
    assert cut_interval(-0.878, -1.015, -0.742, CHANGE_RANGE).text(as_percent=True) == \
        "-87.8 % [-100.0 %*, -74.2 %]"
    assert cut_interval(1.08, 0.9, 1.28).text() == "1.08 [1*, 1.28]"
    assert cut_interval(1.08, 1.0, 1.28).text() == "1.08 [1, 1.28]"    # at 1: not cut
    values = [1.0, 1.0, 1.03]
    iv = bounded_interval(values)
    assert iv.low == 1.0 and iv.clipped_low and not iv.clipped_high
    assert iv.text() == f"1.01 [1*, {t_interval(values)[2]:.3g}]"
    assert value_range("change_be_p95_lo") == CHANGE_RANGE
    assert value_range("te_p95") == (1.0, math.inf)
    assert value_range("preemptions_per_be") == (0.0, math.inf)
    assert value_range("reload_share") == (0.0, math.inf)
    assert value_range("te_gain")[1] == 1.0
    assert np.allclose(percent_values([-0.175, 0.239]), [-17.5, 23.9])


def test_paired_p_is_scipys_ttest_rel_exactly():
    """compare's p-value is computed without importing scipy.stats (0.6 s of a warm panel,
    issue 26): bit for bit scipy.stats.ttest_rel's, over sizes and scales."""
    from scipy import stats

    from fitgpp.analysis.metrics import paired_p as _paired_p
    rng = np.random.default_rng(1)
    for n in (2, 3, 5, 10, 30):
        for scale in (1e-6, 1.0, 1e3):
            for _ in range(40):
                x, y = rng.normal(0.3, 1, n) * scale, rng.normal(0, 1, n) * scale + 1e3
                assert _paired_p(x - y) == float(stats.ttest_rel(x, y).pvalue)
