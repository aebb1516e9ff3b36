"""A thin ipywidgets front end: widget values -> synthesize -> simulate -> Dataset -> charts.

    from fitgpp.widgets import Workbench
    wb = Workbench()          # paper-default, 2000 jobs, DEFAULT_CLUSTER
    wb                        # in JupyterLab: controls, a summary and two charts

Every change reruns :func:`run` (a plain function you can call without widgets) and
redraws. ``n_seeds`` workloads (seeds ``seed``, ``seed + 1``, ...) run per change: the
summary gives each number's mean with a 95 % interval over them (from 3 seeds; the range
from 2). "Pin as baseline" keeps the current configuration: from then on the summary puts
it side by side with the current one (with the change against it), the CDF draws both, and
its utilization chart stands beside the current one. The policy choices are the registry's (:data:`fitgpp.policies.POLICIES`) plus any
policy given as ``Workbench(policies=[MyPolicy])``; the policy controls are built from the
dataclass fields of those policies (type, default, and the range a field declares in
``metadata``), one control per field name, disabled while the chosen policy lacks it. The values used land in ``ds.attrs["workbench"]`` (JSON) and as
``ds.attrs["workbench_<name>"]``. "Export figures" writes the charts as PNG (300 dpi),
SVG and PDF into the chosen directory through :func:`fitgpp.export.export` (file names
carry the values that differ from the defaults, the files and ``manifest.json`` carry
all of them, nothing is overwritten) and prints the paths. :func:`export_panel` gives
any notebook the same control over its own charts. Charts are fitgpp.live views
(``alt.JupyterChart`` drawn offline), so they draw without network (see ../shared/NOTES.md).
"""

from __future__ import annotations

import json
import time
from dataclasses import MISSING, dataclass, replace
from pathlib import Path

import altair as alt
import ipywidgets as W

from . import export as _export
from . import live, plots
from .cluster import DEFAULT_CLUSTER, Cluster
from .errors import FitgppError
from .policies import POLICIES, registry
from .metrics import change, percent
from .simulate import format_table, simulate, summarize

#: Workload fields of :class:`Values` (the rest are the policy and its parameters).
WORKLOAD = ("te_fraction", "load", "grace_scale", "seed", "model", "n_jobs", "n_seeds")


@dataclass(frozen=True)
class Values:
    """What the widgets set. Times in seconds; ``load`` is the offered GPU load (1 = full).

    ``policy``: a registered name, ``"module:Class"``, a policy class or object; ``params``:
    ``(field, value)`` pairs for it (fields not given keep their defaults; a ``seed`` field,
    RAND's, follows the workload ``seed`` unless given).
    """

    policy: object = "fitgpp"
    params: tuple = ()
    te_fraction: float | None = None   # None: the model's own TE share
    load: float = 0.9
    grace_scale: float = 1.0
    seed: int = 0
    model: str = "paper-default"
    n_jobs: int = 2000
    n_seeds: int = 1                   # workloads run: seeds seed, seed + 1, ...

    def seeds(self) -> list[Values]:
        """One value set per seed, ``n_seeds`` of them."""
        return [replace(self, seed=self.seed + i, n_seeds=1) for i in range(self.n_seeds)]

    def workload_key(self) -> tuple:
        return (self.model, self.n_jobs, self.seed, self.load, self.te_fraction, self.grace_scale)

    def policy_params(self) -> dict:
        """The parameters ``params`` gives the policy (only fields it has), plus its seed."""
        fields = registry.declared(self.policy)
        p = {k: v for k, v in dict(self.params).items() if k in fields}
        if "seed" in fields and "seed" not in p:
            p["seed"] = int(self.seed)
        return p

    def record(self) -> dict:
        """The values as the result records them: the policy's name (``module:Class`` if
        not registered), its parameters, and the workload values."""
        policy = registry.resolve(self.policy, **self.policy_params())
        out = {"policy": registry.ref(policy), **registry.params(policy)}
        return {**out, **{k: getattr(self, k) for k in WORKLOAD}}


