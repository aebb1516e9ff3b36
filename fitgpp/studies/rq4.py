"""RQ4: the TE share and the grace-period distribution."""

from __future__ import annotations

import dataclasses

from fitgpp.figures import plots
from fitgpp.analysis.metrics import METRICS, percent
from fitgpp.analysis.verdicts import (CONFIRMED, CONTRADICTED, UNDECIDED, Estimate,
                                      count_sentence, direction, extremes, size_phrase, tally)
from fitgpp.studies.base import Outcome, RQResult, Study, _config, _long, changes


TE_FRACTIONS = (0.2, 0.5, 0.8)
GRACE_SHAPES = {"narrow (lognormal sigma 0.25)": 0.25, "default (lognormal sigma 1)": 1.0,
                "heavy-tailed (lognormal sigma 2)": 2.0}


def grace_variant(model, sigma: float):
    """``model`` with its BE grace period replaced by a lognormal of median 60 s and ``sigma``
    (truncated at 1 h), everything else unchanged."""
    from fitgpp.workload.dists import Dist
    be = dataclasses.replace(model.classes["BE"],
                             grace_period=Dist("lognorm", {"s": float(sigma), "loc": 0.0,
                                                           "scale": 60.0}, 3600.0))
    return dataclasses.replace(model, name=f"{model.name}+grace-lognorm-s{sigma:g}",
                               classes={**model.classes, "BE": be})


def _grace(sigma: float):
    def make(model):
        return grace_variant(model, sigma)
    make.sigma = sigma
    return make


def mix_finding(fit, jobs: int, seeds) -> str:
    """The finding of RQ4 from its table's FitGpp rows (one per TE share and grace
    distribution, with their changes against FIFO, intervals and ``seeds``; ``seeds``: a
    count, or the configurations' counts): the mixes counted against the paper's direction,
    a TE gain (:func:`fitgpp.analysis.verdicts.direction`: confirmed, contradicted,
    undecided), and the largest BE p95 cost and gain, each only among the changes whose
    interval makes them that kind (:func:`fitgpp.analysis.verdicts.extremes`)."""
    te, be = METRICS["te_p95"], METRICS["be_p95"]
    said = [direction(Estimate.from_row(r, "change_te_p95"), te.title, "gain", te.better)
            for _, r in fit.iterrows()]
    n, t = len(fit), tally(said)
    few = sum(v.kind == "cannot tell" for v in said)
    labels = [f"TE share {r['te_fraction']:g}, {r['grace']} grace" for _, r in fit.iterrows()]
    ext = extremes({lb: Estimate.from_row(r, "change_be_p95")
                    for lb, (_, r) in zip(labels, fit.iterrows())}, title=be.label,
                   better=be.better)
    if t[CONFIRMED] == n:
        verdict = ("The paper's direction holds in every mix and grace distribution: each TE "
                   "change is a detectable gain.")
    elif t[CONTRADICTED]:
        verdict = (f"The paper's direction does not hold everywhere: {t[CONTRADICTED]} of {n} "
                   "mixes contradict it (a TE cost, or no change beyond +-5 pp).")
    elif few:
        verdict = (f"Cannot tell whether FitGpp keeps a TE gain in every mix: {few} of {n} "
                   "mixes have fewer than 3 seeds.")
    else:
        verdict = (f"Cannot tell whether FitGpp keeps a TE gain in every mix: {t[UNDECIDED]} "
                   f"of {n} mixes are undecided (no detectable change, not within +-5 pp).")
    means = fit["change_te_p95"].dropna()
    spread = (f" (means over seeds from {percent(means.min())} to {percent(means.max())})"
              if len(means) else "")
    count = count_sentence(said, "mixes", "the paper's direction, a TE p95 gain against FIFO "
                           + size_phrase(jobs, seeds))
    return f"{count[0].upper()}{count[1:]}{spread}. {ext.sentence} {verdict}"


def _rq4(o: Outcome) -> RQResult:
    st = o.study
    table = o.table()
    fit = table[table["name"] != "fifo"]
    long = _long(fit, changes(o), ["grace", "te_fraction"])
    charts = {f"{st.key}_change_vs_mix": plots.metric_lines(
        long, x="te_fraction", series="grace", x_title="TE share of jobs", percent=True)}
    finding = mix_finding(fit, o.jobs(), o.seed_counts())
    return RQResult(st.key, st.title, st.question, table, charts, {}, finding,
                    _config(o, grace_shapes={k: f"lognormal median 60 s sigma {v.sigma:g}, max 1 h"
                                             for k, v in st.variants.items()}))


RQ4 = Study(
    key="rq4", title="RQ4: job mix and grace-period distribution",
    question="TE/BE mixes and grace-period length distributions: FitGpp s=4 against FIFO.",
    policies={"fifo": {}, "fitgpp": {"s": [4.0]}}, knobs={"te_fraction": TE_FRACTIONS},
    variants={label: _grace(sigma) for label, sigma in GRACE_SHAPES.items()},
    variant_dim="grace",
    captions={"change_vs_mix": "Change against FIFO as a function of the TE share, one line per "
                               "grace-period distribution."},
    analyze=_rq4)

STUDIES = (RQ4,)
