"""One declaration of how parameters are named on screen: words and units, values in the
unit the prose uses ("restart cost (min)", 600 s shown as 10), sentences in words."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fitgpp.figures import names, plots


def test_restart_cost_reads_in_minutes_with_its_unit():
    """07's control offered "0/600" with no unit while the prose says minutes, and a chart
    title read "restart_overhead 0.0"."""
    assert names.title("restart_overhead") == "restart cost (min)"
    assert [names.shown("restart_overhead", v) for v in (0.0, 600.0, 1800.0)] == ["0", "10", "30"]
    assert names.phrase("restart_overhead", np.float64(600.0)) == "restart cost 10 min"
    assert names.stored("restart_overhead", "20") == 1200.0
    with pytest.raises(ValueError, match=r"restart cost \(min\).*'ten'"):
        names.stored("restart_overhead", "ten")


def test_policy_fields_are_named_by_their_own_declaration():
    """LAS's "threshold" sat beside FitGpp's "threshold s" with no unit: a field's name and
    unit come from its metadata, in one place."""
    from fitgpp.studies import rq7
    assert names.title("s") == "threshold s"
    assert names.title("max_preemptions") == names.title("P") == "P (max preemptions)"
    assert names.title("threshold", [rq7.LasThreshold]) == "LAS threshold (GPU-s)"
    assert names.title("thresholds") == "thresholds (GPU-s)"
    assert names.phrase("thresholds", (3250.0, 7200.0)) == "thresholds 3250/7200 GPU-s"
    assert names.phrase("max_preemptions", 3) == "P=3" and names.short("max_preemptions") == "P"
    assert names.title("not_a_field") == "not_a_field"


def test_sentences_and_labels_use_words_not_field_names():
    """`n_jobs` inside sentences: "3,000 jobs"."""
    from fitgpp.studies.steady import steady_sentence
    assert names.phrase("n_jobs", np.int64(3000)) == "3,000 jobs"
    assert (names.phrase("n_seeds", 1), names.phrase("n_seeds", 5)) == ("1 seed", "5 seeds")
    t = pd.DataFrame([dict(policy="FitGpp s=4", load=0.9, n_jobs=3000, restart_overhead=600.0,
                           jobs=3000, seeds=5, steady=2, slope=0.0, warmup_h=1.0, drain_h=2.0,
                           text="")])
    said = steady_sentence(t)
    assert "FitGpp s=4 (load 0.9, 3,000 jobs, restart cost 10 min) 2/5" in said, said
    assert "n_jobs" not in said and "restart_overhead" not in said
    label = plots.config_label("fitgpp", {"s": 4.0, "max_preemptions": 1, "te_fraction": 0.3,
                                          "restart_overhead": 600.0},
                               ["max_preemptions", "te_fraction", "restart_overhead"])
    assert label == "FitGpp s=4 P=1 TE share 0.3 restart cost 10 min"



def test_a_spec_fitgpp_cannot_resolve_is_passed_over_but_a_bug_is_not_hidden(monkeypatch):
    """``names`` asks the next spec when one is not a policy fitgpp can resolve (a PolicyError),
    but an unexpected error while reading a policy's fields surfaces instead of being swallowed."""
    from fitgpp.sim.policies import registry
    assert names.title("fussiness", ["no-such-policy"]) == "fussiness"

    def broken(spec):
        raise RuntimeError("a bug while reading the fields")
    monkeypatch.setattr(registry, "declared", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        names.title("fussiness", ["fifo"])