def workload(v: Values, cluster: Cluster = DEFAULT_CLUSTER):
    from .workload import load_model, synthesize
    # "restrict": models fitted to big real clusters may hold a few demands no node here fits
    return synthesize(load_model(v.model), n_jobs=v.n_jobs, seed=v.seed, load=v.load,
                      te_fraction=v.te_fraction, grace_scale=v.grace_scale, cluster=cluster,
                      on_unfit="restrict")


def run(v: Values, cluster: Cluster = DEFAULT_CLUSTER, trace=None):
    """Simulate the values ``v``; returns the Dataset with the values in its attrs."""
    trace = workload(v, cluster) if trace is None else trace
    policy = registry.resolve(v.policy, **v.policy_params())
    ds = simulate(trace, cluster, policy)
    record = v.record()
    ds.attrs["workbench"] = json.dumps(record, sort_keys=True)
    for k, x in record.items():
        if x is not None:
            ds.attrs[f"workbench_{k}"] = int(x) if isinstance(x, bool) else x
    return ds


def run_seeds(v: Values, cluster: Cluster = DEFAULT_CLUSTER, traces=None) -> list:
    """:func:`run` on each of ``v.seeds()``; ``traces``: ``{workload_key: Trace}`` to reuse
    (and fill)."""
    traces = {} if traces is None else traces
    out = []
    for one in v.seeds():
        key = one.workload_key()
        if key not in traces:
            traces[key] = workload(one, cluster)
        out.append(run(one, cluster, trace=traces[key]))
    return out


def seeds_table(runs: dict, against: str | None = None):
    """``{label: [Dataset per seed]}`` -> a table of each label's mean over the seeds with
    its interval (95 % Student-t from 3 seeds, else the range; see
    :func:`fitgpp.tables.interval_text`) for every metric of
    :data:`fitgpp.metrics.METRICS` a run gives; if ``against`` names a label, the first
    label's change against it, paired per seed, in the column after the two."""
    import numpy as np
    import pandas as pd
    from .metrics import METRICS, paired_change
    from .tables import interval_text
    first = next(iter(runs))
    num = lambda x: f"{x:.3g}"  # noqa: E731
    rows = {}
    for m in METRICS.values():
        if m.cls is None and m.per_run is None:
            continue          # read from a sweep's Dataset only
        vals = {lb: np.array([m.of_run(ds) for ds in dss], float) for lb, dss in runs.items()}
        row = {lb: interval_text(x, num) for lb, x in vals.items()}
        if against is not None:
            x, b = vals[first], vals[against]
            ch = (interval_text(paired_change(x, b), percent)
                  if m.vs_baseline and len(x) == len(b) else "–")
            order = [first, against, f"{first} vs {against}"]
            row = {**{k: row[k] for k in order[:2]}, order[2]: ch,
                   **{k: v for k, v in row.items() if k not in order}}
        rows[m.label] = row
    return pd.DataFrame(rows).T


def policy_choices(extra=()) -> list[tuple[str, object]]:
    """Dropdown options: the registry's policies, then ``extra`` specs (classes, objects,
    ``module:Class``), as ``(label, value)``."""
    out = [(plots.policy_label(name), name) for name in POLICIES]
    for spec in extra:
        if isinstance(spec, str) and spec.lower() in POLICIES or \
                any(spec is v or (type(spec) is type(v) and spec == v) for _, v in out):
            continue
        out.append((registry.label(registry.policy_class(spec)), spec))
    return out


def param_control(spec, name: str, value=MISSING, *, style=None, layout=None) -> W.Widget:
    """A control for field ``name`` of a policy, from what the field declares: a slider for a
    number with ``min`` and ``max`` in its metadata, else a number box, a checkbox for a bool,
    a text box otherwise; ``label`` in its metadata names it (default: the field name)."""
    kind, default = registry.declared(spec)[name]
    meta = registry.metadata(spec, name)
    value = default if value is MISSING else value
    kw = dict(description=str(meta.get("label", name)), style=style or {},
              layout=layout or W.Layout())
    if kind is bool:
        return W.Checkbox(value=bool(value), **kw)
    if kind in (int, float):
        bounded = "min" in meta and "max" in meta
        if kind is float:
            cls = W.FloatSlider if bounded else W.FloatText
            if bounded:
                kw.update(min=float(meta["min"]), max=float(meta["max"]),
                          step=float(meta.get("step", (meta["max"] - meta["min"]) / 100)),
                          continuous_update=False)
            return cls(value=float(value), **kw)
        cls = W.IntSlider if bounded else W.IntText
        if bounded:
            kw.update(min=int(meta["min"]), max=int(meta["max"]), step=int(meta.get("step", 1)),
                      continuous_update=False)
        return cls(value=int(value), **kw)
    return W.Text(value="" if value is MISSING else str(value), **kw)


