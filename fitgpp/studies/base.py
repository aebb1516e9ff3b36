"""The study layer: a research question declared once (:class:`Study`), what running it
gives (:class:`Outcome`: the sweep Dataset plus every cell's per-job results), and the
helpers every analysis shares.

A :class:`Study` holds the workload (a model, model variants along a dimension of their
own, or a real trace), the sweep's policy grid, the swept workload knobs, the baseline
every change is against, and the function that turns its results into a table, figures
and a finding. Its configurations are every dimension of its grid except seed and class:
every swept field of every policy (a researcher's own as much as FitGpp's ``s``), every
knob, the variant. :meth:`Study.run` runs the cells through
:func:`fitgpp.sweep.run_sweep` (cached cell by cell, on Dask when asked); the numbers are
the metrics declared in :mod:`fitgpp.analysis.metrics`, with Student-t intervals over seeds and
changes paired per seed against the baseline.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from fitgpp.figures import plots
from fitgpp.analysis.metrics import (METRICS, Metric, at_level, brief, paired_change,
                                     t_interval, value_range)
from fitgpp.analysis.escape import md_inert
from fitgpp.studies._lazy import shared
from fitgpp.studies.figure_data import _long, changes  # noqa: F401  (their old home)
from fitgpp.studies.generic import generic
from fitgpp.studies.checks import check_study, check_variant_dim, policy_grid
from fitgpp.studies.size import FULL, QUICK, ReproduceError, RQResult, Size  # noqa: F401  (their old home)

NAMES = plots.FAMILIES


# ---------------------------------------------------------------- the declaration
@dataclass(frozen=True)
class Study:
    """One research question, declared once.

    ``policies``: the sweep's policy table (``{name: {param: value or list}}``, see
    :class:`fitgpp.sweep.Experiment`). ``knobs``: swept workload knobs (``{"grace_scale":
    (1.0, 4.0)}``); ``n_jobs`` and ``load`` come from the :class:`~fitgpp.studies.reproduce.Size`. ``model``: a
    workload model (None: the size's). ``variants``: ``{label: model -> model}``, each a
    variant of the model along the dimension ``variant_dim``. ``trace``: ``size -> Trace``
    for a real trace instead of a model. ``one_seed``: run the first seed only.
    ``analyze``: ``Outcome -> RQResult``. ``baseline``: what every change is against, a
    policy name or ``{"policy": name, field: value, ...}`` (a configuration). ``columns``:
    metrics (names in :data:`fitgpp.analysis.metrics.METRICS`) its tables show besides the brief
    ones. ``captions``: ``{figure name without the key: caption}`` of its own figures.
    ``undecided``: ``Outcome -> configurations`` whose verdicts more seeds could still decide
    (with the partners each is compared with), for a size with a seed budget
    (:mod:`fitgpp.studies.adaptive`; None: the sign of each headline change against the
    baseline, :func:`fitgpp.studies.adaptive.undecided_changes`).
    Adding a research question or a knob is one
    declaration; :func:`dataclasses.replace` (or :meth:`replace`) varies one.
    """

    key: str
    title: str
    question: str
    policies: Mapping[str, Mapping]
    analyze: Callable[[Outcome], RQResult] | None = None
    knobs: Mapping[str, tuple] = field(default_factory=dict)
    model: str | None = None
    variants: Mapping[str, Callable] = field(default_factory=dict)
    variant_dim: str = "variant"
    trace: Callable[[Size], object] | None = None
    one_seed: bool = False
    baseline: str | Mapping = "fifo"
    columns: tuple[str, ...] = ()
    captions: Mapping[str, str] = field(default_factory=dict)
    undecided: Callable[[Outcome], list] | None = None

    def __post_init__(self):
        check_study(self)

    def analysis(self, o: Outcome) -> RQResult:
        """Its declared ``analyze`` of ``o``, else :func:`generic` (any study a researcher
        declares ad hoc gets a table and a finding), its finding followed by whether each
        configuration reached a steady state (:mod:`fitgpp.studies.steady`; the last item
        of a finding written as a Markdown list)."""
        from fitgpp.studies.steady import steadiness, steady_sentence
        with at_level(o.level):   # the level its stopping rule spends per look, if any
            r = (self.analyze or generic)(o)
        r.config = r.config or _config(o)
        r.steadiness = steadiness(o)
        sep = "\n- " if "\n- " in r.finding else " "   # a list: one more item
        r.finding = md_inert(f"{r.finding}{sep}{steady_sentence(r.steadiness)}")
        r.details = md_inert(r.details)
        return r

    def replace(self, **changes) -> Study:
        return dataclasses.replace(self, **changes)

    def at_size(self, size: Size) -> Study:
        """This study with its knob values fixed for ``size``: a knob may be declared as a
        function ``size -> values`` (the run-length study's grid is small at the quick size
        and reaches 100,000 jobs at the full size); the others are kept."""
        if not any(callable(v) for v in self.knobs.values()):
            return self
        return self.replace(knobs={k: tuple(v(size)) if callable(v) else v
                                   for k, v in self.knobs.items()})

    def seeds(self, size: Size) -> tuple[int, ...]:
        return tuple(size.seeds[:1]) if self.one_seed else tuple(size.seeds)

    def grid(self):
        """The sweep's policy grid (an :class:`~fitgpp.sweep.Experiment` on a stand-in
        workload): what the policies' fields make of the declared ``policies``."""
        return policy_grid(self)

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
        if self.at_size(size) is not self:
            return self.at_size(size).dimensions(size)
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
        from fitgpp.sweep import Experiment, Workload
        common = dict(policies=self.policies, seeds=self.seeds(size), cluster=size.cluster,
                      name=self.key, description=self.title)
        if self.trace is not None:
            return {None: Experiment(workload=Workload(trace=self.trace(size)), **common)}
        model = self.model or size.model
        knobs = {"n_jobs": size.n_jobs, "load": size.load,
                 **{k: tuple(v) for k, v in self.knobs.items()}}
        if not self.variants:
            return {None: Experiment(workload=Workload(model=model, **knobs), **common)}
        from fitgpp.workload import load_model
        base = load_model(model)
        return {label: Experiment(workload=Workload(model=make(base), **knobs), **common)
                for label, make in self.variants.items()}

    def run(self, size: Size = QUICK, *, cache=None, scheduler=None, progress=False) -> Outcome:
        """Run (or read from the cache) every cell; ``cache``: a directory, None for the
        default, False for none; ``scheduler``: a Dask address, or a callable returning
        one when a cell must be computed. None: as ``size.workers`` says (0: in this
        process; else ``$FITGPP_SCHEDULER``, or one LocalCluster for all the variants,
        started only if some cell is not cached). With a seed budget
        (``size.max_seeds``), the configurations left undecided get more seeds in rounds
        (:func:`fitgpp.studies.adaptive.run`; the rounds in :attr:`Outcome.rounds`)."""
        if self.at_size(size) is not self:
            return self.at_size(size).run(size, cache=cache, scheduler=scheduler,
                                          progress=progress)
        from fitgpp.studies import adaptive
        if scheduler is None and size.workers != 0:  # one cluster per session, if needed
            scheduler = os.environ.get("FITGPP_SCHEDULER") or shared(size.workers)
        return adaptive.run(self, size, lambda at, plan, store: self._sweep(
            at, plan, cache=store, scheduler=scheduler, progress=progress), cache)

    def _sweep(self, size: Size, plan: dict | None, *, cache, scheduler, progress) -> Outcome:
        """Every cell at ``size`` (``plan``: only each configuration's first ``plan[key]``
        seeds, :func:`fitgpp.studies.adaptive.cell_filter`), through the sweep and its cache."""
        from fitgpp.studies.adaptive import cell_filter
        from fitgpp.sweep import run_sweep
        exps = check_variant_dim(self, self.experiments(size))
        grids, runs = {}, {}
        stats = dict.fromkeys(("cells", "unique", "cached", "computed"), 0)
        how = {"scheduler": scheduler} if scheduler is not None else {"serial": True}
        for label, exp in exps.items():
            got, st = {}, {}
            only = None if plan is None else cell_filter(self, size, plan, label)
            grids[label] = run_sweep(exp, cache=cache, progress=progress, runs=got, stats=st,
                                     only=only, **how)
            runs.update({(label, c): r for c, r in got.items()})
            for k in stats:
                stats[k] += st[k]
        if None in grids:
            grid = grids[None]
        else:
            grid = xr.concat(list(grids.values()), dim=pd.Index(list(grids), name=self.variant_dim),
                             combine_attrs="drop_conflicts")
        from fitgpp.sweep import cache_dir_for
        return Outcome(self, size, grid, runs, stats, exps, cache_dir_for(cache), plan=plan)

    def pending(self, size: Size = QUICK, *, cache=None) -> tuple[int, int]:
        """``(distinct cells, of which cached)`` of :meth:`run` at ``size``, nothing computed
        (:func:`fitgpp.sweep.runner.pending`)."""
        from fitgpp.sweep.runner import pending
        got = [pending(exp, cache) for exp in self.at_size(size).experiments(size).values()]
        return sum(n for n, _ in got), sum(c for _, c in got)

    def result(self, size: Size = QUICK, **kw) -> RQResult:
        """Run the study (see :meth:`run`) and analyze it."""
        o = self.run(size, **kw)
        r = self.analysis(o)
        r.grid, r.stats = o.grid, o.stats
        r.columns, r.baseline = self.columns, o.baseline_label()
        if o.rounds is not None:   # which configurations got how many seeds, in which round
            r.rounds, r.config["adaptive"] = o.rounds, o.rounds.to_dict()
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
    #: seeds per configuration (:func:`fitgpp.studies.adaptive.conf_key` -> the first n of
    #: the size's seeds) when seeds were added in rounds; None: every seed of the size
    plan: dict | None = None
    level: float = 0.95                # the level of its intervals and tests
    rounds: object = None              # :class:`fitgpp.studies.adaptive.Rounds`, or None

    def seeds_of(self, conf: dict) -> tuple[int, ...]:
        """The seeds configuration ``conf`` ran (all of the size's unless some were added in
        rounds: then the first ``plan[key]``; a seed not run is NaN in its arrays)."""
        seeds = self.study.seeds(self.size)
        if self.plan is None:
            return tuple(seeds)
        from fitgpp.studies.adaptive import conf_key
        return tuple(seeds[:self.plan[conf_key(conf)]])

    def seed_counts(self) -> list[int]:
        """How many seeds each configuration rests on, in :meth:`configurations` order."""
        return [len(self.seeds_of(c)) for c in self.configurations()]

    def jobs(self) -> int:
        """The number of jobs a cell of this outcome ran (of its first cell: every cell of a
        study runs the same number), counted in the results, not taken from the size asked."""
        return int(len(next(iter(self.runs.values()))["te"]))

    def params(self) -> tuple[str, ...]:
        """The policy fields that are dimensions of :attr:`grid` (see :meth:`Study.params`)."""
        exp = next(iter(self.experiments.values()))
        return tuple(d for d in exp.grid_params if d in self.grid.dims)

    def configurations(self) -> list[dict]:
        """Every configuration of the grid (without seeds): ``label``, ``name`` (policy),
        ``params``, ``knobs``, ``variant``; in declaration order. Listed once (each call a
        new list of the same dicts; each baseline asked listed them again, issue 26)."""
        if "configurations" not in self.memo:
            self.memo["configurations"] = self._configurations()
        return list(self.memo["configurations"])

    def _configurations(self) -> list[dict]:
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
        """The sweep Dataset at configuration ``conf`` (dimensions left: seed, cls), selected
        once per configuration (a table asks it of each metric: 10 of the 50 CPU-s of a warm
        run-length panel went to selecting the same configurations again, issue 26)."""
        key = ("at", json.dumps([conf["name"], conf["params"], conf["knobs"], conf["variant"]],
                                sort_keys=True, default=str))
        if key not in self.memo:
            self.memo[key] = self._select(conf)
        return self.memo[key]

    def _select(self, conf: dict) -> xr.Dataset:
        sel = {"policy": conf["name"], **conf["knobs"]}
        for d in self.params():
            # a policy without the field was run once and repeated along its dimension
            sel[d] = conf["params"].get(d, self.grid[d].values[0])
        if conf["variant"] is not None:
            sel[self.study.variant_dim] = conf["variant"]
        return self.grid.sel(sel)

    def values(self, conf: dict, var: str, cls: str | None, at: xr.Dataset | None = None):
        """Per-seed values of ``var`` (for class ``cls``) at configuration ``conf``."""
        at = self.at(conf) if at is None else at
        if not cls:
            return at[var].to_numpy()
        # numpy indexing (what .sel(cls=...).to_numpy() gives, a view; issue 26)
        kept = self.memo.setdefault("arrays", {})
        if id(at) not in kept or kept[id(at)][0] is not at:
            kept[id(at)] = (at, {c: i for i, c in enumerate(at["cls"].to_numpy().tolist())}, {})
        _, where, arrays = kept[id(at)]
        if var not in arrays:
            da = at[var]
            arrays[var] = (da.to_numpy(), da.dims.index("cls"))
        arr, axis = arrays[var]
        return arr[(slice(None),) * axis + (where[cls],)]

    def run(self, policy: str, *, seed: int | None = None, variant=None, **where) -> xr.Dataset:
        """One cell's simulation Dataset (from the sweep's results, no simulation):
        ``policy`` (a name) with parameters and knobs ``where`` on seed ``seed`` (default:
        the first); a parameter the policy does not take is ignored."""
        from fitgpp.sweep import run_dataset
        hit = self.cell(policy, seed=seed, variant=variant, **where)
        # the last few rebuilt runs are kept: a table asks each per-run metric of the same
        # runs in turn (the ledger's nine parts among them)
        lru = self.memo.setdefault("runs", {})
        key = id(hit[1])
        if key not in lru:
            if len(lru) >= 16:
                lru.pop(next(iter(lru)))
            lru[key] = run_dataset(hit[1])
        return lru[key]

    def cell(self, policy: str, *, seed: int | None = None, variant=None, **where) -> tuple:
        """``(Cell, its result)`` that :meth:`run` builds its Dataset from."""
        fields = self.params()
        seed = self.study.seeds(self.size)[0] if seed is None else seed
        # the runs by (policy, seed, variant), listed once (each ask went through all)
        if "cells" not in self.memo:
            by = self.memo["cells"] = {}
            for (v, c), res in self.runs.items():
                by.setdefault((c.policy, c.seed, v), []).append((c, res))
        hits = []
        for c, res in self.memo["cells"].get((policy, seed, variant), ()):
            params, knobs = dict(c.params), dict(c.knobs)
            if all(params[k] == x if k in params else knobs[k] == x if k in knobs
                   else k in fields for k, x in where.items()):
                hits.append((c, res))
        if len(hits) != 1:
            raise ReproduceError(f"{self.study.key}: {len(hits)} cells match policy={policy!r}, "
                                 f"seed={seed}, variant={variant!r}, {where}; give the "
                                 f"parameters and knobs that tell them apart")
        return hits[0]

    def metric_values(self, conf: dict, metric: Metric, at: xr.Dataset | None = None):
        """Per-seed values of ``metric`` at ``conf``: read from the sweep Dataset when it
        holds the metric's variable, else computed from each cell's per-job results (over
        the steady window only when the size asks for it)."""
        if self.size.steady_window and metric.cls is not None:
            from fitgpp.studies.steady import window_values
            return window_values(self, conf, metric)
        if metric.var is not None and metric.var in self.grid:
            return self.values(conf, metric.var, metric.cls, at)
        key = (metric.name, conf["name"], json.dumps([conf["params"], conf["knobs"],
                                                      conf["variant"]], default=str))
        if key not in self.memo:
            where = dict(variant=conf["variant"], **conf["params"], **conf["knobs"])
            ran = self.seeds_of(conf)
            self.memo[key] = np.array([self._of_run(metric, conf["name"], s, where)
                                       if s in ran else np.nan
                                       for s in self.study.seeds(self.size)])
        return self.memo[key]

    def _of_run(self, metric: Metric, policy: str, seed: int, where: dict) -> float:
        """``metric`` of one run, or of its columns alone (:mod:`fitgpp.studies.per_run`)."""
        from fitgpp.studies.per_run import metric_of
        return metric_of(self.cell(policy, seed=seed, **where)[1], metric) if metric.columns \
            else metric.of_run(self.run(policy, seed=seed, **where))

    def columns(self, policy: str, names, *, seed: int | None = None, variant=None,
                **where) -> xr.Dataset:
        """Per-job columns ``names`` of one cell's run, as :meth:`run` has them, alone: for
        a metric that reads no other (:attr:`fitgpp.analysis.metrics.Metric.columns`)."""
        from fitgpp.studies.per_run import columns
        return columns(self.cell(policy, seed=seed, variant=variant, **where)[1], names)

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
        per seed (:func:`fitgpp.analysis.metrics.paired_change`); NaN where it means nothing."""
        base = self.baseline(conf)
        x = self.metric_values(conf, metric)
        if base is None or not metric.vs_baseline:
            return np.full(len(x), np.nan)
        return paired_change(x, self.metric_values(base, metric))

    def table(self, extra: Mapping[str, Callable] | None = None) -> pd.DataFrame:
        """One row per configuration: its ids (``policy`` label, ``name``, ``s``, ``P``,
        every other swept field, knobs, variant), ``seeds``, and for each metric of
        :data:`fitgpp.analysis.metrics.METRICS` the sweep Dataset holds, each brief one, each the
        study lists in ``columns`` (and each ``extra`` ``column: Dataset -> float``) the
        mean over seeds with ``_lo``/``_hi`` bounds (NaN below 3 seeds), and its change
        against the baseline (``change_<name>``)."""
        with at_level(self.level):
            return pd.DataFrame(self._rows(extra))

    def _rows(self, extra) -> list[dict]:
        rows, fields = [], self.params()
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
            row["seeds"] = len(self.seeds_of(conf))
            at = self.at(conf)
            cols = {}
            for name, m in shown.items():
                cols[name] = self.metric_values(conf, m, at)
                if m.vs_baseline:
                    cols[f"change_{name}"] = self.change(conf, m)
            for c, x in cols.items():
                row[c], row[f"{c}_lo"], row[f"{c}_hi"] = t_interval(x)
            rows.append(row)
        return rows

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
    :func:`fitgpp.figures.plots.config_label`): a field is named when that policy's grid sweeps it."""
    grid = next(g for g in exp.policies if g.name == name)
    return plots.config_label(name, params, [k for k, v in grid.values if len(v) > 1])


