"""RQ8's figures, each laid out to pass the figure check at both printed widths at every size
RQ8 runs: a map per load, the ledger's decomposition per load, the ridge, and the per-job
delays of one cell. Their captions (:data:`CAPTIONS`) are what exports print under them."""

from __future__ import annotations

import math

import pandas as pd

from fitgpp.analysis import delays
from fitgpp.analysis.verdicts import PAPER
from fitgpp.figures import names, plots


def load_key(load: float) -> str:
    """``80`` for load 0.8: the suffix of a per-load figure's name."""
    return f"{round(100 * load)}"


#: Captions, by the part of a figure's name after ``rq8_``; a figure drawn once per load
#: (``map_load80``, ``ledger_load80``) takes its kind's (``map``, ``ledger``: the title says
#: the load), as :func:`fitgpp.studies.captions.declared` reads them.
def captions() -> dict[str, str]:
    out = {"map": ("BE median and p95 slowdown change of FitGpp s=4 against FIFO over restart "
                   "cost and TE share at one load; coloured where the interval excludes 0, "
                   "framed where the paper's three numbers are confirmed; F, G or B: FIFO's, "
                   "FitGpp's or both queues grow in some run (! clearly, ~ borderline)."),
           "ledger": ("GPU-hours lost while jobs waited at one load, FitGpp minus FIFO (paired "
                      "per seed), and its parts (reloading, grace periods and reserved GPUs, "
                      "idle GPUs), against the restart cost, one panel per TE share.")}
    out["ridge"] = ("The ridge: the restart cost at which FitGpp's BE median change against "
                    "FIFO crosses 0 and the paper's +18 %, per TE share and load, found by "
                    "bisection on whole minutes; vertical lines span the nearest probed "
                    "restart costs whose intervals lie wholly below and above the target.")
    out["ridge_easy"] = ("The ridge against FIFO with EASY backfilling (the head's reserved "
                         "start computed from the jobs' true durations): the restart cost at "
                         "which FitGpp's BE median change crosses 0 and the paper's +18 %, per "
                         "TE share and load, as in the ridge against strict FIFO.")
    out["ridge_both"] = ("The ridge against strict FIFO and against FIFO with EASY backfilling, "
                         "which give the same crossings here: the restart cost at which "
                         "FitGpp's BE median change crosses 0 and the paper's +18 %, per TE "
                         "share and load, found by bisection on whole minutes.")
    out["delays"] = ("Where BE jobs' time goes: each BE job's delay (completion - submission - "
                     "run time), FitGpp minus FIFO on the same jobs, mean per job, split into "
                     "its parts; the BE jobs FitGpp preempted and those it never preempted "
                     "apart.")
    return out


def map_charts(cells: pd.DataFrame, jobs: int, seeds, key: str = "rq8") -> dict:
    """The maps, one per load (``{key}_map_load80``, ...): BE median and BE p95 change of
    FitGpp against FIFO over restart cost x TE share, one panel per statistic (two panels
    stack within a printed column; four would not)."""
    from fitgpp.analysis.metrics import interval_level
    notes = [f"{jobs:,} jobs, {seeds} seeds. Grey: the {100 * interval_level():.4g} % interval "
             "includes 0; ? under 3 "
             "seeds; framed: confirmed; F, G, B: FIFO's, FitGpp's, both queues grow (! clearly, "
             "~ borderline)."]
    out = {}
    for load, at in cells.groupby("load", sort=True):
        rows = []
        for stat, title in (("be_median", "BE median"), ("be_p95", "BE p95")):
            for _, r in at.iterrows():
                v = r[f"v_{stat}"]
                rows.append({"overhead_min": r["overhead_min"], "te_fraction": r["te_fraction"],
                             "panel": title, "change": r[f"change_{stat}"], "verdict": v,
                             "outline": r["status"] == "confirmed",
                             "mark": ("?" if v == "cannot tell" else "") + r["mark"]})
        out[f"{key}_map_load{load_key(load)}"] = plots.change_map(
            pd.DataFrame(rows), x="overhead_min", y="te_fraction", panel="panel",
            x_title=names.title("restart_overhead"), y_title="TE share of jobs",
            title=f"Load {load:g}: FitGpp's BE slowdown change against FIFO",
            notes=notes, legend_title="change vs FIFO")
    return out


def ledger_charts(lost: pd.DataFrame, key: str = "rq8") -> dict:
    """GPU-hours lost while jobs waited, FitGpp minus FIFO, and its parts, against the
    restart cost; one figure per load (``{key}_ledger_load80``), one panel per TE share."""
    out = {}
    for load, at in lost.groupby("load", sort=True):
        d = at.assign(metric=[f"TE share {b:g}" for b in at["te_fraction"]])
        out[f"{key}_ledger_load{load_key(load)}"] = plots.metric_lines(
            d, x="overhead_min", series="part", x_title=names.title("restart_overhead"),
            y_title="GPU-h", series_title="capacity lost",
            title=f"Capacity lost while jobs waited at load {load:g}: FitGpp minus FIFO")
    return out


def _target_label(t: float) -> str:
    return "0 (a cost appears)" if t == 0 else f"{100 * t:+.0f} % (the paper's)"


