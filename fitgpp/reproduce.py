"""The research questions, each declared once as an experiment, and ``fitgpp reproduce``.

A research question is a :class:`Study`: the workload (a model, model variants
along a dimension of their own, or a real trace), the sweep's policy grid, the
swept workload knobs, and the function that turns its results into a table,
figures and a finding. :meth:`Study.run` runs its cells through
:func:`fitgpp.sweep.run_sweep` (cached cell by cell, on Dask when asked) and
returns an :class:`Outcome`: the sweep Dataset plus every cell's per-job
results, from which every number and figure is drawn, without simulating
again. :meth:`Study.dimensions` lists what can be varied, with its values. The
notebooks call the same studies, so notebook and command cannot disagree.

Numbers across seeds: each seed draws a fresh workload from the model (the
policy never changes the workload). Statistics and intervals come from
:mod:`fitgpp.metrics`: a mean's 95 % interval is Student-t, and only from 3 or
more seeds; a change against FIFO is a fraction, paired per seed (same
workload), then averaged the same way.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from . import plots
from ._version import __version__
from .cluster import DEFAULT_CLUSTER, Cluster
from .errors import FitgppError
from .metrics import (CI_NOTE, METRICS, Metric, brief, change, paired_change, percent,
                      t_interval)
from .workload.model import models_dir

#: The paper's headline (synthetic workload, FitGpp s=4 against FIFO), as fractions.
PAPER = {"te_p95": -0.966, "be_median": 0.180, "be_p95": 0.239}
#: RQ5's input, shipped with fitgpp (traces/alibaba-gpu-v2023/, see its SOURCE.md)
ALIBABA = models_dir() / "alibaba-gpu-v2023" / "openb_pod_list_default.csv.gz"
NAMES = plots.FAMILIES


class ReproduceError(FitgppError):
    """A research question cannot run as asked (e.g. its input trace is missing)."""


@dataclass(frozen=True)
class Size:
    """How big the runs are. ``QUICK`` is for tests and a first look, ``FULL`` for the paper.

    ``workers``: 0 runs the cells in this process; None on a Dask LocalCluster with one
    worker per CPU (started only if some cell is not cached; ``$FITGPP_SCHEDULER`` names
    an existing cluster instead); N on N workers. ``timeline_jobs``: the node timeline
    shows the run until the N-th arrival.
    """

    n_jobs: int
    seeds: tuple[int, ...]
    timeline_jobs: int = 300
    real_jobs: int | None = None    # RQ5: first N GPU jobs of the real trace (None = all)
    model: str = "paper-default"
    load: float = 0.9
    cluster: Cluster = DEFAULT_CLUSTER
    workers: int | None = 0


QUICK = Size(n_jobs=600, seeds=(0, 1), timeline_jobs=150, real_jobs=1000)
FULL = Size(n_jobs=10000, seeds=(0, 1, 2, 3, 4), timeline_jobs=400, real_jobs=None, workers=None)


@dataclass
class RQResult:
    key: str
    title: str
    question: str
    table: pd.DataFrame
    charts: dict
    datasets: dict = field(default_factory=dict)
    finding: str = ""
    config: dict = field(default_factory=dict)
    grid: xr.Dataset | None = None     # the sweep Dataset every number comes from
    stats: dict = field(default_factory=dict)   # cells, cached, computed
    details: str = ""    # Markdown shown in its section of results.md, after the question
    columns: tuple[str, ...] = ()    # the study's own metrics, besides the brief ones
    baseline: str = "FIFO"           # the label of what its changes are against


# ---------------------------------------------------------------- the declaration
@dataclass(frozen=True)
class Study:
    """One research question, declared once.

    ``policies``: the sweep's policy table (``{name: {param: value or list}}``, see
    :class:`fitgpp.sweep.Experiment`). ``knobs``: swept workload knobs (``{"grace_scale":
    (1.0, 4.0)}``); ``n_jobs`` and ``load`` come from the :class:`~fitgpp.reproduce.Size`. ``model``: a
    workload model (None: the size's). ``variants``: ``{label: model -> model}``, each a
    variant of the model along the dimension ``variant_dim``. ``trace``: ``size -> Trace``
    for a real trace instead of a model. ``one_seed``: run the first seed only.
    ``analyze``: ``Outcome -> RQResult``. ``baseline``: what every change is against, a
    policy name or ``{"policy": name, field: value, ...}`` (a configuration). ``columns``:
    metrics (names in :data:`fitgpp.metrics.METRICS`) its tables show besides the brief
    ones. Adding a research question or a knob is one
    declaration; :func:`dataclasses.replace` (or :meth:`replace`) varies one.
    """

    key: str
    title: str
    question: str
    policies: Mapping[str, Mapping]
    analyze: Callable[[Outcome], RQResult]
    knobs: Mapping[str, tuple] = field(default_factory=dict)
    model: str | None = None
    variants: Mapping[str, Callable] = field(default_factory=dict)
    variant_dim: str = "variant"
    trace: Callable[[Size], object] | None = None
    one_seed: bool = False
    baseline: str | Mapping = "fifo"
    columns: tuple[str, ...] = ()

    def replace(self, **changes) -> Study:
        return dataclasses.replace(self, **changes)

    def seeds(self, size: Size) -> tuple[int, ...]:
        return tuple(size.seeds[:1]) if self.one_seed else tuple(size.seeds)

    def grid(self):
        """The sweep's policy grid (an :class:`~fitgpp.sweep.Experiment` on a stand-in
        workload): what the policies' fields make of the declared ``policies``."""
        from .sweep import Experiment
        return Experiment(workload={"model": "paper-default"}, policies=self.policies)

    def params(self) -> tuple[str, ...]:
        """The policy fields that are dimensions of the results: every field (but ``seed``)
        of every policy, a researcher's own as much as ``s`` or ``max_preemptions``."""
        exp = self.grid()
        return tuple(k for k in exp.grid_params if exp.grid_values(k))

    def dimensions(self, size: Size = QUICK) -> dict[str, tuple]:
        """Every dimension of this question's results and its values at ``size``: the
        policies, their fields (every one the sweep makes a dimension of), the workload
        (model or trace, its variants, the knobs) and the seeds; what a control panel
        offers."""
        exp = self.grid()
        dims: dict[str, tuple] = {"policy": exp.policy_names}
        dims.update({k: exp.grid_values(k) for k in self.params()})
        if self.trace is not None:
            dims["trace"] = ("alibaba-v2023",)
        else:
            dims["model"] = (self.model or size.model,)
            if self.variants:
                dims[self.variant_dim] = tuple(self.variants)
            dims["n_jobs"], dims["load"] = (size.n_jobs,), (size.load,)
            dims.update({k: tuple(v) for k, v in self.knobs.items()})
        dims["seed"] = self.seeds(size)
        return dims

    def experiments(self, size: Size = QUICK) -> dict:
        """The sweep experiments: ``{variant label: Experiment}`` (``{None: ...}`` without
        variants)."""
        from .sweep import Experiment, Workload
        common = dict(policies=self.policies, seeds=self.seeds(size), cluster=size.cluster,
                      name=self.key, description=self.title)
        if self.trace is not None:
            return {None: Experiment(workload=Workload(trace=self.trace(size)), **common)}
        model = self.model or size.model
        knobs = {"n_jobs": size.n_jobs, "load": size.load,
                 **{k: tuple(v) for k, v in self.knobs.items()}}
        if not self.variants:
            return {None: Experiment(workload=Workload(model=model, **knobs), **common)}
        from .workload import load_model
        base = load_model(model)
        return {label: Experiment(workload=Workload(model=make(base), **knobs), **common)
                for label, make in self.variants.items()}

    def run(self, size: Size = QUICK, *, cache=None, scheduler=None, progress=False) -> Outcome:
        """Run (or read from the cache) every cell; ``cache``: a directory, None for the
        default, False for none; ``scheduler``: a Dask address, or a callable returning
        one when a cell must be computed. None: as ``size.workers`` says (0: in this
        process; else ``$FITGPP_SCHEDULER``, or one LocalCluster for all the variants,
        started only if some cell is not cached)."""
        from .sweep import run_sweep
        exps = self.experiments(size)
        grids, runs = {}, {}
        stats = dict.fromkeys(("cells", "unique", "cached", "computed"), 0)
        own = None
        if scheduler is None and size.workers != 0:  # one cluster for all variants, if needed
            scheduler = os.environ.get("FITGPP_SCHEDULER") or _LazyCluster(size.workers)
            own = scheduler if isinstance(scheduler, _LazyCluster) else None
        how = {"scheduler": scheduler} if scheduler is not None else {"serial": True}
        try:
            for label, exp in exps.items():
                got, st = {}, {}
                grids[label] = run_sweep(exp, cache=cache, progress=progress, runs=got, stats=st,
                                         **how)
                runs.update({(label, c): r for c, r in got.items()})
                for k in stats:
                    stats[k] += st[k]
        finally:
            if own is not None:
                own.close()
        if None in grids:
            grid = grids[None]
        else:
            grid = xr.concat(list(grids.values()), dim=pd.Index(list(grids), name=self.variant_dim),
                             combine_attrs="drop_conflicts")
        from .sweep import cache_dir_for
        return Outcome(self, size, grid, runs, stats, exps, cache_dir_for(cache))

    def result(self, size: Size = QUICK, **kw) -> RQResult:
        """Run the study (see :meth:`run`) and analyze it."""
        o = self.run(size, **kw)
        r = self.analyze(o)
        r.grid, r.stats = o.grid, o.stats
        r.columns, r.baseline = self.columns, o.baseline_label()
        return r


