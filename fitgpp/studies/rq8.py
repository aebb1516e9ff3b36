"""RQ8, beyond the paper: where does the paper's trade-off hold, and why?

Three parts, one declaration (:data:`RQ8`):

- **The map** (the study's grid, what its control panel selects from): FIFO against FitGpp
  (s=4, P=3), PRIO alongside, on ``paper-wide-te`` (TE jobs wide and frequent enough to
  preempt often) over the BE restart cost (a checkpoint reload after each preemption) x the TE
  share of jobs x the offered load. Each FitGpp cell is judged by the verdict rules: a change
  has a sign only when its interval over seeds excludes 0 (else "no detectable change"; fewer
  than 3 seeds: "cannot tell"); the paper's three numbers are confirmed in a cell only when
  each matches (:func:`fitgpp.analysis.verdicts.against_paper`) and every run of FitGpp and
  FIFO there is steady; matching in a run that is not, they match "in a transient".
- **The ridge** (:mod:`fitgpp.studies.rq8_ridge`): for each load x TE share, the restart cost
  at which the BE median change crosses 0 and the paper's +18 %, by bisection on whole
  minutes, each with its interval; the numbers at the +18 % crossing at two run lengths, the
  band where all three match, and the share of 8-GPU BE jobs and the cluster size varied one
  at a time around it.
- **The mechanism** (:mod:`fitgpp.studies.rq8_mechanism`): the capacity ledger's GPU-hours
  lost while jobs waited, FitGpp minus FIFO, and each BE job's delay split into its parts,
  the preempted and the never-preempted BE jobs apart.

The map's grid: restart cost 0, 10, 20, 30 min x TE share 0.3, 0.5, 0.7, 0.9 x load 0.7, 0.8,
0.85, 0.9 from 5,000 jobs per run (the full size: 10,000 jobs x 5 seeds); 0, 15, 30 min x 0.3,
0.7 x 0.8, 0.85 below that (the quick size).
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from fitgpp.analysis.verdicts import against_paper_row
from fitgpp.studies import rq8_figures as figs
from fitgpp.studies import rq8_mechanism as mech
from fitgpp.studies import rq8_ridge as ridge
from fitgpp.studies.adaptive import against_paper_undecided
from fitgpp.studies.base import Outcome, RQResult, Study, _config
from fitgpp.studies.steady import growth_counts

FULL_OVERHEADS_MIN = (0, 10, 20, 30)
QUICK_OVERHEADS_MIN = (0, 15, 30)
FULL_TE_SHARES = (0.3, 0.5, 0.7, 0.9)
QUICK_TE_SHARES = (0.3, 0.7)
FULL_LOADS = (0.7, 0.8, 0.85, 0.9)
QUICK_LOADS = (0.8, 0.85)
#: Jobs per run from which the full grid (and the full ridge) is run.
FULL_FROM = ridge.FULL_FROM
FITGPP, FIFO = "FitGpp s=4", "FIFO"
#: The map cell whose per-job delays the figure shows, at the full and the quick size: load
#: 0.8, TE share 0.9 is where, without any reload, BE jobs pay while FitGpp loses fewer
#: GPU-hours than FIFO while jobs wait (issue 34's counterexample).
DELAYS_AT = {"full": (0.8, 0.9), "quick": (0.8, 0.7)}
#: FIFO's readings RQ8 runs (its field ``backfill``): strict first, the baseline of every
#: change (our reading of the paper's FIFO, which it does not detail), and EASY backfilling
#: beside it, the reading a BE gain from FitGpp might not survive (issue 34, item 6).
FIFO_READINGS = ("none", "easy")
STRICT = {"policy": "fifo", "backfill": "none"}
EASY = {"policy": "fifo", "backfill": "easy"}
# the names the other RQ8 modules and older code use
KNOBS, LOST, FITS = mech.KNOBS, mech.LOST, mech.IDLE_SPLIT["idle_fits"]
ledger_runs, lost_vs_fifo = mech.ledger_runs, mech.lost_vs_fifo


def _full(size) -> bool:
    return size.n_jobs >= FULL_FROM


def overheads(size) -> tuple[float, ...]:
    """Restart costs in seconds at ``size``."""
    return tuple(60.0 * m for m in (FULL_OVERHEADS_MIN if _full(size) else QUICK_OVERHEADS_MIN))


def te_shares(size) -> tuple[float, ...]:
    return FULL_TE_SHARES if _full(size) else QUICK_TE_SHARES


def loads(size) -> tuple[float, ...]:
    return FULL_LOADS if _full(size) else QUICK_LOADS


# ---------------------------------------------------------------- judging each cell
def sign_of(mean: float, lo: float, hi: float) -> str:
    """``cost``/``gain`` of a slowdown change only when its interval excludes 0, ``no
    detectable change`` when it does not, ``cannot tell`` without one (fewer than 3 seeds)."""
    if math.isnan(lo) or math.isnan(hi):
        return "cannot tell"
    if lo <= 0 <= hi:
        return "no detectable change"
    return "cost" if mean > 0 else "gain"   # a slowdown: lower is better


def growth_mark(fit: dict, fifo: dict) -> str:
    """The map's mark of a cell whose queue grows in some run: ``F`` FIFO's, ``G``
    FitGpp's, ``B`` both; then ``!`` when some such run grows clearly, ``~`` when all are
    borderline or too short to judge (:attr:`fitgpp.analysis.stability.Stability.growth`);
    ``""`` when every run is steady."""
    grows = {p: c["clear"] + c["borderline"] + c["cannot tell"] for p, c in
             (("F", fifo), ("G", fit))}
    who = "B" if all(grows.values()) else "F" if grows["F"] else "G" if grows["G"] else ""
    if not who:
        return ""
    return who + ("!" if fit["clear"] + fifo["clear"] else "~")


status = ridge.status


def judged(o: Outcome, table: pd.DataFrame, lost: pd.DataFrame) -> pd.DataFrame:
    """FitGpp's rows with ``te``/``be_median``/``be_p95`` signs (:func:`sign_of`),
    ``steady`` (every run of FitGpp and of its baseline steady), ``mark``
    (:func:`growth_mark`), ``status``/``phrase`` against the paper (:func:`status`: confirmed
    only with steady runs) and ``net`` (GPU-hours lost while jobs waited, FitGpp minus the
    baseline, mean over seeds). The baseline is the outcome's study's (:func:`easy_view`
    judges against EASY FIFO)."""
    fit = table[table["name"] == "fitgpp"].copy()
    for k, col in (("te_p95", "v_te"), ("be_median", "v_be_median"), ("be_p95", "v_be_p95")):
        fit[col] = [sign_of(r[f"change_{k}"], r[f"change_{k}_lo"], r[f"change_{k}_hi"])
                    for _, r in fit.iterrows()]
    confs = {tuple(c["knobs"][k] for k in KNOBS): c for c in o.configurations()
             if c["name"] == "fitgpp"}
    keys = [tuple(r[k] for k in KNOBS) for _, r in fit.iterrows()]
    marks = []
    for k in keys:
        base = o.baseline(confs[k])
        if base is None:
            raise ValueError(f"rq8: no {o.baseline_label()} runs to judge FitGpp against")
        marks.append(growth_mark(growth_counts(o, confs[k]), growth_counts(o, base)))
    fit["mark"] = marks
    fit["steady"] = [m == "" for m in fit["mark"]]
    said = [status(against_paper_row(r), r["steady"], o.jobs()) for _, r in fit.iterrows()]
    fit["status"], fit["phrase"] = [s for s, _ in said], [p for _, p in said]
    net = lost[lost["part"] == LOST["net"]].set_index(KNOBS)["value"]
    fit["net"] = [float(net.loc[k]) for k in keys]
    fit["overhead_min"] = fit["restart_overhead"] / 60.0
    return fit


def easy_view(o: Outcome) -> Outcome:
    """``o`` with every change against FIFO with EASY backfilling: the same runs, the other
    reading as the baseline."""
    return dataclasses.replace(o, study=o.study.replace(baseline=EASY), memo={})


_UNDECIDED = against_paper_undecided(lambda c: c["name"] == "fitgpp")


def undecided(o: Outcome) -> list[dict]:
    """RQ8's map cells that more seeds could still decide (adaptive replication): FitGpp's
    whose three numbers are undecided against strict FIFO or against EASY FIFO, each with its
    EASY FIFO runs (the rounds add its strict FIFO baseline), so every FitGpp seed has both
    readings and every change, against either, stays paired seed by seed."""
    e = easy_view(o)
    found = _UNDECIDED(o) + _UNDECIDED(e)
    return found + [e.baseline(c) for c in found]


# ---------------------------------------------------------------- the analysis
def _scheduler(size):
    """The Dask scheduler the ridge's sweeps use: as :meth:`Study.run` chooses it."""
    import os
    if size.workers == 0:
        return None
    from fitgpp.studies._lazy import shared
    return os.environ.get("FITGPP_SCHEDULER") or shared(size.workers)


