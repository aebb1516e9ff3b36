"""RQ1: TE latency, FitGpp s=4 against FIFO, PRIO, LRTP and RAND (the paper's headline),
and against the SRTF oracle (Tiresias's ``shortest``, which knows every job's duration).

The paper's numbers are against "FIFO", which it does not detail, and its BE result depends
on the reading (SPEC.md "FIFO (no preemption)"). Our reading, the baseline of every change
here, is strict FIFO (``backfill="none"``); RQ1 runs FIFO with EASY and with greedy
backfilling too and puts FitGpp's three numbers against each reading side by side."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from fitgpp.figures import plots
from fitgpp.analysis.metrics import METRICS, paired_change
from fitgpp.analysis.verdicts import (PAPER, PAPER_CLAIMS, UNDECIDED, Estimate,  # noqa: F401
                                      against_paper, against_paper_all, against_paper_row, compare,
                                      order_against, paper_summary, size_phrase)
from fitgpp.studies.adaptive import against_paper_undecided
from fitgpp.studies.base import Outcome, RQResult, Study, _config
from fitgpp.studies.oracle import BOUND, LABEL, ORACLE, oracle_sentences

#: The configuration whose changes are the paper's headline.
HEADLINE = "FitGpp s=4"
#: FIFO's readings RQ1 runs (field ``backfill``), strict first: the baseline of its changes.
FIFO_READINGS = ("none", "easy", "greedy")
#: What each reading is, in a finding.
READING_WORDS = {"none": "strict FIFO (no backfilling: our reading of the paper's FIFO, "
                         "which the paper does not detail)",
                 "easy": "FIFO with EASY backfilling (the head's reserved start computed from "
                         "the jobs' true durations)",
                 "greedy": "FIFO with greedy backfilling (every waiting job that fits starts)"}
__all__ = ["FIFO_READINGS", "HEADLINE", "PAPER", "RQ1", "STUDIES", "against_readings",
           "headline_finding"]


def headline_finding(table: pd.DataFrame, jobs: int, seeds,
                     te_p95: dict | None = None, readings: pd.DataFrame | None = None) -> str:
    """The finding of RQ1 from its table (one row per policy, the metrics and their changes
    against strict FIFO with their intervals; ``seeds``: a count, or each configuration's when
    seeds were added in rounds): each of the three numbers against the paper's by
    :func:`fitgpp.analysis.verdicts.against_paper`, the same against each other FIFO reading
    in ``readings`` (:func:`against_readings`), and where FitGpp's TE p95 slowdown sits among
    the other policies' by the paired test (``te_p95``: per-seed values by policy label;
    without them each policy is one run and no order is claimed)."""
    t = table.set_index("policy")
    fit = t.loc[HEADLINE]
    verdicts = against_paper_row(fit)
    shown = " ".join(v.sentence for v in verdicts)
    per = te_p95 or {p: float(t.loc[p, "te_p95"]) for p in t.index}
    others = {p: per[p] for p in t.index if p != HEADLINE}
    strict = READING_WORDS["none"] if readings is not None else "FIFO"
    text = (f"{HEADLINE} against {strict} {size_phrase(jobs, seeds)}: {shown} "
            f"{paper_summary(verdicts)} " + _other_readings(readings)
            + order_against(others, HEADLINE, per[HEADLINE], title="TE p95 slowdown",
                            group="policy"))
    for p in [p for p in t.index if t.loc[p, "name"] == "prio"]:
        c = compare(per[p], per[HEADLINE], a=p, b=HEADLINE, title="TE p95 slowdown")
        if c.verdict in ("better", "no detectable difference"):
            text += (f" {p}, which never preempts, is not detectably worse than {HEADLINE} on "
                     "TE p95 slowdown: on this workload the TE gain does not need preemption"
                     " as far as these seeds can tell.")
    return text


def _other_readings(readings: pd.DataFrame | None) -> str:
    """FitGpp's three numbers against each FIFO reading but the strict one, each against the
    paper's (the paper's FIFO may be any of them)."""
    if readings is None or readings.empty:
        return ""
    out = []
    for backfill, g in readings[readings["backfill"] != "none"].groupby("backfill", sort=False):
        got = {r["metric"]: Estimate(r["change"], r["change_lo"], r["change_hi"], int(r["seeds"]),
                                     tuple(r["values"]) if "values" in r else ())
               for _, r in g.iterrows()}
        verdicts = against_paper_all(got)
        out.append(f"Against {READING_WORDS.get(backfill, g['fifo'].iloc[0])}: "
                   f"{' '.join(v.sentence for v in verdicts)} {paper_summary(verdicts)} ")
    return "".join(out)


def against_readings(o: Outcome) -> pd.DataFrame:
    """FitGpp s=4's change on each of the paper's three numbers against each FIFO reading the
    study ran, paired per seed: one row per reading (``fifo`` its label, ``backfill``) and
    metric, with its interval, seeds and the per-seed changes (``values``; none when FitGpp
    s=4 or FIFO did not run)."""
    confs = o.configurations()
    fit = [c for c in confs if c["label"] == HEADLINE]
    rows = []
    for c in confs:
        if not fit or c["name"] != "fifo":
            continue
        for key in PAPER:
            e = Estimate.of(paired_change(o.metric_values(fit[0], METRICS[key]),
                                          o.metric_values(c, METRICS[key])))
            rows.append({"fifo": c["label"], "backfill": c["params"].get("backfill", "none"),
                         "metric": key, "change": e.mean, "change_lo": e.low,
                         "change_hi": e.high, "seeds": e.seeds, "values": e.values})
    return pd.DataFrame(rows, columns=["fifo", "backfill", "metric", "change", "change_lo",
                                       "change_hi", "seeds", "values"])


def _strict_first(table: pd.DataFrame) -> pd.DataFrame:
    """The table with FIFO's rows first, in the order of :data:`FIFO_READINGS` (strict, the
    baseline, first; the grid lists a field's values sorted), the others as they were."""
    rank = [FIFO_READINGS.index(b) if n == "fifo" and b in FIFO_READINGS else len(FIFO_READINGS)
            for n, b in zip(table["name"], table.get("backfill", pd.Series("", table.index)))]
    return table.iloc[np.argsort(rank, kind="stable")].reset_index(drop=True)


