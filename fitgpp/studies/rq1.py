"""RQ1: TE latency, FitGpp s=4 against FIFO, PRIO, LRTP and RAND (the paper's headline),
with the SRTF oracle (Tiresias's ``shortest``, which knows every job's duration) as the bound."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from fitgpp.figures import plots
from fitgpp.analysis.metrics import METRICS
from fitgpp.analysis.verdicts import (PAPER, PAPER_CLAIMS, against_paper_row, compare, order_against,  # noqa: F401
                                      paper_summary, size_phrase)
from fitgpp.studies.adaptive import against_paper_undecided
from fitgpp.studies.base import Outcome, RQResult, Study, _config
from fitgpp.studies.oracle import BOUND, LABEL, ORACLE, oracle_sentences

#: The configuration whose changes are the paper's headline.
HEADLINE = "FitGpp s=4"
__all__ = ["HEADLINE", "PAPER", "RQ1", "STUDIES", "headline_finding"]


def headline_finding(table: pd.DataFrame, jobs: int, seeds,
                     te_p95: dict | None = None) -> str:
    """The finding of RQ1 from its table (one row per policy, the metrics and their changes
    against FIFO with their intervals; ``seeds``: a count, or each configuration's when seeds
    were added in rounds): each of the three numbers against the
    paper's by :func:`fitgpp.analysis.verdicts.against_paper`, and where FitGpp's TE p95 slowdown sits
    among the other policies' by the paired test (``te_p95``: per-seed values by policy
    label; without them each policy is one run and no order is claimed)."""
    t = table.set_index("policy")
    fit = t.loc[HEADLINE]
    verdicts = against_paper_row(fit)
    shown = " ".join(v.sentence for v in verdicts)
    per = te_p95 or {p: float(t.loc[p, "te_p95"]) for p in t.index}
    others = {p: per[p] for p in t.index if p != HEADLINE}
    text = (f"{HEADLINE} against FIFO {size_phrase(jobs, seeds)}: {shown} "
            f"{paper_summary(verdicts)} "
            + order_against(others, HEADLINE, per[HEADLINE], title="TE p95 slowdown",
                            group="policy"))
    for p in [p for p in t.index if t.loc[p, "name"] == "prio"]:
        c = compare(per[p], per[HEADLINE], a=p, b=HEADLINE, title="TE p95 slowdown")
        if c.verdict in ("better", "no detectable difference"):
            text += (f" {p}, which never preempts, is not detectably worse than {HEADLINE} on "
                     "TE p95 slowdown: on this workload the TE gain does not need preemption"
                     " as far as these seeds can tell.")
    return text


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
    table = o.table()
    te_p95 = {c["label"]: o.metric_values(c, METRICS["te_p95"]) for c in o.configurations()}
    finding = headline_finding(table, o.jobs(), o.seed_counts(), te_p95)
    values = {c["label"]: {m: o.metric_values(c, METRICS[m]) for m, _ in BOUND}
              for c in o.configurations() if c["label"] in (HEADLINE, LABEL)}
    bound = oracle_sentences(values, HEADLINE)
    finding += f" The bound: {bound}" if bound else ""
    kept = o.kept()
    charts = {
        "rq1_slowdown_cdf": plots.slowdown_cdf(kept),
        "rq1_slowdown_bars": plots.slowdown_bars(_bars(table)),
        **_utilization(kept),
        "rq1_node_timeline": _timeline(
            kept[HEADLINE], size.timeline_jobs,
            f"FitGpp s=4, seed {st.seeds(size)[0]}, until arrival {size.timeline_jobs}, nodes 0-7"),
    }
    return RQResult(st.key, st.title, st.question, table, charts, kept, finding,
                    _config(o, policies=list(kept)))


RQ1 = Study(
    key="rq1", title="RQ1: TE latency",
    question="Can preemption cut TE latency without hurting BE much? FitGpp (s=4) against "
             "FIFO, PRIO, LRTP and RAND on the default workload, and how far it is from the "
             "SRTF oracle (shortest remaining time first, which knows every job's duration).",
    policies={"fifo": {}, "prio": {}, "fitgpp": {"s": [4.0]}, "lrtp": {}, "rand": {},
              ORACLE: {}},
    # seeds in rounds go to the headline until each of its three numbers is decided
    undecided=against_paper_undecided(lambda c: c["label"] == HEADLINE, each=True),
    captions={"utilization_fitgpp_fifo": "FitGpp s=4 and FIFO over time (first seed), the same "
                                         "in this run: share of GPUs running, in grace periods "
                                         "and reserved for TE jobs; waiting jobs per class."},
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
