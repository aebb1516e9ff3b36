"""A static copy of a panel beside its live widgets, so a saved notebook keeps its figures.

A widget's output in a notebook is only a reference to a model in the running kernel: a
saved notebook reopened without it shows "Error displaying widget: model not found", and
nbconvert's HTML (or PDF through it) shows nothing where a panel was. So a panel, when
displayed, also displays an ordinary ``text/html`` output: its numbers and every chart it
shows as inline SVG drawn by vl-convert in the kernel (:class:`StaticCopy`). It is updated
in place (one display id) whenever the panel redraws, so the notebook file holds the
current view.

While the live widgets run, their front end (live.js) hides the copy: each live chart
carries the copy's ``static_key`` and adds a style rule hiding
``.fitgpp-static[data-fitgpp-for=KEY]`` (a ``<style id="fitgpp-static-KEY">``). Without a
kernel (reopened notebook, nbconvert HTML) no live chart runs and the copy is what one sees.

And the panel's own output then? JupyterLab draws an output with the mime type
``application/vnd.jupyter.widget-view+json`` through the widget manager's renderer, ranked
above every other, whenever the notebook is trusted (the user saved it); without the model
(neither in a kernel nor in the notebook's widget state, which JupyterLab does not save by
default) that renderer writes "Error displaying widget: model not found" into the output
and adds the class ``jupyter-widgets``. An untrusted notebook (a colleague's JupyterLab)
and nbconvert (nbviewer, PDF; it drops a widget view whose state is not saved) show the
output's ``text/plain`` instead. So the copy carries one more rule, :func:`hide_dead_panel`:
while no live chart of the panel runs, the output just above the copy that shows that
error is not displayed.

Drawing an SVG costs 0.25-0.5 s per chart, longer than a redraw of the numbers and charts
(about 0.15 s): the copy is redrawn in one background thread after the redraw, the newest
request only, once the controls have rested for :attr:`StaticCopy.delay`, and each chart is
drawn once per chart object. The first copy (the one a
notebook run by papermill or nbclient keeps) is drawn before the cell ends.
"""

from __future__ import annotations

import base64
import html
import threading
import time
import uuid
from contextlib import contextmanager

import ipywidgets as W

from fitgpp.analysis.escape import html_text
from fitgpp.workbook import live


NOTE = ("Static copy of the panel as last drawn, kept for a saved notebook opened without its "
        "kernel (run the cell for the live panel).")


