"""RQ2: the threshold s (and P), on the default workload and on wide TE jobs."""

from __future__ import annotations

from fitgpp.figures import plots

from fitgpp.analysis.metrics import METRICS
from fitgpp.studies.adaptive import against_paper_undecided
from fitgpp.studies.base import Outcome, RQResult, Study, _config, _long, changes
from fitgpp.analysis.verdicts import (CONFIRMED, CONTRADICTED, MIN_SEEDS, against_paper_row,
                                      compare, count_sentence, holds_together, size_phrase, tally)


S_VALUES = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
P_VALUES = (1, 3, 10)


def s_tradeoff_verdict(per_seed: dict, s_lo: float, s_hi: float, where: str = "") -> str:
    """Whether the direction the paper describes (larger s: lower TE p95, higher BE p95)
    holds: ``per_seed[(metric, s)]`` are the per-seed values of ``te_p95`` and ``be_p95`` at
    the smallest and largest s (``where``: at which P, for the sentence), the largest
    against the smallest by the paired test of :func:`fitgpp.analysis.verdicts.compare`. This is a
    direction, never "agrees with the paper": that needs the paper's numbers to match."""
    a, b = f"s={s_hi:g}", f"s={s_lo:g}"
    te, be = (compare(per_seed[(k, s_hi)], per_seed[(k, s_lo)], a=a, b=b,
                      title=f"{METRICS[k].title}{where}", better=METRICS[k].better)
              for k in ("te_p95", "be_p95"))
    if te.verdict == "cannot tell" or be.verdict == "cannot tell":
        word = (f"Cannot tell whether larger s trades TE latency for BE slowdown{where}: "
                f"fewer than {MIN_SEEDS} seeds for the paired test.")
    elif te.verdict == "better" and be.verdict == "worse":
        word = f"The paper's direction holds{where}: larger s is better on TE p95 and worse on BE p95."
    elif te.verdict == "better" and be.verdict == "better":
        word = (f"Only half of the paper's direction holds{where}: larger s is better on TE "
                "p95, and on BE p95 too.")
    elif te.verdict == "better":      # an undecided half is not shown, nor refuted
        word = (f"Only the TE half of the paper's direction is shown{where}: larger s is better "
                "on TE p95; on BE p95 no detectable difference, so its BE half cannot be told.")
    elif te.verdict == "worse":
        word = f"The paper's direction does not hold{where}: larger s is worse on TE p95."
    else:
        word = (f"The paper's direction is not shown{where}: on TE p95 no detectable "
                f"difference between the two s, so it cannot be told (BE p95: {be.verdict}).")
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
    judged = [against_paper_row(r) for _, r in fit.iterrows()]
    meets = fit[[holds_together(v) for v in judged]]
    counts = tally(judged)
    lines = fit.assign(P=fit["P"].astype(int).astype(str))
    charts[f"{key}_change_vs_s"] = plots.metric_lines(_long(lines, changes(o), ["s", "P"]), x="s",
                                                      series="P", x_title="threshold s",
                                                      percent=True)
    # the trade-off is judged per P on the slowdowns themselves (paired per seed), not on
    # their change against FIFO, whose large TE p95 would shrink any difference between s
    ends = (float(fit["s"].min()), float(fit["s"].max()))
    trend, verdict = [], []
    for p in p_values:
        at = fit[fit["P"] == p].set_index("s")
        trend.append(f"at P={p}, TE p95 slowdown {at.loc[ends[0], 'te_p95']:.3g} -> "
                     f"{at.loc[ends[1], 'te_p95']:.3g} and BE p95 "
                     f"{at.loc[ends[0], 'be_p95']:.3g} -> {at.loc[ends[1], 'be_p95']:.3g}")
        per_seed = {(k, x): next(o.metric_values(c, METRICS[k]) for c in o.configurations()
                                 if c["name"] == "fitgpp" and c["params"]["s"] == x
                                 and c["params"].get("max_preemptions") == p)
                    for k in ("te_p95", "be_p95") for x in ends}
        verdict.append(s_tradeoff_verdict(per_seed, *ends, where=f" at P={p}"))
    said = count_sentence(judged, "FitGpp (s, P) settings", "the paper's three numbers "
                          + size_phrase(o.jobs(), o.seed_counts()))
    finding = (said[0].upper() + said[1:]
               + (f" (confirmed: {', '.join(meets['policy'])})" if len(meets) else "")
               + _headline_clause(len(fit), counts[CONFIRMED], counts[CONTRADICTED],
                                  min(o.seed_counts()))
               + f"; from s={ends[0]:g} to s={ends[1]:g} (means over seeds): "
               + "; ".join(trend) + ". " + " ".join(verdict))
    return RQResult(key, st.title, st.question, table, charts, {"sweep": o.grid}, finding,
                    _config(o, model=st.model or o.size.model))


def _headline_clause(n: int, n_meet: int, n_off: int, seeds: int) -> str:
    """What the settings' verdicts say of the paper's headline: "does not agree" only when
    every setting is contradicted; a setting neither confirmed nor contradicted (an
    undecided one: an interval too wide, or fewer than 3 seeds) leaves it open."""
    if n_meet:
        return ""
    if n_off == n:
        return ", so this study does not agree with the paper's headline"
    why = f" ({seeds} seed{'s' if seeds != 1 else ''}: fewer than 3)" if seeds < 3 else ""
    return f", so whether this study agrees with the paper's headline cannot be told{why}"


RQ2 = Study(
    key="rq2", title="RQ2: the threshold s",
    question="How does the threshold s (and the preemption limit P) trade TE responsiveness "
             "against BE? FitGpp over s x P, with FIFO, LRTP and RAND as fixed points.",
    policies={"fifo": {}, "lrtp": {"max_preemptions": [3]}, "rand": {"max_preemptions": [3]},
              "fitgpp": {"s": list(S_VALUES), "max_preemptions": list(P_VALUES)}},
    # seeds in rounds go to each FitGpp setting until its three numbers are decided together
    undecided=against_paper_undecided(lambda c: c["name"] == "fitgpp"),
    captions={"change_vs_s": "Change against FIFO as a function of the threshold s, one line "
                             "per P."},
    analyze=_rq2)
RQ2W = RQ2.replace(
    key="rq2w", title="RQ2 on paper-wide-te: the threshold s", model="paper-wide-te",
    question="RQ2 on paper-wide-te (TE jobs of 4 or 8 GPUs), where TE jobs must preempt.")

STUDIES = (RQ2, RQ2W)