@dataclass
class Outcome:
    """A study's results: the sweep Dataset (``grid``) and each cell's per-job results."""

    study: Study
    size: Size
    grid: xr.Dataset
    runs: dict       # {(variant label or None, Cell): cell result}
    stats: dict
    experiments: dict
    cache_dir: Path | None = None   # the sweep cache's root (derived numbers are kept there)
    memo: dict = field(default_factory=dict, repr=False)   # per-run metric values

    def params(self) -> tuple[str, ...]:
        """The policy fields that are dimensions of :attr:`grid` (see :meth:`Study.params`)."""
        exp = next(iter(self.experiments.values()))
        return tuple(d for d in exp.grid_params if d in self.grid.dims)

    def configurations(self) -> list[dict]:
        """Every configuration of the grid (without seeds): ``label``, ``name`` (policy),
        ``params``, ``knobs``, ``variant``; in declaration order."""
        import itertools
        exp = next(iter(self.experiments.values()))
        knob_sets = [dict(zip(self.study.knobs, v))
                     for v in itertools.product(*self.study.knobs.values())]
        out = []
        for variant in self.experiments:
            for grid in exp.policies:
                for params in grid.combos():
                    for knobs in knob_sets:
                        out.append({"label": label_of(grid.name, params, exp),
                                    "name": grid.name, "params": params, "knobs": knobs,
                                    "variant": variant})
        return out

    def at(self, conf: dict) -> xr.Dataset:
        """The sweep Dataset at configuration ``conf`` (dimensions left: seed, cls)."""
        sel = {"policy": conf["name"], **conf["knobs"]}
        for d in self.params():
            # a policy without the field was run once and repeated along its dimension
            sel[d] = conf["params"].get(d, self.grid[d].values[0])
        if conf["variant"] is not None:
            sel[self.study.variant_dim] = conf["variant"]
        return self.grid.sel(sel)

    def values(self, conf: dict, var: str, cls: str | None, at: xr.Dataset | None = None):
        """Per-seed values of ``var`` (for class ``cls``) at configuration ``conf``."""
        da = (self.at(conf) if at is None else at)[var]
        return (da.sel(cls=cls) if cls else da).to_numpy()

    def run(self, policy: str, *, seed: int | None = None, variant=None, **where) -> xr.Dataset:
        """One cell's simulation Dataset (from the sweep's results, no simulation):
        ``policy`` (a name) with parameters and knobs ``where`` on seed ``seed`` (default:
        the first); a parameter the policy does not take is ignored."""
        from .sweep import run_dataset
        fields = self.params()
        seed = self.study.seeds(self.size)[0] if seed is None else seed
        hits = []
        for (v, c), res in self.runs.items():
            if c.policy != policy or c.seed != seed or v != variant:
                continue
            params, knobs = dict(c.params), dict(c.knobs)
            if all(params[k] == x if k in params else knobs[k] == x if k in knobs
                   else k in fields for k, x in where.items()):
                hits.append((c, res))
        if len(hits) != 1:
            raise ReproduceError(f"{self.study.key}: {len(hits)} cells match policy={policy!r}, "
                                 f"seed={seed}, variant={variant!r}, {where}; give the "
                                 f"parameters and knobs that tell them apart")
        return run_dataset(hits[0][1])

    def metric_values(self, conf: dict, metric: Metric, at: xr.Dataset | None = None):
        """Per-seed values of ``metric`` at ``conf``: read from the sweep Dataset when it
        holds the metric's variable, else computed from each cell's per-job results."""
        if metric.var is not None and metric.var in self.grid:
            return self.values(conf, metric.var, metric.cls, at)
        key = (metric.name, conf["name"], json.dumps([conf["params"], conf["knobs"],
                                                      conf["variant"]], default=str))
        if key not in self.memo:
            self.memo[key] = np.array([metric.of_run(self.run(
                conf["name"], seed=s, variant=conf["variant"], **conf["params"], **conf["knobs"]))
                for s in self.study.seeds(self.size)])
        return self.memo[key]

    def baseline(self, conf: dict) -> dict | None:
        """The configuration ``conf`` is compared with: the study's baseline at the same
        knobs and variant (None when the study does not run it)."""
        b = self.study.baseline
        name, want = (b, {}) if isinstance(b, str) else \
            (b["policy"], {k: v for k, v in b.items() if k != "policy"})
        for c in self.configurations():
            if c["name"] == name and c["knobs"] == conf["knobs"] and \
                    c["variant"] == conf["variant"] and \
                    all(c["params"].get(k) == v for k, v in want.items()):
                return c
        return None

    def baseline_label(self) -> str:
        conf = self.configurations()[0]
        base = self.baseline(conf)
        return base["label"] if base is not None else str(self.study.baseline)

    def change(self, conf: dict, metric: Metric) -> np.ndarray:
        """Per-seed change of ``metric`` at ``conf`` against the study's baseline, paired
        per seed (:func:`fitgpp.metrics.paired_change`); NaN where it means nothing."""
        base = self.baseline(conf)
        x = self.metric_values(conf, metric)
        if base is None or not metric.vs_baseline:
            return np.full(len(x), np.nan)
        return paired_change(x, self.metric_values(base, metric))

    def table(self, extra: Mapping[str, Callable] | None = None) -> pd.DataFrame:
        """One row per configuration: its ids (``policy`` label, ``name``, ``s``, ``P``,
        every other swept field, knobs, variant), ``seeds``, and for each metric of
        :data:`fitgpp.metrics.METRICS` the sweep Dataset holds, each brief one, each the
        study lists in ``columns`` (and each ``extra`` ``column: Dataset -> float``) the
        mean over seeds with ``_lo``/``_hi`` bounds (NaN below 3 seeds), and its change
        against the baseline (``change_<name>``)."""
        rows = []
        seeds, fields = self.study.seeds(self.size), self.params()
        shown = {m.name: m for m in METRICS.values()
                 if m.var in self.grid or m in brief(self.study.columns)}
        shown.update({c: Metric(c, c, per_run=fn, vs_baseline=False)
                      for c, fn in (extra or {}).items()})
        for conf in self.configurations():
            row = {"policy": conf["label"], "family": plots.family(conf["name"]),
                   "name": conf["name"], "s": conf["params"].get("s", np.nan),
                   "P": conf["params"].get("max_preemptions", np.nan)}
            row.update({k: conf["params"].get(k, np.nan) for k in fields
                        if k not in ("s", "max_preemptions")})
            row.update(conf["knobs"])
            if conf["variant"] is not None:
                row[self.study.variant_dim] = conf["variant"]
            row["seeds"] = len(seeds)
            at = self.at(conf)
            cols = {}
            for name, m in shown.items():
                cols[name] = self.metric_values(conf, m, at)
                if m.vs_baseline:
                    cols[f"change_{name}"] = self.change(conf, m)
            for c, x in cols.items():
                row[c], row[f"{c}_lo"], row[f"{c}_hi"] = t_interval(x)
            rows.append(row)
        return pd.DataFrame(rows)

    def kept(self, **where) -> dict[str, xr.Dataset]:
        """``{label: Dataset}`` of the first seed, one per policy configuration (knobs and
        variant fixed by ``where``: ``variant=...`` and knob values)."""
        variant = where.pop("variant", None)
        out = {}
        for conf in self.configurations():
            if conf["variant"] != variant or any(conf["knobs"].get(k) != v for k, v in where.items()):
                continue
            out[conf["label"]] = self.run(conf["name"], variant=variant, **conf["params"],
                                          **conf["knobs"])
        return out


