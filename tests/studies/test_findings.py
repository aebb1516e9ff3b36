"""Issue 23's quoted sentences and numbers, each rebuilt from numbers like the issue's and fed
to the finding code that printed it (the run-length study, RQ2, RQ7's details, the generic
finding of a researcher's own study, the panel's and workbench's numbers). Synthetic tables,
fake outcomes and one tiny real RQ2 run keep this file to seconds."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from fitgpp.analysis.metrics import METRICS, brief
from fitgpp.studies.reproduce import Size

PAPER_KEYS = ("te_p95", "be_median", "be_p95")


def _runlen_table(seeds: int, changes: dict, bounds: float | None):
    """The run-length study's table at one load and length: FIFO and FitGpp s=4."""
    rows = []
    for policy in ("FIFO", "FitGpp s=4"):
        r = {"policy": policy, "load": 0.8, "n_jobs": 3000, "seeds": seeds, "te_p95": 2.0,
             "be_median": 1.2, "be_p95": 3.0}
        for k in PAPER_KEYS:
            v = 0.0 if policy == "FIFO" else changes[k]
            lo, hi = (np.nan, np.nan) if bounds is None else (v - bounds, v + bounds)
            r.update({f"change_{k}": v, f"change_{k}_lo": lo, f"change_{k}_hi": hi})
        rows.append(r)
    return pd.DataFrame(rows)


def test_run_length_says_cannot_tell_without_an_interval():
    """10: "load 0.8, 3,000 jobs: ... differs in sign" from a -1.1 % change with no interval
    (and the quick reproduce from 2 seeds)."""
    from fitgpp.studies.run_length import paper_cells, run_length_finding
    t = _runlen_table(2, {"te_p95": -0.5, "be_median": -0.011, "be_p95": 0.02}, None)
    cells = paper_cells(t)
    assert "differs in sign" not in cells["verdicts"].iloc[0]
    assert cells["verdicts"].iloc[0].count("cannot tell (2 seeds: fewer than 3)") == 3
    steady = pd.DataFrame([{"policy": p, "load": 0.8, "n_jobs": 3000, "steady": 2, "seeds": 2}
                           for p in ("FIFO", "FitGpp s=4")])
    text = run_length_finding(t, steady)
    assert "differs in sign" not in text and "load 0.8, 3,000 jobs: cannot tell" in text
    assert "-1.1 % (2 seeds)" in text       # the change is still given, without a sign word


def test_run_length_finding_is_a_headline_and_a_list():
    """10's finding was one paragraph of about 30 items: a short bold headline (the usable
    capacity), then one list item per point, the loads and cells as sub-items."""
    from fitgpp.studies.run_length import run_length_finding
    rows = []
    for load in (0.7, 0.8, 0.9):
        for n in (600, 2000):
            rows.append(_runlen_table(3, {"te_p95": -0.5, "be_median": -0.011, "be_p95": 0.02},
                                      0.01).assign(load=load, n_jobs=n))
    t = pd.concat(rows, ignore_index=True)
    steady = pd.DataFrame([{"policy": p, "load": load, "n_jobs": n, "steady": 3, "seeds": 3}
                           for p in ("FIFO", "FitGpp s=4") for load in (0.7, 0.8, 0.9)
                           for n in (600, 2000)])
    lines = run_length_finding(t, steady).splitlines()
    assert lines[0].startswith("**Usable capacity: load 0.9**") and len(lines[0]) < 140, lines[0]
    assert lines[1] == "" and all(ln.startswith(("- ", "  - ")) for ln in lines[2:]), lines
    loads = [ln for ln in lines if ln.startswith("  - load ")]
    assert len(loads) >= 3 and all(ln.count("jobs:") <= 2 for ln in loads)


def test_rq7_details_give_the_seeds_range_and_no_direction_from_two_seeds():
    """08 (quick, 2 seeds): "FitGpp s=1: TE p95 improves by 63.7 % ... LAS threshold=14000
    improves by 35.4 %" with no range, where the seeds span -78 %...-50 % and -62.5 %...-8.2 %."""
    from fitgpp.studies.rq7 import vs_baseline
    t = pd.DataFrame({"workload": "paper-wide-te", "restart_overhead": 0.0,
                      "policy": ["FitGpp s=1", "LAS threshold=14000"], "name": ["fitgpp", "LAS"],
                      "change_te_p95": [-0.637, -0.354], "change_te_p95_lo": np.nan,
                      "change_te_p95_hi": np.nan, "seeds": 2})
    changes = {0: np.array([-0.78, -0.494]), 1: np.array([-0.625, -0.082])}
    text = vs_baseline(t, "PRIO", changes)
    assert "improves" not in text
    assert "FitGpp s=1: TE p95 changes by -63.7 % (2 seeds: -78.0 % to -49.4 %): cannot tell" in text
    assert "(2 seeds: -62.5 % to -8.2 %): cannot tell" in text
    five = {0: np.array([-0.78, -0.5, -0.6, -0.7, -0.65]), 1: np.array([-0.6, 0.1, -0.3, 0.2, -0.1])}
    text = vs_baseline(t, "PRIO", five)
    assert "FitGpp s=1: TE p95 improves by 64.6 % [" in text
    assert "LAS threshold=14000: TE p95: no detectable change" in text


