"""RQ8's sentences and its tables for ``results.md``: written from the judged cells, the ridge
and the mechanism, each sentence no stronger than the intervals it rests on (the rules of
:mod:`fitgpp.analysis.verdicts`; counts of cells say confirmed / contradicted / undecided)."""

from __future__ import annotations

import math

import pandas as pd

from fitgpp.analysis.metrics import percent
from fitgpp.analysis.verdicts import CATEGORIES, MIN_SEEDS, PAPER, count_sentence  # noqa: F401

#: Each baseline's short name.
SHORT = {"FIFO": "strict FIFO", "EASY FIFO": "FIFO with EASY backfilling"}
#: How each baseline of the ridge reads in a sentence.
READINGS = {"FIFO": "strict FIFO (no backfilling)",
            "EASY FIFO": "FIFO with EASY backfilling (the head's reserved start from the "
                         "jobs' true durations)"}
from fitgpp.studies import rq8_mechanism as mech
from fitgpp.studies.base import _fmt

TRIPLE = (f"TE p95 {percent(PAPER['te_p95'])}, BE median {percent(PAPER['be_median'])}, "
          f"BE p95 {percent(PAPER['be_p95'])}")


def _n(n: int, noun: str) -> str:
    """``1 seed``, ``5 seeds``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _where(r) -> str:
    return f"load {r['load']:g}, TE share {r['te_fraction']:g}, {r['overhead_min']:g} min"


def _pct(r, col: str, prefix: str = "") -> str:
    """A change with its interval (cut at -100 %, each cut bound marked)."""
    c = f"{prefix}{col}"
    return _fmt(r[c], r[f"{c}_lo"], r[f"{c}_hi"], True)


def _be(r) -> str:
    return _pct(r, "change_be_median")


def seeds_said(r) -> str:
    """``5 seeds``, or ``5 seeds (up to 30 where undecided)`` when rounds added seeds."""
    seeds = len(r.config.get("seeds", []))
    rounds = getattr(r, "rounds", None)
    first = rounds.schedule[0] if rounds is not None and rounds.schedule else seeds
    return _n(first, "seed") + (f" (up to {seeds} where undecided)" if seeds > first else "")


# ---------------------------------------------------------------- the map
def verdict_item(cells: pd.DataFrame, jobs: int) -> str:
    """The paper's three numbers over the map's cells, counted confirmed / contradicted /
    undecided (:func:`fitgpp.analysis.verdicts.count_sentence`), and where they match only in a
    transient."""
    conf = cells[cells["status"] == "confirmed"]
    trans = cells[cells["phrase"].str.startswith("matches in a transient")]
    seeds = sorted(set(cells["seeds"].astype(int))) if "seeds" in cells else []
    on = (f", {_n(seeds[0], 'seed')}" if len(seeds) == 1 else
          f", {seeds[0]} to {seeds[-1]} seeds (more where undecided)" if seeds else "")
    text = ("The map: " + count_sentence(list(cells["status"]), "cells",
                                          f"the paper's three numbers ({TRIPLE})")
            + f" ({jobs:,} jobs{on}; confirmed only where each number's interval lies within "
            "its closeness band and every run of FitGpp and FIFO is steady)")
    if len(conf):
        text += "; confirmed: " + "; ".join(_where(r) for _, r in conf.iterrows())
    if len(trans):
        text += (f"; {len(trans)} of the undecided match in a transient, at {jobs:,} jobs (a "
                 "queue grows in some run): " + "; ".join(
                     f"{_where(r)} ({r['mark']})" for _, r in trans.head(6).iterrows())
                 + ("; ..." if len(trans) > 6 else ""))
    untold = cells[(cells[["v_te", "v_be_median", "v_be_p95"]] == "cannot tell").any(axis=1)]
    if len(untold):
        text += f"; {len(untold)} of the undecided from fewer than 3 seeds"
    return text + "."


def sign_item(cells: pd.DataFrame) -> str:
    """The BE median change's signs over the map, and without a restart cost."""
    k = cells["v_be_median"].value_counts()
    out = ("BE median change against FIFO: " + ", ".join(
        f"{w} in {int(k.get(w, 0))}" for w in ("cost", "gain", "no detectable change",
                                                "cannot tell")) + f" of {len(cells)} cells.")
    free = cells[cells["overhead_min"] == 0]
    if len(free):
        costs = free[free["v_be_median"] == "cost"]
        lo = free.loc[free["change_be_median"].idxmin()]
        hi = free.loc[free["change_be_median"].idxmax()]
        out += (f" Without a restart cost (0 min) it is a cost by its interval in {len(costs)} "
                f"of {len(free)} cells" + (": " + "; ".join(
                    f"{_where(r)} ({_be(r)})" for _, r in costs.iterrows()) if len(costs) else "")
                + (f"; its means run from {_be(lo)} ({_where(lo)}) to {_be(hi)} ({_where(hi)})."
                   if lo["change_be_median"] != hi["change_be_median"] else
                   f"; its mean is {percent(lo['change_be_median'])} in every one."))
    return out