def label_of(name: str, params: dict, exp) -> str:
    """The label of configuration ``name`` with ``params`` in the grid of ``exp`` (see
    :func:`fitgpp.plots.config_label`): a field is named when that policy's grid sweeps it."""
    grid = next(g for g in exp.policies if g.name == name)
    return plots.config_label(name, params, [k for k, v in grid.values if len(v) > 1])


# ---------------------------------------------------------------- helpers for the analyses
def _long(table: pd.DataFrame, metrics: dict, id_vars: list[str]) -> pd.DataFrame:
    parts = []
    for c, name in metrics.items():
        parts.append(table[id_vars].assign(metric=name, value=table[c], lo=table[f"{c}_lo"],
                                           hi=table[f"{c}_hi"]))
    return pd.concat(parts, ignore_index=True)


def _changes(o: Outcome) -> dict[str, str]:
    """Figure series of the headline metrics' changes against the study's baseline."""
    return {f"change_{k}": f"{METRICS[k].title} vs {o.baseline_label()}" for k in PAPER}


def _bars(table: pd.DataFrame) -> pd.DataFrame:
    """Stats table for :func:`fitgpp.plots.slowdown_bars` from an across-seeds table
    (no whisker where there is no interval)."""
    rows = []
    for _, r in table.iterrows():
        for cls in ("te", "be"):
            for stat in ("median", "p95"):
                k = f"{cls}_{stat}"
                lo, hi = r[f"{k}_lo"], r[f"{k}_hi"]
                rows.append({"policy": r["policy"], "class": cls.upper(), "stat": stat,
                             "value": r[k], "lo": r[k] if np.isnan(lo) else lo,
                             "hi": r[k] if np.isnan(hi) else hi})
    return pd.DataFrame(rows)


