"""Verdicts from stated rules: each wrong statement issue 18 quotes, fed its own numbers."""

import numpy as np
import pytest
from scipy import stats

from fitgpp.analysis.metrics import t_interval
from fitgpp.analysis.verdicts import (CHANGE_RANGE, PAPER_CLAIMS, against_paper, against_paper_all,
                                      bounded_interval, compare, cost_or_gain, describe_change,
                                      extremes, holds_together, order_against, paper_summary,
                                      percent_values, size_phrase)

# 04's two settings over five seeds: means -17.1 % and -21.2 %, t-intervals near the quoted
# [-28, -6] and [-33, -9.5], paired differences of both signs.
S4 = [-0.10, -0.25, -0.17, -0.08, -0.255]
S8 = [-0.16, -0.20, -0.28, -0.12, -0.30]


def test_opposite_sign_is_never_agreement():
    """02: "Agrees: matches or beats on all three" on BE changes of the other sign."""
    verdicts = against_paper_all({"te_p95": -0.966, "be_median": -0.175, "be_p95": -0.204})
    by = {v.key: v for v in verdicts}
    assert by["te_p95"].verdict == "matches"
    assert by["be_median"].verdict == by["be_p95"].verdict == "differs in sign"
    assert "-17.5 %" in by["be_median"].sentence and "+18.0 %" in by["be_median"].sentence
    assert "gain here where the paper reports a cost" in by["be_p95"].sentence
    summary = paper_summary(verdicts)
    assert "Agrees" not in summary and "beats" not in summary
    assert "differs in sign: BE median slowdown, BE p95 slowdown" in summary
    assert not holds_together(verdicts)


def test_the_paper_own_numbers_agree_and_magnitude_counts():
    assert paper_summary(against_paper_all({c.key: c.change for c in PAPER_CLAIMS})).startswith(
        "Agrees with the paper on all 3")
    be = PAPER_CLAIMS[1]
    assert against_paper(0.051, be).verdict == "same sign, smaller"   # 2,000 jobs at 0.9
    assert against_paper(0.60, be).verdict == "same sign, larger"
    assert against_paper(0.001, be).verdict == "no change"
    assert against_paper(0.20, be).verdict == "matches"


def test_prio_reaching_the_same_te_p95_is_no_detectable_difference():
    """02 did not say that PRIO, which never preempts, reaches FitGpp's TE p95."""
    fit = [1.9, 2.3, 2.0, 2.6]
    c = compare(fit, list(fit), a="FitGpp s=4", b="PRIO", title="TE p95 slowdown")
    assert c.verdict == "no detectable difference"
    assert "no detectable difference between FitGpp s=4 and PRIO" in c.sentence


def test_overlapping_settings_are_not_better():
    """04: "s=8 is the better setting" on -17.1 % [-28, -6] against -21.2 % [-33, -9.5]."""
    assert t_interval(S4)[0] == pytest.approx(-0.171) and t_interval(S8)[0] == pytest.approx(-0.212)
    c = compare(S8, S4, a="s=8", b="s=4", title="BE median change", as_percent=True)
    assert c.verdict == "no detectable difference"
    assert "better" not in c.sentence
    assert c.pvalue == pytest.approx(stats.ttest_rel(S8, S4).pvalue)
    assert "pp" in c.sentence and "level 0.05" in c.sentence


def test_better_follows_the_metric_direction():
    a = [1.0, 2.0, 3.0, 4.0, 5.0]
    b = [x + 0.5 + 0.01 * i for i, x in enumerate(a)]
    assert compare(a, b, a="A", b="B", title="x").verdict == "better"
    assert compare(a, b, a="A", b="B", title="x", better="higher").verdict == "worse"
    assert compare(b, a, a="B", b="A", title="x").verdict == "worse"


def test_too_few_seeds_cannot_tell():
    """06 did not note that FitGpp's TE p95 (11.5) is above LRTP's (10.5), one seed."""
    c = compare([11.5], [10.5], a="FitGpp", b="LRTP", title="TE p95 slowdown")
    assert c.verdict == "cannot tell"
    assert "FitGpp (11.5) is higher than LRTP (10.5)" in c.sentence
    assert "cannot tell" in c.sentence
    assert compare([1, 2], [2, 3], a="A", b="B", title="x").verdict == "cannot tell"


def test_a_gain_is_never_called_a_cost():
    """05 called -11.1 % the largest BE cost; 06 said "small BE cost" for 18.8 % / 44.2 % gains."""
    e = extremes({"s=1": -0.05, "s=4": -0.111}, title="BE median")
    assert e.largest_cost is None and e.largest_gain == "s=4"
    assert "No setting has a BE median cost" in e.sentence and "-11.1 %" in e.sentence
    mixed = extremes({"a": 0.02, "b": 0.08, "c": -0.3}, title="BE p95")
    assert (mixed.largest_cost, mixed.largest_gain) == ("b", "c")
    for gain in (-0.188, -0.442):
        text = describe_change(gain, "BE median slowdown")
        assert "cost" not in text and "improves by" in text
    assert describe_change(-0.188, "BE median slowdown") == "BE median slowdown improves by 18.8 %"
    assert cost_or_gain(-0.1, "higher") == "cost" and cost_or_gain(0.1, "lower") == "cost"


def test_size_phrase_counts_what_ran():
    """06 headed its finding "(10000 jobs, 1 seed)" for a 6,957-job trace."""
    assert size_phrase(6957, 1) == "(6,957 jobs, 1 seed)"
    assert size_phrase(10000, 3) == "(10,000 jobs, 3 seeds)"


def test_settings_below_the_reference_are_named():
    """07: "every FitGpp setting loses no fewer GPU-hours than LRTP and RAND" where s=4 (505)
    and s=8 (497) lose fewer than RAND (526)."""
    text = order_against({"s=4": 505, "s=8": 497}, "RAND", 526, title="GPU-hours lost",
                         group="FitGpp setting")
    assert text.startswith("GPU-hours lost: every FitGpp setting is lower than RAND (526)")
    some = order_against({"s=4": 505, "s=8": 497, "s=1": 540}, "RAND", 526,
                         title="GPU-hours lost", group="FitGpp setting")
    assert "2 of 3 FitGpp settings are lower than RAND (526): s=4 (505), s=8 (497)" in some
    assert "higher: s=1 (540)" in some
    assert order_against({"s=1": 540}, "RAND", 526, title="x").startswith("x: no setting is lower")


def test_slowdown_interval_stays_at_or_above_one():
    """A slowdown interval read "1.01 [0.982, 1.04]"."""
    values = [1.0, 1.0, 1.03]
    raw = t_interval(values)
    assert raw[1] < 1  # the plain t-interval leaves the range
    iv = bounded_interval(values)
    assert iv.low == 1.0 and iv.clipped_low and not iv.clipped_high
    assert iv.text() == f"1.01 [1*, {raw[2]:.3g}]"
    change = bounded_interval([-0.99, -0.9, -0.999], CHANGE_RANGE)
    assert change.low == -1.0 and change.text(as_percent=True).startswith("-96.3 % [-100.0 %*")


def test_percent_columns_hold_percent():
    """Columns headed "(%)" held fractions."""
    assert np.allclose(percent_values([-0.175, 0.239]), [-17.5, 23.9])


def test_a_missing_value_is_not_measured_rather_than_no_change():
    assert against_paper(float("nan"), PAPER_CLAIMS[0]).verdict == "not measured"
    assert describe_change(float("nan"), "BE p95 slowdown") == "BE p95 slowdown: not measured"
    assert extremes({"a": float("nan"), "b": 0.1}, title="x").largest_cost == "b"
