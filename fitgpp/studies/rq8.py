"""RQ8, beyond the paper: where does the paper's trade-off hold?

FIFO against FitGpp (s=4, P=3), PRIO alongside, on ``paper-wide-te`` (TE jobs wide and
frequent enough to preempt often) over the BE restart cost (a checkpoint reload after each
preemption) x the TE share of jobs x the offered load. Each FitGpp cell is judged by the
verdict rules: a change has a sign only when its interval over seeds excludes 0 (else "no
detectable change"; fewer than 3 seeds: "cannot tell"); the paper's triple holds where each of
its three numbers matches (:func:`fitgpp.analysis.verdicts.holds_together`) and the TE gain and both BE
costs have their sign by their intervals. The capacity ledger (:mod:`fitgpp.sim.ledger`) explains
the flip: *lost while jobs waited* = capacity - progress - idle with nothing waiting (reloads,
grace periods, reserved and idle GPUs while some job waits), FitGpp's minus FIFO's, paired per
seed, split into its parts.

The grid: restart cost 0, 5, 10, 15, 20, 30 min x TE share 0.3, 0.5, 0.7 x load 0.8, 0.85 at
a size of 5,000 jobs or more (the full size: 10,000 jobs x 5 seeds); 0, 15, 30 min x 0.3,
0.7 x the two loads below that (the quick size).
"""

from __future__ import annotations

import json
import math

import pandas as pd

from fitgpp.figures import names, plots
from fitgpp.sim.ledger import PARTS
from fitgpp.analysis.metrics import percent, t_interval
from fitgpp.analysis.verdicts import against_paper_row, holds_together
from fitgpp.studies.base import Outcome, RQResult, Study, _config
from fitgpp.studies.steady import steadiness

FULL_OVERHEADS_MIN = (0, 5, 10, 15, 20, 30)
QUICK_OVERHEADS_MIN = (0, 15, 30)
FULL_TE_SHARES = (0.3, 0.5, 0.7)
QUICK_TE_SHARES = (0.3, 0.7)
LOADS = (0.8, 0.85)
#: Jobs per run from which the full grid is run.
FULL_FROM = 5000
FITGPP, FIFO = "FitGpp s=4", "FIFO"
#: The parts of "lost while jobs waited" the decomposition shows (FitGpp minus FIFO; the
#: table splits the idle part into "a waiting job fits" and "none fits"). Short enough for the
#: figure's legend to take two columns at column width (the figure says "while jobs waited").
LOST = {"reload": "reloading", "held": "grace and reserved", "idle": "idle GPUs",
        "net": "all of it"}


def _full(size) -> bool:
    return size.n_jobs >= FULL_FROM


def overheads(size) -> tuple[float, ...]:
    """Restart costs in seconds at ``size``."""
    return tuple(60.0 * m for m in (FULL_OVERHEADS_MIN if _full(size) else QUICK_OVERHEADS_MIN))


def te_shares(size) -> tuple[float, ...]:
    return FULL_TE_SHARES if _full(size) else QUICK_TE_SHARES


# ---------------------------------------------------------------- the ledger of every cell
def ledger_runs(o: Outcome) -> pd.DataFrame:
    """One row per cell: policy, knobs, seed and its ledger parts (GPU-hours), read from the
    cell results (no Dataset is rebuilt)."""
    rows = []
    for (_, cell), res in o.runs.items():
        kept = json.loads(str(res["ledger"]))
        rows.append({"name": cell.policy, **dict(cell.knobs), "seed": cell.seed,
                     **{k[len("ledger_"):]: v[0] for k, v in kept.items()}})
    d = pd.DataFrame(rows)
    d["held"] = d["grace"] + d["reserved"]
    d["idle"] = d["idle_fits"] + d["idle_nofit"]
    d["net"] = d["capacity"] - d["useful_te"] - d["useful_be"] - d["idle_empty"]
    return d


KNOBS = ["load", "te_fraction", "restart_overhead"]
FITS = "idle, a waiting job fits"