def steady_item(cells: pd.DataFrame) -> str:
    """Which policies' queues grow in the map's cells, and how clearly."""
    grows = cells[cells["mark"] != ""]
    who = grows["mark"].str[0]
    return (f"Queues: in {len(grows)} of {len(cells)} cells some run's queue grows (FIFO's "
            f"only in {int((who == 'F').sum())}, FitGpp's only in {int((who == 'G').sum())}, "
            f"both in {int((who == 'B').sum())}); clearly in "
            f"{int(grows['mark'].str.endswith('!').sum())}, only borderline in "
            f"{int(grows['mark'].str.endswith('~').sum())} (a slope whose interval reaches "
            "down to a rise under half the mean queue). A number from such a cell "
            "is a transient's, a function of the run length.")


# ---------------------------------------------------------------- the ridge
def minute_text(at: float, side: str, lo: float, hi: float, known: bool, top: int) -> str:
    """``9.3 min [7, 12]``, ``at or below 0 min [<= 0, 3]``, ``beyond 60 min [52, > 60]``;
    ``[cannot tell]`` without intervals."""
    head = {"crosses": f"{at:.1f} min", "at or below 0": "at or below 0 min",
            "beyond": f"beyond {top} min"}[side]
    if not known:
        return f"{head} [interval: cannot tell]"
    a = "<= 0" if math.isnan(lo) else f"{lo:g}"
    b = f"> {top}" if math.isnan(hi) else f"{hi:g}"
    return f"{head} [{a}, {b}]"


def _crossing(crossings: pd.DataFrame, r, target: float) -> str:
    hit = crossings[(crossings["variant"] == r["variant"]) & (crossings["load"] == r["load"])
                    & (crossings["te_fraction"] == r["te_fraction"])
                    & (crossings["baseline"] == r["baseline"]) & (crossings["target"] == target)]
    if not len(hit):
        return "n/a"
    c = hit.iloc[0]
    return minute_text(c["at"], c["side"], c["lo"], c["hi"], bool(c["known"]), int(c["max_min"]))


def _triple(r, prefix: str = "") -> str:
    """The three changes at a ridge point, their seeds and their status held together."""
    if f"{prefix}change_te_p95" not in r or pd.isna(r[f"{prefix}change_te_p95"]):
        return "not run"
    return (" / ".join(_pct(r, f"change_{k}", prefix) for k in ("te_p95", "be_median", "be_p95"))
            + f" ({_n(int(r[f'{prefix}seeds']), 'seed')}): {r[f'{prefix}phrase']}")


def _band_text(r) -> str:
    if not r["width"]:
        return "none"
    band = list(r["band"])
    span = f"{band[0]}-{band[-1]}" if band[-1] - band[0] + 1 == len(band) else \
        ", ".join(map(str, band))
    st = f"; with steady runs {r['width_steady']}" if r["width_steady"] != r["width"] else \
        "; steady runs"
    return f"{r['width']} min ({span}{st})"


def _moved(p) -> str:
    """How far the ridge point's BE median change moved from the short run length to the long
    one, in percentage points, with its interval (paired per seed) when there is one."""
    if "moved_be_median" not in p or pd.isna(p["moved_be_median"]):
        return "n/a"
    lo, hi = p["moved_be_median_lo"], p["moved_be_median_hi"]
    iv = "" if pd.isna(lo) else f" [{100 * lo:+.1f}, {100 * hi:+.1f}]"
    return f"{100 * p['moved_be_median']:+.1f} pp{iv}"


