"""RQ3: long BE jobs and long grace periods, s=4 against s=8."""

from __future__ import annotations

from .. import plots
from ..metrics import METRICS, change, percent
from .base import Outcome, RQResult, Study, _config, _long, changes


GRACE_SCALES = (1.0, 4.0, 16.0)


def _rq3(o: Outcome) -> RQResult:
    st = o.study
    table = o.table()
    fit = table[table["name"] != "fifo"]
    long = _long(fit, changes(o), ["grace_scale", "policy"])
    lb = _long(fit, {"be_long_p95": METRICS["be_long_p95"].title},
               ["grace_scale", "policy"])
    charts = {f"{st.key}_change_vs_grace": plots.metric_lines(
                  long, x="grace_scale", x_title="grace-period scale", percent=True),
              f"{st.key}_long_be_jobs": plots.metric_lines(
                  lb, x="grace_scale", x_title="grace-period scale", y_title="slowdown")}
    g_max = max(fit["grace_scale"])
    at = fit[fit["grace_scale"] == g_max].set_index("policy")
    s4, s8 = at.loc["FitGpp s=4"], at.loc["FitGpp s=8"]
    d_te = s8["change_te_p95"] - s4["change_te_p95"]
    d_be = s8["change_be_p95"] - s4["change_be_p95"]
    pts = lambda x: f"{100 * x:+.1f}"  # noqa: E731 - a difference of two fractions, in points
    if abs(d_te) < 0.005 and abs(d_be) < 0.005:
        verdict = "cannot confirm: s=4 and s=8 give the same result here."
    elif d_te < 0.005 and d_be < 0.005:
        verdict = (f"agrees: s=8 is the better setting there (TE p95 {pts(d_te)}, BE p95 {pts(d_be)} "
                   "points against s=4).")
    else:
        verdict = (f"does not agree here: against s=4, s=8 moves TE p95 {pts(d_te)} and BE p95 "
                   f"{pts(d_be)} points.")
    finding = (f"At grace scale x{g_max:g}, TE p95 change vs FIFO: s=4 {percent(s4['change_te_p95'])}, "
               f"s=8 {percent(s8['change_te_p95'])}; BE p95: s=4 {percent(s4['change_be_p95'])}, "
               f"s=8 {percent(s8['change_be_p95'])}. Paper: s=8 helps when grace periods are "
               "long — " + verdict)
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