# ---------------------------------------------------------------- helpers for the analyses
def _fmt(m, lo, hi, is_change: bool = False, floor: float | None = None,
         name: str | None = None) -> str:
    """A mean with its interval; a change (a fraction) in percent. The interval is cut at the
    quantity's range by :func:`fitgpp.analysis.metrics.cut_interval` and each cut bound marked ``*``
    (:data:`fitgpp.analysis.metrics.CLIP_NOTE`): the range of column ``name``
    (:func:`fitgpp.analysis.metrics.value_range`), else a change's (at least -100 %), else from
    ``floor`` (1 for a slowdown)."""
    from fitgpp.analysis.metrics import CHANGE_RANGE, UNBOUNDED, cut_interval, value_range
    rng = value_range(name) if name is not None else CHANGE_RANGE if is_change else \
        (floor, np.inf) if floor is not None else UNBOUNDED
    return cut_interval(m, lo, hi, rng).text(as_percent=is_change)


def _config(o: Outcome, **extra) -> dict:
    """What ran (:func:`fitgpp.studies.manifest.record`: the grid's dimensions as swept, every
    configuration's policy, code digest and own fields, the tick), the knobs and variants as
    declared, and ``extra``."""
    from fitgpp.studies.manifest import record
    st = o.study
    return {**record(o), "knobs": {k: list(v) for k, v in st.knobs.items()},
            **({st.variant_dim: list(st.variants)} if st.variants else {}), **extra}