def param_controls(specs, params=(), **kw) -> dict[str, W.Widget]:
    """One control per field name over the policies ``specs`` (declaration order; ``seed``
    left out: it follows the workload seed), valued from ``params`` or the first default."""
    given = dict(params)
    out: dict[str, W.Widget] = {}
    for spec in specs:
        for name, (_kind, default) in registry.declared(spec).items():
            if name == "seed" or name in out:
                continue
            out[name] = param_control(spec, name, given.get(name, default), **kw)
    return out


def charts(ds, baseline=None) -> dict:
    """The workbench's figures for result ``ds`` (and a FIFO ``baseline`` to compare with)."""
    runs = {plots.policy_label(ds): ds}
    if baseline is not None and ds.attrs["policy"] != "fifo":
        runs["FIFO"] = baseline
    return {"slowdown_cdf": plots.slowdown_cdf(runs), "utilization": plots.utilization(ds)}


def summary_text(ds, baseline=None) -> str:
    t = summarize(ds)
    lines = [f"{plots.policy_label(ds)}  {ds.attrs['policy_params']}  on {ds.attrs['cluster_description']}",
             f"workload: {ds.attrs['workbench']}",
             *format_table(t)]
    if baseline is not None and ds.attrs["policy"] != "fifo":
        b = summarize(baseline)
        ch = lambda c, k: percent(change(t.loc[c, k], b.loc[c, k]))  # noqa: E731
        lines.append(f"vs FIFO: TE p95 {ch('TE', 'slowdown_p95')}, BE median "
                     f"{ch('BE', 'slowdown_median')}, BE p95 {ch('BE', 'slowdown_p95')}")
    lines.append(f"GPU utilization {ds.attrs['gpu_util_mean']:.3f} (the time mean from the first "
                 "submission to the last finish: the drain after the last arrival counts)")
    return "\n".join(lines)