def lost_vs_fifo(runs: pd.DataFrame, parts: dict = LOST) -> pd.DataFrame:
    """Per cell (knobs) and part of ``parts`` (default :data:`LOST`): FitGpp's GPU-hours
    minus FIFO's, paired per seed, mean and interval (``value``, ``lo``, ``hi``; NaN bounds
    below 3 seeds)."""
    idx = KNOBS + ["seed"]
    fit = runs[runs["name"] == "fitgpp"].set_index(idx)
    fifo = runs[runs["name"] == "fifo"].set_index(idx)
    diff = (fit[list(parts)] - fifo.loc[fit.index, list(parts)]).reset_index()
    rows = []
    for knobs, g in diff.groupby(KNOBS, sort=True):
        for part, title in parts.items():
            m, lo, hi = t_interval(g[part])
            rows.append({**dict(zip(KNOBS, knobs)), "part": title, "value": m, "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- judging each cell
def sign_of(mean: float, lo: float, hi: float) -> str:
    """``cost``/``gain`` of a slowdown change only when its interval excludes 0, ``no
    detectable change`` when it does not, ``cannot tell`` without one (fewer than 3 seeds)."""
    if math.isnan(lo) or math.isnan(hi):
        return "cannot tell"
    if lo <= 0 <= hi:
        return "no detectable change"
    return "cost" if mean > 0 else "gain"   # a slowdown: lower is better


def judged(table: pd.DataFrame, steady: pd.DataFrame, lost: pd.DataFrame) -> pd.DataFrame:
    """FitGpp's rows with ``te``/``be_median``/``be_p95`` verdicts (:func:`sign_of`),
    ``steady`` (FitGpp's and FIFO's runs steady in every seed), ``means_match`` (the three
    means each match the paper's), ``holds`` (that, with the signs by their intervals)
    and ``net`` (GPU-hours lost while jobs waited, FitGpp minus FIFO, mean over seeds)."""
    fit = table[table["name"] == "fitgpp"].copy()
    ok = steady.assign(ok=steady["steady"] == steady["seeds"])
    for k, col in (("te_p95", "v_te"), ("be_median", "v_be_median"), ("be_p95", "v_be_p95")):
        fit[col] = [sign_of(r[f"change_{k}"], r[f"change_{k}_lo"], r[f"change_{k}_hi"])
                    for _, r in fit.iterrows()]
    pair = ok[ok["policy"].isin([FITGPP, FIFO])]
    if pair["policy"].nunique() != 2:
        raise ValueError(f"rq8: steadiness lists {sorted(set(ok['policy']))}, not {FITGPP} and {FIFO}")
    both = pair.groupby(KNOBS)["ok"].all()
    fit["steady"] = [bool(both.loc[tuple(r[k] for k in KNOBS)]) for _, r in fit.iterrows()]
    fit["means_match"] = [holds_together(against_paper_row(r)) for _, r in fit.iterrows()]
    fit["holds"] = [bool(r["means_match"]) and r["v_te"] == "gain"
                    and r["v_be_median"] == r["v_be_p95"] == "cost" for _, r in fit.iterrows()]
    net = lost[lost["part"] == LOST["net"]].set_index(KNOBS)["value"]
    fit["net"] = [float(net.loc[tuple(r[k] for k in KNOBS)]) for _, r in fit.iterrows()]
    fit["overhead_min"] = fit["restart_overhead"] / 60.0
    return fit


# ---------------------------------------------------------------- figures
def map_charts(cells: pd.DataFrame, o: Outcome, key: str = "rq8") -> dict:
    """The maps, one per load (``{key}_map_load80``, ...): BE median and BE p95 change of
    FitGpp against FIFO over restart cost x TE share, one panel per statistic (two panels
    stack within a printed column; four would not)."""
    n = len(o.study.seeds(o.size))
    notes = [f"FitGpp s=4 P=3 vs FIFO, paper-wide-te, {o.jobs():,} jobs, {n} seeds. Coloured "
             "only where the 95 % interval excludes 0 (else grey), capped at ±100 %; ? fewer "
             "than 3 seeds; ! a run not steady; framed: the paper's triple holds."]
    out = {}
    for load, at in cells.groupby("load", sort=True):
        rows = []
        for stat, title in (("be_median", "BE median"), ("be_p95", "BE p95")):
            for _, r in at.iterrows():
                v = r[f"v_{stat}"]
                rows.append({"overhead_min": r["overhead_min"], "te_fraction": r["te_fraction"],
                             "panel": title, "change": r[f"change_{stat}"], "verdict": v,
                             "outline": bool(r["holds"]),
                             "mark": ("?" if v == "cannot tell" else "")
                             + ("" if r["steady"] else "!")})
        out[f"{key}_map_load{round(100 * load)}"] = plots.change_map(
            pd.DataFrame(rows), x="overhead_min", y="te_fraction", panel="panel",
            x_title=names.title("restart_overhead"), y_title="TE share of jobs",
            title=f"Where preempting costs BE jobs at load {load:g}: change against FIFO",
            notes=notes, legend_title="change vs FIFO")
    return out


def ledger_chart(lost: pd.DataFrame):
    """GPU-hours lost while jobs waited, FitGpp minus FIFO, and its parts, against the
    restart cost; one panel per load and TE share."""
    d = lost.assign(overhead_min=lost["restart_overhead"] / 60.0,
                    metric=[f"load {a:g}, TE share {b:g}" for a, b in
                            zip(lost["load"], lost["te_fraction"])])
    return plots.metric_lines(d, x="overhead_min", series="part",
                              x_title=names.title("restart_overhead"),
                              y_title="GPU-h", series_title="capacity lost",
                              title="Capacity lost while jobs waited: FitGpp minus FIFO")


# ---------------------------------------------------------------- the finding
def _where(r) -> str:
    return f"load {r['load']:g}, TE share {r['te_fraction']:g}, {r['overhead_min']:g} min"


def _be(r) -> str:
    lo, hi = r["change_be_median_lo"], r["change_be_median_hi"]
    iv = "" if math.isnan(lo) else f" [{percent(lo)}, {percent(hi)}]"
    return f"{percent(r['change_be_median'])}{iv}"


def _untold(cells: pd.DataFrame) -> str:
    """The clause for the cells where whether the triple holds cannot be told: some change of
    theirs has no sign from fewer than 3 seeds (empty when there is none)."""
    cols = [c for c in ("v_te", "v_be_median", "v_be_p95") if c in cells]
    untold = ~cells["holds"] & (cells[cols] == "cannot tell").any(axis=1)
    k = int(untold.sum())
    return (f"; in {k} of them whether it holds cannot be told (changes from fewer than 3 "
            f"seeds)" if k else "")


def finding_text(cells: pd.DataFrame, lost: pd.DataFrame | None = None) -> str:
    """The finding, sentence by sentence from the judged cells and the ledger's parts (the
    one function that words it; the sentences follow :mod:`fitgpp.analysis.verdicts`' rules)."""
    n = len(cells)
    held = cells[cells["holds"]]
    out = [f"The paper's triple (TE p95 -96.6 %, BE median +18.0 %, BE p95 +23.9 %, each "
           f"matched by the verdict rules, TE gain and BE costs with intervals excluding 0) "
           f"holds in {len(held)} of {n} cells" + (": " + "; ".join(
               f"{_where(r)} (BE median {_be(r)})" for _, r in held.iterrows()) if len(held)
               else "") + _untold(cells) + "."]
    near = cells[cells["means_match"] & ~cells["holds"]]
    if len(near):
        out.append("The three numbers match the paper's, but not every sign holds by its interval, "
                   "in " + "; ".join(f"{_where(r)} (BE median {_be(r)}, BE p95 {r['v_be_p95']}"
                                     + ("" if r["steady"] else "; a run not steady") + ")"
                                     for _, r in near.iterrows()) + ".")
    counts = cells["v_be_median"].value_counts()
    out.append("BE median change against FIFO: " + ", ".join(
        f"{k} in {int(counts.get(k, 0))}" for k in ("cost", "gain", "no detectable change",
                                                    "cannot tell")) + f" of {n} cells.")
    free = cells[cells["overhead_min"] == 0]
    if len(free):
        costs = free[free["v_be_median"] == "cost"]
        lo = free.loc[free["change_be_median"].idxmin()]
        hi = free.loc[free["change_be_median"].idxmax()]
        span = (f"is {_be(lo)} in every cell" if lo["change_be_median"] == hi["change_be_median"]
                else f"ranges from {_be(lo)} ({_where(lo)}) to {_be(hi)} ({_where(hi)})")
        out.append(f"Without a restart cost (0 min) the BE median change {span}; a cost by its "
                   f"interval in {len(costs)} of "
                   f"{len(free)}" + (": " + "; ".join(_where(r) for _, r in costs.iterrows())
                                     if len(costs) else "") + ".")
    signed = cells[cells["v_be_median"].isin(["cost", "gain"])]
    if len(signed):
        agree = int(((signed["net"] > 0) == (signed["v_be_median"] == "cost")).sum())
        parts = []
        for kind in ("cost", "gain"):
            g = signed[signed["v_be_median"] == kind]
            if len(g):
                parts.append(f"where it is a {kind}, {g['net'].min():+,.0f} to "
                             f"{g['net'].max():+,.0f} GPU-h")
        out.append("Mechanism (capacity ledger: GPU-hours lost while jobs waited, i.e. capacity "
                   "minus progress minus idle with nothing waiting, FitGpp minus FIFO, mean over "
                   "seeds): " + "; ".join(parts) + f"; the sign of that "
                   f"difference is the sign of the BE median change in {agree} of "
                   f"{len(signed)} cells with a sign." + _parts_text(lost))
    else:
        out.append("No cell's BE median change has a sign by its interval, so the ledger "
                   "explains no flip here.")
    unsteady = cells[~cells["steady"]]
    out.append(f"{len(unsteady)} of {n} cells have a FitGpp or FIFO run that is not steady.")
    return " ".join(out)


def _region(cells: pd.DataFrame) -> str:
    """Cells listed by load and TE share: ``load 0.8, TE share 0.7: 10, 15 min``."""
    return "; ".join(f"load {a:g}, TE share {b:g}: " + ", ".join(f"{m:g}" for m in g["overhead_min"])
                     + " min" for (a, b), g in cells.groupby(["load", "te_fraction"]))


def headline_context(r8: RQResult) -> str:
    """What RQ8 measured about the paper's BE cost, for the report beside the headline:
    where a BE median cost has its sign by its interval, with and without a restart cost,
    and where the paper's three numbers hold together."""
    cells = r8.datasets["cells"]
    free, paid = cells[cells["overhead_min"] == 0], cells[cells["overhead_min"] > 0]
    cost = cells["v_be_median"] == "cost"
    a, b = int(cost[free.index].sum()), int(cost[paid.index].sum())
    head = (f"RQ8 (`paper-wide-te`, FitGpp s=4 against FIFO over restart cost x TE share x "
            f"load, {r8.config.get('n_jobs', 0):,} jobs, {len(r8.config.get('seeds', []))} "
            "seeds)")
    if (cells["v_be_median"] == "cannot tell").all():
        return (f"Where the paper's BE cost appears: {head} cannot tell in any cell at this "
                "size (fewer than 3 seeds); its full size answers it.")
    lead = ("On RQ8's grid the paper's BE cost appears only with a restart cost. "
            if a == 0 and b > 0 else "")
    held = cells[cells["holds"]]
    return (f"{lead}{head}: a BE median cost by its 95 % interval in {a} of {len(free)} cells "
            f"without a restart cost and in {b} of {len(paid)} with one"
            + (f" ({_region(cells[cost & (cells['overhead_min'] > 0)])})" if b else "")
            + f"; the paper's three numbers hold together in {len(held)} of {len(cells)} cells"
            + (f" ({_region(held)})" if len(held) else "") + ". See RQ8 below.")


def _parts_text(lost: pd.DataFrame | None) -> str:
    """Which parts of the difference move it: FitGpp's idle GPUs while jobs wait against
    FIFO's, and its reloads, over the grid."""
    if lost is None or not len(lost):
        return ""
    idle = lost[lost["part"] == LOST["idle"]]["value"]
    fits = lost[lost["part"] == FITS]["value"]
    rel = lost[lost["part"] == LOST["reload"]]
    top = rel[rel["restart_overhead"] == rel["restart_overhead"].max()]["value"]
    return (f" FitGpp's GPUs idle while jobs waited minus FIFO's: {idle.min():+,.0f} to "
            f"{idle.max():+,.0f} GPU-h over the cells, of which idle while a waiting job would "
            f"have fit (a strict queue blocked behind its head) {fits.min():+,.0f} to "
            f"{fits.max():+,.0f}; its reloads add {top.min():,.0f} to {top.max():,.0f} GPU-h at "
            f"{rel['restart_overhead'].max() / 60:g} min.")


def _ledger_means(runs: pd.DataFrame) -> pd.DataFrame:
    """Per policy and cell: each ledger part's mean over seeds with its interval
    (``ledger_<part>``, ``_lo``, ``_hi``; NaN bounds below 3 seeds), GPU-hours."""
    rows = {}
    for key, g in runs.groupby(["name", *KNOBS]):
        row = {}
        for part in [*PARTS, "capacity"]:
            m, lo, hi = t_interval(g[part])
            row.update({f"ledger_{part}": m, f"ledger_{part}_lo": lo, f"ledger_{part}_hi": hi})
        rows[key] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.names = ["name", *KNOBS]
    return out


def _rq8(o: Outcome) -> RQResult:
    st = o.study
    table = o.table()
    runs = ledger_runs(o)
    table = table.join(_ledger_means(runs), on=["name", *KNOBS])
    table["overhead_min"] = table["restart_overhead"] / 60.0
    lost = lost_vs_fifo(runs)
    fits = lost_vs_fifo(runs, {"idle_fits": FITS})
    cells = judged(table, steadiness(o), lost)
    charts = {**map_charts(cells, o, st.key), f"{st.key}_ledger": ledger_chart(lost)}
    r = RQResult(st.key, st.title, st.question, table, charts, {}, finding_text(cells, pd.concat([lost, fits])),
                 _config(o, model="paper-wide-te", knobs={k: list(v) for k, v in
                                                          st.knobs.items()}))
    r.datasets = {"cells": cells, "lost_vs_fifo": lost}
    r.report_columns = (["load", "te_fraction", "overhead_min", "policy"],
                        ["te_p95", "be_median", "be_p95", "change_te_p95", "change_be_median",
                         "change_be_p95", "preemptions_per_be", "ledger_reload", "ledger_grace",
                         "ledger_reserved", "ledger_idle_fits", "ledger_idle_nofit"], ())
    return r


RQ8 = Study(
    key="rq8", title="RQ8 (beyond the paper): where does the paper's trade-off hold?",
    question="Over the BE restart cost (a checkpoint reload after each preemption), the TE "
             "share of jobs and the offered load, on paper-wide-te: where does FitGpp (s=4, "
             "P=3) show the paper's trade-off against FIFO (TE p95 -96.6 %, BE median +18.0 %, "
             "BE p95 +23.9 %), where not, and what in the capacity ledger makes BE jobs "
             "better or worse off? PRIO (TE first, never preempts) runs alongside.",
    policies={"fifo": {}, "prio": {}, "fitgpp": {"s": [4.0], "max_preemptions": [3]}},
    knobs={"load": lambda size: LOADS, "te_fraction": te_shares,
           "restart_overhead": overheads},
    model="paper-wide-te",
    captions={"map": "BE median and p95 change of FitGpp s=4 against FIFO over restart cost "
                     "and TE share, per load; coloured where the interval excludes 0, framed "
                     "where the paper's three numbers hold.",
              "ledger": "GPU-hours lost while jobs waited, FitGpp minus FIFO, split into "
                        "reloading, grace and reservations, and idle GPUs."},
    analyze=_rq8)

STUDIES = (RQ8,)
