"""RQ8's mechanism: what the capacity ledger and each BE job's delay say about why BE jobs are
better or worse off under FitGpp than under FIFO, cell by cell of RQ8's map.

- **The ledger** (:mod:`fitgpp.sim.ledger`): GPU-hours *lost while jobs waited* = capacity -
  progress - idle with nothing waiting (reloads, grace periods, reserved GPUs and idle GPUs
  while some job waits), FitGpp's minus FIFO's, paired per seed, split into its parts
  (:func:`lost_vs_fifo`). It is an aggregate over all jobs: whether its sign agrees with the
  BE median change is measured, per cell by the two intervals and per seed with an exact
  interval of the share that agrees (:func:`agreement`), not assumed.
- **Each BE job's delay** (:mod:`fitgpp.analysis.delays`): completion - submission - run
  time, split into queueing before its first start, grace periods, waiting again after
  preemptions, reloads and the tick rounding of its run time; FitGpp's minus FIFO's, job by
  job on the same trace, with the BE jobs FitGpp preempted and those it never preempted apart,
  mean per job and then over seeds with its interval (:func:`delay_table`). Where the ledger
  says FitGpp loses less while jobs wait and BE jobs still pay, this shows who pays.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from fitgpp.analysis import delays
from fitgpp.analysis.metrics import METRICS, t_interval
from fitgpp.sim.ledger import PARTS as LEDGER_PARTS

KNOBS = ["load", "te_fraction", "restart_overhead"]
#: The parts of "lost while jobs waited" the decomposition shows (FitGpp minus FIFO): short
#: enough for the figure's legend to take two columns at column width.
LOST = {"reload": "reloading", "held": "grace and reserved", "idle": "idle GPUs",
        "net": "all of it"}
#: The idle part split: a waiting job would fit (a strict queue blocked behind its head),
#: or none would.
IDLE_SPLIT = {"idle_fits": "idle, a waiting job fits", "idle_nofit": "idle, none fits"}


# ---------------------------------------------------------------- the ledger
def ledger_runs(o) -> pd.DataFrame:
    """One row per cell: policy, FIFO's reading (``backfill``; "" for another policy), knobs,
    seed and its ledger parts (GPU-hours), read from the cell results (no Dataset rebuilt)."""
    rows = []
    for (_, cell), res in o.runs.items():
        kept = json.loads(str(res["ledger"]))
        reading = dict(cell.params).get("backfill", "none") if cell.policy == "fifo" else ""
        rows.append({"name": cell.policy, "reading": reading, **dict(cell.knobs),
                     "seed": cell.seed, **{k[len("ledger_"):]: v[0] for k, v in kept.items()}})
    d = pd.DataFrame(rows)
    d["held"] = d["grace"] + d["reserved"]
    d["idle"] = d["idle_fits"] + d["idle_nofit"]
    d["net"] = d["capacity"] - d["useful_te"] - d["useful_be"] - d["idle_empty"]
    return d


def _paired(runs: pd.DataFrame, parts, reading: str = "none") -> pd.DataFrame:
    """FitGpp's ``parts`` minus FIFO's (the reading ``reading``), per cell and seed."""
    idx = KNOBS + ["seed"]
    fit = runs[runs["name"] == "fitgpp"].set_index(idx)
    fifo = runs[(runs["name"] == "fifo") & (runs["reading"] == reading)].set_index(idx)
    return (fit[list(parts)] - fifo.loc[fit.index, list(parts)]).reset_index()


def lost_vs_fifo(runs: pd.DataFrame, parts: dict = LOST, reading: str = "none") -> pd.DataFrame:
    """Per cell (knobs) and part of ``parts`` (default :data:`LOST`): FitGpp's GPU-hours
    minus FIFO's (strict, or the reading ``reading``), paired per seed, mean and interval
    (``value``, ``lo``, ``hi``; NaN bounds below 3 seeds); ``overhead_min``: the restart cost
    in minutes."""
    rows = []
    for knobs, g in _paired(runs, parts, reading).groupby(KNOBS, sort=True):
        for part, title in parts.items():
            m, lo, hi = t_interval(g[part])
            rows.append({**dict(zip(KNOBS, knobs)), "part": title, "value": m, "lo": lo,
                         "hi": hi})
    out = pd.DataFrame(rows)
    out["overhead_min"] = out["restart_overhead"] / 60.0
    return out


def ledger_means(runs: pd.DataFrame) -> pd.DataFrame:
    """Per policy and cell: each ledger part's mean over seeds with its interval
    (``ledger_<part>``, ``_lo``, ``_hi``; NaN bounds below 3 seeds), GPU-hours."""
    rows = {}
    for key, g in runs.groupby(["name", "reading", *KNOBS]):
        row = {}
        for part in [*LEDGER_PARTS, "capacity"]:
            m, lo, hi = t_interval(g[part])
            row.update({f"ledger_{part}": m, f"ledger_{part}_lo": lo, f"ledger_{part}_hi": hi})
        rows[key] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.names = ["name", "reading", *KNOBS]
    return out


def with_ledger(table: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """A study table with each configuration's ledger means (:func:`ledger_means`) joined
    by policy, FIFO's reading and knobs."""
    reading = table["backfill"].fillna("") if "backfill" in table else \
        pd.Series(["none" if n == "fifo" else "" for n in table["name"]], index=table.index)
    reading = reading.where(table["name"] == "fifo", "")
    return table.assign(reading=reading).join(ledger_means(runs), on=["name", "reading", *KNOBS])