class Workbench(W.VBox):
    """Controls, a printed summary and charts for one simulation; see the module docstring."""

    def __init__(self, values: Values = Values(), *, cluster: Cluster = DEFAULT_CLUSTER,
                 out_dir: str | Path = "figures", baseline: bool = True, policies=()):
        from .workload import list_models
        self.cluster, self.baseline_on = cluster, baseline
        self._traces: dict = {}
        self._fifo: dict = {}
        from .workload import load_model
        models = sorted(set(list_models()) | {values.model})
        if values.te_fraction is None:
            values = replace(values, te_fraction=round(load_model(values.model).te_share / 0.05) * 0.05)
        style = {"description_width": "110px"}
        lay = W.Layout(width="330px")
        if isinstance(values.policy, str) and values.policy.lower() in POLICIES:
            values = replace(values, policy=values.policy.lower())
        choices = policy_choices([*policies, values.policy])
        self.params = param_controls([c for _, c in choices], values.params, style=style,
                                     layout=lay)
        self.w = {
            "policy": W.Dropdown(options=choices, value=values.policy, description="policy",
                                 style=style, layout=lay),
            **self.params,
            "te_fraction": W.FloatSlider(value=values.te_fraction, min=0.05, max=0.95, step=0.05,
                                         description="TE share", continuous_update=False,
                                         style=style, layout=lay),
            "load": W.FloatSlider(value=values.load, min=0.3, max=1.5, step=0.05,
                                  description="load", continuous_update=False, style=style,
                                  layout=lay),
            "grace_scale": W.FloatSlider(value=values.grace_scale, min=0.25, max=16.0, step=0.25,
                                         description="grace-period scale",
                                         continuous_update=False, style=style, layout=lay),
            "seed": W.BoundedIntText(value=values.seed, min=0, max=10**6, description="seed",
                                     style=style, layout=lay),
            "model": W.Dropdown(options=models, value=values.model, description="workload model",
                                style=style, layout=lay),
            "n_seeds": W.BoundedIntText(value=values.n_seeds, min=1, max=50,
                                        description="seeds (count)", style=style, layout=lay),
        }
        self.n_jobs = values.n_jobs
        self.out_dir = W.Text(value=str(out_dir), description="export to", style=style, layout=lay)
        self.export_button = W.Button(description="Export figures", icon="download",
                                      button_style="primary")
        self.export_button.on_click(lambda _b: self.export())
        self.pin_button = W.Button(description="Pin as baseline", icon="thumb-tack")
        self.unpin_button = W.Button(description="Unpin", icon="times")
        self.pin_button.on_click(lambda _b: self.pin())
        self.unpin_button.on_click(lambda _b: self.unpin())
        self.pinned = None     # (label, Values, [Dataset per seed]) once pinned
        self.summary = W.Output()
        self.messages = W.Output()
        self.last_seconds = 0.0
        self.ds = self.fifo = None
        self.dss: list = []
        self.fifos: list = []
        self.text = ""
        self.charts: dict = {}
        self._enable_params()
        self.update()
        self.views = {k: live.show(c) for k, c in self.charts.items()}
        self.views["utilization_pinned"] = live.show(self.charts["utilization"])
        for name, widget in self.w.items():
            widget.observe(lambda _ch: self._redraw(), names="value")
        grid = W.GridBox(list(self.w.values()),
                         layout=W.Layout(grid_template_columns="repeat(2, 340px)"))
        # the pinned configuration's utilization joins the current one's once pinned
        self.side = side = W.HBox([self.views["utilization"]])
        super().__init__([grid, W.HBox([self.pin_button, self.unpin_button]),
                          W.HBox([self.out_dir, self.export_button]), self.messages,
                          self.summary, self.views["slowdown_cdf"], side])

    # -------------------------------------------------------------- plain methods
    def values(self) -> Values:
        policy = self.w["policy"].value
        fields = registry.declared(policy)
        params = tuple((k, w.value) for k, w in self.params.items() if k in fields)
        given = {k: self.w[k].value for k in WORKLOAD if k in self.w}
        # slider steps add float noise (0.3 + 20 * 0.05 = 1.3000000000000003)
        given = {k: round(x, 9) if isinstance(x, float) else x for k, x in given.items()}
        params = tuple((k, round(x, 9) if isinstance(x, float) else x) for k, x in params)
        return Values(policy=policy, params=params, n_jobs=self.n_jobs, **given)

    def _enable_params(self) -> None:
        fields = registry.declared(self.w["policy"].value)
        for k, w in self.params.items():
            w.disabled = k not in fields

    def update(self) -> None:
        """Rerun with the current widget values; refresh Dataset, charts and summary."""
        t0 = time.perf_counter()
        v = self.values()
        keys = [one.workload_key() for one in v.seeds()]
        # keep the current seeds' workloads only: memory stays flat
        self._traces = {k: t for k, t in self._traces.items() if k in keys}
        self.dss = run_seeds(v, self.cluster, self._traces)
        self.ds = self.dss[0]
        self.fifo, self.fifos = None, []
        if self.baseline_on:
            if [k for k in keys if k not in self._fifo]:
                self._fifo = {k: self._fifo.get(k) or run(replace(one, policy="fifo"),
                                                            self.cluster, trace=self._traces[k])
                              for k, one in zip(keys, v.seeds())}
            self.fifos = [self._fifo[k] for k in keys]
            self.fifo = self.fifos[0]
        self.charts = charts(self.ds, self.fifo)
        self.text = summary_text(self.ds, self.fifo)
        runs = {plots.policy_label(self.ds): self.dss}
        if self.fifos and self.ds.attrs["policy"] != "fifo":
            runs["FIFO"] = self.fifos
        if self.pinned is not None:
            label, _pv, pdss = self.pinned
            runs[label] = pdss
            cdf_runs = {plots.policy_label(self.ds): self.ds, label: pdss[0]}
            if self.fifo is not None and self.ds.attrs["policy"] != "fifo":
                cdf_runs["FIFO"] = self.fifo
            self.charts["slowdown_cdf"] = plots.slowdown_cdf(cdf_runs)
            self.charts["utilization_pinned"] = plots.utilization(pdss[0]).properties(
                title=label)
        n = len(self.dss)
        self.text += (f"\n\nover {n} seed{'s' * (n > 1)} ({v.seed}-{v.seed + n - 1}): mean "
                      + ("[95 % interval]" if n >= 3 else "(range; an interval needs 3 seeds)"
                         if n == 2 else "(one seed: no interval)") + "\n"
                      + seeds_table(runs, self.pinned[0] if self.pinned else None).to_string())
        self.summary.clear_output(wait=True)
        with self.summary:
            print(self.text)
        self.last_seconds = time.perf_counter() - t0

    def _redraw(self) -> None:
        self._enable_params()
        try:
            self.update()
        except FitgppError as exc:
            with self.messages:
                print(f"error: {exc}")
            return
        for k, view in self.views.items():
            if k in self.charts:
                live.update(view, self.charts[k])
        self.side.children = [self.views["utilization"]] + (
            [self.views["utilization_pinned"]] if self.pinned else [])

    def pin(self) -> None:
        """Keep the current configuration as the baseline to compare with (side by side)."""
        v = self.values()
        now = v.record()
        label = "pinned: " + plots.policy_label(self.ds)
        self.pinned = (label, v, list(self.dss))
        self._pinned_record = now
        self._redraw()

    def unpin(self) -> None:
        self.pinned = None
        self._redraw()

    def export(self, out_dir: str | Path | None = None, formats=plots.FORMATS) -> list[Path]:
        """Write the current charts to ``out_dir`` (default: the "export to" box) with
        :func:`fitgpp.export.export`; print the paths."""
        out = Path(out_dir if out_dir is not None else self.out_dir.value).expanduser()
        config = {**self.values().record(), "cluster": self.cluster.describe(),
                  "baseline": "fifo" if self.fifo is not None else None}
        defaults = {**Values().record(), "cluster": DEFAULT_CLUSTER.describe(), "baseline": "fifo"}
        self.messages.clear_output(wait=True)
        with self.messages:
            try:
                return _export.export(self.charts, out, config=config, defaults=defaults,
                                      formats=formats, log=lambda m: print(
                                          m.replace(str(out), str(out.resolve()))))
            except FitgppError as exc:
                print(f"error: {exc}")
                return []