def ridge_chart(crossings: pd.DataFrame, jobs: int, seeds, baseline: str = "FIFO",
                named: str | None = None):
    """The crossings of the default variant against ``baseline`` (named ``named`` in the
    title, default the baseline) against the TE share, one panel per load; an
    interval reaching past the probes is drawn to the first or last probe (said in a note);
    a target not reached by the last probe is listed in a note. None when no target is
    crossed within the probes anywhere."""
    d = crossings[(crossings["variant"] == "default") & (crossings["baseline"] == baseline)]
    top = float(d["max_min"].max()) if len(d) else 60.0
    rows, beyond = [], []
    for _, r in d.iterrows():
        lab = _target_label(r["target"])
        if r["side"] == "beyond":
            what = "0" if r["target"] == 0 else f"{100 * r['target']:+.0f} %"
            beyond.append(f"{what} at load {r['load']:g}, TE share {r['te_fraction']:g}")
            continue
        lo = 0.0 if math.isnan(r["lo"]) else r["lo"]
        hi = top if math.isnan(r["hi"]) else r["hi"]
        if not r["known"]:
            lo = hi = math.nan
        rows.append({"te_fraction": r["te_fraction"], "target": lab, "value": r["at"],
                     "lo": lo, "hi": hi, "metric": f"load {r['load']:g}"})
    df = pd.DataFrame(rows, columns=["te_fraction", "target", "value", "lo", "hi", "metric"])
    # a target crossed at or below 0 min at every TE share of a load is a flat line at 0:
    # left out of that panel and said in a note
    flat = df.groupby(["metric", "target"])["value"].transform(lambda v: (v == 0).all())
    gone = df[flat.astype(bool)].drop_duplicates(["metric", "target"])
    df = df[~flat.astype(bool)]
    if not len(df):
        return None   # nothing crossed within the probes: the table says so
    title = (f"Where FitGpp's BE median change against {named or baseline} crosses 0 and "
             f"{100 * PAPER['be_median']:+.0f} %")
    notes = [f"{jobs:,} jobs, {seeds} seeds."]
    if beyond:
        notes.append(f"Not reached by {top:g} min: {len(beyond)} (see the table).")
    if len(gone):
        notes.append("At 0 min at every TE share, not drawn: " + "; ".join(
            f"{t.split(' (')[0]} at {m}" for m, t in zip(gone["metric"], gone["target"])) + ".")
    if (d["side"] != "crosses").any() or d["hi"].isna().any() or d["lo"].isna().any():
        notes.append(f"Intervals past the probes drawn to 0 or {top:g} min.")
    return plots.metric_lines(df, x="te_fraction", series="target", x_title="TE share",
                              y_title="restart cost (min)", series_title="BE median reaches",
                              title=title, log_x=False, notes=notes)


def ridge_charts(rid, key: str = "rq8") -> dict:
    """The ridge against strict FIFO (``{key}_ridge``) and against EASY FIFO
    (``{key}_ridge_easy``); one figure naming both readings (``{key}_ridge_both``) where the
    two would draw the same data (every crossing the same, e.g. all past the probes)."""
    if rid is None:
        return {}
    most = rid.schedule[-1] if rid.schedule else 0
    seeds = f"{len(rid.seeds)}" + (f" (up to {most} at ridge points)"
                                   if most > len(rid.seeds) else "")
    out = {}
    for b, name in (("FIFO", "ridge"), ("EASY FIFO", "ridge_easy")):
        if (rid.crossings["baseline"] == b).any():
            chart = ridge_chart(rid.crossings, rid.jobs[0], seeds, b)
            if chart is not None:
                out[f"{key}_{name}"] = chart
    if len(out) == 2 and _same_data(*out.values()):
        out = {f"{key}_ridge_both": ridge_chart(rid.crossings, rid.jobs[0], seeds, "FIFO",
                                                named="strict and EASY FIFO alike")}
    return out


def _same_data(a, b) -> bool:
    """Do two charts draw the same data (the figure check's rule for one figure)?"""
    from fitgpp.figures.print_rules import identical
    return bool(identical({"a": a, "b": b}))


def delays_chart(table: pd.DataFrame, load: float, share: float):
    """Each BE job's delay, FitGpp minus FIFO (minutes per job), and its parts against the
    restart cost at ``load`` and TE share ``share``: one panel per group of BE jobs (None
    when neither has a job)."""
    d = table[(table["load"] == load) & (table["te_fraction"] == share)]
    titles = {"delay": "all of it", "queued": "queued first", "grace": "grace",
              "requeued": "waiting again", "reload": "reloading"}
    panels = {"preempted": "BE jobs FitGpp preempted", "never preempted": "BE jobs never preempted"}
    rows = []
    for _, r in d.iterrows():
        for part, title in titles.items():
            rows.append({"overhead_min": r["overhead_min"], "part": title,
                         "metric": panels[r["group"]], "value": r[part] / 60,
                         "lo": r[f"{part}_lo"] / 60, "hi": r[f"{part}_hi"] / 60})
    df = pd.DataFrame(rows, columns=["overhead_min", "part", "metric", "value", "lo", "hi"]
                      ).dropna(subset=["value"])
    if not len(df):
        return None   # no BE job in either group (a tiny run)
    order = {panels[g]: i for i, g in enumerate(delays.GROUPS)}
    df = df.sort_values("metric", key=lambda s: s.map(order), kind="stable")
    return plots.metric_lines(df, x="overhead_min", series="part",
                              x_title=names.title("restart_overhead"),
                              y_title="min per job", series_title="delay, FitGpp minus FIFO",
                              title=f"BE jobs' delay against FIFO at load {load:g}, TE share "
                                    f"{share:g}")
