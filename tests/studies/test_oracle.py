"""The oracle bound's sentences (fitgpp.studies.oracle): the direction only when the paired
test finds one, the interval always, "cannot tell" below 3 seeds."""

from fitgpp.studies.oracle import against_oracle, oracle_sentences


def test_above_the_oracle_with_its_interval():
    s = against_oracle([3.0, 3.2, 3.1, 3.3], [2.0, 2.1, 2.0, 2.2], a="FitGpp s=4",
                       title="TE p95 slowdown")
    assert s.startswith("FitGpp s=4's TE p95 slowdown is within +1.07 [")
    assert "of the SRTF oracle's (3.15 against 2.08). TE p95 slowdown: FitGpp s=4 is worse " \
        "than the SRTF oracle over 4 seeds" in s


def test_no_detectable_difference_is_not_a_direction():
    s = against_oracle([2.0, 2.3, 1.9, 2.2], [2.1, 2.0, 2.2, 2.1], a="X", title="T")
    assert "no detectable difference" in s and "worse" not in s and "better" not in s


def test_below_the_oracle():
    s = against_oracle([1.0, 1.1, 1.0, 1.05], [1.6, 1.5, 1.7, 1.55], a="X", title="T")
    assert "X is better than the SRTF oracle" in s


def test_too_few_seeds_cannot_tell():
    s = against_oracle([1.0, 2.0], [3.0, 4.0], a="X", title="T")
    assert "cannot tell" in s and "within" not in s


def test_both_metrics_and_nothing_without_the_oracle():
    v = {"X": {"te_p95": [1, 2, 3], "be_p95": [4, 5, 6]},
         "SRTF": {"te_p95": [1, 2, 4], "be_p95": [4, 5, 7]}}
    s = oracle_sentences(v, "X")
    assert s.count("SRTF oracle's") == 2 and "TE p95" in s and "BE p95" in s
    assert oracle_sentences({"X": v["X"]}, "X") == ""
