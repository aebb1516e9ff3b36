"""Did each configuration of a study reach a steady state? :func:`fitgpp.analysis.stability.stability`
on every cell (every seed) of an :class:`~fitgpp.studies.Outcome`, summed per configuration.

A sweep cell keeps the time series of waiting TE and BE jobs (``waiting_te``,
``waiting_be``: :data:`fitgpp.sweep.runs.TIME_VARS`), so each cell is judged from its own
results, with no second simulation.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from fitgpp.analysis.escape import md_text
from fitgpp.figures import names
from fitgpp.analysis.stability import RULE, Stability, of_queue
from fitgpp.sweep.derived import derived


def _judged(o, conf, seed):
    """The number of jobs of the run of ``conf`` on ``seed`` and its
    :class:`~fitgpp.analysis.stability.Stability` (kept in the Outcome, and beside the cached
    cell: :func:`fitgpp.sweep.derived.derived`)."""
    key = ("stability", conf["label"], str(conf["knobs"]), str(conf["variant"]), seed)
    if key not in o.memo:
        _, res = o.cell(conf["name"], seed=seed, variant=conf["variant"], **conf["params"],
                        **conf["knobs"])
        o.memo[key] = cell_stability(res)
    return o.memo[key]


def cell_stability(res) -> tuple[int, Stability]:
    """The number of jobs of the sweep cell result ``res`` and its
    :class:`~fitgpp.analysis.stability.Stability`, kept beside the cached cell."""
    return derived(res, "stability", _stability,
                   pack=lambda v: (v[0], dataclasses.astuple(v[1])),
                   unpack=lambda v: (v[0], Stability(*v[1])))


def _stability(res) -> tuple:
    """``(jobs, Stability)`` of the cell result ``res``, from its arrays alone."""
    t, q, submit = _queue_of(res)
    return len(submit), of_queue(t, q, float(submit.max()))


def _queue_of(res) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`~fitgpp.analysis.stability.stability` reads of the cell result ``res``:
    the sample times and waiting jobs (:func:`~fitgpp.analysis.stability.queued`)
    and the submit times, in the dtypes :func:`fitgpp.sweep.runs.queue_dataset` gives them,
    without building the rest of the run (every per-job column and interval: 10 of the 50
    CPU-s of a warm run-length panel) nor a Dataset of these (1.2 of a warm RQ8 panel's 15
    profiled s, issue 26)."""
    from fitgpp.sweep.runs import _decoded
    r = _decoded(res, ("series_waiting_te", "series_waiting_be", "submit", "time"))
    t = r["time"].astype(float)
    return t, r["series_waiting_te"].astype(float) + r["series_waiting_be"].astype(float), \
        r["submit"]


def window_values(o, conf, metric) -> np.ndarray:
    """Per-seed values of ``metric`` at ``conf`` over the steady window only: the jobs
    submitted from the later of the run's warm-up end and its baseline's (same seed, same
    workload, so the two are measured on the same jobs and their change stays paired) until
    the last arrival. The rule of each bound is :mod:`fitgpp.analysis.stability`'s. A run that is not
    steady stays not steady in any window (its ``steadiness`` says so)."""
    base = o.baseline(conf)
    out, ran = [], o.seeds_of(conf)
    for seed in o.study.seeds(o.size):
        if seed not in ran:   # a seed this configuration did not run (adaptive rounds)
            out.append(float("nan"))
            continue
        st = _judged(o, conf, seed)[1]
        ds = o.run(conf["name"], seed=seed, variant=conf["variant"], **conf["params"],
                   **conf["knobs"])
        start = st.warmup_end
        if base is not None:
            start = max(start, _judged(o, base, seed)[1].warmup_end)
        submit = ds["submit"].to_numpy().astype(float)
        out.append(metric.of_run(ds.isel(job=(submit >= start) & (submit < st.drain_start))))
    return np.array(out, dtype=float)


