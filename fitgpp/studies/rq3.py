"""RQ3: long BE jobs and long grace periods, s=4 against s=8."""

from __future__ import annotations

from fitgpp.figures import names, plots

from fitgpp.analysis.metrics import METRICS
from fitgpp.analysis.verdicts import Estimate, compare, size_phrase
from fitgpp.studies.base import Outcome, RQResult, Study, _config, _long, changes


GRACE_SCALES = (1.0, 4.0, 16.0)
#: The metrics whose changes against FIFO s=8 and s=4 are compared on.
KEYS = ("te_p95", "be_p95")


def s8_against_s4(s8: dict, s4: dict) -> str:
    """The paper says s=8 helps when grace periods are long: s=8 against s=4 on each metric
    of :data:`KEYS`, from their per-seed changes against FIFO (``{metric: array}``, seed i
    at index i), by the paired test of :func:`fitgpp.analysis.verdicts.compare`."""
    parts, said = [], []
    for k in KEYS:
        m = METRICS[k]
        parts.append(f"{m.title} change vs FIFO: s=8 {Estimate.of(s8[k]).text()}, s=4 "
                     f"{Estimate.of(s4[k]).text()}.")
        c = compare(s8[k], s4[k], a="s=8", b="s=4", title=f"{m.title} change vs FIFO",
                    better=m.better, as_percent=True)
        parts.append(c.sentence)
        said.append(c.verdict)
    if all(v == "better" for v in said):
        verdict = "agrees with the paper: s=8 is better on every metric compared."
    elif "better" in said and "worse" not in said:
        verdict = ("partly agrees with the paper: s=8 is better on some metrics and not "
                   "detectably worse on any.")
    elif "worse" in said:
        verdict = "does not agree with the paper: s=8 is worse on some metric."
    elif all(v == "cannot tell" for v in said):
        verdict = ("cannot tell: fewer seeds than the paired test needs, so no difference "
                   "between s=8 and s=4 is claimed.")
    else:
        verdict = "cannot confirm the paper: no detectable difference between s=8 and s=4."
    return " ".join(parts) + " Paper: s=8 helps when grace periods are long; this run " + verdict


def _rq3(o: Outcome) -> RQResult:
    st = o.study
    table = o.table()
    fit = table[table["name"] != "fifo"]
    long = _long(fit, changes(o), ["grace_scale", "policy"])
    lb = _long(fit, {"be_long_p95": METRICS["be_long_p95"].title},
               ["grace_scale", "policy"])
    charts = {f"{st.key}_change_vs_grace": plots.metric_lines(
                  long, x="grace_scale", x_title=names.title("grace_scale"), percent=True),
              f"{st.key}_long_be_jobs": plots.metric_lines(
                  lb, x="grace_scale", x_title=names.title("grace_scale"), y_title="slowdown")}
    g_max = max(fit["grace_scale"])
    confs = {c["label"]: c for c in o.configurations() if c["knobs"]["grace_scale"] == g_max}
    per_seed = {p: {k: o.change(confs[p], METRICS[k]) for k in KEYS}
                for p in ("FitGpp s=4", "FitGpp s=8")}
    finding = (f"At grace scale x{g_max:g} {size_phrase(o.jobs(), o.seed_counts())}: "
               + s8_against_s4(per_seed["FitGpp s=8"], per_seed["FitGpp s=4"]))
    return RQResult(st.key, st.title, st.question, table, charts, {}, finding, _config(o))


RQ3 = Study(
    key="rq3", title="RQ3: long jobs and grace periods",
    question="Long BE jobs and long grace periods: s=4 against s=8 as grace periods grow.",
    policies={"fifo": {}, "fitgpp": {"s": [4.0, 8.0]}},
    knobs={"grace_scale": GRACE_SCALES}, columns=("be_long_p95",),
    captions={"change_vs_grace": "Change against FIFO as grace periods are scaled, s=4 and s=8.",
              "long_be_jobs": "p95 slowdown of the longest quarter of BE jobs as grace periods "
                              "are scaled."},
    analyze=_rq3)

STUDIES = (RQ3,)
