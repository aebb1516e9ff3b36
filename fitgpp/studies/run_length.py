"""The run-length study (key ``runlen``): does the headline measure the policies, or how many
jobs were simulated?

FIFO and FitGpp (s=4) on ``paper-default`` over a grid of offered loads and jobs per run
(:attr:`~fitgpp.studies.Size.run_loads` x :attr:`~fitgpp.studies.Size.run_lengths`: 2 x 2
small runs at the quick size, 6 loads up to 100,000 jobs at the full size). Its analysis
says how the three headline changes move with the run length at each load, finds the
*usable capacity* (the highest load up to which FitGpp's runs of the longest length are
steady in every seed: there its BE slowdown stays bounded however long the run), and where
on the grid the paper's three numbers hold together (:func:`fitgpp.analysis.verdicts.holds_together`).
"""

from __future__ import annotations

import math

import pandas as pd

from fitgpp.figures import plots
from fitgpp.analysis.verdicts import (PAPER_CLAIMS, Estimate, against_paper_row, category,
                                      contradicts, count_sentence, holds_together)
from fitgpp.studies.base import Outcome, RQResult, Study, _config, _long, changes
from fitgpp.studies.steady import steadiness

FITGPP = "FitGpp s=4"


def usable_capacity(steady: pd.DataFrame, policy: str = FITGPP) -> float:
    """The highest load up to which every run of ``policy`` at the longest run length is
    steady (every lower load too); NaN when even the lowest is not. ``steady``: the table of
    :func:`fitgpp.studies.steady.steadiness` (columns ``load``, ``n_jobs``, ``steady``,
    ``seeds``)."""
    rows = steady[steady["policy"] == policy]
    longest = rows[rows["n_jobs"] == rows["n_jobs"].max()].sort_values("load")
    best = math.nan
    for _, r in longest.iterrows():
        if r["steady"] < r["seeds"]:
            break
        best = float(r["load"])
    return best


def paper_cells(table: pd.DataFrame) -> pd.DataFrame:
    """FitGpp's rows with the verdict on each of the paper's numbers from its interval
    (``verdicts``: TE p95 / BE median / BE p95, :func:`fitgpp.analysis.verdicts.against_paper_row`) and
    whether all three hold together (``holds``: each confirmed) or some is contradicted
    (``off``); ``category``: the three held together (confirmed, contradicted, undecided)."""
    fit = table[table["policy"] == FITGPP].copy()
    said = [against_paper_row(r) for _, r in fit.iterrows()]
    fit["verdicts"] = [" / ".join(v.phrase for v in vs) for vs in said]
    fit["holds"] = [holds_together(vs) for vs in said]
    fit["off"] = [contradicts(vs) for vs in said]
    fit["category"] = [category(vs) for vs in said]
    return fit


def movement(table: pd.DataFrame, steady: pd.DataFrame) -> str:
    """At each load: FIFO's TE p95 and FitGpp's BE median at the shortest and the longest
    run, with the changes of the headline there, and whether those runs were steady: a
    lead-in and one Markdown list item per load."""
    st = steady.set_index(["policy", "load", "n_jobs"])
    t = table.set_index(["policy", "load", "n_jobs"])
    lengths = sorted(set(table["n_jobs"]))
    parts = []
    for load in sorted(set(table["load"])):
        said = []
        for n in dict.fromkeys((lengths[0], lengths[-1])):   # one length: said once
            fifo, fit = t.loc[("FIFO", load, n)], t.loc[(FITGPP, load, n)]
            ok = [f"{int(st.loc[(p, load, n), 'steady'])}/{int(st.loc[(p, load, n), 'seeds'])}"
                  for p in ("FIFO", FITGPP)]
            said.append(f"{n:,} jobs: FIFO TE p95 {fifo['te_p95']:.3g}, FitGpp BE median "
                        f"{fit['be_median']:.3g}, changes " + " / ".join(
                            Estimate.from_row(fit, f"change_{c.key}").text()
                            for c in PAPER_CLAIMS)
                        + f" (steady runs FIFO {ok[0]}, FitGpp {ok[1]})")
        parts.append(f"load {load:g}: " + "; ".join(said))
    return ("How the headline moves (TE p95 / BE median / BE p95 change of FitGpp s=4 against "
            "FIFO) from the shortest to the longest run:\n" + "\n".join(
                f"  - {p}." for p in parts))


