"""A thin ipywidgets front end over :mod:`fitgpp.workbook.workbench`: two configurations side by
side over several seeds, every run through the sweep's cell cache.

    from fitgpp.workbook.widgets import Workbench
    wb = Workbench()          # paper-default, 2000 jobs, DEFAULT_CLUSTER
    wb                        # in JupyterLab: controls, the numbers and the charts

The controls set the *current* configuration (:class:`fitgpp.workbook.workbench.Values`): the
policy (the registry's, plus any given as ``Workbench(policies=[MyPolicy])``), one
control per dataclass field of those policies (type, default and the range a field
declares in ``metadata``; shown only while the chosen policy has it), the workload and
how many seeds. It is compared with a *pinned* configuration: FIFO on the same workload
until "Pin as baseline" keeps the current one (any policy, fields and workload); "Unpin"
returns to FIFO. Each configuration is an ad-hoc study run by
:func:`fitgpp.workbook.workbench.compare` through the sweep cache, so a configuration seen before
is read, not simulated. The summary gives each declared metric's mean over the seeds with
its interval and the change against the pinned one (paired per seed); the charts are the
slowdown CDFs of both (first seed) and their utilization over time side by side; both
are named by :func:`fitgpp.figures.plots.config_label` with what differs between them.
"Export figures" writes the charts through :func:`fitgpp.figures.export.export`, recording both
configurations and their labels. :func:`export_panel` gives any notebook the same control
over its own charts. Charts are fitgpp.workbook.live views (drawn offline, see ../shared/NOTES.md).
Displayed, the workbench also leaves a static copy (:mod:`fitgpp.workbook.static`: the summary
and every chart as SVG) that a saved notebook shows without its kernel.
"""

from __future__ import annotations

import json
import time
from dataclasses import MISSING, replace
from pathlib import Path

import ipywidgets as W

from fitgpp.figures import export as _export
from fitgpp.workbook import live, static
from fitgpp.figures import names, plots
from fitgpp.workbook import workbench as wbf
from fitgpp.sim.cluster import DEFAULT_CLUSTER, Cluster
from fitgpp.errors import FitgppError
from fitgpp.sim.policies import POLICIES, registry
from fitgpp.workbook.workbench import WORKLOAD, Values

__all__ = ["Values", "Workbench", "export_panel", "param_control", "param_controls",
           "policy_choices"]


