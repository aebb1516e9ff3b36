"""RQ1 puts FitGpp s=4 against FIFO's readings side by side (issue 34 item 6): strict FIFO,
the baseline and our reading of the paper's FIFO, and FIFO with EASY and greedy backfilling;
each reading's three numbers with their verdicts against the paper, in the finding and in the
headline table of results.md."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fitgpp.analysis.metrics import summarize
from fitgpp.studies import reproduce
from fitgpp.studies.base import Size
from fitgpp.studies.rq1 import FIFO_READINGS, RQ1, headline_finding

TINY = Size(n_jobs=300, seeds=(0, 1, 2), timeline_jobs=50)


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    return RQ1.run(TINY, cache=tmp_path_factory.mktemp("cells"))


@pytest.fixture(scope="module")
def result(outcome):
    return RQ1.analysis(outcome)


def test_rq1_runs_every_reading_against_strict_fifo(result):
    assert RQ1.policies["fifo"] == {"backfill": list(FIFO_READINGS)}
    assert RQ1.baseline == {"policy": "fifo", "backfill": "none"}
    t = result.table
    assert t["policy"].tolist()[:3] == ["FIFO", "FIFO backfill=easy", "FIFO backfill=greedy"]
    assert result.baseline == "FIFO"
    strict = t.set_index("policy").loc["FIFO"]
    assert strict["change_te_p95"] == 0 and strict["backfill"] == "none"
    text = result.finding
    assert text.startswith("FitGpp s=4 against strict FIFO (no backfilling: our reading of the "
                           "paper's FIFO, which the paper does not detail) (300 jobs, 3 seeds)")
    assert "Against FIFO with EASY backfilling (the head's reserved start computed from the " \
           "jobs' true durations): TE p95 slowdown " in text
    assert "Against FIFO with greedy backfilling" in text


def test_the_changes_against_each_reading_are_paired_per_seed(outcome, result):
    """Each number against EASY and greedy FIFO, rebuilt from the runs' own per-job results
    (summarize), paired seed by seed."""
    readings = result.datasets["fifo_readings"]
    assert sorted(set(readings["backfill"])) == ["easy", "greedy", "none"]
    fit = [summarize(outcome.run("fitgpp", seed=s, s=4.0)) for s in TINY.seeds]
    for backfill in ("easy", "greedy"):
        fifo = [summarize(outcome.run("fifo", seed=s, backfill=backfill)) for s in TINY.seeds]
        for key, cls, col in (("te_p95", "TE", "slowdown_p95"),
                              ("be_median", "BE", "slowdown_median"),
                              ("be_p95", "BE", "slowdown_p95")):
            x = np.array([f.loc[cls, col] for f in fit])
            base = np.array([f.loc[cls, col] for f in fifo])
            got = readings[(readings["backfill"] == backfill) & (readings["metric"] == key)]
            assert got["change"].item() == pytest.approx(np.mean(x / base - 1), abs=1e-12)
            assert got["seeds"].item() == 3


def test_the_headline_table_puts_easy_beside_strict(result):
    text = reproduce.headline_table(result)
    lines = text.splitlines()
    assert lines[0].endswith("| verdict | against EASY FIFO | verdict |")
    assert all(ln.count("|") == 7 for ln in lines[2:5])
    assert "Against strict FIFO (no backfilling" in lines[-1]
    assert "Against FIFO with EASY backfilling:" in lines[-1]


def _row(policy, name, changes, width=0.01):
    r = {"policy": policy, "name": name, "te_p95": 1.0}
    for k, v in changes.items():
        r.update({f"change_{k}": v, f"change_{k}_lo": v - width, f"change_{k}_hi": v + width})
    return r


def test_headline_finding_judges_each_reading_against_the_paper():
    """A BE cost against strict FIFO, a BE gain against EASY: the finding says both, each
    in the grammar's words (built from a table and readings, no simulation)."""
    table = pd.DataFrame([
        _row("FIFO", "fifo", {"te_p95": 0.0, "be_median": 0.0, "be_p95": 0.0}),
        _row("FitGpp s=4", "fitgpp", {"te_p95": -0.966, "be_median": 0.18, "be_p95": 0.239})])
    readings = pd.DataFrame([
        {"fifo": "FIFO backfill=easy", "backfill": "easy", "metric": k, "change": v,
         "change_lo": v - 0.01, "change_hi": v + 0.01, "seeds": 5}
        for k, v in (("te_p95", -0.9), ("be_median", -0.3), ("be_p95", 1.2))])
    text = headline_finding(table, 10_000, 5, readings=readings)
    assert "against strict FIFO" in text and "Agrees with the paper on all 3 numbers." in text
    easy = text.split("Against FIFO with EASY backfilling")[1]
    assert "BE median slowdown -30.0 % [-31.0 %, -29.0 %] (n = 5) against the paper's +18.0 %: " \
           "differs in sign" in easy
    assert "Does not reproduce the paper's headline" in easy
    # without readings (a study declared with FIFO alone) the old sentence stands
    assert headline_finding(table, 10_000, 5).startswith("FitGpp s=4 against FIFO (10,000 jobs")


def test_seeds_added_in_rounds_keep_the_readings_paired(tmp_path):
    """With a seed budget, the headline and every FIFO reading it is put against get the same
    seeds (with strict FIFO, their baseline), so each change against a reading stays paired
    seed by seed and rests on as many seeds as FitGpp's own."""
    import dataclasses
    size = dataclasses.replace(TINY, max_seeds=6)
    o = RQ1.run(size, cache=tmp_path)
    r = RQ1.analysis(o)
    assert o.rounds is not None and o.rounds.rounds, "the tiny run decides nothing in 3 seeds"
    n = {c["label"]: len(o.seeds_of(c)) for c in o.configurations()}
    fit = n["FitGpp s=4"]
    assert fit == 6 and n["FIFO"] == n["FIFO backfill=easy"] == n["FIFO backfill=greedy"] == fit
    readings = r.datasets["fifo_readings"]
    assert set(readings["seeds"]) == {fit}