def _fmt(m, lo, hi, is_change: bool = False) -> str:
    """A mean with its interval; a change (a fraction) in percent."""
    f = percent if is_change else (lambda x: f"{x:.3g}")
    return f(m) if np.isnan(lo) else f"{f(m)} [{f(lo)}, {f(hi)}]"


def _config(o: Outcome, **extra) -> dict:
    st = o.study
    return {"model": "(real trace)" if st.trace else (st.model or o.size.model),
            "n_jobs": o.size.n_jobs, "seeds": list(st.seeds(o.size)), "load": o.size.load,
            "cluster": o.size.cluster.describe(), "tick_s": 60, "max_preemptions": 3,
            "policies": {k: dict(v) for k, v in st.policies.items()},
            "knobs": {k: list(v) for k, v in st.knobs.items()},
            **({st.variant_dim: list(st.variants)} if st.variants else {}),
            "fitgpp_version": __version__, **extra}


def _timeline(ds: xr.Dataset, n: int, title: str):
    """Node timeline of a run until its ``n``-th arrival."""
    seg = plots.segments_of(ds)
    t_end = float(np.sort(ds["submit"].to_numpy())[min(n, ds.sizes["job"]) - 1]) + 1.0
    seg = seg[seg["start"] < t_end].assign(end=lambda d: np.minimum(d["end"], t_end))
    return plots.node_timeline(seg, title=title)


# ---------------------------------------------------------------- RQ1
def _rq1(o: Outcome) -> RQResult:
    st, size = o.study, o.size
    table = o.table()
    t = table.set_index("policy")
    fit = t.loc["FitGpp s=4"]
    ok = {k: (fit[f"change_{k}"] <= PAPER[k]) for k in PAPER}
    finding = ("FitGpp s=4 against FIFO: TE p95 {}, BE median {}, BE p95 {} "
               "(paper: -96.6 %, +18.0 %, +23.9 %). ".format(
                   *(_fmt(fit[f"change_{k}"], fit[f"change_{k}_lo"], fit[f"change_{k}_hi"], True)
                     for k in PAPER)))
    finding += (f"FitGpp's TE p95 slowdown is {fit['te_p95']:.3g} (1 is the floor: no TE job waits), "
                f"FIFO's {t.loc['FIFO', 'te_p95']:.3g}. ")
    finding += ("Agrees: it matches or beats the headline on all three." if all(ok.values()) else
                "Partly: " + ", ".join(f"{METRICS[k].title} {'meets' if v else 'misses'} the paper"
                                       for k, v in ok.items()) + ".")
    kept = o.kept()
    charts = {
        "rq1_slowdown_cdf": plots.slowdown_cdf(kept),
        "rq1_slowdown_bars": plots.slowdown_bars(_bars(table)),
        "rq1_utilization_fitgpp": plots.utilization(kept["FitGpp s=4"]),
        "rq1_utilization_fifo": plots.utilization(kept["FIFO"]),
        "rq1_node_timeline": _timeline(
            kept["FitGpp s=4"], size.timeline_jobs,
            f"FitGpp s=4, seed {st.seeds(size)[0]}, until arrival {size.timeline_jobs}, nodes 0-7"),
    }
    return RQResult(st.key, st.title, st.question, table, charts, kept, finding,
                    _config(o, policies=list(kept)))


RQ1 = Study(
    key="rq1", title="RQ1: TE latency",
    question="Can preemption cut TE latency without hurting BE much? FitGpp (s=4) against "
             "FIFO, PRIO, LRTP and RAND on the default workload.",
    policies={"fifo": {}, "prio": {}, "fitgpp": {"s": [4.0]}, "lrtp": {}, "rand": {}},
    analyze=_rq1)