def export_panel(charts, config: dict, *, defaults: dict | None = None,
                 out_dir: str | Path = "figures") -> W.VBox:
    """An "export to" box, format and size choices, an overwrite switch and an Export
    button for any notebook: ``export_panel(r.charts, r.config)``.

    ``charts``: ``{name: chart}``, or a function ``size -> {name: chart}`` (``size`` is
    ``"column"`` or ``"full"``) when the charts can be rebuilt at the chosen size; then a
    size menu is shown. ``config``/``defaults``: as for :func:`fitgpp.export.export`.
    """
    style = {"description_width": "80px"}
    box = W.Text(value=str(out_dir), description="export to", style=style,
                 layout=W.Layout(width="330px"))
    fmts = {ext: W.Checkbox(value=True, description=ext[1:].upper(), indent=False,
                            layout=W.Layout(width="70px")) for ext in plots.FORMATS}
    size = W.Dropdown(options=[("full width (7 in)", "full"), ("column (3.3 in)", "column")],
                      value="full", description="size", style=style,
                      layout=W.Layout(width="230px", display="" if callable(charts) else "none"))
    overwrite = W.Checkbox(value=False, description="overwrite existing files", indent=False)
    button = W.Button(description="Export figures", icon="download", button_style="primary")
    out = W.Output()

    def click(_b=None):
        out.clear_output(wait=True)
        with out:
            todo = charts(size.value) if callable(charts) else charts
            try:
                _export.export(todo, Path(box.value).expanduser(), config=config,
                               defaults=defaults, overwrite=overwrite.value, log=print,
                               formats=[e for e, c in fmts.items() if c.value])
            except FitgppError as exc:
                print(f"error: {exc}")

    button.on_click(click)
    panel = W.VBox([W.HBox([box, size]), W.HBox([*fmts.values(), overwrite, button]), out])
    panel.export = click          # the same as clicking, for scripts and tests
    return panel