def ridge_table(crossings: pd.DataFrame, points: pd.DataFrame, jobs: tuple,
                baseline: str = "FIFO") -> str:
    """The ridge per load x TE share (default variant, against FIFO): both crossings with
    their intervals, and at the +18 % crossing's ridge point the three changes at both run
    lengths (with their seeds and status), what moved between them, and the band where all
    three are confirmed."""
    head = ["load", "TE share", "BE cost appears (0)", "BE median +18 %", "ridge point",
            f"TE p95 / BE median / BE p95, {jobs[0]:,} jobs", f"the same, {jobs[1]:,} jobs",
            "moved (BE median)", "band (all three confirmed)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    main = crossings[(crossings["variant"] == "default") & (crossings["baseline"] == baseline)]
    for (load, share), _ in main.groupby(["load", "te_fraction"], sort=True):
        key = {"variant": "default", "load": load, "te_fraction": share, "baseline": baseline}
        pt = points[(points["variant"] == "default") & (points["load"] == load)
                    & (points["te_fraction"] == share) & (points["baseline"] == baseline)] \
            if len(points) else points
        cells = [f"{load:g}", f"{share:g}", _crossing(crossings, key, 0.0),
                 _crossing(crossings, key, PAPER["be_median"])]
        if len(pt):
            p = pt.iloc[0]
            moved = _moved(p)
            cells += [f"{p['minute']} min", _triple(p), _triple(p, "long_"), moved, _band_text(p)]
        else:
            cells += ["none"] * 5
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ridge_item(crossings: pd.DataFrame, points: pd.DataFrame, jobs: tuple,
               baseline: str = "FIFO") -> str:
    """The ridge against ``baseline`` in a few sentences: where +18 % is reached, the band,
    the second run length."""
    main = crossings[(crossings["variant"] == "default") & (crossings["baseline"] == baseline)]
    at = main[main["target"] == PAPER["be_median"]]
    zero = main[main["target"] == 0.0]
    if not len(at):
        return "The ridge was not searched."
    top = int(at["max_min"].max())
    hit = at[at["side"] == "crosses"]
    reached = int((at["side"] != "beyond").sum())   # within the probes, at 0 min included
    against = "" if baseline == "FIFO" else f" against {SHORT.get(baseline, baseline)}"
    out = (f"The ridge{against} (bisection on whole minutes, {len(at)} load x TE share pairs): "
           f"the BE median cost appears (crosses 0) within {top} min in "
           f"{int((zero['side'] != 'beyond').sum())} pairs (already at 0 min in "
           f"{int((zero['side'] == 'at or below 0').sum())}), and reaches the paper's "
           f"{percent(PAPER['be_median'])} within {top} min in {reached} "
           f"(already at 0 min in {int((at['side'] == 'at or below 0').sum())})")
    per = []
    for load, g in hit.groupby("load", sort=True):
        lo, hi = g.loc[g["at"].idxmin()], g.loc[g["at"].idxmax()]
        said = [minute_text(x["at"], "crosses", x["lo"], x["hi"], x["known"], top)
                + f" (TE share {x['te_fraction']:g})" for x in (lo, hi)]
        per.append(f"load {load:g} at {said[0]}" if len(g) == 1 else
                   f"load {load:g} from {said[0]} to {said[1]}")
    out += (": " + "; ".join(per) if per else "") + "."
    pts = points[(points["variant"] == "default") & (points["baseline"] == baseline)] \
        if len(points) else points
    if len(pts):
        held = pts[pts["width"] > 0]
        steady = pts[pts["width_steady"] > 0]
        out += (" At the ridge points (the probed minute closest to it, more seeds where "
                "undecided), " + count_sentence(list(pts["status"]), "ridge points",
                                                "the paper's three numbers")
                + f" at {jobs[0]:,} jobs; a band of minutes where all three are confirmed "
                f"exists at {_none_or(len(held))}" + (f" (widest {int(held['width'].max())} min)"
                                            if len(held) else "")
                + f", with steady runs of both policies at {_none_or(len(steady))}.")
        if "long_status" in pts:
            lp = pts[pts["long_jobs"].notna()]
            mv = lp["moved_be_median"].dropna()
            out += (f" At {jobs[1]:,} jobs, " + count_sentence(list(lp["long_status"]),
                                                              "ridge points")
                    + (f"; the BE median change moved by {_span(100 * mv, ' points')} "
                       "from the shorter runs (paired per seed)" if len(mv) else "") + ".")
    return out


def _none_or(n: int) -> str:
    """``none`` for 0 (``at 0`` would read as a minute), else the count."""
    return "none" if n == 0 else f"{n}"


def _span(x: pd.Series, unit: str = "") -> str:
    """``+1.8 to +5.0 points``, or one value when all are the same."""
    lo, hi = float(x.min()), float(x.max())
    return f"{lo:+.1f}{unit}" if lo == hi else f"{lo:+.1f} to {hi:+.1f}{unit}"


def knob_item(crossings: pd.DataFrame) -> str:
    """The +18 % crossing around the ridge as each varied knob takes its values."""
    var = crossings[(crossings["variant"] != "default") & (crossings["baseline"] == "FIFO")
                    & (crossings["target"] == PAPER["be_median"])]
    if not len(var):
        return ""
    parts = []
    for (load, share), g in var.groupby(["load", "te_fraction"], sort=True):
        key = {"variant": "default", "load": load, "te_fraction": share, "baseline": "FIFO"}
        said = [f"default {_crossing(crossings, key, PAPER['be_median'])}"]
        said += [f"{r['variant']} {_crossing(crossings, r, PAPER['be_median'])}"
                 for _, r in g.iterrows()]
        parts.append(f"at load {load:g}, TE share {share:g}: " + "; ".join(said))
    return ("Varied one at a time around the ridge, the restart cost at which the BE median "
            f"reaches {percent(PAPER['be_median'])}: "
            + ". ".join(q if i == 0 else q[0].upper() + q[1:] for i, q in enumerate(parts)) + ".")


def easy_item(cells: pd.DataFrame, jobs: int, signs: pd.DataFrame | None = None) -> str:
    """The map judged against FIFO with EASY backfilling: the paper's three numbers counted,
    the BE median change's signs, and the ledger's sign against it."""
    k = cells["v_be_median"].value_counts()
    free = cells[cells["overhead_min"] == 0]
    out = (f"Against {READINGS['EASY FIFO']}: " + count_sentence(
        list(cells["status"]), "cells", "the paper's three numbers") + "; its BE median change "
        + ", ".join(f"{w} in {int(k.get(w, 0))}" for w in ("cost", "gain", "no detectable change",
                                                           "cannot tell"))
        + f" of {len(cells)} cells (without a restart cost: a cost in "
        f"{int((free['v_be_median'] == 'cost').sum())} of {len(free)}).")
    if signs is not None and len(signs):
        c = mech.sign_counts(signs)
        out += (" GPU-hours lost while jobs waited, FitGpp minus EASY FIFO: its sign by its "
                f"interval agrees with the BE median change's in {c['agree']} of the "
                f"{c['agree'] + c['disagree']} cells where both have one.")
    return out


# ---------------------------------------------------------------- the mechanism
def ledger_item(signs: pd.DataFrame, agree, lost: pd.DataFrame, seeds: int = 5) -> str:
    """The ledger's sign against the BE median change's, per cell by both intervals and per
    seed with the exact interval of the share that agrees (from ``seeds`` per cell; fewer than
    3: the count alone, as every verdict says "cannot tell" there); the idle part split per
    cell."""
    c = mech.sign_counts(signs)
    out = ("Capacity ledger (GPU-hours lost while jobs waited: capacity minus progress minus "
           "idle with nothing waiting, FitGpp minus FIFO, paired per seed): its sign by its "
           f"interval agrees with the BE median change's in {c['agree']} of the "
           f"{c['agree'] + c['disagree']} cells where both have one and disagrees in "
           f"{c['disagree']}; in {c['net unsigned']} more cells the BE median change has a sign "
           "and the ledger's difference has none.")
    if agree.n:
        share = (f"{100 * agree.share:.1f} %, exact 95 % interval [{100 * agree.low:.1f} %, "
                 f"{100 * agree.high:.1f} %]" if seeds >= MIN_SEEDS else
                 f"no interval from {_n(seeds, 'seed')} a cell")
        out += (f" Per seed, the signs agree in {agree.agree} of {agree.n} runs where both are "
                f"non-zero ({share}); of the "
                f"{agree.n - agree.agree} misses, {agree.misses_neg} are runs where BE jobs pay "
                f"while FitGpp loses fewer GPU-hours than FIFO, {agree.misses_pos} the other "
                "way.")
    fits = lost[lost["part"] == mech.IDLE_SPLIT["idle_fits"]]["value"]
    nofit = lost[lost["part"] == mech.IDLE_SPLIT["idle_nofit"]]["value"]
    if len(fits):
        out += (" FitGpp's idle GPUs while jobs waited minus FIFO's split, per cell, into idle "
                f"while a waiting job would have fit ({fits.min():+,.0f} to {fits.max():+,.0f} "
                f"GPU-h over the cells: a strict queue blocked behind its head) and idle while "
                f"none would ({nofit.min():+,.0f} to {nofit.max():+,.0f}).")
    return out


def who_pays_item(signs: pd.DataFrame, cells: pd.DataFrame, table: pd.DataFrame,
                  lost: pd.DataFrame) -> str:
    """Where BE jobs pay while the ledger says FitGpp loses fewer GPU-hours (both by their
    intervals): which BE jobs pay, from each job's delay (up to three such cells)."""
    odd = signs[(signs["be_sign"] > 0) & (signs["net_sign"] < 0)]
    if not len(odd) or not len(table):
        return ""
    net = lost[lost["part"] == mech.LOST["net"]].set_index(mech.KNOBS)
    parts = []
    for _, s in odd.head(3).iterrows():
        key = tuple(s[k] for k in mech.KNOBS)
        cell = cells.set_index(mech.KNOBS).loc[key]
        g = table.set_index(mech.KNOBS + ["group"])
        pre, never = (g.loc[(*key, grp)] for grp in ("preempted", "never preempted"))
        n = net.loc[key]
        parts.append(
            f"at {_where(s)} the BE median changes by {_be(cell)} while FitGpp loses "
            f"{n['value']:+,.0f} GPU-h [{n['lo']:+,.0f}, {n['hi']:+,.0f}] against FIFO while "
            f"jobs wait; the BE jobs it preempted ({100 * pre['share']:.1f} % of BE jobs) "
            f"finish {_delay_said(pre)} against FIFO, those it never "
            f"preempted {_delay_said(never)}")
    return (f"Where BE jobs pay although FitGpp loses fewer GPU-hours while jobs wait "
            f"({len(odd)} cells by both intervals), each job's delay shows who pays: "
            + "; ".join(parts) + ". An aggregate over all jobs cannot see that the delay "
            "moves onto the preempted jobs.")


def _delay_said(row) -> str:
    """A group's delay against FIFO and, by its interval, what it says: later, earlier, no
    detectable change, or cannot tell (no interval)."""
    lo, hi = row["delay_lo"], row["delay_hi"]
    word = ("cannot tell: no interval" if math.isnan(lo) else "later" if lo > 0 else
            "earlier" if hi < 0 else "no detectable change")
    return f"{mech.delay_phrase(row)}: {word}"


def delays_item(table: pd.DataFrame) -> str:
    """Over the cells: the delay of preempted and never-preempted BE jobs against FIFO."""
    if not len(table):
        return ""
    out = []
    for group in ("preempted", "never preempted"):
        g = table[table["group"] == group].dropna(subset=["delay"])
        if not len(g):
            continue
        lo, hi = g.loc[g["delay"].idxmin()], g.loc[g["delay"].idxmax()]
        signed = g[(g["delay_lo"] > 0) | (g["delay_hi"] < 0)]
        told = (f"a later finish by its interval in {int((signed['delay'] > 0).sum())} of "
                f"{len(g)} cells and an earlier one in {int((signed['delay'] < 0).sum())}"
                if g["delay_lo"].notna().any() else "no interval from fewer than 3 seeds")
        out.append(f"{group} BE jobs {mech.minutes(lo['delay'])} ({_where(lo)}) to "
                   f"{mech.minutes(hi['delay'])} ({_where(hi)}) per job, {told}")
    return ("Each BE job's delay (completion minus submission minus run time), FitGpp minus "
            "FIFO on the same jobs: " + "; ".join(out) + ".")


# ---------------------------------------------------------------- the whole finding
def finding(r) -> str:
    """RQ8's finding as a Markdown list (its first line the headline), from the datasets of
    the result ``r``."""
    d = r.datasets
    cells, rid = d["cells"], d.get("ridge")
    jobs = int(r.config.get("n_jobs", 0))
    head = (f"RQ8 at {jobs:,} jobs per run and {seeds_said(r)} on "
            "paper-wide-te, FitGpp s=4 P=3 against FIFO (strict, no backfilling).")
    items = [verdict_item(cells, jobs), sign_item(cells)]
    if rid is not None:
        items += [ridge_item(rid.crossings, rid.points, rid.jobs), knob_item(rid.crossings)]
    if "cells_easy" in d:
        items.append(easy_item(d["cells_easy"], jobs, d.get("signs_easy")))
        if rid is not None and (rid.crossings["baseline"] == "EASY FIFO").any():
            items.append(ridge_item(rid.crossings, rid.points, rid.jobs, "EASY FIFO"))
    items += [ledger_item(d["signs"], d["agreement"],
                          pd.concat([d["lost_vs_fifo"], d["idle_split"]]),
                          len(r.config.get("seeds", []))),
              who_pays_item(d["signs"], cells, d["delays"], d["lost_vs_fifo"]),
              delays_item(d["delays"]), steady_item(cells)]
    return head + "".join(f"\n- {i}" for i in items if i)


def details(r) -> str:
    """``results.md``'s tables of RQ8 beyond the map's: the ridge and the knobs around it."""
    rid = r.datasets.get("ridge")
    if rid is None:
        return ""
    out = [f"The ridge against FIFO (bisection on whole minutes; each crossing's interval "
           f"runs between the nearest probed restart costs whose {100 * rid.level:.4g} % "
           f"intervals lie wholly below and wholly above the target; {len(rid.seeds)} seeds, "
           f"more at a ridge point whose three numbers are undecided, up to "
           f"{rid.schedule[-1] if rid.schedule else len(rid.seeds)}):", "",
           ridge_table(rid.crossings, rid.points, rid.jobs)]
    for b in [b for b in dict.fromkeys(rid.crossings["baseline"]) if b != "FIFO"]:
        out += ["", f"The same against {READINGS.get(b, b)}:", "",
                ridge_table(rid.crossings, rid.points, rid.jobs, b)]
    knobs = knob_item(rid.crossings)
    if knobs:
        out += ["", knobs]
    return "\n".join(out)


def headline_context(r8) -> str:
    """What RQ8 measured about the paper's BE cost, for the report beside the headline:
    where a BE median cost has its sign by its interval, with and without a restart cost,
    how the paper's three numbers fare on the map and along the ridge."""
    cells = r8.datasets["cells"]
    free, paid = cells[cells["overhead_min"] == 0], cells[cells["overhead_min"] > 0]
    cost = cells["v_be_median"] == "cost"
    a, b = int(cost[free.index].sum()), int(cost[paid.index].sum())
    head = (f"RQ8 (`paper-wide-te`, FitGpp s=4 against FIFO over restart cost x TE share x "
            f"load, {r8.config.get('n_jobs', 0):,} jobs, {seeds_said(r8)})")
    if (cells["v_be_median"] == "cannot tell").all():
        return (f"Where the paper's BE cost appears: {head} cannot tell in any cell at this "
                "size (fewer than 3 seeds); its full size answers it.")
    lead = ("On RQ8's map the paper's BE cost appears only with a restart cost. "
            if a == 0 and b > 0 else "")
    text = (f"{lead}{head}: a BE median cost by its interval in {a} of {len(free)} cells "
            f"without a restart cost and in {b} of {len(paid)} with one; "
            + count_sentence(list(cells["status"]), "map cells", "the paper's three numbers"))
    rid = r8.datasets.get("ridge")
    if rid is not None and len(rid.points):
        pts = rid.points[(rid.points["variant"] == "default")
                         & (rid.points["baseline"] == "FIFO")]
        text += ("; at the ridge points (restart costs where the BE median reaches "
                 f"{percent(PAPER['be_median'])}), " + count_sentence(list(pts["status"]),
                                                                      "ridge points"))
    return text + ". See RQ8 below."