def _greedy(table: pd.DataFrame) -> pd.Series:
    """The rows of FIFO with greedy backfilling: left out of the bar chart (in the table, the
    finding and the CDFs), which fits a column with strict and EASY FIFO beside the others
    but not with a third FIFO."""
    return (table["name"] == "fifo") & (table.get("backfill", pd.Series("", table.index))
                                        == "greedy")


_HEADLINE_UNDECIDED = against_paper_undecided(lambda c: c["label"] == HEADLINE, each=True)


def _undecided(o: Outcome) -> list[dict]:
    """RQ1's configurations that more seeds could still decide (adaptive replication): the
    headline while one of its three numbers against strict FIFO is undecided, or against
    another FIFO reading; then with it every FIFO reading, so that they all get the same
    seeds and every change against a reading stays paired seed by seed."""
    found = _HEADLINE_UNDECIDED(o)
    t = against_readings(o)
    claims = {c.key: c for c in PAPER_CLAIMS}
    other = t[t["backfill"] != "none"]
    if not found and not any(
            against_paper(Estimate.of(r["values"]), claims[r["metric"]]).category == UNDECIDED
            for _, r in other.iterrows()):
        return []
    confs = o.configurations()
    return [c for c in confs if c["label"] == HEADLINE] + \
        [c for c in confs if c["name"] == "fifo" and c["params"].get("backfill") != "none"]


def _utilization(kept) -> dict:
    """FitGpp's and FIFO's GPU use over time; one figure naming both when they are the same
    (a run too small for contention), not two identical files."""
    from fitgpp.figures.print_rules import identical
    charts = {"rq1_utilization_fitgpp": plots.utilization(kept[HEADLINE]),
              "rq1_utilization_fifo": plots.utilization(kept["FIFO"])}
    if identical(charts):
        return {"rq1_utilization_fitgpp_fifo": plots.utilization(
            kept["FIFO"], title="GPU use and waiting jobs over time, FitGpp s=4 and FIFO "
                                "(identical)")}
    return charts


