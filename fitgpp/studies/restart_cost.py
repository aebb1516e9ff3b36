"""RQ6, beyond the paper: what does preemption cost when restarts are not free?

Every BE job gets a restart overhead (SPEC "Restart cost"): each time it starts again after a
preemption it first reloads its checkpoint for that long, holding its GPUs without progress.
We sweep the overhead from 0 to tens of minutes and compare PRIO (TE first, never preempts:
its numbers do not move) with the preempting policies, FitGpp at several ``s``, LRTP and RAND,
on three workloads: ``paper-default``, ``paper-wide-te`` (TE jobs of 4-8 GPUs, which must
preempt) and ``philly-chronus-mix1`` (fitted to the Philly-derived trace, with its multi-node
gangs). The question is declared once, as an ordinary study, in :mod:`fitgpp.studies.rq6`
(the workloads its variants, the overhead the swept workload knob ``restart_overhead``, PRIO
its baseline); notebook 07 and ``fitgpp reproduce`` run that declaration at the sizes of
:mod:`fitgpp.studies`, so at the same size they print the same numbers. This module holds
its analysis: the per-run numbers, the comparisons against PRIO, the findings and figures.

Per run: TE p95, BE median and p95 slowdown, preemptions per BE job, and the GPU-hours lost to
reloads, ``sum over jobs of reload x gpu x tasks / 3600`` (``reload`` is the Dataset's
per-job time spent reloading, lost reloads included), also as a share of the BE jobs' own
GPU-hours of work. All of them come from :mod:`fitgpp.analysis.metrics` (:func:`~fitgpp.analysis.metrics.class_stats`,
:func:`~fitgpp.analysis.metrics.reload_gpu_hours`, :func:`~fitgpp.analysis.metrics.work_gpu_hours`).

Whether preempting still pays off against PRIO, at each overhead (our definitions; like every
change in fitgpp, fractions from :func:`fitgpp.analysis.metrics.change`, shown in percent by
:func:`fitgpp.analysis.metrics.percent`):

- *TE gain*: ``-change(TE p95, PRIO's TE p95) = 1 - TE p95 / PRIO's`` (how much of PRIO's TE
  tail preemption removes);
- *BE cost*: ``change(BE p95, PRIO's BE p95) = BE p95 / PRIO's - 1`` (how much longer the BE
  tail gets);
- the *net* is TE gain minus BE p95 cost, per seed (no -100 % floor:
  :data:`fitgpp.analysis.metrics.NET_RANGE`).

Where preempting stops paying off and stops helping TE is read from the intervals over seeds at
each overhead, by the rules of :data:`~fitgpp.studies.restart_verdicts.RULES` (stated once, in
:mod:`fitgpp.studies.restart_verdicts`, which also words them): "does not stop paying off" only
where the net's interval lies above 0 at every overhead, "cannot tell" where it includes 0, and
with fewer than 3 seeds everywhere (:mod:`fitgpp.analysis.verdicts`). A BE p95 change below
PRIO's is a BE gain, never a negative cost.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fitgpp.figures import names
from fitgpp.errors import FitgppError
from fitgpp.analysis.metrics import (CI_NOTE, CLASSES, CLIP_NOTE, METRICS, class_stats, change,
                                     cut_interval, percent, reload_gpu_hours,
                                     t_interval, value_range, work_gpu_hours)
from fitgpp.analysis.tables import PeopleTable, sig
from fitgpp.analysis.escape import md_text
from fitgpp.analysis.verdicts import MIN_SEEDS
from fitgpp.studies.restart_verdicts import (NET_WORDS, RULES, RULES_NOTE,  # noqa: F401
                                             helping_phrase, paying_phrase, range_by_interval,
                                             rules_text)

#: The workloads of RQ6: shipped model names.
WORKLOADS = ("paper-default", "paper-wide-te", "philly-chronus-mix1")
#: (label, policy, parameters) compared; PRIO is the no-preemption reference.
POLICIES = (("PRIO", "prio", {}), ("FitGpp s=1", "fitgpp", {"s": 1.0}),
            ("FitGpp s=4", "fitgpp", {"s": 4.0}), ("FitGpp s=8", "fitgpp", {"s": 8.0}),
            ("LRTP", "lrtp", {}), ("RAND", "rand", {}))
#: The metrics per run (declared in :data:`fitgpp.analysis.metrics.METRICS`, titles and all).
RUN_METRICS = ("te_p95", "be_median", "be_p95", "preemptions_per_be", "reload_gpu_h",
               "reload_share")
#: Columns that are fractions (changes against PRIO, shares): shown through metrics.percent.
FRACTIONS = ("reload_share", "te_gain", "be_p95_cost", "be_median_cost", "net", "be_p95_growth",
             "reload_share_max", "te_gain_0", "te_gain_max", "be_p95_cost_0", "be_p95_cost_max",
             "be_median_cost_max", "net_0", "net_max")
#: The restart overheads [s] ``fitgpp reproduce`` sweeps (at both sizes): 0, 10, 30 and 60
#: min, which keeps
#: ``fitgpp reproduce --quick`` within about 20 s more than RQ1-RQ5.
REPRODUCE_OVERHEADS = (0.0, 600.0, 1800.0, 3600.0)


TITLE = "RQ6: restart cost"
QUESTION = "What does preemption cost when restarts are not free?"


class RestartCostError(FitgppError):
    """RQ6 cannot run as asked (bad size, a result without the per-job reload time)."""


TE, BE = CLASSES.index("TE"), CLASSES.index("BE")


def cell_metrics(jobs) -> dict:
    """RQ6's metrics of one run from its per-job columns (``te``, ``slowdown``,
    ``preemptions``, ``duration`` [s], ``reload`` [s], ``gpu`` per task, ``tasks``): a
    DataFrame, or a mapping of arrays (a cached cell's)."""
    need = {"te", "slowdown", "preemptions", "duration", "reload", "gpu", "tasks"}
    missing = need - set(jobs.columns if isinstance(jobs, pd.DataFrame) else jobs)
    if missing:
        raise RestartCostError(f"a run lacks the per-job column(s) {sorted(missing)}: RQ6 needs "
                               "the simulator's per-job reload time, GPUs and tasks")
    te = np.asarray(jobs["te"], bool)
    st = class_stats(te, jobs["slowdown"], jobs["preemptions"])
    gpu, tasks = jobs["gpu"], jobs["tasks"]
    lost = reload_gpu_hours(jobs["reload"], gpu, tasks)
    work_be = work_gpu_hours(te, jobs["duration"], gpu, tasks, cls="BE")
    return {"te_p95": float(st["slowdown_p95"][TE]), "be_median": float(st["slowdown_median"][BE]),
            "be_p95": float(st["slowdown_p95"][BE]),
            "preemptions_per_be": float(st["preemptions_per_job"][BE]),
            "reload_gpu_h": lost, "reload_share": lost / work_be if work_be else 0.0}


#: RQ6's per-class metrics (:data:`RUN_METRICS`) the sweep's Dataset holds for every run.
GRID_METRICS = ("te_p95", "be_median", "be_p95", "preemptions_per_be")


def runs_of(o) -> pd.DataFrame:
    """One row per run of an Outcome of RQ6's study (:mod:`fitgpp.studies.rq6`): workload,
    policy (the Outcome's label of its configuration: a value added to the declaration, or a
    policy of the user's, gets a row of its own), overhead, seed and :data:`RUN_METRICS`, the
    numbers :func:`cell_metrics` gives of the run's per-job columns. The per-class ones are
    read from the sweep's Dataset, which :func:`fitgpp.analysis.metrics.class_stats` filled
    from the same columns when the sweep assembled it (computing them again per cell cost a
    warm full-size panel about 0.3 s, issue 26); the reloads' GPU-hours and share are the
    Outcome's per-run metrics (kept, so its table does not compute them again). Runs in the
    order of the Outcome's cells (configurations, then seeds)."""
    seeds = o.study.seeds(o.size)
    rows = []
    for conf in o.configurations():
        at = o.at(conf)
        cols = {k: o.values(conf, METRICS[k].var, METRICS[k].cls, at) for k in GRID_METRICS}
        cols.update({k: o.metric_values(conf, METRICS[k]) for k in RUN_METRICS
                     if k not in GRID_METRICS})
        head = {"workload": conf["variant"], "policy": conf["label"],
                "overhead_s": float(conf["knobs"]["restart_overhead"])}
        rows += [{**head, "seed": seed, **{k: float(cols[k][i]) for k in RUN_METRICS}}
                 for i, seed in enumerate(seeds)]
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- across seeds and findings
def _vs_prio(runs: pd.DataFrame) -> pd.DataFrame:
    """Per run: TE gain and BE cost against PRIO on the same workload, seed and overhead
    (fractions, :func:`fitgpp.analysis.metrics.change`)."""
    prio = runs[runs["policy"] == "PRIO"].set_index(["workload", "overhead_s", "seed"])
    key = pd.MultiIndex.from_frame(runs[["workload", "overhead_s", "seed"]])
    p = prio.reindex(key)
    out = runs.copy()
    out["te_gain"] = -change(runs["te_p95"].to_numpy(), p["te_p95"].to_numpy())
    out["be_p95_cost"] = change(runs["be_p95"].to_numpy(), p["be_p95"].to_numpy())
    out["be_median_cost"] = change(runs["be_median"].to_numpy(), p["be_median"].to_numpy())
    out["net"] = out["te_gain"] - out["be_p95_cost"]
    return out


def across_seeds(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and 95 % interval (``<m>``, ``<m>_lo``, ``<m>_hi``; :func:`fitgpp.analysis.metrics.t_interval`,
    no bounds below 3 seeds) over seeds of every metric, with the comparisons against PRIO;
    rows by workload (in the order run), overhead, then policy (as in :data:`POLICIES`)."""
    r = _vs_prio(runs)
    by = ["workload", "policy", "overhead_s"]
    cols = [c for c in r.columns if c not in (*by, "seed")]
    rows = []
    for key, g in r.groupby(by, sort=False):
        row = dict(zip(by, key))
        row["overhead_min"] = row["overhead_s"] / 60.0
        row["seeds"] = len(g)
        for c in cols:
            row[c], row[f"{c}_lo"], row[f"{c}_hi"] = t_interval(g[c])
        rows.append(row)
    rank = {"workload": {w: i for i, w in enumerate(dict.fromkeys(runs["workload"]))},
            "policy": {p[0]: i for i, p in enumerate(POLICIES)}}
    return pd.DataFrame(rows).sort_values(
        ["workload", "overhead_s", "policy"], kind="stable",
        key=lambda c: c.map(rank[c.name]) if c.name in rank else c).reset_index(drop=True)


def _first(ovh, cond) -> float:
    hit = [o for o, c in zip(ovh, cond) if c]
    return float(hit[0]) if hit else math.nan


#: The numbers of the findings at no overhead (``_0``) and at the largest (``_max``), with
#: their intervals: (column of the findings, column of the table).
_AT_ENDS = (("te_gain_0", "te_gain"), ("te_gain_max", "te_gain"),
            ("be_p95_cost_0", "be_p95_cost"), ("be_p95_cost_max", "be_p95_cost"),
            ("be_median_cost_max", "be_median_cost"), ("net_0", "net"), ("net_max", "net"),
            ("preemptions_per_be_0", "preemptions_per_be"),
            ("preemptions_per_be_max", "preemptions_per_be"),
            ("reload_gpu_h_max", "reload_gpu_h"), ("reload_share_max", "reload_share"))


def findings_table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per workload and preempting policy: its numbers at no overhead (``_0``) and at
    the largest (``_max``) with their intervals, the fewest ``seeds`` behind them, how much
    its BE p95 grew, the columns of :data:`~fitgpp.studies.restart_verdicts.RULES`
    (where it stops paying off against PRIO and stops helping TE, by the intervals), and
    those verdicts in words: ``pays_off`` (:func:`~fitgpp.studies.restart_verdicts.paying_phrase`)
    and ``helps_te`` (:func:`~fitgpp.studies.restart_verdicts.helping_phrase`)."""
    rows = []
    for (wl, pol), g in table[table["policy"] != "PRIO"].groupby(["workload", "policy"],
                                                                 sort=False):
        g = g.sort_values("overhead_s")
        ovh = g["overhead_min"].to_numpy()
        a, b = g.iloc[0], g.iloc[-1]
        seeds = int(g["seeds"].min())
        ends = {k: (a if k.endswith("_0") else b) for k, _ in _AT_ENDS}
        row = {"workload": wl, "policy": pol, "max_overhead_min": b["overhead_min"],
               "seeds": seeds}
        for k, c in _AT_ENDS:
            row.update({k + end: ends[k][c + end] for end in ("", "_lo", "_hi")})
        net = (g["net_lo"].to_numpy(float), g["net_hi"].to_numpy(float))
        te = (g["te_gain_lo"].to_numpy(float), g["te_gain_hi"].to_numpy(float))
        known = seeds >= MIN_SEEDS
        none = known and bool((g[["te_gain", "te_gain_lo", "te_gain_hi"]] == 0).all().all())
        row.update({
            "be_p95_growth": change(b["be_p95"], a["be_p95"]),
            "stops_paying_min": _first(ovh, net[1] < 0) if known else math.nan,
            "not_paying_min": _first(ovh, ~(net[0] > 0)) if known else math.nan,
            "stops_helping_te_min": _first(ovh, ~(te[0] > 0)) if known else math.nan,
            "te_gain_none": none,
            "pays_off": paying_phrase(ovh, *net, seeds, none),
            "helps_te": helping_phrase(ovh, *te, seeds, none)})
        rows.append(row)
    return pd.DataFrame(rows)


def _iv(r, col: str, fmt) -> str:
    """``r[col]`` with its interval (``col_lo``, ``col_hi``; none below 3 seeds) cut at the
    quantity's range and marked (:func:`fitgpp.analysis.metrics.cut_interval`)."""
    return cut_interval(r[col], r.get(f"{col}_lo", math.nan), r.get(f"{col}_hi", math.nan),
                        value_range(col)).text(fmt=fmt)


def describe(findings: pd.DataFrame, per_seed: dict | None = None) -> str:
    """The finding, in sentences computed from :func:`findings_table` (no fixed result):
    per policy its numbers at no overhead and at the largest with their intervals, and where
    it stops paying off and stops helping TE (:data:`~fitgpp.studies.restart_verdicts.RULES`).
    Changes against PRIO are named
    "change" (a BE p95 change below 0 is a BE gain, never a negative cost); ``per_seed``:
    see :func:`summary`."""
    def gain(x):
        return percent(x, 0, sign=False)

    def pct(x):
        return percent(x, 0)
    out = []
    for wl, g in findings.groupby("workload", sort=False):
        g = g.set_index("policy")
        top = float(g["max_overhead_min"].iloc[0])
        parts = []
        for pol, r in g.iterrows():
            parts.append(
                f"{pol}: TE gain over PRIO {_iv(r, 'te_gain_0', gain)} -> "
                f"{_iv(r, 'te_gain_max', gain)}, BE p95 change {_iv(r, 'be_p95_cost_0', pct)} "
                f"-> {_iv(r, 'be_p95_cost_max', pct)}, "
                f"{_iv(r, 'preemptions_per_be_max', lambda x: f'{x:.2f}')} preemptions per BE "
                f"job, {_iv(r, 'reload_gpu_h_max', sig)} GPU-h lost to reloads "
                f"({_iv(r, 'reload_share_max', lambda x: percent(x, 1, sign=False))} of BE "
                f"work); {r['pays_off']}; {r['helps_te']}")
        verdict = _verdict(g, top, (per_seed or {}).get(wl))
        out.append(f"{wl}, restart overhead 0 -> {top:g} min. " + "; ".join(parts) + "."
                   + (f" {verdict}" if verdict else ""))
    return "\n".join(out)


def _verdict(g: pd.DataFrame, top: float, per_seed: dict | None = None) -> str:
    """FitGpp against LRTP and RAND at the largest overhead ``top`` [min], from the findings
    of one workload indexed by policy ("" without both)."""
    fit = g[g.index.str.startswith("FitGpp")]
    oth = g[~g.index.str.startswith("FitGpp")]
    if not (len(fit) and len(oth)):
        return ""
    return (f"At {top:g} min: " + _each_against(fit, oth, "reload_gpu_h_max",
                                                 "GPU-hours lost to reloads", per_seed)
            + " " + _each_against(fit, oth, "be_p95_cost_max", "BE p95 change over PRIO",
                                  per_seed, fmt=percent))


def per_seed_at_max(runs: pd.DataFrame) -> dict:
    """``{workload: {(policy, column): per-seed values}}`` at each workload's largest overhead
    for ``reload_gpu_h_max`` and ``be_p95_cost_max`` (``runs``: one row per run, as the
    study's cells give them), so FitGpp is set against LRTP and RAND by the paired test."""
    r = _vs_prio(runs)
    out: dict = {}
    for wl, g in r.groupby("workload", sort=False):
        g = g[g["overhead_s"] == g["overhead_s"].max()].sort_values("seed")
        out[wl] = {(p, f"{c}_max"): d[c].to_numpy(float) for p, d in g.groupby("policy")
                   for c in ("reload_gpu_h", "be_p95_cost")}
    return out


def _each_against(fit: pd.DataFrame, oth: pd.DataFrame, col: str, title: str,
                  per_seed: dict | None = None, fmt=sig) -> str:
    """Where every FitGpp setting's ``col`` sits against each other policy's, setting by
    setting (:func:`fitgpp.analysis.verdicts.order_against`): "lower"/"higher" only by the paired test
    over seeds (``per_seed``: :func:`per_seed_at_max` of the workload); without per-seed
    values each number is one run, and no order is claimed."""
    from fitgpp.analysis.verdicts import order_against
    seeds = per_seed or {}
    vals = lambda p: seeds.get((p, col), float(fit[col].get(p, oth[col].get(p))))  # noqa: E731
    return " ".join(order_against({p: vals(p) for p in fit.index}, other, vals(other),
                                  title=title, group="FitGpp setting", fmt=fmt)
                    for other in oth.index)


# ---------------------------------------------------------------- charts
#: RQ6's figures per workload: ``{name: (caption words, metrics)}``, three panels each (five
#: in one figure did not fit a printed column at the full size, issue 35).
FIGURES = {"slowdowns": ("slowdowns", ("te_p95", "be_median", "be_p95")),
           "reloads": ("preemptions and reloads", ("preemptions_per_be", "reload_gpu_h",
                                                   "reload_share"))}


def workload_chart(table: pd.DataFrame, workload: str, *, reloads: bool = False):
    """The metrics of ``workload`` against the overhead, one line per policy, 95 % CIs:
    the slowdowns (:data:`FIGURES`), or with ``reloads=True`` the preemptions per BE job,
    the GPU-hours lost to reloads and their share of BE GPU time (in percent)."""
    from fitgpp.figures import plots
    g = table[table["workload"] == workload]
    if g.empty:
        raise RestartCostError(f"nothing to draw for workload {workload!r}")
    words, keys = FIGURES["reloads" if reloads else "slowdowns"]
    keys = [k for k in keys if k in g]
    # the workload in the data too: two workloads whose numbers agree (no preemption in
    # either) draw two figures, each of its own workload, not one figure under two names
    long = pd.concat([g[["overhead_min", "policy", "workload"]].assign(
        metric=METRICS[k].title, value=g[k], lo=g[f"{k}_lo"], hi=g[f"{k}_hi"],
        lowest=value_range(k)[0]) for k in keys],
        ignore_index=True)
    return plots.metric_lines(long, x="overhead_min", x_title=names.title("restart_overhead"),
                              title=f"{workload}: {words} as restarts cost more",
                              share={METRICS[k].title for k in keys if k in FRACTIONS})


def charts(table: pd.DataFrame) -> dict:
    """``rq6_<workload>_slowdowns`` and ``rq6_<workload>_reloads``: :func:`workload_chart` of
    each workload; ``rq6_net``: TE gain minus BE p95 cost against PRIO (below 0: preempting
    no longer pays off), one panel per workload."""
    from fitgpp.figures import plots
    out = {}
    for wl in dict.fromkeys(table["workload"]):
        out[f"rq6_{wl}_slowdowns"] = workload_chart(table, wl)
        out[f"rq6_{wl}_reloads"] = workload_chart(table, wl, reloads=True)
    net = table[table["policy"] != "PRIO"]
    # the net's own range (no floor: a BE tail five times PRIO's is a net of -400 %), not a
    # change's -100 %, so each whisker reaches its interval's end
    long = net[["overhead_min", "policy"]].assign(metric=net["workload"], value=net["net"],
                                                  lo=net["net_lo"], hi=net["net_hi"],
                                                  lowest=value_range("net")[0])
    out["rq6_net"] = plots.metric_lines(long, x="overhead_min",
                                        x_title=names.title("restart_overhead"),
                                        y_title="net gain vs PRIO", percent=True,
                                        title="Net gain of preempting against PRIO as "
                                              "restarts cost more")
    return out


def captions(workloads) -> dict[str, str]:
    """The captions of :func:`charts` (:attr:`fitgpp.studies.Study.captions`)."""
    out = {}
    for wl in workloads:
        out[f"{wl}_slowdowns"] = (f"TE p95, BE median and BE p95 slowdown on {wl} as the BE "
                                  "restart cost grows, one line per policy (mean over the "
                                  "seeds, 95 % intervals).")
        out[f"{wl}_reloads"] = (f"Preemptions per BE job, GPU-hours lost to reloads and their "
                                f"share of the BE jobs' GPU-hours on {wl} as the BE restart "
                                "cost grows, one line per policy.")
    out["net"] = ("Net gain of each preempting policy against PRIO (TE p95 gain minus BE p95 "
                  "cost, paired per seed) as the restart cost grows, one panel per workload; "
                  "below 0 preempting no longer pays off.")
    return out


def readable(df: pd.DataFrame) -> PeopleTable:
    """``df`` for reading, as a :class:`fitgpp.analysis.tables.PeopleTable` (``.shown`` the
    cells, ``.full`` the numbers): each quantity with its interval (``<c>``, ``<c>_lo``,
    ``<c>_hi``) in one cell ``x [lo, hi]``, cut at the quantity's range and each cut bound
    marked ``*`` (:func:`fitgpp.analysis.metrics.cut_interval`, the notes say so); the
    fractions (:data:`FRACTIONS`) in percent through :func:`fitgpp.analysis.metrics.percent`,
    other numbers to 3 significant digits; the restart overhead in minutes, headed as the
    controls name it ("restart cost (min)")."""
    out = df.copy()
    if "restart_overhead" in out:
        out["restart_overhead"] = out["restart_overhead"] / 60.0
        out = out.rename(columns={"restart_overhead": names.title("restart_overhead")})
    bounded = {c for c in out.columns if f"{c}_lo" in out and f"{c}_hi" in out}
    shown, cut = {}, False
    for c in out.columns:
        base = c.removesuffix("_lo").removesuffix("_hi")
        if base != c and base in bounded:
            continue                                # shown in its quantity's cell
        if not pd.api.types.is_float_dtype(out[c]):
            shown[c] = out[c].to_numpy()
            continue
        share = base.startswith("reload_share")     # a share, not a change: no sign
        fmt = (lambda x, sh=share: percent(x, sign=not sh)) if base in FRACTIONS else sig
        lo, hi = ((out[f"{c}_lo"], out[f"{c}_hi"]) if c in bounded else
                  (out[c], out[c]) if base != c else (np.full(len(out), np.nan),) * 2)
        ivs = [cut_interval(*v, value_range(c)) for v in zip(out[c], lo, hi)]
        cut |= any(iv.clipped for iv in ivs)
        shown[c] = [iv.text(fmt=fmt) if c in bounded else
                    fmt(iv.low if base != c and c.endswith("_lo") else
                        iv.high if base != c else iv.mean) + "*" * iv.clipped for iv in ivs]
    shown_any = any(out[[f"{c}_lo", f"{c}_hi"]].notna().all(axis=1).any() for c in bounded)
    notes = ["Cells: value [95 % interval]."] if shown_any else []
    notes += [CLIP_NOTE[0].upper() + CLIP_NOTE[1:] + "."] if cut else []
    notes += [CI_NOTE[0].upper() + CI_NOTE[1:] + "."] if bounded else []
    return PeopleTable(pd.DataFrame(shown), df.copy(), notes=notes)


def summary(findings: pd.DataFrame, per_seed: dict | None = None) -> str:
    """The finding in one sentence per workload (computed from :func:`findings_table`):
    whether preempting pays off against PRIO, by policy (``pays_off``, from the net's
    interval at each overhead), the TE p95, BE p95 and net changes at the largest overhead,
    each policy's named by its own interval
    (:func:`~fitgpp.studies.restart_verdicts.range_by_interval`: a BE p95 below
    PRIO's is a gain, never a negative cost), and the GPU-hours FitGpp loses to reloads
    against LRTP and RAND (``per_seed``: :func:`per_seed_at_max`, for the paired test)."""
    out = []
    for wl, g in findings.groupby("workload", sort=False):
        top = float(g["max_overhead_min"].iloc[0])
        when: dict[str, list] = {}
        for _, r in g.iterrows():
            when.setdefault(r["pays_off"], []).append(r["policy"])
        text = (f"{wl}, preempting against PRIO: "
                + "; ".join(f"{k} for {', '.join(v)}" for k, v in when.items())
                + f" (at {top:g} min" + (", each change named by its own 95 % interval: "
                                          if g["seeds"].min() >= MIN_SEEDS else ": ")
                + range_by_interval(g, "te_gain_max", "TE p95", flip=True) + "; "
                + range_by_interval(g, "be_p95_cost_max", "BE p95") + "; "
                + range_by_interval(g, "net_max", "net", better="higher", words=NET_WORDS)
                + ").")
        fit = g[g["policy"].str.startswith("FitGpp")]
        oth = g[~g["policy"].str.startswith("FitGpp")]
        if len(fit) and len(oth):
            text += " " + _each_against(fit.set_index("policy"), oth.set_index("policy"),
                                        "reload_gpu_h_max",
                                        f"GPU-hours lost to reloads at {top:g} min",
                                        (per_seed or {}).get(wl))
        out.append(text)
    return " ".join(out)


def details(findings: pd.DataFrame, per_seed: dict | None = None) -> str:
    """Markdown for ``results.md``: how FitGpp fares against LRTP and RAND on each workload,
    then the findings table (fractions in percent, intervals cut and marked as
    :func:`readable` shows them) and the rules of its verdict columns
    (:data:`~fitgpp.studies.restart_verdicts.RULES`)."""
    cols = {"workload": "workload", "policy": "policy",
            "te_gain_0": "TE gain at 0", "te_gain_max": "TE gain at max",
            "be_p95_cost_0": "BE p95 change at 0", "be_p95_cost_max": "BE p95 change at max",
            "preemptions_per_be_max": "preemptions per BE job at max",
            "reload_gpu_h_max": "GPU-h lost to reloads at max",
            "reload_share_max": "share of BE work at max",
            "pays_off": "pays off against PRIO", "helps_te": "helps TE"}
    bounds = [f"{c}{e}" for c in cols for e in ("_lo", "_hi") if f"{c}{e}" in findings]
    shown = readable(findings[list(cols) + bounds])
    t = shown.shown.rename(columns=cols)
    lines = []
    for wl, g in findings.groupby("workload", sort=False):
        v = _verdict(g.set_index("policy"), float(g["max_overhead_min"].iloc[0]),
                     (per_seed or {}).get(wl))
        if v:
            lines.append(f"- {wl}: {v}")
    lines += ["", "Findings per workload and preempting policy (at 0 and at the largest "
              "overhead, max):", "",
              "| " + " | ".join(t.columns) + " |", "|" + "---|" * len(t.columns)]
    lines += ["| " + " | ".join(map(md_text, row)) + " |" for row in t.itertuples(index=False)]
    lines += ["", *shown.notes, "", rules_text()]
    return "\n".join(lines)

