"""A control panel over a declared research question, built from its declaration.

    from fitgpp import reproduce
    from fitgpp.workbook.panels import Panel
    Panel(reproduce.STUDIES["rq2"], "full")   # in JupyterLab: controls, numbers, charts

The controls are :meth:`fitgpp.studies.reproduce.Study.dimensions` of the study at the chosen
size, one per dimension: a dropdown of the computed values for the policy, its swept
parameters (``s``, ``P``), the model variant and every swept knob; the model (or trace),
the load and the number of jobs; how many seeds and which seed's distribution to draw;
and quick/full. Nothing is listed by hand, so a study that declares a new knob gets a
control for it.

Choosing values that are on the computed grid redraws from the :class:`Outcome` already
in memory (the sweep Dataset and the cells' per-job results): no simulation
(:attr:`Panel.last_seconds` says how long it took). Adding a value off the grid ("add a
value": a new ``s``, ``P``, knob value, load, number of jobs or seeds, another model, the
other size) changes the declaration and runs it through the sweep and its cell cache, so
only the missing cells are simulated, with a progress bar.

The plain functions (:func:`extend`, :func:`selection_numbers`, :func:`cell_view`) hold
the logic; the widgets only map values onto them. What is shown of the selection against
the baseline (its rows of numbers, its CDFs, the trade-off) is built in :mod:`fitgpp.workbook.views`,
as the workbench's is. A redraw builds each chart once: the trade-off per ``P``, knobs and
variant, a cell's CDFs per selection, the study's figures per declaration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import dataclasses
import itertools
import json
import threading
import time
from types import SimpleNamespace

import ipywidgets as W
import pandas as pd

from fitgpp.workbook import live, panel_export, static
from fitgpp.figures import plots
from fitgpp.errors import FitgppError
from fitgpp.analysis.metrics import MIN_CI_VALUES
from fitgpp.analysis.escape import html_text
from fitgpp.sim.policies import registry
from fitgpp.studies.reproduce import FULL, QUICK, Outcome, Size, Study
from fitgpp.workbook.panel_values import (SIZE_DIMS, cast_value, clip_note, extend,  # noqa: F401
                                          opening_value)
from fitgpp.figures import names
from fitgpp.workbook.views import (PanelError, caption, cell_view, finding_html, label, progress_text,
                                   model_matters, partial_note, selection_numbers,
                                   selection_seeds, specs,
                                   tradeoff_view, _nearest)

if TYPE_CHECKING:  # the annotations name the class by its full path (two classes are "Size")
    import fitgpp.studies.reproduce

#: A row of widgets that continues on the next line rather than being cut at the right.
ROW = {"flex_flow": "row wrap"}
#: The sizes a panel offers.
SIZES = {"quick": QUICK, "full": FULL}
#: The controls' description column and width: the longest name
#: (:func:`fitgpp.figures.names.title`, "grace-period distribution") fits at 13 px.
STYLE = {"description_width": "190px"}
CONTROL_WIDTH = "450px"
#: The controls' grid: as many columns of one control as the notebook's width holds, never
#: scrolled sideways (two columns needed 920 px, cut at 1,000 px with the file browser open).
GRID = f"repeat(auto-fill, {int(CONTROL_WIDTH[:-2]) + 10}px)"


# ------------------------------------------------------------------ the widgets
class Panel(W.VBox):
    """Controls over ``study`` from its declaration; see the module docstring.

    ``size``: ``"quick"``, ``"full"`` or a :class:`fitgpp.studies.reproduce.Size`. ``cache``: the sweep cache
    (None: the default). ``charts``: also draw the study's own figures (from its analysis).
    ``scheduler``: where its cells run, a Dask scheduler's address (None: ``$FITGPP_SCHEDULER``,
    else as the size says; see :meth:`fitgpp.studies.Study.run`).
    """

    def __init__(self, study: Study, size: str | fitgpp.studies.reproduce.Size = "full", *, cache=None,
                 charts=True, scheduler=None):
        self.cache, self.draw_study = cache, charts
        self.scheduler = scheduler
        self.sizes = dict(SIZES)
        if isinstance(size, Size):
            self.sizes = {"given": size, **SIZES}
            size = "given"
        self.size_name = size
        self.size = self.sizes[size]
        # a study whose knobs depend on the size (RQ8, the run-length study) is drawn with
        # them fixed for the size shown, and fixed again when the size changes
        self._declared, self.study = study, study.at_size(self.size)
        self._outcomes: dict = {}
        self.last_seconds = 0.0
        self.o = self.result = None
        style, lay = dict(STYLE), W.Layout(width=CONTROL_WIDTH)
        self.size_w = W.ToggleButtons(options=list(self.sizes), value=size, description="size",
                                      style={**style, "button_width": "80px"})
        self.progress = W.IntProgress(value=0, min=0, max=1, description="cells",
                                      style=style, layout=W.Layout(width="330px",
                                                                   visibility="hidden"))
        self.status = W.HTML()
        self.add_dim = W.Dropdown(description="add a value to", style=style, layout=lay)
        self.add_value = W.Text(placeholder="e.g. 32", description="value",
                                style={"description_width": "50px"},
                                layout=W.Layout(width="180px"), continuous_update=False)
        self.add_button = W.Button(description="add and run", icon="play",
                                   tooltip="run only the cells this value adds, through the cache")
        self.add_button.on_click(lambda _b: self._add())
        self.messages = W.Output()
        self.numbers = W.HTML()
        self.finding = W.HTML()
        self.controls: dict[str, W.Widget] = {}
        self.controls_box = W.GridBox(layout=W.Layout(grid_template_columns=GRID))
        self.views: dict[str, live.LiveChart] = {}
        self.study_box = W.VBox()
        self._quiet = False
        self._tr_key = None
        self._tradeoffs: dict = {}      # (outcome, P, knobs, variant) -> its trade-off chart
        self._prebuilt_for = None       # the outcome whose trade-offs are built in the background
        self.prebuilding: threading.Thread | None = None
        self._study_views: dict = {}    # declaration key -> the study's figures, shown
        self._cells: dict = {}          # (outcome, selection and seed) -> its CDF chart
        self.static = static.StaticCopy(self)
        # the bar and, beside it, how many cells are done and the time left
        self.eta = W.HTML("")
        self.progress_box = W.HBox([self.progress, self.eta], layout=W.Layout(**ROW))
        #: Said above the numbers (and the study's figures) while they are drawn from the
        #: first seed only, the others computing: see :meth:`declare`.
        self.partial = W.HTML("")
        #: Each draw of the latest declaration: ``(seconds since it began, seeds drawn)``,
        #: and how many cells it simulated (its first seed's among them, when drawn first).
        self.draw_times: list[tuple[float, int]] = []
        self.simulated = 0
        self._early = False             # drawing from the first seed only
        super().__init__()
        # not on screen yet: the progress bar is shown meanwhile, and the first draw from the
        # first seed as a picture (a live chart is drawn only once the kernel is idle)
        with static.shown_while(self.progress_box), static.previewed(self) as preview:
            self.declare(shown=preview)
        self.size_w.observe(lambda ch: self._change_size(ch["new"]), names="value")
        self.views["tradeoff"].observe_selection(self._picked, "pick")

    def _assemble(self) -> None:
        """The panel's children, once its views exist."""
        if self.children:
            return
        self.children = [W.HBox([self.size_w, self.progress_box], layout=W.Layout(**ROW)),
                         self.controls_box,
                         W.HBox([self.add_dim, self.add_value, self.add_button],
                                layout=W.Layout(**ROW)),
                         self.status, self.messages, self.partial, self.numbers,
                         self.views["tradeoff"], self.views["cell"], self.finding,
                         self.study_box, panel_export.export_area(self)]

    # -------------------------------------------------------------- plain methods
    def key(self, size: fitgpp.studies.reproduce.Size | None = None) -> str:
        size = self.size if size is None else size
        return json.dumps([self.study.model, self.study.dimensions(size)], default=str)

    def declare(self, *, shown=None, then=None) -> None:
        """Compute the current declaration and draw it. When some of its cells must be
        simulated and it has several seeds, it is drawn first from one seed alone (the seed
        drawn, when it is one of the declaration's, else the first), as soon as that seed's
        cells are in (a declaration of its own, so every number, interval and sentence is
        what one seed allows), with :attr:`partial` saying so, then again from all the
        seeds. A first draw that fails is given up, not kept: the panel always ends on the
        whole declaration (:attr:`partial` empty). ``shown()`` is called once the panel can
        be shown (the first draw); ``then()`` after the controls are rebuilt, before each
        draw."""
        t0 = time.perf_counter()
        seeds = self.study.seeds(self.size)
        self.draw_times, self.simulated = [], 0
        early = None
        if len(seeds) > 1 and self.key() not in self._outcomes:
            total, cached = self.study.pending(self.size, cache=self.cache)
            if cached < total:
                drawn = self.controls["seed"].value if "seed" in self.controls else None
                early = dataclasses.replace(self.size, seeds=(
                    drawn if drawn in seeds else seeds[0],), max_seeds=None)
        try:
            for size in ((early, self.size) if early is not None else (self.size,)):
                self._early = size is not self.size
                if self._early:   # said until the last draw is done (on screen meanwhile)
                    self.partial.value = partial_note(len(self.study.seeds(size)), len(seeds))
                try:
                    self._draw_declaration(size, then)
                except FitgppError:
                    if not self._early:
                        raise
                    continue    # the first draw only: the whole declaration is drawn next
                if early is not None and size is self.size:   # the first seed's were simulated too
                    self.status.value += f"<small> (and just before, for the first draw: " \
                        f"{self._outcomes[self.key(early)][0].stats['computed']} simulated)</small>"
                self.draw_times.append((time.perf_counter() - t0, len(self.study.seeds(size))))
                if shown is not None:
                    shown()
                    shown = None
        finally:
            self._early = False
            self.partial.value = ""

    def _draw_declaration(self, size, then) -> None:
        """Compute the declaration at ``size`` and draw it (see :meth:`declare`)."""
        self.compute(size)
        self._build_controls()
        if then is not None:
            then()
        self._draw_selection()
        if not self._early:
            self.partial.value = ""
        self._assemble()

    def compute(self, size: fitgpp.studies.reproduce.Size | None = None) -> Outcome:
        """Run the current declaration, or the same at ``size`` (cells from the cache, the
        rest simulated), and show its finding and figures."""
        size = self.size if size is None else size
        k = self.key(size)
        if k not in self._outcomes:
            self.progress.layout.visibility = "visible"

            t0, first = time.perf_counter(), []
            what = ("" if size is self.size else
                    f"seed {size.seeds[0]} first (of {len(self.study.seeds(self.size))}): ")

            def bar(done, total):
                self.progress.max, self.progress.value = max(total, 1), done
                first[:1] = first[:1] or [done]      # the cells the cache gave at once
                text = progress_text(done, total, first[0], time.perf_counter() - t0)
                self.eta.value = f"<small>{what}{text}</small>"
            o = self.study.run(size, cache=self.cache, progress=bar, scheduler=self.scheduler)
            try:
                result = self.study.analysis(o)
            except Exception as exc:  # noqa: BLE001 - a variation its analysis was not written for
                result = SimpleNamespace(table=o.table(), charts={}, finding=(
                    f"none: {self.study.key}'s analysis does not cover this declaration "
                    f"({type(exc).__name__}: {exc}); the numbers and charts above still hold"))
            # the study's table when it is the generic one, else the Outcome's (RQ6
            # tabulates its own way): the trade-off reads the generic columns
            own = getattr(result, "report_columns", None) is not None
            self._outcomes[k] = (o, result, o.table() if own else result.table)
            s = o.stats
            self.simulated += s["computed"]
            self.status.value = (f"<small>{s['unique']} cells: {s['computed']} simulated, "
                                 f"{s['cached']} read from the cache, "
                                 f"{time.perf_counter() - t0:.1f} s</small>")
            self.progress.layout.visibility = "hidden"
            self.eta.value = ""
        self.o, self.result, self.table = self._outcomes[k]
        self._shown = k
        self.finding.value = ("<p><b>Finding</b> (computed from these results).</p>"
                              + finding_html(self.result.finding))
        self._draw_study()
        return self.o

    def selection(self) -> dict:
        return {k: w.value for k, w in self.controls.items()}

    def _build_controls(self) -> None:
        dims = self.study.dimensions(self.size)
        old = self.selection()
        self._quiet = True
        ws = {}
        style = dict(STYLE)
        pols = specs(self.study)
        if "model" in dims and not model_matters(self.study, self.size):
            dims.pop("model")    # its variants load their own models: a control would lie
        for dim, values in dims.items():
            desc = names.title(dim, pols)
            if dim == "seed":
                ws["seeds"] = W.BoundedIntText(value=len(values), min=1, max=100,
                                               description="seeds (count)", style=style,
                                               layout=W.Layout(width=CONTROL_WIDTH))
                desc = "seed drawn"
            if dim == "model":
                from fitgpp.workload import list_models
                values = tuple(sorted(set(list_models()) | set(values)))
            if dim == "policy":
                opts = [(plots.family(v), v) for v in values]
            else:
                opts = [(names.shown(dim, v, pols), v) for v in values]
            value = old.get(dim)
            if value not in [v for _, v in opts]:
                value = opening_value(dim, dims, self.size)
            ws[dim] = W.Dropdown(options=opts, value=value, description=desc, style=style,
                                 layout=W.Layout(width=CONTROL_WIDTH))   # one each: see _enable
        self.controls = ws
        self.controls_box.children = list(ws.values())
        self.add_dim.options = [(names.title(d, pols), d) for d in dims
                                if d in (*self.study.params(), *self.study.knobs, *SIZE_DIMS)]
        for dim, w in ws.items():
            w.observe(lambda ch, d=dim: self._changed(d, ch["new"]), names="value")
        self._enable()
        self._quiet = False

    def _fields(self, policy: str) -> dict[str, tuple]:
        """``{field: values}`` that policy ``policy`` runs (its grid in the study)."""
        exp = next(iter(self.o.experiments.values()))
        return next((g.params for g in exp.policies if g.name == policy), {})

    def _enable(self) -> None:
        """A policy field's control is shown only while the chosen policy takes it (as in
        the workbench: SRTF's ``ties`` is not shown beside FitGpp's ``s``)."""
        fields = self._fields(self.controls["policy"].value)
        for d in self.study.params():
            if d in self.controls:
                self.controls[d].disabled = d not in fields
                self.controls[d].layout.display = None if d in fields else "none"

    def _selection_for_outcome(self) -> dict:
        sel = self.selection()
        fields = self._fields(sel["policy"])
        for d in self.study.params():   # a policy without the field: any value matches
            if d in sel and d not in fields:
                sel.pop(d)
            elif d in sel and sel[d] not in fields[d]:   # e.g. LRTP runs only P=3
                sel[d] = _nearest(fields[d], sel[d])
        return sel

    def _draw_selection(self) -> None:
        """Redraw the numbers, the trade-off and the cell's CDFs from the Outcome."""
        t0 = time.perf_counter()
        sel = self._selection_for_outcome()
        full = self.selection()
        nums = selection_numbers(self.o, sel)
        n = selection_seeds(self.o, sel)
        level = getattr(self.o, "level", None) or 0.95
        why = (f"{100 * level:.4g} % Student-t intervals over the seeds" if n >= MIN_CI_VALUES else
               f"{n} seeds: no interval (it needs {MIN_CI_VALUES} or more seeds); the range "
               "over the seeds is shown instead")
        over = (f"mean over {n} seeds ({why})" if n > 1 else
                "one run (one seed: no interval over seeds)")
        self.numbers.value = (f"<b>{html_text(label(self.o, sel))}</b> against "
                              f"{html_text(self.o.baseline_label())}, {over}"
                              + nums.to_html(index_names=False) + clip_note(nums))
        cell = sel | {"seed": full["seed"]}
        cell_key = (id(self.o), json.dumps(cell, sort_keys=True, default=str))
        if cell_key not in self._cells:   # a cell's CDF is built once (a few dozen kept)
            self._cells[cell_key] = cell_view(self.o, cell)
            while len(self._cells) > 48:
                self._cells.pop(next(iter(self._cells)))
        cdf = self._cells[cell_key]
        # the trade-off depends on P, the knobs and the variant only: built once for each
        # (building it costs more than the rest of a redraw), redrawn when they change
        tr_key = self._tradeoff_key(self.o, full)
        if tr_key not in self._tradeoffs:
            self._tradeoffs[tr_key] = tradeoff_view(self.o, full, self.table)
        if "tradeoff" not in self.views:
            self.views = {"tradeoff": live.show(self._tradeoffs[tr_key]),
                          "cell": live.show(cdf), **self.views}
        else:
            if tr_key != self._tr_key:
                live.update(self.views["tradeoff"], self._tradeoffs[tr_key])
            live.update(self.views["cell"], cdf)
        self._tr_key = tr_key
        self.last_seconds = time.perf_counter() - t0
        self.static.refresh()
        if self._prebuilt_for is not self.o and not self._early:
            self._prebuilt_for = self.o
            self.prebuilding = threading.Thread(target=self._prebuild,
                                                args=(self.o, self.table, full),
                                                daemon=True, name="fitgpp-panel-prebuild")
            self.prebuilding.start()

    @staticmethod
    def _tradeoff_key(o: Outcome, full: dict) -> tuple:
        """The trade-off depends on the outcome ``o`` and every control but the policy, s
        and the seeds: one chart per such key."""
        return (id(o), json.dumps({k: v for k, v in full.items()
                                        if k not in ("policy", "s", "seed", "seeds")},
                                       default=str))

    def _prebuild(self, o: Outcome, table: pd.DataFrame, full: dict) -> None:
        """Build the trade-off of every other P, knob value and variant of ``o`` (whose
        table is ``table``, taken with it: ``self.table`` may move on to another outcome) in the
        background, once the panel is drawn: the first visit of a P then redraws in a few
        hundredths of a second rather than half a second (building the chart)."""
        dims = o.study.dimensions(o.size)
        free = [d for d in full if d not in ("policy", "s", "seed", "seeds")
                and len(dims.get(d, ())) > 1]
        for combo in itertools.product(*(dims[d] for d in free)):
            if self.o is not o:          # the declaration changed: these are no longer shown
                return
            sel = full | dict(zip(free, combo))
            key = self._tradeoff_key(o, sel)
            if key not in self._tradeoffs:
                self._tradeoffs[key] = tradeoff_view(o, sel, table)

    def _draw_study(self) -> None:
        """The study's figures for the current declaration (shown once per declaration:
        going back to one already computed shows its views again)."""
        if not self.draw_study:
            return
        k = self._shown
        if k not in self._study_views:
            boxes = [self.partial] if self._early else []
            for name, chart in self.result.charts.items():
                boxes += [W.HTML(f"<p><b>Figure.</b> {html_text(caption(self.study, name, chart))}</p>"),
                          live.show(chart)]
            self._study_views[k] = boxes
        self.study_box.children = self._study_views[k]
        self.static.refresh()

    def _ipython_display_(self):
        static.display_with_copy(self, self.static)

    # -------------------------------------------------------------- events
    def _run(self, fn) -> None:
        try:
            fn()
        except FitgppError as exc:
            with self.messages:
                print(f"error: {exc}")

    def _changed(self, dim: str, value) -> None:
        if self._quiet:
            return

        def go():
            if dim == "seeds":
                self._redeclare(*extend(self.study, self.size, "seed", value))
            elif dim in SIZE_DIMS or dim == "model":
                self._redeclare(*extend(self.study, self.size, dim, value))
            else:
                self._enable()
                self._draw_selection()
        self._run(go)

    def _redeclare(self, study: Study, size, then=None, name: str | None = None) -> None:
        """Change the declaration to ``study`` at ``size`` (``name``: the size's) and draw it;
        if that fails, draw the declaration shown before again (from memory) and raise."""
        before = self.study, self.size, self.size_name
        self.study, self.size = study, size
        self.size_name = self.size_name if name is None else name
        try:
            self.declare(then=then)
        except FitgppError:
            self.study, self.size, self.size_name = before
            self._quiet, self.size_w.value = True, self.size_name
            self._quiet = False
            self.declare()
            raise

    def _add(self) -> None:
        def go():
            text, dim = self.add_value.value.strip(), self.add_dim.value
            if names.name(dim).scale != 1:   # typed in the unit the control shows (min)
                try:
                    text = names.stored(dim, text)
                except ValueError as exc:
                    raise PanelError(f"add a value to {exc}") from None
            value = cast_value(self.study, dim, text)
            study, size = extend(self.study, self.size, self.add_dim.value, value)

            def select():
                w = self.controls.get(dim)
                match = [v for _, v in (w.options if w is not None else ()) if v == value]
                if match:   # select the added value
                    self._quiet = True
                    w.value = match[0]
                    self._quiet = False
            self._redeclare(study, size, then=select)
        self._run(go)

    def _change_size(self, name: str) -> None:
        if self._quiet:
            return
        study = (self._declared if any(map(callable, self._declared.knobs.values()))
                 else self.study).at_size(self.sizes[name])
        self._run(lambda: self._redeclare(study, self.sizes[name], name=name))

    def _picked(self, change) -> None:
        """A click on the trade-off: select that point's policy and ``s``."""
        pick = change["new"]
        values = getattr(pick, "value", None) or []
        if not values:
            return
        v = values[0]
        name = next((x for _, x in self.controls["policy"].options if plots.family(x) == v.get("family")), None)
        self._quiet = True
        try:
            if name in [x for _, x in self.controls["policy"].options]:
                self.controls["policy"].value = name
            if "s" in self.controls and v.get("s") is not None and not pd.isna(v.get("s")):
                self.controls["s"].value = float(v["s"])
        finally:
            self._quiet = False
        self._run(lambda: (self._enable(), self._draw_selection()))
