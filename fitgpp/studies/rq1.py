"""RQ1: TE latency, FitGpp s=4 against FIFO, PRIO, LRTP and RAND (the paper's headline)."""

from __future__ import annotations

from .. import plots
from ..metrics import METRICS
from .base import Outcome, RQResult, Study, _bars, _config, _fmt, _timeline

#: The paper's headline (synthetic workload, FitGpp s=4 against FIFO), as fractions.
PAPER = {"te_p95": -0.966, "be_median": 0.180, "be_p95": 0.239}


def _utilization(kept) -> dict:
    """FitGpp's and FIFO's GPU use over time; one figure naming both when they are the same
    (a run too small for contention), not two identical files."""
    from ..figrules import identical
    charts = {"rq1_utilization_fitgpp": plots.utilization(kept["FitGpp s=4"]),
              "rq1_utilization_fifo": plots.utilization(kept["FIFO"])}
    if identical(charts):
        return {"rq1_utilization_fitgpp_fifo": plots.utilization(
            kept["FIFO"], title="GPU use and waiting jobs over time, FitGpp s=4 and FIFO "
                                "(identical)")}
    return charts


def _rq1(o: Outcome) -> RQResult:
    st, size = o.study, o.size
    table = o.table()
    t = table.set_index("policy")
    fit = t.loc["FitGpp s=4"]
    ok = {k: (fit[f"change_{k}"] <= PAPER[k]) for k in PAPER}
    finding = ("FitGpp s=4 against FIFO: TE p95 {}, BE median {}, BE p95 {} "
               "(paper: -96.6 %, +18.0 %, +23.9 %). ".format(
                   *(_fmt(fit[f"change_{k}"], fit[f"change_{k}_lo"], fit[f"change_{k}_hi"], True)
                     for k in PAPER)))
    finding += (f"FitGpp's TE p95 slowdown is {fit['te_p95']:.3g} (1 is the floor: no TE job waits), "
                f"FIFO's {t.loc['FIFO', 'te_p95']:.3g}. ")
    finding += ("Agrees: it matches or beats the headline on all three." if all(ok.values()) else
                "Partly: " + ", ".join(f"{METRICS[k].title} {'meets' if v else 'misses'} the paper"
                                       for k, v in ok.items()) + ".")
    kept = o.kept()
    charts = {
        "rq1_slowdown_cdf": plots.slowdown_cdf(kept),
        "rq1_slowdown_bars": plots.slowdown_bars(_bars(table)),
        **_utilization(kept),
        "rq1_node_timeline": _timeline(
            kept["FitGpp s=4"], size.timeline_jobs,
            f"FitGpp s=4, seed {st.seeds(size)[0]}, until arrival {size.timeline_jobs}, nodes 0-7"),
    }
    return RQResult(st.key, st.title, st.question, table, charts, kept, finding,
                    _config(o, policies=list(kept)))


RQ1 = Study(
    key="rq1", title="RQ1: TE latency",
    question="Can preemption cut TE latency without hurting BE much? FitGpp (s=4) against "
             "FIFO, PRIO, LRTP and RAND on the default workload.",
    policies={"fifo": {}, "prio": {}, "fitgpp": {"s": [4.0]}, "lrtp": {}, "rand": {}},
    analyze=_rq1)

#: The studies this module declares, in the order of the report.
STUDIES = (RQ1,)