def in_kernel() -> bool:
    """True in a running IPython kernel (a notebook), where outputs can be displayed."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def _display(obj, **kw):
    from IPython.display import display
    return display(obj, **kw)


def _svg(chart) -> str:
    """``chart`` as an ``<img>`` of its SVG: an image of its own, so the ids inside (vega's
    ``clip1``, ...) cannot clash with those of the live charts in the same page."""
    from fitgpp.figures.plots.render import render   # (a label it cannot draw, escaped)
    spec = chart.to_dict() if hasattr(chart, "to_dict") else chart
    svg = render(spec, ".svg").decode()
    alt = html_text(_title(spec))
    return (f'<img alt="{alt}" style="max-width: 100%; height: auto" '
            f'src="data:image/svg+xml;base64,{base64.b64encode(svg.encode()).decode()}">')


def _title(spec: dict) -> str:
    t = spec.get("title", "")
    t = t.get("text", "") if isinstance(t, dict) else t
    return " ".join(t) if isinstance(t, list) else str(t)


def svgs(text: str) -> list[str]:
    """The SVG documents of the charts in a static copy's HTML (for tests and checks)."""
    import re
    return [base64.b64decode(b).decode() for b in
            re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', text)]


def hide_dead_panel(key: str) -> str:
    """A ``<style>`` hiding the output just above the copy ``key`` while it shows the widget
    manager's error text (the renderer itself then has the class ``jupyter-widgets``; a live
    view's renderer has not, only the view inside it), as long as no live chart of the panel
    runs (live.js puts ``#fitgpp-static-KEY`` in the page). (``:has`` may not nest.)"""
    dead = ".jp-OutputArea-output.jupyter-widgets"
    return (f"<style>html:not(:has(#fitgpp-static-{key})) .jp-OutputArea-child:has(> {dead})"
            f':has(+ .jp-OutputArea-child .fitgpp-static[data-fitgpp-for="{key}"])'
            " { display: none; }</style>")


def _output(out: dict) -> str:
    """One output of an ``Output`` widget as HTML: printed text as ``<pre>``, HTML as it is."""
    data = out.get("data") or {}
    if "text/html" in data:
        return f"<div>{data['text/html']}</div>"
    text = out.get("text", data.get("text/plain", ""))
    text = "".join(text) if isinstance(text, list) else str(text)
    return f"<pre>{html.escape(text)}</pre>" if text else ""


def live_charts(widget):
    """Every :class:`fitgpp.workbook.live.LiveChart` in ``widget``'s tree, in display order."""
    if isinstance(widget, live.LiveChart):
        yield widget
    for child in getattr(widget, "children", ()):
        yield from live_charts(child)


class StaticCopy:
    """The static copy of ``root`` (a widget tree): its HTML widgets' text and its live
    charts as SVG, in the order they appear."""

    def __init__(self, root: W.Widget, note: str = NOTE, *, claim: bool = True):
        self.root, self.note, self.claim = root, note, claim
        self.key = uuid.uuid4().hex
        self.handle = None
        self.draws = 0                      # SVGs drawn (a test counts them)
        self._svgs: dict[int, tuple[object, str]] = {}
        self._lock = threading.Lock()
        self._wanted = 0
        self._thread: threading.Thread | None = None
        #: Seconds without a new redraw before the copy is drawn: drawing SVGs holds the
        #: interpreter, so a copy drawn between two quick changes would slow the second.
        self.delay = 0.4

    def _part(self, w) -> str:
        if isinstance(w, live.LiveChart):
            if self.claim and w.static_key != self.key:   # its live chart hides it
                w.static_key = self.key
            got = self._svgs.get(id(w.chart))
            if got is None or got[0] is not w.chart:
                got = (w.chart, _svg(w.chart))
                self.draws += 1
            self._svgs[id(w.chart)] = got
            return f"<div>{got[1]}</div>"
        if isinstance(w, W.HTML):
            return f"<div>{w.value}</div>"
        if isinstance(w, W.Output):      # what was printed into it (an error message)
            return "".join(_output(o) for o in w.outputs)
        if isinstance(w, W.Box):
            return "".join(self._part(c) for c in w.children
                           if getattr(c.layout, "display", None) != "none")
        return ""

    def html(self) -> str:
        """The copy as it is now (drawing the charts not drawn yet)."""
        keep = {id(v.chart) for v in live_charts(self.root)}
        self._svgs = {k: v for k, v in self._svgs.items() if k in keep}
        head = (f"<p><small>{html.escape(self.note)}</small></p>" if self.note else "")
        return (f'<div class="fitgpp-static" data-fitgpp-for="{self.key}">{head}'
                f"{self._part(self.root)}{hide_dead_panel(self.key)}</div>")

    def show(self) -> None:
        """Display the copy below the panel (drawn now: the cell's saved output has it)."""
        from IPython.display import HTML
        self.handle = _display(HTML(self.html()), display_id=True)

    def refresh(self) -> None:
        """Redraw the copy in the background (the newest request wins); nothing before
        :meth:`show`."""
        if self.handle is None:
            return
        with self._lock:
            self._wanted += 1
            if self._thread is not None and self._thread.is_alive():
                return                      # the running thread picks the new request up
            self._thread = threading.Thread(target=self._work, daemon=True)
            self._thread.start()

    def _work(self) -> None:
        from IPython.display import HTML
        while True:
            with self._lock:
                seen = self._wanted
            time.sleep(self.delay)          # a control still moving: wait until it rests
            with self._lock:
                if self._wanted != seen:
                    continue
            try:
                self.handle.update(HTML(self.html()))
            except Exception as exc:  # noqa: BLE001 - the live panel must go on regardless
                self.handle.update(HTML(f"<pre>static copy failed: {html.escape(str(exc))}</pre>"))
            with self._lock:
                if self._wanted == seen:
                    self._thread = None
                    return

    def wait(self, timeout: float = 30.0) -> None:
        """Until the background redraw is done (for tests and scripts)."""
        t = self._thread
        if t is not None:
            t.join(timeout)


@contextmanager
def shown_while(widget):
    """Show ``widget`` in the running cell's output while the block runs, then blank it:
    a panel's first computation runs in its constructor, before the panel (and its
    progress bar) can be on screen. Gives the display handle (None outside a kernel): the
    block may show something else there meanwhile (a panel's first draw from one seed)."""
    handle = _display(widget, display_id=True) if in_kernel() else None
    try:
        yield handle
    finally:
        if handle is not None:
            handle.update({"text/plain": ""}, raw=True)


def display_with_copy(widget: W.Widget, copy: StaticCopy, what: str = "panel") -> None:
    """Display ``widget`` (live) and then ``copy`` below it, as two outputs of the cell.
    ``what`` the widget is, in the text shown where the widget cannot be (nbconvert)."""
    data = dict(widget._repr_mimebundle_())
    data["text/plain"] = f"(live {what}: needs its running kernel; its static copy follows)"
    _display(data, raw=True)
    copy.show()


class Figure(W.VBox):
    """One chart, live (:func:`fitgpp.workbook.live.show`), that keeps a static copy in the
    notebook as a panel does: ``Figure(plots.slowdown_cdf(runs))`` as a cell's last line
    draws it; a saved notebook reopened without its kernel, or converted by nbconvert,
    shows the copy (``alt.JupyterChart(chart)`` left "Error displaying widget: model not
    found" there, and nbconvert wrote ``<altair...JupyterChart object at 0x...>``)."""

    def __init__(self, chart):
        self.view = live.show(chart)
        super().__init__([self.view])
        self.static = StaticCopy(self, note="")

    def _ipython_display_(self):
        display_with_copy(self, self.static, what="chart")


@contextmanager
def previewed(widget):
    """Gives ``show()``: in a running kernel, display a picture of ``widget`` as it is now (its
    HTML and every live chart as SVG, as :class:`StaticCopy` draws them) in the running cell's
    output; the output is blanked when the block ends. A panel drawn from its first seed while
    its constructor still computes the rest shows itself so: its live charts would be drawn only
    once the kernel is idle (the front end asks the kernel for vega first). Outside a kernel
    ``show()`` does nothing."""
    handles = []

    def show():
        if in_kernel():
            from IPython.display import HTML
            handles.append(_display(HTML(StaticCopy(widget, note="", claim=False).html()),
                                    display_id=True))
    try:
        yield show
    finally:
        for handle in handles:
            handle.update({"text/plain": ""}, raw=True)