def interval_sign(lo: float, hi: float) -> int:
    """+1 / -1 when the interval lies above / below 0, else 0 (also without one)."""
    if math.isnan(lo) or math.isnan(hi):
        return 0
    return 1 if lo > 0 else -1 if hi < 0 else 0


def agreement(o, runs: pd.DataFrame) -> delays.Agreement:
    """Per seed of every FitGpp cell: whether the sign of its lost-while-waiting GPU-hours
    minus FIFO's agrees with the sign of its BE median change against FIFO
    (:func:`fitgpp.analysis.delays.sign_agreement`; ``misses_neg``: BE jobs pay while FitGpp
    loses fewer GPU-hours)."""
    diff = _paired(runs, ["net"]).set_index(KNOBS + ["seed"])["net"]
    nets, changes = [], []
    seeds = list(o.study.seeds(o.size))
    for conf in o.configurations():
        if conf["name"] != "fitgpp":
            continue
        ch = o.change(conf, METRICS["be_median"])   # over the size's seeds, NaN where not run
        key = tuple(conf["knobs"][k] for k in KNOBS)
        for s in o.seeds_of(conf):
            nets.append(float(diff.loc[(*key, s)]))
            changes.append(float(ch[seeds.index(s)]))
    return delays.sign_agreement(nets, changes)


# ---------------------------------------------------------------- each BE job's delay
def _tick(o) -> float:
    return float(next(iter(o.experiments.values())).tick)


def delay_table(o, where=None) -> pd.DataFrame:
    """Per FitGpp cell (knobs; those matching ``where``, a function of the knobs, when
    given) and group of BE jobs (:data:`fitgpp.analysis.delays.GROUPS`): ``share`` of the BE
    jobs, and for the delay and each part FitGpp's mean per job minus FIFO's on the same jobs
    (``<part>``, seconds), mean over seeds with its interval (``_lo``, ``_hi``)."""
    tick = _tick(o)
    rows = []
    for conf in o.configurations():
        if conf["name"] != "fitgpp" or (where is not None and not where(conf["knobs"])):
            continue
        per_seed = []
        base = o.baseline(conf)
        for s in o.seeds_of(conf):
            runs = [delays.of_jobs(o.columns(c["name"], delays.COLUMNS, seed=s, **c["params"],
                                             **c["knobs"]), tick) for c in (conf, base)]
            per_seed.append(delays.by_group(*runs))
        d = pd.concat(per_seed)
        for group, g in d.groupby("group", sort=False):
            row = {**{k: conf["knobs"][k] for k in KNOBS}, "group": group, "seeds": len(g)}
            for col in ("share", "delay_diff", *(f"{p}_diff" for p in delays.PARTS)):
                name = col.removesuffix("_diff")
                row[name], row[f"{name}_lo"], row[f"{name}_hi"] = t_interval(g[col])
            rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["overhead_min"] = out["restart_overhead"] / 60.0
    return out


def cell_signs(cells: pd.DataFrame, lost: pd.DataFrame) -> pd.DataFrame:
    """Per FitGpp cell: the sign of lost-while-waiting GPU-hours minus FIFO's by its
    interval (``net_sign``) beside the BE median change's (``be_sign``), both +1, -1 or 0."""
    net = lost[lost["part"] == LOST["net"]].set_index(KNOBS)
    out = cells[KNOBS + ["overhead_min"]].copy()
    out["net"] = [float(net.loc[k, "value"]) for k in map(tuple, cells[KNOBS].to_numpy())]
    out["net_sign"] = [interval_sign(*net.loc[k, ["lo", "hi"]])
                       for k in map(tuple, cells[KNOBS].to_numpy())]
    out["be_sign"] = [interval_sign(lo, hi) for lo, hi in
                      zip(cells["change_be_median_lo"], cells["change_be_median_hi"])]
    return out


def sign_counts(signs: pd.DataFrame) -> dict[str, int]:
    """Cells where both signs are told by their intervals and agree or not, and where one
    of the two has no sign."""
    both = (signs["net_sign"] != 0) & (signs["be_sign"] != 0)
    return {"agree": int((both & (signs["net_sign"] == signs["be_sign"])).sum()),
            "disagree": int((both & (signs["net_sign"] != signs["be_sign"])).sum()),
            "net unsigned": int(((signs["net_sign"] == 0) & (signs["be_sign"] != 0)).sum()),
            "be unsigned": int((signs["be_sign"] == 0).sum()), "cells": len(signs)}


def minutes(x: float) -> str:
    """Seconds as signed minutes, ``+12.3 min``."""
    return "n/a" if math.isnan(x) else f"{x / 60:+,.1f} min"


def delay_phrase(row) -> str:
    """``+12.3 min [+8.0, +16.6] per job (grace +1.0, waiting again +9.9, reloads +2.0,
    queued first -0.6)``: a group's delay against FIFO with its parts that are not 0."""
    iv = "" if math.isnan(row["delay_lo"]) else \
        f" [{row['delay_lo'] / 60:+,.1f}, {row['delay_hi'] / 60:+,.1f}]"
    names = {"queued": "queued first", "grace": "grace", "requeued": "waiting again",
             "reload": "reloads"}
    parts = ", ".join(f"{names[p]} {row[p] / 60:+,.1f}" for p in names
                      if not np.isclose(row[p], 0.0))
    return f"{minutes(row['delay'])}{iv} per job" + (f" ({parts})" if parts else "")