def steadiness(o) -> pd.DataFrame:
    """One row per configuration of ``o``: ``policy`` (its label), its knobs and variant,
    ``jobs`` (per run, counted), ``seeds``, ``steady`` (runs judged steady), ``slope`` (median
    over seeds, waiting jobs per hour), ``warmup_h`` and ``drain_h`` (medians, hours) and
    ``text`` (the first seed's sentence)."""
    if "steadiness" in o.memo:
        return o.memo["steadiness"]
    rows = []
    for conf in o.configurations():
        seeds = o.seeds_of(conf)
        runs, judged = zip(*(_judged(o, conf, s) for s in seeds))
        row = {"policy": conf["label"], **conf["knobs"]}
        if conf["variant"] is not None:
            row[o.study.variant_dim] = conf["variant"]
        row.update(jobs=runs[0], seeds=len(seeds),
                   steady=sum(j.steady for j in judged),
                   slope=float(np.nanmedian([j.slope for j in judged]))
                   if not all(np.isnan(j.slope) for j in judged) else np.nan,
                   warmup_h=float(np.median([j.warmup_end for j in judged])) / 3600,
                   drain_h=float(np.median([j.drain_start for j in judged])) / 3600,
                   text=judged[0].text())
        rows.append(row)
    o.memo["steadiness"] = pd.DataFrame(rows)
    return o.memo["steadiness"]


def _where(row, ids) -> str:
    extra = ", ".join(names.phrase(k, row[k]) for k in ids)
    return row["policy"] + (f" ({extra})" if extra else "")


def steady_sentence(table: pd.DataFrame) -> str:
    """One sentence: how many configurations were steady in every seed, and which were not
    (with how many of their seeds were)."""
    ids = [c for c in table.columns if c not in
           ("policy", "jobs", "seeds", "steady", "slope", "warmup_h", "drain_h", "text")]
    full = table["steady"] == table["seeds"]
    jobs = ", ".join(f"{j:,}" for j in sorted(set(table["jobs"].astype(int))))
    if full.all():
        return (f"Steady state: every configuration reached one in every seed "
                f"({jobs} jobs per run).")
    bad = table[~full]
    listed = "; ".join(f"{_where(r, ids)} {int(r['steady'])}/{int(r['seeds'])}"
                       for _, r in bad.head(8).iterrows())
    more = f"; and {len(bad) - 8} more" if len(bad) > 8 else ""
    return (f"Steady state: {int(full.sum())} of {len(table)} configurations reached one in "
            f"every seed at {jobs} jobs per run; not steady in every "
            f"seed (steady runs / seeds): {listed}{more}. Their numbers, and every change "
            "against them, depend on how many jobs were simulated.")


def steady_markdown(table: pd.DataFrame) -> str:
    """The per-configuration table for ``results.md``."""
    ids = [c for c in table.columns if c not in
           ("policy", "jobs", "seeds", "steady", "slope", "warmup_h", "drain_h", "text")]
    head = ["configuration", "jobs per run", "steady runs", "queue slope (jobs/h, median)",
            "warm-up ends (h)", "drain starts (h)"]
    lines = [f"Steady state per configuration (rule: {RULE}).", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in table.iterrows():
        lines.append(f"| {md_text(_where(r, ids))} | {int(r['jobs']):,} | {int(r['steady'])}/{int(r['seeds'])} "
                     f"| {r['slope']:+.3g} | {r['warmup_h']:.3g} | {r['drain_h']:.3g} |")
    return "\n".join(lines)


def growth_counts(o, conf) -> dict[str, int]:
    """How the runs of ``conf`` (over the seeds it ran) grow, by
    :attr:`fitgpp.analysis.stability.Stability.growth`: ``{"none": n, "borderline": n,
    "clear": n, "cannot tell": n}``."""
    out = dict.fromkeys(("none", "borderline", "clear", "cannot tell"), 0)
    for seed in o.seeds_of(conf):
        out[_judged(o, conf, seed)[1].growth] += 1
    return out