def _rq1(o: Outcome) -> RQResult:
    st, size = o.study, o.size
    table = _strict_first(o.table())
    te_p95 = {c["label"]: o.metric_values(c, METRICS["te_p95"]) for c in o.configurations()}
    readings = against_readings(o)
    finding = headline_finding(table, o.jobs(), o.seed_counts(), te_p95, readings)
    values = {c["label"]: {m: o.metric_values(c, METRICS[m]) for m, _ in BOUND}
              for c in o.configurations() if c["label"] in (HEADLINE, LABEL)}
    bound = oracle_sentences(values, HEADLINE)
    finding += f" {bound}" if bound else ""
    kept = o.kept()
    charts = {
        "rq1_slowdown_cdf": plots.slowdown_cdf(kept),
        "rq1_slowdown_bars": plots.slowdown_bars(_bars(table[~_greedy(table)])),
        **_utilization(kept),
        "rq1_node_timeline": _timeline(
            kept[HEADLINE], size.timeline_jobs,
            f"FitGpp s=4, seed {st.seeds(size)[0]}, until arrival {size.timeline_jobs}, nodes 0-7"),
    }
    return RQResult(st.key, st.title, st.question, table, charts,
                    {**kept, "fifo_readings": readings}, finding, _config(o, policies=list(kept)))


RQ1 = Study(
    key="rq1", title="RQ1: TE latency",
    question="Can preemption cut TE latency without hurting BE much? FitGpp (s=4) against "
             "FIFO (strict, our reading of the paper's, and with EASY or greedy backfilling), "
             "PRIO, LRTP and RAND on the default workload, and against the SRTF oracle "
             "(shortest remaining time first, which knows every job's duration).",
    policies={"fifo": {"backfill": list(FIFO_READINGS)}, "prio": {}, "fitgpp": {"s": [4.0]},
              "lrtp": {}, "rand": {}, ORACLE: {}},
    baseline={"policy": "fifo", "backfill": "none"},
    captions={"utilization_fitgpp_fifo": "FitGpp s=4 and FIFO over time (first seed), the same "
                                         "in this run: share of GPUs running, in grace periods "
                                         "and reserved for TE jobs; waiting jobs per class.",
              "slowdown_bars": "Median and p95 slowdown per policy and class: mean over the "
                               "seeds, with its 95 % interval from 3 seeds on; FIFO with greedy "
                               "backfilling is in the table, not here."},
    # seeds in rounds go to the headline, and the FIFO readings it is put against, until each
    # of its three numbers is decided against strict FIFO and against every other reading
    undecided=lambda o: _undecided(o),
    analyze=_rq1)

#: The studies this module declares, in the order of the report.
STUDIES = (RQ1,)


def _bars(table: pd.DataFrame) -> pd.DataFrame:
    """Stats table for :func:`fitgpp.figures.plots.slowdown_bars` from an across-seeds table
    (no whisker where there is no interval; a whisker stops at 1, the smallest slowdown
    there is, where a wide interval reaches below it: the table keeps the bounds)."""
    rows = []
    for _, r in table.iterrows():
        for cls in ("te", "be"):
            for stat in ("median", "p95"):
                k = f"{cls}_{stat}"
                lo, hi = r[f"{k}_lo"], r[f"{k}_hi"]
                rows.append({"policy": r["policy"], "class": cls.upper(), "stat": stat,
                             "value": r[k], "lo": r[k] if np.isnan(lo) else max(lo, 1.0),
                             "hi": r[k] if np.isnan(hi) else hi})
    return pd.DataFrame(rows)



def _timeline(ds: xr.Dataset, n: int, title: str):
    """Node timeline of a run until its ``n``-th arrival."""
    seg = plots.segments_of(ds)
    t_end = float(np.sort(ds["submit"].to_numpy())[min(n, ds.sizes["job"]) - 1]) + 1.0
    seg = seg[seg["start"] < t_end].assign(end=lambda d: np.minimum(d["end"], t_end))
    return plots.node_timeline(seg, title=title)
