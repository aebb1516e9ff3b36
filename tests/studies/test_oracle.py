"""The SRTF oracle's sentences (fitgpp.studies.oracle): the comparison named plainly ("lower
than the SRTF oracle's by d [lo, hi]"), a direction only when the paired interval excludes 0,
"cannot tell" below 3 seeds, and what the oracle is and is not a bound of (issue 35 item 6)."""

from fitgpp.studies.oracle import WHAT, against_oracle, oracle_sentences


def test_above_the_oracle_with_its_interval():
    s = against_oracle([3.0, 3.2, 3.1, 3.3], [2.0, 2.1, 2.0, 2.2], a="FitGpp s=4",
                       title="TE p95 slowdown")
    assert s.startswith("FitGpp s=4's TE p95 slowdown is higher than the SRTF oracle's by "
                        "1.07 [0.995, 1.15] (3.15 against 2.08; paired over 4 seeds, p = ")
    assert "within" not in s


def test_below_the_oracle_is_lower_by_a_positive_amount():
    """RQ1's old sentence: "within −0.595 [−0.621, −0.568] of the SRTF oracle's" where FitGpp
    beats the oracle: "within" a negative number says nothing; now the direction is a word
    and the amount and its interval are positive."""
    s = against_oracle([1.0, 1.1, 1.0, 1.05], [1.6, 1.5, 1.7, 1.55], a="X", title="T")
    assert s.startswith("X's T is lower than the SRTF oracle's by 0.55 [0.345, 0.755] "
                        "(1.04 against 1.59; paired over 4 seeds, p = ")
    assert "within" not in s and "-" not in s.split("(")[0]


def test_no_detectable_difference_is_not_a_direction():
    s = against_oracle([2.0, 2.3, 1.9, 2.2], [2.1, 2.0, 2.2, 2.1], a="X", title="T")
    assert s.startswith("X's T cannot be told from the SRTF oracle's: the paired difference")
    assert "includes 0" in s and "lower" not in s and "higher" not in s


def test_too_few_seeds_cannot_tell():
    s = against_oracle([1.0, 2.0], [3.0, 4.0], a="X", title="T")
    assert "cannot tell" in s and "lower" not in s and "higher" not in s


def test_both_metrics_after_what_the_oracle_bounds_and_nothing_without_it():
    v = {"X": {"te_p95": [1, 2, 3], "be_p95": [4, 5, 6]},
         "SRTF": {"te_p95": [1, 2, 4], "be_p95": [4, 5, 7]}}
    s = oracle_sentences(v, "X")
    assert s.startswith(WHAT) and "bound" not in s.replace(WHAT, "")
    assert "minimizes the mean completion time" in WHAT and "no bound of one class's tail" in WHAT
    assert s.count("SRTF oracle's") == 2 and "TE p95" in s and "BE p95" in s
    assert oracle_sentences({"X": v["X"]}, "X") == ""