def find_ridge(o: Outcome):
    """The ridge at the outcome's size (:func:`fitgpp.studies.rq8_ridge.find`, on its cell
    cache), found once per outcome, from the seeds asked (the map's rounds of more seeds do
    not change them: the ridge adds its own at its points, by the same looks); None from one
    seed (a panel's first draw, which is to be quick: a bisection on one seed's means is not
    worth its probes)."""
    if len(o.study.seeds(o.size)) < 2:
        return None
    if "ridge" not in o.memo:
        size = o.size
        if o.rounds is not None:   # the seeds asked, before the map's rounds added any
            size = dataclasses.replace(size, seeds=tuple(o.rounds.sequence[:o.rounds.schedule[0]]))
        o.memo["ridge"] = ridge.find(size, cache=o.cache_dir if o.cache_dir else False,
                                     scheduler=_scheduler(size))
    return o.memo["ridge"]


def charts(o: Outcome, cells: pd.DataFrame, lost: pd.DataFrame, delays: pd.DataFrame,
           rid) -> dict:
    """Every figure of RQ8 (:mod:`fitgpp.studies.rq8_figures`)."""
    counts = sorted(set(o.seed_counts())) if hasattr(o, "seed_counts") else \
        [len(o.study.seeds(o.size))]
    n = str(counts[0]) if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
    key = o.study.key
    out = {**figs.map_charts(cells, o.jobs(), n, key), **figs.ledger_charts(lost, key)}
    out.update(figs.ridge_charts(rid, key))
    load, share = DELAYS_AT["full" if _full(o.size) else "quick"]
    chart = figs.delays_chart(delays, load, share) if len(delays) else None
    if chart is not None:
        out[f"{key}_delays"] = chart
    return out