# ---------------------------------------------------------------- RQ2
S_VALUES = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
P_VALUES = (1, 3, 10)


def _rq2(o: Outcome) -> RQResult:
    st = o.study
    key = st.key
    table = o.table()
    p_values = sorted({int(p) for p in table["P"].dropna()})
    charts = {}
    for p in p_values:
        sub = table[(table["family"] != "FitGpp") | (table["P"] == p)].copy()
        sub["policy"] = [lb.replace(f" P={p}", "") for lb in sub["policy"]]
        charts[f"{key}_s_tradeoff_P{p}"] = plots.s_tradeoff(sub)
    fit = table[table["family"] == "FitGpp"]
    meets = fit[(fit["change_te_p95"] <= PAPER["te_p95"]) & (fit["change_be_median"] <= PAPER["be_median"])
                & (fit["change_be_p95"] <= PAPER["be_p95"])]
    lines = fit.assign(P=fit["P"].astype(int).astype(str))
    charts[f"{key}_change_vs_s"] = plots.metric_lines(_long(lines, _changes(o), ["s", "P"]), x="s",
                                                      series="P", x_title="threshold s",
                                                      percent=True)
    # the trade-off is judged on the slowdowns themselves (mean over P), not on their change
    # against FIFO, whose large TE p95 would shrink any difference between settings of s
    te_trend = fit.groupby("s")["te_p95"].mean()
    be_trend = fit.groupby("s")["be_p95"].mean()
    r_te = change(te_trend.iloc[-1], te_trend.iloc[0])
    r_be = change(be_trend.iloc[-1], be_trend.iloc[0])
    trend = (f"from s={te_trend.index[0]:g} to s={te_trend.index[-1]:g} (mean over P) TE p95 "
             f"slowdown moves {te_trend.iloc[0]:.2f} -> {te_trend.iloc[-1]:.2f} and BE p95 "
             f"{be_trend.iloc[0]:.2f} -> {be_trend.iloc[-1]:.2f}. ")
    flat = 0.05  # a TE p95 that moves less than 5 % across the whole s range is called flat
    if r_te < -flat and r_be >= 0:
        verdict = "Agrees with the paper: larger s buys TE latency with BE slowdown."
    elif abs(r_te) <= flat:
        verdict = (f"Cannot confirm the paper's trade-off: TE p95 is flat in s here (BE p95 moves "
                   f"{percent(r_be)}), so this workload leaves s little to trade.")
    else:
        verdict = "Does not match the paper's trade-off direction; see the figure."
    finding = (f"{len(meets)} of {len(fit)} FitGpp (s, P) settings meet all three headline numbers"
               + (f" ({', '.join(meets['policy'])})" if len(meets) else "") + "; " + trend + verdict)
    return RQResult(key, st.title, st.question, table, charts, {"sweep": o.grid}, finding,
                    _config(o, model=st.model or o.size.model))


RQ2 = Study(
    key="rq2", title="RQ2: the threshold s",
    question="How does the threshold s (and the preemption limit P) trade TE responsiveness "
             "against BE? FitGpp over s x P, with FIFO, LRTP and RAND as fixed points.",
    policies={"fifo": {}, "lrtp": {"max_preemptions": [3]}, "rand": {"max_preemptions": [3]},
              "fitgpp": {"s": list(S_VALUES), "max_preemptions": list(P_VALUES)}},
    analyze=_rq2)
RQ2W = RQ2.replace(
    key="rq2w", title="RQ2 on paper-wide-te: the threshold s", model="paper-wide-te",
    question="RQ2 on paper-wide-te (TE jobs of 4 or 8 GPUs), where TE jobs must preempt.")


# ---------------------------------------------------------------- RQ3
GRACE_SCALES = (1.0, 4.0, 16.0)


def _rq3(o: Outcome) -> RQResult:
    st = o.study
    table = o.table()
    fit = table[table["name"] != "fifo"]
    long = _long(fit, _changes(o), ["grace_scale", "policy"])
    lb = _long(fit, {"be_long_p95": METRICS["be_long_p95"].title},
               ["grace_scale", "policy"])
    charts = {f"{st.key}_change_vs_grace": plots.metric_lines(
                  long, x="grace_scale", x_title="grace-period scale", percent=True),
              f"{st.key}_long_be_jobs": plots.metric_lines(
                  lb, x="grace_scale", x_title="grace-period scale", y_title="slowdown")}
    g_max = max(fit["grace_scale"])
    at = fit[fit["grace_scale"] == g_max].set_index("policy")
    s4, s8 = at.loc["FitGpp s=4"], at.loc["FitGpp s=8"]
    d_te = s8["change_te_p95"] - s4["change_te_p95"]
    d_be = s8["change_be_p95"] - s4["change_be_p95"]
    pts = lambda x: f"{100 * x:+.1f}"  # noqa: E731 - a difference of two fractions, in points
    if abs(d_te) < 0.005 and abs(d_be) < 0.005:
        verdict = "cannot confirm: s=4 and s=8 give the same result here."
    elif d_te < 0.005 and d_be < 0.005:
        verdict = (f"agrees: s=8 is the better setting there (TE p95 {pts(d_te)}, BE p95 {pts(d_be)} "
                   "points against s=4).")
    else:
        verdict = (f"does not agree here: against s=4, s=8 moves TE p95 {pts(d_te)} and BE p95 "
                   f"{pts(d_be)} points.")
    finding = (f"At grace scale x{g_max:g}, TE p95 change vs FIFO: s=4 {percent(s4['change_te_p95'])}, "
               f"s=8 {percent(s8['change_te_p95'])}; BE p95: s=4 {percent(s4['change_be_p95'])}, "
               f"s=8 {percent(s8['change_be_p95'])}. Paper: s=8 helps when grace periods are "
               "long — " + verdict)
    return RQResult(st.key, st.title, st.question, table, charts, {}, finding, _config(o))