#: The controls' description column and width: wide enough for the longest name
#: (:func:`fitgpp.figures.names.title`, e.g. "P (max preemptions)") at JupyterLab's 13 px font.
STYLE = {"description_width": "160px"}
CONTROL_WIDTH = "380px"
#: The controls' grid: as many columns of one control as the notebook's width holds (two
#: at 1,400 px with the file browser open, one in a narrow window), never scrolled sideways.
GRID = f"repeat(auto-fill, {int(CONTROL_WIDTH[:-2]) + 10}px)"
#: A row of widgets that continues on the next line rather than being cut at the right.
ROW = {"flex_flow": "row wrap"}


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
    a dropdown for a ``Literal`` field (its values), a text box otherwise; named by :func:`fitgpp.figures.names.title` (its metadata's
    ``label`` and ``units``; default: the field name), its ``description`` the tooltip."""
    kind, default = registry.declared(spec)[name]
    meta = registry.metadata(spec, name)
    value = default if value is MISSING else value
    desc = names.title(name, [spec])
    kw = dict(description=desc, tooltip=str(meta.get(
        "description", desc)), style=style or {}, layout=layout or W.Layout())
    if kind is bool:
        return W.Checkbox(value=bool(value), **kw)
    options = registry.choices(spec, name)
    if options and value in options:   # a Literal field (FIFO's backfill): its values
        return W.Dropdown(options=list(options), value=value, **kw)
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
    if kind is str or value is MISSING or isinstance(value, str):
        return W.Text(value="" if value is MISSING else str(value), **kw)
    # a field of no scalar type (LAS's thresholds): its value as JSON, read back by parse_value
    return W.Text(value=json.dumps(list(value) if isinstance(value, tuple) else value), **kw)


def text_value(spec, name: str, value):
    """A control's value as the policy takes it: the text of a field of no scalar type is
    JSON (a list becomes a tuple: values are hashable), every other value as it is."""
    kind = registry.declared(spec)[name][0]
    if not isinstance(value, str) or kind in (str, bool, int, float):
        return value
    v = registry.parse_value(spec, name, value)
    return tuple(v) if isinstance(v, list) else v


def param_controls(specs, params=(), **kw) -> dict[str, W.Widget]:
    """One control per field name over the policies ``specs`` (declaration order; ``seed``
    left out: it follows the workload seed), valued from ``params`` or the first default."""
    given = dict(params)
    out: dict[str, W.Widget] = {}
    for spec in specs:
        for name, (_kind, default) in registry.declared(spec).items():
            if name == "seed" or name in out:
                continue
            own = {**kw, "layout": _own(kw["layout"])} if kw.get("layout") else kw
            out[name] = param_control(spec, name, given.get(name, default), **own)
    return out


def _own(layout: W.Layout) -> W.Layout:
    """A copy of ``layout``: each control gets its own, so one can be hidden alone."""
    return W.Layout(**{k: v for k, v in layout.get_state().items()
                       if not k.startswith("_") and v is not None})


class Workbench(W.VBox):
    """Controls, the numbers and the charts of two configurations; see the module docstring.

    ``cache``: the sweep cache (a directory; None: the default; False: none).
    ``baseline``: compare with FIFO on the current workload until something is pinned.
    """

    MEMO = 16     # results kept in memory (a configuration seen again is not even read)

    def __init__(self, values: Values = Values(), *, cluster: Cluster = DEFAULT_CLUSTER,
                 out_dir: str | Path = "figures", baseline: bool = True, policies=(),
                 cache=None):
        from fitgpp.workload import list_models
        self.cluster, self.baseline_on, self.cache = cluster, baseline, cache
        self._memo: dict = {}
        values = wbf.opening(values)
        self.n_jobs = values.n_jobs
        self.w = self._controls(values, policies, sorted(set(list_models()) | {values.model}))
        self.out_dir = W.Text(value=str(out_dir), description="export to", style=dict(STYLE),
                              layout=W.Layout(width=CONTROL_WIDTH))
        self.export_button = W.Button(description="Export figures", icon="download",
                                      button_style="primary")
        self.export_button.on_click(lambda _b: self.export())
        self.pin_button = W.Button(description="Pin as baseline", icon="thumb-tack")
        self.unpin_button = W.Button(description="Unpin", icon="times")
        self.pin_button.on_click(lambda _b: self.pin())
        self.unpin_button.on_click(lambda _b: self.unpin())
        self.pinned: Values | None = None     # the pinned configuration, once pinned
        self.summary, self.messages = W.HTML(), W.Output()
        self.last_seconds, self.text, self.charts = 0.0, "", {}
        self._enable_params()
        self.update()
        self.views = {k: live.show(c) for k, c in self.charts.items()}
        self.views.setdefault("utilization_pinned", live.show(self.charts["utilization"]))
        self._drawn = {k: self.charts.get(k) for k in self.views}   # what each view shows
        for widget in self.w.values():
            widget.observe(lambda _ch: self._redraw(), names="value")
        grid = W.GridBox(list(self.w.values()), layout=W.Layout(grid_template_columns=GRID))
        self.side = W.HBox(layout=W.Layout(**ROW))
        self._show_side()
        super().__init__([grid, W.HBox([self.pin_button, self.unpin_button],
                                       layout=W.Layout(**ROW)),
                          W.HBox([self.out_dir, self.export_button], layout=W.Layout(**ROW)),
                          self.messages, self.summary, self.views["slowdown_cdf"], self.side])
        #: The copy a saved notebook keeps (:mod:`fitgpp.workbook.static`): the summary and
        #: every chart, redrawn after each redraw.
        self.static = static.StaticCopy(self, static.NOTE.replace("panel", "workbench"))

    def _ipython_display_(self):
        static.display_with_copy(self, self.static, what="workbench")

    def _controls(self, values: Values, policies, models) -> dict[str, W.Widget]:
        style = dict(STYLE)
        choices = policy_choices([*policies, values.policy])
        self.params = param_controls([c for _, c in choices], values.params, style=style,
                                     layout=W.Layout(width=CONTROL_WIDTH))

        def lay():
            return W.Layout(width=CONTROL_WIDTH)

        def slider(name, lo, hi, step):
            return W.FloatSlider(value=getattr(values, name), min=lo, max=hi, step=step,
                                 description=names.title(name), continuous_update=False,
                                 style=style, layout=lay())
        return {
            "policy": W.Dropdown(options=choices, value=values.policy, description="policy",
                                 style=style, layout=lay()),
            **self.params,
            "te_fraction": slider("te_fraction", 0.05, 0.95, 0.05),
            "load": slider("load", 0.3, 1.5, 0.05),
            "grace_scale": slider("grace_scale", 0.25, 16.0, 0.25),
            "seed": W.BoundedIntText(value=values.seed, min=0, max=10**6,
                                     description=names.title("seed"), style=style, layout=lay()),
            "model": W.Dropdown(options=models, value=values.model,
                                description=names.title("model"), style=style, layout=lay()),
            "n_seeds": W.BoundedIntText(value=values.n_seeds, min=1, max=50,
                                        description="seeds (count)", style=style, layout=lay()),
        }

    # -------------------------------------------------------------- plain methods
    def values(self) -> Values:
        """The current configuration the controls set."""
        policy = self.w["policy"].value
        fields = registry.declared(policy)
        # slider steps add float noise (0.3 + 20 * 0.05 = 1.3000000000000003)
        r = lambda x: round(x, 9) if isinstance(x, float) else x  # noqa: E731
        params = tuple((k, r(text_value(policy, k, w.value))) for k, w in self.params.items()
                       if k in fields)
        given = {k: r(self.w[k].value) for k in WORKLOAD if k in self.w}
        return Values(policy=policy, params=params, n_jobs=self.n_jobs, **given)

    def baseline(self, v: Values) -> Values | None:
        """What ``v`` is compared with: the pinned configuration, else FIFO on its workload."""
        if self.pinned is not None:
            return self.pinned
        return replace(v, policy="fifo", params=()) if self.baseline_on else None

    def _enable_params(self) -> None:
        """Only the chosen policy's fields are shown (FitGpp's ``s`` and ``P``, not LAS's
        thresholds); the others keep their values for when their policy is chosen again. A
        field several policies declare (``mode``) shows the chosen one's description."""
        spec = self.w["policy"].value
        fields = registry.declared(spec)
        for k, w in self.params.items():
            w.disabled = k not in fields
            w.layout.display = None if k in fields else "none"
            if k in fields:
                w.tooltip = str(registry.metadata(spec, k).get("description", w.description))

    def update(self) -> None:
        """Run both configurations (through the cache); refresh numbers, charts and text."""
        t0 = time.perf_counter()
        v = self.values()
        self.cur, self.base = wbf.compare(v, self.baseline(v), self.cluster, cache=self.cache,
                                         memo=self._memo)
        while len(self._memo) > self.MEMO:
            self._memo.pop(next(iter(self._memo)))
        self.dss = self.cur.runs()
        self.ds = self.dss[0]
        self.charts = wbf.charts(self.cur, self.base)
        parts = wbf.summary_parts(self.cur, self.base)
        self.text = wbf.summary_text(self.cur, self.base, parts)
        self.summary.value = wbf.summary_html(self.cur, self.base, parts)
        self.last_seconds = time.perf_counter() - t0

    def _show_side(self) -> None:
        self.side.children = [self.views["utilization"]] + (
            [self.views["utilization_pinned"]] if "utilization_pinned" in self.charts else [])

    def _redraw(self) -> None:
        t0 = time.perf_counter()
        self._enable_params()
        try:
            self.update()
        except FitgppError as exc:
            with self.messages:
                print(f"error: {exc}")
            return
        for k, view in self.views.items():
            if k in self.charts and self.charts[k] is not self._drawn.get(k):
                live.update(view, self.charts[k])
        self._drawn = dict(self.charts)
        self._show_side()
        self.static.refresh()
        self.last_seconds = time.perf_counter() - t0

    def pin(self) -> None:
        """Keep the current configuration as the baseline to compare with (side by side)."""
        self.pinned = self.values()
        self._redraw()

    def unpin(self) -> None:
        """Compare with FIFO on the current workload again."""
        self.pinned = None
        self._redraw()

    def export(self, out_dir: str | Path | None = None, formats=plots.FORMATS) -> list[Path]:
        """Write the current charts to ``out_dir`` (default: the "export to" box) with
        :func:`fitgpp.figures.export.export`, recording both configurations and their labels;
        print the paths."""
        out = Path(out_dir if out_dir is not None else self.out_dir.value).expanduser()
        config, defaults = wbf.export_config(self.cur, self.base, self.cluster)
        charts = dict(self.charts)
        if self.base is not None and self.base.values == self.cur.values:
            charts.pop("utilization_pinned", None)   # the same run: one file, not two equal ones
        # the pinned run's figure is named after the pinned configuration, not the current s
        shows = ({"utilization_pinned": {**defaults, **config["pinned"]}}
                 if config.get("pinned") else {})
        self.messages.clear_output(wait=True)
        with self.messages:
            try:
                return _export.export(charts, out, config=config, defaults=defaults,
                                      subjects=shows, formats=formats, log=lambda m: print(
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
    size menu is shown. ``config``/``defaults``: as for :func:`fitgpp.figures.export.export`.
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