class _Outcome:
    """What :func:`fitgpp.studies.base.generic` reads of an outcome: per-seed values."""

    def __init__(self, values: dict, baseline: str = "FIFO"):
        self.vals, self.base = values, baseline
        self.study = SimpleNamespace(key="rqp", title="mine", question="q", columns=(),
                                     policies={}, trace=None, model=None, knobs={}, variants={},
                                     seeds=lambda size: (0, 1, 2))
        self.size = Size(n_jobs=100, seeds=(0, 1, 2))

    def configurations(self):
        return [{"label": k, "name": k.lower(), "params": {}, "knobs": {}, "variant": None}
                for k in self.vals]

    def metric_values(self, conf, m):
        return np.asarray(self.vals[conf["label"]][m.name], float)

    def change(self, conf, m):
        base = self.metric_values(self.configurations()[0], m)
        return self.metric_values(conf, m) / base - 1

    def baseline_label(self):
        return self.base

    def table(self):
        from fitgpp.analysis.metrics import t_interval
        rows = []
        for c in self.configurations():
            r = {"policy": c["label"], "seeds": 3}
            for m in brief():
                r[m.name], r[f"{m.name}_lo"], r[f"{m.name}_hi"] = t_interval(
                    self.metric_values(c, m))
                if m.vs_baseline:
                    r[f"change_{m.name}"] = float(np.mean(self.change(c, m)))
            rows.append(r)
        return pd.DataFrame(rows)


def test_the_generic_finding_calls_best_only_from_the_paired_test_and_names_ties():
    """09: "TE p95: best FitGpp s=4 (1.11)" where another configuration ties at 1.11; "BE
    median: best FIFO (1, +0.0 %)" where all four are 1."""
    from fitgpp.studies.base import generic
    one = [1.0, 1.0, 1.0]
    vals = {"FIFO": {"te_p95": [50.0, 58.0, 61.0], "be_median": one, "be_p95": [3, 3.2, 3.1],
                     "preemptions_per_be": [0, 0, 0]},
            "PRIO": {"te_p95": [1.3, 1.4, 1.35], "be_median": one, "be_p95": [3, 3.2, 3.1],
                     "preemptions_per_be": [0, 0, 0]},
            "FitGpp s=4": {"te_p95": [1.10, 1.12, 1.11], "be_median": one,
                           "be_p95": [3.3, 3.5, 3.4], "preemptions_per_be": [0.1, 0.2, 0.1]},
            "Patient": {"te_p95": [1.11, 1.11, 1.11], "be_median": one, "be_p95": [3.2, 3.4, 3.5],
                        "preemptions_per_be": [0.1, 0.1, 0.1]}}
    text = generic(_Outcome(vals)).finding
    te = next(p for p in text.split(". ") if p.startswith("TE p95"))
    assert "best FitGpp s=4" not in te and "no single best" in te
    assert "FitGpp s=4 (1.11), Patient (1.11)" in te
    be = next(p for p in text.split(". ") if p.startswith("BE median"))
    assert "best FIFO" not in be and "no single best" in be and be.count("(1)") == 4


def test_panel_and_workbench_numbers_cut_and_mark_their_intervals():
    """10 (load 0.8, 1,000 jobs): "-87.8 % [-101.5 %, -74.2 %]"; 00: "1.6 [1, 3.27]"."""
    from fitgpp.workbook.views import metric_rows

    class Arm:
        def __init__(self, label, values):
            self.label, self.values = label, values

        def seeds(self):
            return (0, 1, 2)

        def metric(self, m):
            return np.asarray(self.values[m.name], float)

        def same_as(self, other):
            return self is other

    m = METRICS["te_p95"]
    cur = Arm("FitGpp s=4", {"te_p95": [1.0, 1.0, 2.8]})
    base = Arm("FIFO", {"te_p95": [30.0, 8.0, 9.0]})
    rows = metric_rows(cur, base, [m])
    assert rows.iloc[0]["FitGpp s=4"].startswith("1.6 [1*, ")
    change = rows.iloc[0]["change vs FIFO"]
    assert "[-100.0 %*, " in change, change


def test_rq2_on_two_seeds_is_neither_flat_nor_in_agreement(tmp_path):
    """RQ2 wide (quick): "TE p95 is flat in s" for 1.18 -> 1.13; 03 (paper-wide-te): "Agrees
    with the paper: larger s buys TE latency ..." right after "0 of 18 settings match"."""
    from fitgpp.studies import STUDIES
    st = STUDIES["rq2w"]
    st = st.replace(policies={**st.policies, "fitgpp": {"s": [0.5, 16.0], "max_preemptions": [3]}})
    r = st.result(Size(n_jobs=150, seeds=(0, 1)), cache=tmp_path)
    assert "flat" not in r.finding and "Agrees" not in r.finding
    assert "Cannot tell whether larger s trades TE latency for BE slowdown at P=3" in r.finding