RQ3 = Study(
    key="rq3", title="RQ3: long jobs and grace periods",
    question="Long BE jobs and long grace periods: s=4 against s=8 as grace periods grow.",
    policies={"fifo": {}, "fitgpp": {"s": [4.0, 8.0]}},
    knobs={"grace_scale": GRACE_SCALES}, columns=("be_long_p95",), analyze=_rq3)


# ---------------------------------------------------------------- RQ4
TE_FRACTIONS = (0.2, 0.5, 0.8)
GRACE_SHAPES = {"narrow (lognormal sigma 0.25)": 0.25, "default (lognormal sigma 1)": 1.0,
                "heavy-tailed (lognormal sigma 2)": 2.0}


def grace_variant(model, sigma: float):
    """``model`` with its BE grace period replaced by a lognormal of median 60 s and ``sigma``
    (truncated at 1 h), everything else unchanged."""
    from .workload.dists import Dist
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
    long = _long(fit, _changes(o), ["grace", "te_fraction"])
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
    variant_dim="grace", analyze=_rq4)


# ---------------------------------------------------------------- RQ5
def alibaba_trace(path=ALIBABA, *, n_jobs: int | None = None, load: float | None = 0.9,
                  cluster: Cluster = DEFAULT_CLUSTER, seed: int = 0):
    """The Alibaba openb (2023) pod list through :func:`fitgpp.workload.from_alibaba_v2023`:
    qos LS -> TE, BE -> BE, GPU pods, real arrival times and demands; run times re-drawn
    from the real Philly run times (short ones for TE, long for BE: the Alibaba LS pods are
    long-running services, unlike the paper's TE jobs); BE grace periods from the default
    grace distribution. ``n_jobs``: keep the first N by submit time. ``load``: compress
    (or stretch) the arrival times so the offered GPU load on ``cluster`` is ``load``
    (the trace's 149 days on 6212 GPUs would leave a 128-GPU cluster nearly idle or
    swamped); None keeps the real times."""
    from .trace import read_trace
    from .workload import from_alibaba_v2023, offered_load
    path = Path(path)
    if not path.is_file():
        raise ReproduceError(f"real trace {path} not found: RQ5 needs the Alibaba GPU v2023 "
                             "pod list (shipped as fitgpp.reproduce.ALIBABA)")
    tr, report = from_alibaba_v2023(path, runtimes="philly", seed=seed)
    jobs = tr.jobs.sort_values(["submit_time", "job_id"], kind="stable")
    if n_jobs is not None:
        jobs = jobs.iloc[:n_jobs]
    jobs = jobs.assign(submit_time=jobs["submit_time"] - jobs["submit_time"].min())
    factor = 1.0
    if load is not None:
        factor = offered_load(jobs, cluster) / load
        jobs = jobs.assign(submit_time=jobs["submit_time"] * factor)
    source = {**tr.source, "adapter": report.to_dict(), "first_n_jobs": n_jobs,
              "time_factor": factor, "target_load": load}
    tr = read_trace(jobs.reset_index(drop=True), cluster=cluster, source=source, drop_invalid=True)
    if tr.dropped is not None and len(tr.dropped):
        tr.source["dropped_fit_no_node"] = int(len(tr.dropped))
    return tr


def _rq5(o: Outcome) -> RQResult:
    st = o.study
    tr = o.experiments[None].workload.trace
    table = o.table()
    t = table.set_index("policy")
    fit = t.loc["FitGpp s=4"]
    kept = o.kept()
    charts = {f"{st.key}_slowdown_cdf": plots.slowdown_cdf(kept),
              f"{st.key}_slowdown_bars": plots.slowdown_bars(
                  plots.stats_table(kept, cache=o.cache_dir and o.cache_dir / "intervals"))}
    dropped = tr.source.get("dropped_fit_no_node", 0)
    finding = (f"On {len(tr.jobs)} real jobs ({dropped} dropped: they fit no node), FitGpp s=4 vs "
               f"FIFO: TE p95 {percent(fit['change_te_p95'])}, BE median "
               f"{percent(fit['change_be_median'])}, BE p95 {percent(fit['change_be_p95'])}. "
               + ("Agrees with the paper's direction against FIFO (large TE gain, small BE cost)"
                  if fit["change_te_p95"] < -0.5 and fit["change_be_p95"] < 0.5 else
                  "Differs from the paper's synthetic result against FIFO")
               + "; TE p95 slowdown: " + ", ".join(
                   f"{p} {t.loc[p, 'te_p95']:.3g}" for p in t.index if p != "FIFO") + ".")
    return RQResult(st.key, st.title, st.question, table, charts, kept, finding,
                    _config(o, trace={k: v for k, v in tr.source.items() if k != "adapter"},
                            n_jobs=len(tr.jobs)))


def _real_trace(size: Size):
    return alibaba_trace(ALIBABA, n_jobs=size.real_jobs, load=size.load, cluster=size.cluster)


RQ5 = Study(
    key="rq5", title="RQ5: a real trace",
    question="A real trace (Alibaba openb 2023): FitGpp s=4 against FIFO, PRIO, LRTP and RAND.",
    policies={"fifo": {}, "prio": {}, "fitgpp": {"s": [4.0]}, "lrtp": {}, "rand": {}},
    trace=_real_trace, one_seed=True, analyze=_rq5)

#: Every research question, in the order of the report.
STUDIES = {s.key: s for s in (RQ1, RQ2, RQ2W, RQ3, RQ4, RQ5)}


