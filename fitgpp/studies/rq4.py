"""RQ4: the TE share and the grace-period distribution."""

from __future__ import annotations

import dataclasses

from .. import plots
from ..metrics import percent
from .base import Outcome, RQResult, Study, _config, _long, changes


TE_FRACTIONS = (0.2, 0.5, 0.8)
GRACE_SHAPES = {"narrow (lognormal sigma 0.25)": 0.25, "default (lognormal sigma 1)": 1.0,
                "heavy-tailed (lognormal sigma 2)": 2.0}


def grace_variant(model, sigma: float):
    """``model`` with its BE grace period replaced by a lognormal of median 60 s and ``sigma``
    (truncated at 1 h), everything else unchanged."""
    from ..workload.dists import Dist
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


def _rq4(o: Outcome) -> RQResult:
    st = o.study
    table = o.table()
    fit = table[table["name"] != "fifo"]
    long = _long(fit, changes(o), ["grace", "te_fraction"])
    charts = {f"{st.key}_change_vs_mix": plots.metric_lines(
        long, x="te_fraction", series="grace", x_title="TE share of jobs", percent=True)}
    worst = fit.loc[fit["change_be_p95"].idxmax()]
    cut = (fit["change_te_p95"] < 0).all()
    finding = (f"TE p95 falls against FIFO in {int((fit['change_te_p95'] < 0).sum())} of {len(fit)} "
               f"mixes; BE p95 cost is largest ({percent(worst['change_be_p95'])}) at TE share "
               f"{worst['te_fraction']:g} with {worst['grace']} grace periods. "
               + ("Agrees with the paper: FitGpp keeps its TE gain across mixes and grace distributions."
                  if cut else "Does not fully agree: some mixes see no TE gain."))
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
