"""Live charts: one widget per chart on screen, updated in place, that draws all its data.

``show(chart)`` returns a :class:`LiveChart` (an ``alt.JupyterChart``) and ``update(view, chart)``
puts a new chart into it; ``view.observe_selection(fn, name)`` calls ``fn(change)`` (a traitlets
change; ``change["new"]`` is the selection) whenever selection ``name`` changes, across every
later update. Panels and the workbench show
and update their charts only through these.

Why not ``alt.JupyterChart`` as is (altair 6.3, seen in Chromium, docs/experiments.md):

- its ``chart`` setter replaces ``view.selections`` with a new object, so an observer put on the
  old one (a click on the s trade-off) is silently lost at the first update;
- its front end renders every new spec into the same element without waiting for or cancelling
  the previous render, so two quick updates can finish out of order and leave the older chart
  on screen while the numbers show the newer selection; and it adds one more ``_params``
  listener per render, bound to views already finalized.

- offline, every JupyterChart ships and evaluates its own 0.9 MB copy of vega; with a dozen
  charts on a busy machine anywidget's 2-second model initialization times out ("[anywidget]
  Failed to initialize model."), and anywidget then drops every later message to that model,
  so the chart stops following the controls. live.js asks the kernel for the bundle once per
  page and evaluates it once.

A fresh widget per update would avoid the first but not the others, and create one more model
(and one more initialization) per redraw; one widget updated in place is kept instead.

Setting a chart makes altair convert it to a Vega-Lite dict and validate that against the
schema (jsonschema): 0.05-0.15 s a chart, half of a panel's redraw. A chart object shown
again (the trade-off at a ``P`` seen before) is converted once: its dict is kept
(:func:`spec_of`, the newest :data:`KEEP` charts).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import altair as alt
import traitlets

from fitgpp.errors import FitgppError

_JS = Path(__file__).with_name("live.js")


class LiveError(FitgppError):
    """A live chart cannot do what was asked of it (e.g. observe a selection it lacks)."""


def _bundle() -> str:
    """vega-embed, vega-lite and vega as one ES module (default export ``{vegaEmbed,
    lodashDebounce}``), bundled by vl-convert without network; made once per process."""
    global _BUNDLE
    if _BUNDLE is None:
        from altair.utils._importers import import_vl_convert, vl_version_for_vl_convert
        _BUNDLE = import_vl_convert().javascript_bundle(
            "export default { vegaEmbed, lodashDebounce };", vl_version=vl_version_for_vl_convert())
    return _BUNDLE


_BUNDLE: str | None = None


class LiveChart(alt.JupyterChart):
    """An ``alt.JupyterChart`` with the front end of live.js, drawn as SVG (so its marks can
    be read back), whose selection observers survive a change of chart."""

    _esm = _JS.read_text()
    #: The key of the static copy of the panel this chart is in (fitgpp.workbook.static): while the
    #: chart runs, its front end hides that copy.
    static_key = traitlets.Unicode("").tag(sync=True)

    def __init__(self, chart, **kw):
        self._observers: list[tuple[object, str]] = []
        kw.setdefault("embed_options", {"renderer": "svg", "actions": False})
        super().__init__(chart, **kw)
        self.on_msg(self._answer)

    def _answer(self, _widget, content, _buffers) -> None:
        """The front end asks once per page for the vega bundle."""
        if isinstance(content, dict) and content.get("want") == "bundle":
            self.send({"bundle": _bundle()})

    @traitlets.observe("chart")
    def _on_change_chart(self, change):
        with _converted(change.new):
            super()._on_change_chart(change)   # makes a new self.selections
        for fn, name in getattr(self, "_observers", ()):
            self._watch(fn, name)

    def _watch(self, fn, name: str) -> None:
        if name not in self.selections.trait_names():
            have = sorted(n for n in self.selections.trait_names() if not n.startswith("_"))
            raise LiveError(
                f"the chart has no selection {name!r} at its top level (it has {have or 'none'}): "
                "a click on it would reach no observer. A selection added to a layer of a "
                "layered or faceted chart after the chart was built stays in that layer; "
                "build the chart again (chart.copy()) so altair lifts it to the top.")
        self.selections.observe(fn, names=[name])

    def observe_selection(self, fn, name: str) -> None:
        """``view.selections.observe(fn, names=[name])`` that holds across changes of chart;
        :class:`LiveError` if the chart (now or after a change) has no such selection."""
        self._watch(fn, name)
        self._observers.append((fn, name))


def spec_of(chart) -> dict:
    """``chart.to_dict()``, converted once per chart object, not validated here
    (:func:`fitgpp.figures.plots.render.spec_of`: a figure checked against the page was
    converted there already).

    Checking a chart against the Vega-Lite schema took 3.7 of the 11 CPU-s of a warm
    ``Panel(RQ2, "full")`` (issue 26); the panel's static copy converts the same chart
    validated (fitgpp.workbook.static, in the background), so a chart that breaks the schema
    is still reported, without the live view waiting for the check."""
    from fitgpp.figures.plots.render import spec_of as converted
    return converted(chart)


@contextmanager
def _converted(chart):
    """While the block runs, ``chart.to_dict()`` gives :func:`spec_of` (what JupyterChart
    calls when a chart is set)."""
    if chart is None or not hasattr(chart, "to_dict"):
        yield
        return
    spec = spec_of(chart)
    object.__setattr__(chart, "to_dict", lambda *a, **k: spec)   # not a chart property
    try:
        yield
    finally:
        object.__delattr__(chart, "to_dict")


def show(chart) -> LiveChart:
    """A live view of ``chart``."""
    return LiveChart(chart)


def update(view: LiveChart, chart) -> None:
    """Draw ``chart`` in ``view`` (same widget, same selection observers)."""
    view.chart = chart