def _study_fn(study: Study):
    def run(size: Size = QUICK, **kw) -> RQResult:
        return study.result(size, **kw)
    run.__name__ = study.key
    run.__doc__ = f"{study.title}. {study.question} (``STUDIES[{study.key!r}].result``)"
    return run


rq1, rq2w, rq3, rq4, rq5 = (_study_fn(STUDIES[k]) for k in ("rq1", "rq2w", "rq3", "rq4", "rq5"))


def rq2(size: Size = QUICK, s_values=S_VALUES, p_values=P_VALUES, *, model: str | None = None,
        **kw) -> RQResult:
    """RQ2 over ``s_values`` x ``p_values``; ``model="paper-wide-te"`` is RQ2w."""
    study = STUDIES["rq2w"] if model == "paper-wide-te" else STUDIES["rq2"]
    if model is not None and model != (study.model or size.model):
        study = study.replace(model=model, key="rq2w", title=f"RQ2 on {model}: the threshold s")
    pols = {**study.policies, "fitgpp": {"s": [float(s) for s in s_values],
                                         "max_preemptions": [int(p) for p in p_values]}}
    return study.replace(policies=pols).result(size, **kw)


#: ``{key: function(size)}``, the research questions as the notebooks call them.
RQS = {"rq1": rq1, "rq2": rq2, "rq2w": rq2w, "rq3": rq3, "rq4": rq4, "rq5": rq5}


# ---------------------------------------------------------------- the report
def headline_table(r1: RQResult) -> str:
    t = r1.table.set_index("policy")
    lines = ["| metric (change vs FIFO) | paper | ours: FitGpp s=4, mean [95 % CI] | verdict |",
             "|---|---|---|---|"]
    for k in PAPER:
        name, row = METRICS[k].title, t.loc["FitGpp s=4"]
        ok = row[f"change_{k}"] <= PAPER[k]
        lines.append(f"| {name} | {percent(PAPER[k])} | "
                     f"{_fmt(row[f'change_{k}'], row[f'change_{k}_lo'], row[f'change_{k}_hi'], True)} | "
                     f"{'matches or beats' if ok else 'misses'} |")
    return "\n".join(lines)


def tradeoff_note(r1: RQResult, r2: RQResult) -> list[str]:
    """Where the paper's headline sits on our s/P trade-off (RQ2's FitGpp settings)."""
    t1 = r1.table.set_index("policy")
    te_fifo, te_fit = t1.loc["FIFO", "te_p95"], t1.loc["FitGpp s=4", "te_p95"]
    fit = r2.table[r2.table["family"] == "FitGpp"].copy()
    # shortfall: how many points the worst of the three misses the paper by (<= 0: meets)
    fit["shortfall"] = np.max([fit[f"change_{k}"] - PAPER[k] for k in PAPER], axis=0)
    fit = fit.sort_values("shortfall")
    lines = ["## Where the headline sits on the s/P trade-off", "",
             f"A TE p95 slowdown cannot fall below 1, so the largest possible TE p95 cut against "
             f"FIFO is 1 - 1/{te_fifo:.3g} = {percent(-change(1.0, te_fifo), sign=False)} on this "
             f"workload (FitGpp s=4 reaches a TE p95 of {te_fit:.3g}); the paper's -96.6 % needs "
             f"FIFO's TE p95 to be at least {1 / (1 - 0.966):.1f}. FitGpp settings from RQ2, "
             "closest to the headline first (shortfall = percentage points by which the worst of "
             "the three misses; <= 0 meets all three):", "",
             "| setting | TE p95 vs FIFO | BE median vs FIFO | BE p95 vs FIFO | shortfall |",
             "|---|---|---|---|---|"]
    for _, r in fit.head(6).iterrows():
        lines.append(f"| {r['policy']} | {percent(r['change_te_p95'])} | "
                     f"{percent(r['change_be_median'])} | {percent(r['change_be_p95'])} | "
                     f"{100 * r['shortfall']:+.1f} |")
    lines += ["", "Figures: `rq2_s_tradeoff_P3.png`, `rq2_change_vs_s.png`."]
    return lines