def _rq8(o: Outcome) -> RQResult:
    from fitgpp.studies import rq8_text as text
    st = o.study
    runs = mech.ledger_runs(o)
    table = mech.with_ledger(o.table(), runs)
    table["overhead_min"] = table["restart_overhead"] / 60.0
    table = table.iloc[_order(table)].reset_index(drop=True)
    lost = mech.lost_vs_fifo(runs)
    cells = judged(o, table, lost)
    delays = mech.delay_table(o)
    e = easy_view(o)
    lost_e = mech.lost_vs_fifo(runs, reading="easy")
    cells_e = judged(e, e.table(), lost_e)
    rid = find_ridge(o)
    r = RQResult(st.key, st.title, st.question, table, charts(o, cells, lost, delays, rid), {},
                 "", _config(o, model=ridge.MODEL, knobs={k: list(v) for k, v in
                                                          st.knobs.items()},
                             ridge=None if rid is None else
                             {"pairs": len(rid.plan.pairs()), "jobs": list(rid.jobs),
                              "coarse_min": list(rid.plan.coarse), "cells": rid.stats}))
    r.datasets = {"cells": cells, "lost_vs_fifo": lost,
                  "idle_split": mech.lost_vs_fifo(runs, mech.IDLE_SPLIT), "delays": delays,
                  "signs": mech.cell_signs(cells, lost), "agreement": mech.agreement(o, runs),
                  "cells_easy": cells_e, "lost_vs_easy": lost_e,
                  "signs_easy": mech.cell_signs(cells_e, lost_e), "ridge": rid}
    if rid is not None:
        r.datasets.update(ridge_crossings=rid.crossings, ridge_points=rid.points,
                          ridge_probes=rid.probes)
    r.rounds = o.rounds   # the seeds asked and added (the sentences say both)
    r.finding = text.finding(r)
    r.details = text.details(r)
    r.report_columns = (["load", "te_fraction", "overhead_min", "policy"],
                        ["te_p95", "be_median", "be_p95", "change_te_p95", "change_be_median",
                         "change_be_p95", "preemptions_per_be", "ledger_reload", "ledger_grace",
                         "ledger_reserved", "ledger_idle_fits", "ledger_idle_nofit"], ())
    return r


def _order(table: pd.DataFrame) -> list[int]:
    """Rows by load, TE share and restart cost, then strict FIFO, EASY FIFO, PRIO, FitGpp."""
    rank = {("fifo", "none"): 0, ("fifo", "easy"): 1, ("prio", ""): 2, ("fitgpp", ""): 3}
    bf = table["backfill"].fillna("") if "backfill" in table else pd.Series("", table.index)
    key = pd.DataFrame({k: table[k] for k in KNOBS}).assign(
        r=[rank.get((n, b if n == "fifo" else ""), 4) for n, b in zip(table["name"], bf)])
    return list(key.sort_values([*KNOBS, "r"], kind="stable").index)


def headline_context(r8: RQResult) -> str:
    """What RQ8 measured about the paper's BE cost, for the report beside the headline
    (:func:`fitgpp.studies.rq8_text.headline_context`)."""
    from fitgpp.studies import rq8_text
    return rq8_text.headline_context(r8)


RQ8 = Study(
    key="rq8", title="RQ8 (beyond the paper): where does the paper's trade-off hold?",
    question="Over the BE restart cost (a checkpoint reload after each preemption), the TE "
             "share of jobs and the offered load, on paper-wide-te: where does FitGpp (s=4, "
             "P=3) show the paper's trade-off against FIFO (TE p95 -96.6 %, BE median +18.0 %, "
             "BE p95 +23.9 %), where is the ridge on which the BE median cost reaches the "
             "paper's, and what makes BE jobs better or worse off (the capacity ledger, each "
             "BE job's delay)? Against strict FIFO (no backfilling, the model's reading) and "
             "FIFO with EASY backfilling side by side; PRIO (TE first, never preempts) runs "
             "alongside.",
    policies={"fifo": {"backfill": list(FIFO_READINGS)}, "prio": {},
              "fitgpp": {"s": [4.0], "max_preemptions": [3]}},
    knobs={"load": loads, "te_fraction": te_shares, "restart_overhead": overheads},
    model=ridge.MODEL, baseline=STRICT,
    captions=figs.captions(),
    # a map cell whose three numbers are undecided (against either reading) gets more seeds
    undecided=undecided,
    analyze=_rq8)

STUDIES = (RQ8,)
