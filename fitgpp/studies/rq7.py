"""RQ7, beyond the paper: does knowing which jobs are TE buy anything over LAS?

LAS (Tiresias's discretized 2D-LAS, :mod:`fitgpp.sim.policies.las`) learns which jobs are short
from their attained service, without labels; FitGpp and PRIO are told which jobs are TE.
The declaration: FIFO, PRIO (the baseline), FitGpp at several ``s``, LAS at two threshold
settings, Tiresias's Gittins (told the job-size distribution, fitted from each run's trace) and
the SRTF oracle on three workload models (the variants, dimension ``workload``) with the BE
restart overhead a swept knob, and the same policies on the Alibaba trace (a study of its
own per overhead: a trace carries its overhead in a column, not as a knob). The findings
compare FitGpp with LAS, configuration by configuration, through :mod:`fitgpp.analysis.verdicts`.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fitgpp.figures import names
from fitgpp.analysis import verdicts
from fitgpp.analysis.metrics import METRICS
from fitgpp.sim.policies.las import Las
from fitgpp.studies.base import RQResult, Size, Study, _config
from fitgpp.studies.oracle import oracle_counts

#: Tiresias's ``dlas-gpu`` thresholds [GPU-s]: the second is this many times the first.
RATIO = 7200.0 / 3250.0
#: The two LAS settings (the first threshold, GPU-s). 3250: Tiresias's default, close to the
#: TE p95 service of ``paper-default`` (95 % of its TE jobs finish in queue 0). 14000: scaled
#: to ``paper-wide-te``'s TE p95 service (its TE jobs hold 4-8 GPUs, so with the default
#: about half of them are demoted before they finish); tests/studies/test_rq7.py checks both anchors.
THRESHOLDS = (3250.0, 14000.0)
FITGPP_S = (1.0, 4.0, 8.0)
WORKLOADS = ("paper-default", "paper-wide-te", "philly-chronus-mix1")
#: Restart overheads [s] of BE jobs: free restarts and 10 minutes.
OVERHEADS = (0.0, 600.0)
#: The metrics compared, all declared in :data:`fitgpp.analysis.metrics.METRICS`.
COMPARED = ("te_p95", "be_median", "be_p95", "preemptions_per_be")
TITLE = "RQ7: FitGpp against LAS"
QUESTION = ("Does knowing which jobs are TE buy anything over LAS? LAS (Tiresias's "
            "discretized 2D-LAS) learns \"short\" from attained service without labels; "
            "FitGpp and PRIO are told which jobs are TE.")


@dataclass(frozen=True)
class LasThreshold:
    """LAS with three queues whose thresholds are ``(threshold, threshold x RATIO)`` GPU-s:
    exactly :class:`fitgpp.sim.policies.Las` with those thresholds, with one plain number as its
    field so a sweep can vary it (a sweep records plain values, not tuples)."""

    threshold: float = field(default=THRESHOLDS[0], metadata={
        "label": "LAS threshold", "units": "GPU-s",
        "description": "first LAS threshold of attained service; the "
        "second is 7200/3250 times it (Tiresias's ratio)"})
    name = "LAS"
    max_preemptions = None

    def __post_init__(self):
        Las(thresholds=self.thresholds)   # validates them

    @property
    def thresholds(self) -> tuple[float, float]:
        return (float(self.threshold), float(self.threshold) * RATIO)

    @functools.cached_property
    def _las(self) -> Las:
        """The :class:`~fitgpp.sim.policies.Las` this stands for (its per-run state lives in the
        engine's scratch, so one object serves every run)."""
        return Las(thresholds=self.thresholds)

    def bind(self, eng) -> None:
        self._las.bind(eng)

    def schedule(self, eng, t: int) -> None:
        self._las.schedule(eng, t)


POLICIES = {"fifo": {}, "prio": {}, "fitgpp": {"s": list(FITGPP_S)},
            "LAS": {"policy": LasThreshold, "threshold": list(THRESHOLDS)},
            "gittins": {},    # Tiresias's Gittins: told the size distribution (fitted), not sizes
            "shortest": {}}   # the SRTF oracle: the bound (fitgpp.studies.oracle)


# ---------------------------------------------------------------- the declarations
def _model(name):
    def make(_base):
        from fitgpp.workload import load_model
        return load_model(name)
    make.workload = name
    return make


def _alibaba(overhead: float):
    """``size -> Trace``: RQ5's Alibaba trace (:func:`fitgpp.studies.rq5.alibaba_trace`) with
    every BE job's restart overhead set to ``overhead`` seconds."""
    def trace(size: Size):
        from fitgpp.sim.trace import read_trace
        from fitgpp.studies.rq5 import ALIBABA, alibaba_trace
        tr = alibaba_trace(ALIBABA, n_jobs=size.real_jobs, load=size.load, cluster=size.cluster)
        jobs = tr.jobs.assign(restart_overhead=np.where(tr.jobs["cls"] == "BE", overhead, 0.0))
        return read_trace(jobs, cluster=size.cluster,
                          source={**tr.source, "restart_overhead": overhead})
    return trace


def study(workloads=WORKLOADS, overheads=OVERHEADS) -> Study:
    """RQ7 on workload models: the models are its variants (dimension ``workload``), the BE
    restart overhead its swept knob. PRIO is the baseline: like FitGpp it is told which jobs
    are TE, but it never preempts, so a change against it is what preempting buys (FIFO's
    numbers grow with the run length at load 0.9, so changes against it would too)."""
    minutes = ", ".join(f"{x / 60:g}" for x in overheads)
    return Study(key="rq7", title=TITLE, question=(
        f"{QUESTION} FIFO, PRIO (the baseline), FitGpp (s = "
        f"{', '.join(f'{x:g}' for x in FITGPP_S)}) and LAS (first threshold "
        f"{' or '.join(f'{x:g}' for x in THRESHOLDS)} GPU-s), Gittins (Tiresias's, told the "
        f"distribution of job sizes fitted from each run's trace, not each job's size), with "
        f"the SRTF oracle as the bound, on "
        f"{', '.join(f'`{w}`' for w in workloads)}, BE restart overhead {minutes} min."),
        policies=POLICIES, knobs={"restart_overhead": tuple(float(x) for x in overheads)},
        variants={w: _model(w) for w in workloads}, variant_dim="workload", baseline="prio",
        columns=("preemptions_per_be",), analyze=analyze)


def alibaba_study(overhead: float) -> Study:
    """RQ7 on the Alibaba trace at one BE restart overhead (a trace is one workload: its
    seeds would all run the same jobs, so it runs one seed, as RQ5 does)."""
    key = "rq7a" if overhead == 0 else f"rq7a{overhead / 60:g}"
    return Study(key=key, title=f"{TITLE} on the Alibaba trace ({overhead / 60:g} min restarts)",
                 question=f"{QUESTION} The Alibaba openb 2023 trace (RQ5's), BE restart "
                          f"overhead {overhead / 60:g} min.",
                 policies=POLICIES, trace=_alibaba(float(overhead)), one_seed=True,
                 baseline="prio", columns=("preemptions_per_be",), analyze=analyze)


# ---------------------------------------------------------------- the analysis
def per_seed(o) -> pd.DataFrame:
    """One row per configuration and seed: ``workload``, ``overhead_min``, ``policy`` (its
    label), ``family``, ``seed`` and every metric of :data:`COMPARED`."""
    seeds = o.study.seeds(o.size)
    trace_overhead = None
    if o.study.trace is not None:
        tr = o.experiments[None].workload.trace
        trace_overhead = float(tr.source.get("restart_overhead", 0.0))
    rows = []
    for conf in o.configurations():
        vals = {m: o.metric_values(conf, METRICS[m]) for m in COMPARED}
        ro = conf["knobs"].get("restart_overhead", trace_overhead)
        ran = o.seeds_of(conf)   # seeds added in rounds go to some configurations only
        for k, seed in enumerate(seeds):
            if seed not in ran:
                continue
            rows.append({"workload": conf["variant"] or "alibaba-v2023",
                         "overhead_min": float(ro) / 60.0, "policy": conf["label"],
                         "family": conf["name"], "seed": seed,
                         **{m: float(vals[m][k]) for m in COMPARED}})
    return pd.DataFrame(rows)


def comparisons(runs: pd.DataFrame) -> pd.DataFrame:
    """Every FitGpp setting against every LAS setting on each workload and overhead, for each
    metric of :data:`COMPARED`: :func:`fitgpp.analysis.verdicts.compare` over the seeds both
    ran (``runs`` as :func:`per_seed` gives it; ``family`` tells FitGpp from LAS; ``category``:
    the verdict on "FitGpp is better than LAS")."""
    rows = []
    for (w, ro), g in runs.groupby(["workload", "overhead_min"], sort=False):
        by = {p: d.sort_values("seed") for p, d in g.groupby("policy", sort=False)}
        fits = [p for p, d in by.items() if d["family"].iloc[0] == "fitgpp"]
        lases = [p for p, d in by.items() if d["family"].iloc[0] == "LAS"]
        for a in fits:
            for b in lases:
                # paired on the seeds both ran (a seed added in a round to one of them only
                # pairs with nothing)
                both = sorted(set(by[a]["seed"]) & set(by[b]["seed"]))
                x, y = (by[p].set_index("seed").loc[both] for p in (a, b))
                for m in COMPARED:
                    met = METRICS[m]
                    c = verdicts.compare(x[m], y[m], a=a, b=b, better=met.better,
                                         title=f"{w}, {ro:g} min restarts, {met.title}")
                    rows.append({"workload": w, "overhead_min": ro, "fitgpp": a, "las": b,
                                 "metric": m, "verdict": c.verdict, "category": c.category,
                                 "seeds": c.seeds,
                                 "diff": c.diff, "diff_lo": c.diff_low, "diff_hi": c.diff_high,
                                 "pvalue": c.pvalue, "sentence": c.sentence})
    return pd.DataFrame(rows)


def summary(comp: pd.DataFrame) -> str:
    """The finding: for each metric, the FitGpp-LAS pairings counted against "FitGpp is
    better than LAS" (:func:`fitgpp.analysis.verdicts.count_sentence`: confirmed, contradicted,
    undecided), and in how many FitGpp is better, LAS is better, no difference is detectable,
    or too few seeds cannot tell."""
    if comp.empty:
        return "No FitGpp and LAS configurations to compare."
    n_pairs = comp.groupby(["workload", "overhead_min", "fitgpp", "las"]).ngroups
    parts = []
    for m, g in comp.groupby("metric", sort=False):
        count = g["verdict"].value_counts()
        said = [f"FitGpp better in {count.get('better', 0)}",
                f"LAS better in {count.get('worse', 0)}",
                f"no detectable difference in {count.get('no detectable difference', 0)}"]
        if count.get("cannot tell", 0):
            said.append(f"too few seeds to tell in {count['cannot tell']}")
        counted = verdicts.count_sentence(g["category"], "pairings",
                                          "\"FitGpp is better than LAS\"")
        parts.append(f"{METRICS[m].title}: {counted} (" + ", ".join(said) + ")")
    return (f"FitGpp (told which jobs are TE) against LAS (not told), {n_pairs} pairings of a "
            f"FitGpp and a LAS setting on the same workload, restart overhead and seeds, "
            f"paired t-test at level {verdicts.ALPHA:g}. " + "; ".join(parts) + ".")


def vs_baseline(table: pd.DataFrame, baseline: str, changes=None) -> str:
    """Each workload and overhead: the TE p95 change of every FitGpp and LAS setting
    against the baseline in the words its interval earns (:func:`fitgpp.analysis.verdicts.change_text`:
    "improves"/"worsens" only when the interval excludes 0; with fewer than 3 seeds the mean,
    the seeds' range and "cannot tell"). ``changes``: the per-seed changes of each row, by the
    table's index (without them a row's interval and seeds are used)."""
    out = []
    keys = [k for k in ("workload", "restart_overhead") if k in table]
    for key, g in (table.groupby(keys, sort=False) if keys else [((), table)]):
        sel = g[g["name"].isin(["fitgpp", "LAS"])]
        said = "; ".join(verdicts.change_text(_estimate(r, changes), f"{r['policy']}: TE p95")
                         for _, r in sel.iterrows())
        where = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        head = [str(where["workload"])] if "workload" in where else []
        if "restart_overhead" in where:
            head.append(f"{where['restart_overhead'] / 60:g} min restarts")
        head = ", ".join(head)
        out.append(f"- {head or 'the trace'}, against {baseline}: {said}.")
    return "\n".join(out)


def _estimate(row, changes=None) -> verdicts.Estimate:
    """The TE p95 change of ``row``: from its per-seed values ``changes[row.name]`` when
    given, else its interval and seeds."""
    if changes is not None:
        return verdicts.Estimate.of(changes[row.name])
    return verdicts.Estimate.from_row(row, "change_te_p95")


def _interval(row, col: str, value_range) -> verdicts.Interval:
    """``row[col]`` with its bounds cut at ``value_range`` (:func:`fitgpp.analysis.metrics.cut_interval`;
    none below 3 seeds)."""
    return verdicts.cut_interval(row[col], row[f"{col}_lo"], row[f"{col}_hi"], value_range)


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """The study's table for reading: one row per configuration, each metric of
    :data:`COMPARED` as its mean over seeds with its 95 % interval clipped to the metric's
    range (marked ``*``, :data:`fitgpp.analysis.verdicts.CLIP_NOTE`; none from fewer than 3 seeds),
    and each change against the baseline in percent."""
    ids = [c for c in ("workload", "restart_overhead", "policy", "seeds") if c in table]
    out = table[ids].copy()
    if "restart_overhead" in out:
        out["restart_overhead"] = out["restart_overhead"] / 60.0
        out = out.rename(columns={"restart_overhead": names.title("restart_overhead")})
    for m in COMPARED:
        met = METRICS[m]
        rng = verdicts.value_range(m)   # the declared floor
        out[met.label] = [_interval(r, m, rng).text() for _, r in table.iterrows()]
        if met.vs_baseline and f"change_{m}" in table:
            out[f"{met.label} vs baseline"] = [
                _interval(r, f"change_{m}", verdicts.CHANGE_RANGE).text(as_percent=True)
                for _, r in table.iterrows()]
    return out


def analyze(o) -> RQResult:
    """A :class:`fitgpp.studies.Outcome` of :func:`study` or :func:`alibaba_study` -> its
    ``RQResult``: the study's table, the comparisons (``datasets["comparisons"]``), the
    finding (:func:`summary`) and, as ``details``, every comparison sentence."""
    st = o.study
    table = o.table()
    runs = per_seed(o)
    comp = comparisons(runs)
    changes = dict(zip(table.index, (o.change(c, METRICS["te_p95"])
                                     for c in o.configurations())))
    bound, lines = oracle_counts(runs, "FitGpp s=4")
    finding = summary(comp) + (f" {bound}" if bound else "")
    r = RQResult(st.key, st.title, st.question, table, {}, {}, finding, _config(o))
    r.details = (vs_baseline(table, o.baseline_label(), changes) + "\n\n"
                 + "\n".join(f"- {s}" for s in comp["sentence"])
                 + "".join(f"\n- {s}" for s in lines))
    r.datasets = {"comparisons": comp, "runs": runs}
    return r


RQ7 = study()
STUDIES = (RQ7, alibaba_study(0.0), alibaba_study(600.0))