def _md_table(table: pd.DataFrame, id_cols: list[str], cols: list[str] | None = None,
              fractions=(), *, extra=(), baseline: str = "FIFO") -> str:
    """``cols`` (default: the brief metrics of :data:`fitgpp.metrics.METRICS` and those in
    ``extra``, then their changes against the baseline) with intervals, headed by the
    metrics' titles; ``change_*`` columns and ``fractions`` in percent."""
    if cols is None:
        shown = [m for m in brief(extra) if m.name in table.columns]
        cols = [m.name for m in shown] + [f"change_{m.name}" for m in shown
                                          if f"change_{m.name}" in table.columns]
    heads = {m.name: m.title for m in METRICS.values()}
    heads.update({f"change_{m.name}": f"{m.label} vs {baseline}" for m in METRICS.values()})
    head = id_cols + [heads.get(c, c) for c in cols]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in table.iterrows():
        cells = [f"{r[c]:g}" if isinstance(r[c], float) else str(r[c]) for c in id_cols]
        cells += [_fmt(r[c], r[f"{c}_lo"], r[f"{c}_hi"], c.startswith("change_") or c in fractions)
                  for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_results(results: dict, out: Path, size: Size, seconds: float, figures: list,
                  not_run: dict | None = None) -> Path:
    out = Path(out)
    md = [f"# fitgpp reproduce: results ({'quick' if size == QUICK else 'full'} size)", "",
          f"fitgpp {__version__}; {seconds:.0f} s; seeds {list(size.seeds)}; workload model "
          f"`{size.model}`, {size.n_jobs} jobs per seed, offered load {size.load:g}, "
          f"cluster {size.cluster.describe()}, tick 60 s, P = 3 unless stated.",
          f"Means over seeds; {CI_NOTE}. Changes against FIFO are paired per seed and shown in "
          "percent.", ""]
    if "rq1" in results:
        md += ["## Headline: FitGpp (s = 4) against FIFO", "", headline_table(results["rq1"]), ""]
    if "rq1" in results and "rq2" in results:
        md += tradeoff_note(results["rq1"], results["rq2"]) + [""]
    md += ["## One line per research question", ""]
    for r in results.values():
        md.append(f"- **{r.title}** — {r.finding}")
    for key, why in (not_run or {}).items():
        md.append(f"- **{key.upper()}** — NOT RUN: {why}")
    md.append("")
    ids = {"rq3": ["grace_scale", "policy"], "rq4": ["grace", "te_fraction", "policy"]}
    # figures embedded by paths relative to results.md, so the report moves as one directory
    import os
    rel = {Path(p).stem: Path(os.path.relpath(p, out)).as_posix() for p in figures
           if Path(p).suffix == ".png"}
    for key, r in results.items():
        table = (_md_table(r.table, ids.get(key, ["policy"]), extra=r.columns,
                           baseline=r.baseline) if key not in REPORT_COLUMNS else
                 _md_table(r.table, *REPORT_COLUMNS[key]))
        md += [f"## {r.title}", "", r.question, "", *([r.details, ""] if r.details else []),
               "Configuration: `" + json.dumps(r.config, default=str) + "`", "", table, ""]
        for n, chart in r.charts.items():
            if n in rel:
                title = chart.to_dict().get("title", n)
                title = title.get("text", n) if isinstance(title, dict) else title
                md += [f"![{' '.join(title) if isinstance(title, list) else title}]({rel[n]})", ""]
            else:
                md += [f"Figure `{n}` (no PNG exported)", ""]
    md += ["## Files", ""] + [f"- [{Path(p).name}]({Path(os.path.relpath(p, out)).as_posix()})"
                              for p in figures]
    text = "\n".join(md) + "\n"
    for prefix in {str(out.resolve()), str(out)}:   # no machine-specific paths in the report
        text = text.replace(prefix + os.sep, "").replace(prefix, ".")
    path = out / "results.md"
    path.write_text(text)
    return path


class _LazyCluster:
    """A Dask LocalCluster started the first time a cell must be computed (never on a
    warm cache); callable: returns the scheduler address."""

    def __init__(self, workers: int | None):
        self.workers, self.cluster = workers, None

    def __call__(self) -> str:
        if self.cluster is None:
            from .sweep import machine_workers
            from .sweep.runner import local_cluster
            self.cluster = local_cluster(self.workers or machine_workers())
        return self.cluster.scheduler_address

    def close(self):
        if self.cluster is not None:
            from .sweep.runner import close_cluster
            close_cluster(self.cluster)
            self.cluster = None


def run_all(out, *, size: Size = QUICK, which=None, formats=plots.FORMATS, log=print,
            cache=None, progress=False) -> dict:
    """Run the research questions ``which`` (default all) through the sweep and its cache
    (``cache``: a directory, None for the default, False for none), save every chart in
    every format under ``out`` (rendered files are cached too, beside the cells), write
    ``out/results.md``; return ``{key: RQResult}`` (each with ``stats``: cells, cached,
    computed)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    results, figures, not_run = {}, [], {}
    from .sweep import cache_dir_for
    root = cache_dir_for(cache)
    figure_cache = None if root is None else root / "figures"
    scheduler = None
    if size.workers != 0:
        scheduler = os.environ.get("FITGPP_SCHEDULER") or _LazyCluster(size.workers)
    try:
        for key in which or STUDIES:
            t = time.perf_counter()
            if key == "rq5" and which is None and not ALIBABA.is_file():
                # asked for everything, and RQ5's input is not on this machine: say so, go on
                not_run[key] = (f"its input {ALIBABA} is missing (the Alibaba GPU v2023 trace "
                                "shipped with fitgpp: reinstall it)")
                log(f"RQ5 not run: {not_run[key]}")
                continue
            r = STUDIES[key].result(size, cache=cache, scheduler=scheduler, progress=progress)
            results[key] = r
            figures += plots.save_all(r.charts, out, formats, cache=figure_cache)
            r.table.to_csv(out / f"{key}.csv", index=False)
            s = r.stats
            log(f"{r.title}: {time.perf_counter() - t:.1f} s, {s['unique']} cells "
                f"({s['computed']} simulated, {s['cached']} from the cache) — {r.finding}")
    finally:
        if isinstance(scheduler, _LazyCluster):
            scheduler.close()
    write_results(results, out, size, time.perf_counter() - t0, figures, not_run)
    return results


# ---------------------------------------------------------------- RQ6, beyond the paper
#: results.md columns of the studies whose table is not against FIFO: key -> (id columns,
#: columns, the columns that are fractions).
REPORT_COLUMNS: dict[str, tuple[list[str], list[str], tuple[str, ...]]] = {}


def _register_rq6() -> None:
    """RQ6 (restart cost) is declared in :mod:`fitgpp.restart_cost`, which needs
    :class:`Study` from this module: registered here, after everything it uses."""
    from . import restart_cost as rc
    STUDIES["rq6"] = rc.study()
    RQS["rq6"] = _study_fn(STUDIES["rq6"])
    REPORT_COLUMNS["rq6"] = (["workload", "overhead_min", "policy"],
                             ["te_p95", "be_median", "be_p95", "preemptions_per_be",
                              "reload_gpu_h", "te_gain", "be_p95_cost"], rc.FRACTIONS)


_register_rq6()
rq6 = RQS["rq6"]