def run_length_finding(table: pd.DataFrame, steady: pd.DataFrame) -> str:
    """The study's finding from its table and its steadiness table, as Markdown: a one-line
    headline (the usable capacity), then a list: what lies above it, where the paper's
    numbers hold together (each cell a sub-item when nowhere), how the headline moves (one
    sub-item per load)."""
    cap, cap_fifo = usable_capacity(steady), usable_capacity(steady, "FIFO")
    longest = int(table["n_jobs"].max())
    head = (f"**Usable capacity: load {cap:g}** (FitGpp s=4's runs of {longest:,} jobs stay "
            f"steady up to load {cap:g}" if not math.isnan(cap) else
            f"**Usable capacity: none on this grid** (FitGpp s=4's runs of {longest:,} jobs are "
            f"not steady even at load {min(table['load']):g}")
    head += (f"; FIFO's up to {cap_fifo:g})." if not math.isnan(cap_fifo) else
             "; FIFO's at no load of the grid).")
    above = ("Above the usable capacity the queue grows for the whole run, and every change "
             "against FIFO depends on the run length.")
    cells = paper_cells(table)
    held = cells[cells["holds"]]
    counted = count_sentence(cells["category"], "cells of the grid", "the paper's three numbers")
    where = ("The paper's three numbers hold together (each matches the paper's by "
             "fitgpp.analysis.verdicts) at " + ", ".join(
                 f"load {r['load']:g} with {int(r['n_jobs']):,} jobs" for _, r in held.iterrows())
             + "." if len(held) else
             ("The paper's three numbers hold together nowhere on this grid" if cells["off"].all()
              else "The paper's three numbers hold together at no cell of this grid where it can "
              "be told" if cells["off"].any() else "Whether the paper's three numbers hold "
              "together cannot be told at any cell of this grid") + " (TE p95 / BE median / "
             "BE p95 against the paper's):\n" + "\n".join(
                 f"  - load {r['load']:g}, {int(r['n_jobs']):,} jobs: {r['verdicts']}."
                 for _, r in cells.iterrows()))
    where = f"{counted[0].upper()}{counted[1:]}. {where}"
    return f"{head}\n\n- {above}\n- {where}\n- {movement(table, steady)}"


def _runlen(o: Outcome) -> RQResult:
    st = o.study
    table = o.table()
    steady = steadiness(o)
    fit = table[table["policy"] == FITGPP].assign(load=lambda d: d["load"].map("{:g}".format))
    charts = {f"{st.key}_change_vs_jobs": plots.metric_lines(
        _long(fit, changes(o), ["n_jobs", "load"]), x="n_jobs", series="load",
        x_title="jobs per run", series_title="offered load", percent=True)}
    r = RQResult(st.key, st.title, st.question, table, charts, {},
                 run_length_finding(table, steady),
                 _config(o, n_jobs=list(st.knobs["n_jobs"]), load=list(st.knobs["load"])))
    r.datasets = {"paper_cells": paper_cells(table)}
    r.report_columns = (["load", "n_jobs", "policy"],
                        ["te_p95", "be_median", "be_p95", "change_te_p95", "change_be_median",
                         "change_be_p95"], ())
    return r


RUNLEN = Study(
    key="runlen", title="Run length: is the headline a steady-state figure?",
    question="How do the headline numbers (FitGpp s=4 against FIFO) move with the number of "
             "jobs per run and the offered load; up to which load do the runs reach a steady "
             "state (the usable capacity); where do the paper's three numbers hold together?",
    policies={"fifo": {}, "fitgpp": {"s": [4.0]}},
    knobs={"load": lambda size: size.run_loads, "n_jobs": lambda size: size.run_lengths},
    captions={"change_vs_jobs": "Change of FitGpp s=4 against FIFO as the number of jobs per "
                                "run grows, one line per offered load."},
    analyze=_runlen)

STUDIES = (RUNLEN,)
