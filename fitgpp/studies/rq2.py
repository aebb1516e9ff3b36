"""RQ2: the threshold s (and P), on the default workload and on wide TE jobs."""

from __future__ import annotations

from fitgpp.figures import plots
import numpy as np

from fitgpp.analysis.metrics import METRICS, change, percent
from fitgpp.studies.base import Outcome, RQResult, Study, _config, _long, changes
from fitgpp.analysis.verdicts import (MIN_SEEDS, PAPER, against_paper_all, compare, holds_together,
                                      size_phrase)


S_VALUES = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
P_VALUES = (1, 3, 10)


#: A TE p95 that moves less than this share across the whole s range is called flat.
FLAT = 0.05


def s_tradeoff_verdict(per_seed: dict, s_lo: float, s_hi: float) -> str:
    """The paper: larger s buys TE latency with BE slowdown. ``per_seed[(metric, s)]``: the
    per-seed values (mean over P) of ``te_p95`` and ``be_p95`` at the smallest and largest
    s; the largest against the smallest by the paired test of :func:`fitgpp.analysis.verdicts.compare`."""
    a, b = f"s={s_hi:g}", f"s={s_lo:g}"
    te, be = (compare(per_seed[(k, s_hi)], per_seed[(k, s_lo)], a=a, b=b,
                      title=f"{METRICS[k].title} (mean over P)", better=METRICS[k].better)
              for k in ("te_p95", "be_p95"))
    if te.verdict == "better" and be.verdict == "worse":
        word = "Agrees with the paper: larger s buys TE latency with BE slowdown."
    elif te.verdict == "better":
        word = ("Partly agrees with the paper: larger s buys TE latency, but its BE p95 is not "
                f"detectably worse ({be.verdict}).")
    elif te.verdict == "cannot tell":
        word = (f"Cannot tell whether larger s buys TE latency: fewer than {MIN_SEEDS} seeds "
                "for the paired test.")
    else:
        word = (f"Does not match the paper's trade-off direction: TE p95 at larger s is "
                f"{te.verdict if te.verdict != 'no detectable difference' else 'not detectably'}"
                f"{' better' if te.verdict == 'no detectable difference' else ''}.")
    return f"{te.sentence} {be.sentence} {word}"


def _tradeoff_charts(key: str, table, p_values) -> dict:
    """One s trade-off figure per P, titled with its P; values of P whose results are
    identical share one figure (named and titled with all of them), not two equal files."""
    groups: dict[tuple, list[int]] = {}
    for p in p_values:
        fit = table[(table["family"] == "FitGpp") & (table["P"] == p)]
        same = tuple(map(tuple, fit[["s", "te_p95", "be_median", "be_p95"]].round(12)
                         .to_numpy().tolist()))
        groups.setdefault(same, []).append(p)
    charts = {}
    for ps in groups.values():
        sub = table[(table["family"] != "FitGpp") | (table["P"] == ps[0])].copy()
        sub["policy"] = [lb.replace(f" P={ps[0]}", "") for lb in sub["policy"]]
        which = " and ".join(map(str, ps))
        charts[f"{key}_s_tradeoff_P{'_'.join(map(str, ps))}"] = plots.s_tradeoff(
            sub, title=f"The threshold s trades TE latency against BE slowdown (P = {which})",
            notes=[f"P = {which} give identical results."] if len(ps) > 1 else [])
    return charts


def _rq2(o: Outcome) -> RQResult:
    st = o.study
    key = st.key
    table = o.table()
    p_values = sorted({int(p) for p in table["P"].dropna()})
    charts = _tradeoff_charts(key, table, p_values)
    fit = table[table["family"] == "FitGpp"]
    meets = fit[[holds_together(against_paper_all({k: r[f"change_{k}"] for k in PAPER}))
                 for _, r in fit.iterrows()]]
    lines = fit.assign(P=fit["P"].astype(int).astype(str))
    charts[f"{key}_change_vs_s"] = plots.metric_lines(_long(lines, changes(o), ["s", "P"]), x="s",
                                                      series="P", x_title="threshold s",
                                                      percent=True)
    # the trade-off is judged on the slowdowns themselves (mean over P), not on their change
    # against FIFO, whose large TE p95 would shrink any difference between settings of s
    te_trend = fit.groupby("s")["te_p95"].mean()
    be_trend = fit.groupby("s")["be_p95"].mean()
    r_te = change(te_trend.iloc[-1], te_trend.iloc[0])
    r_be = change(be_trend.iloc[-1], be_trend.iloc[0])
    trend = (f"from s={te_trend.index[0]:g} to s={te_trend.index[-1]:g} (mean over P) TE p95 "
             f"slowdown moves {te_trend.iloc[0]:.2f} -> {te_trend.iloc[-1]:.2f} and BE p95 "
             f"{be_trend.iloc[0]:.2f} -> {be_trend.iloc[-1]:.2f}. ")
    if abs(r_te) <= FLAT:
        verdict = (f"Cannot confirm the paper's trade-off: TE p95 is flat in s here (BE p95 moves "
                   f"{percent(r_be)}), so this workload leaves s little to trade.")
    else:
        ends = (te_trend.index[0], te_trend.index[-1])
        per_seed = {(k, x): np.mean([o.metric_values(c, METRICS[k]) for c in o.configurations()
                                     if c["name"] == "fitgpp" and c["params"]["s"] == x], axis=0)
                    for k in ("te_p95", "be_p95") for x in ends}
        verdict = s_tradeoff_verdict(per_seed, *ends)
    finding = (f"{len(meets)} of {len(fit)} FitGpp (s, P) settings match all three of the paper's "
               f"numbers {size_phrase(o.jobs(), len(st.seeds(o.size)))}"
               + (f" ({', '.join(meets['policy'])})" if len(meets) else "") + "; " + trend + verdict)
    return RQResult(key, st.title, st.question, table, charts, {"sweep": o.grid}, finding,
                    _config(o, model=st.model or o.size.model))


RQ2 = Study(
    key="rq2", title="RQ2: the threshold s",
    question="How does the threshold s (and the preemption limit P) trade TE responsiveness "
             "against BE? FitGpp over s x P, with FIFO, LRTP and RAND as fixed points.",
    policies={"fifo": {}, "lrtp": {"max_preemptions": [3]}, "rand": {"max_preemptions": [3]},
              "fitgpp": {"s": list(S_VALUES), "max_preemptions": list(P_VALUES)}},
    captions={"change_vs_s": "Change against FIFO as a function of the threshold s, one line "
                             "per P."},
    analyze=_rq2)
RQ2W = RQ2.replace(
    key="rq2w", title="RQ2 on paper-wide-te: the threshold s", model="paper-wide-te",
    question="RQ2 on paper-wide-te (TE jobs of 4 or 8 GPUs), where TE jobs must preempt.")

STUDIES = (RQ2, RQ2W)
