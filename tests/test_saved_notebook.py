"""A notebook run and saved keeps its figures: its panels' static copies (numbers and SVG
charts) are outputs of their own, so nbconvert's HTML shows them without a kernel or widget
state, where the widgets alone left only a reference to a model that no longer exists."""

from __future__ import annotations

import nbformat
from nbconvert import HTMLExporter

from fitgpp.workbook.static import svgs
from test_notebooks import NOTEBOOKS, execute


def test_a_saved_research_notebook_converts_to_html_with_its_figures(tmp_path, monkeypatch):
    nb = execute(NOTEBOOKS / "02_rq1_te_latency.ipynb", tmp_path, monkeypatch, tmp_path / "cache")
    saved = tmp_path / "saved.ipynb"
    nbformat.write(nb, saved)
    nb = nbformat.read(saved, as_version=4)
    nbformat.validate(nb)
    panels = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
              and "live panel" in o["data"].get("text/plain", "")]
    copies = [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code"
              for o in c.outputs if "fitgpp-static" in o.get("data", {}).get("text/html", "")]
    assert panels and len(copies) == len(panels)
    for copy in copies:   # every chart of the panel, drawn: the trade-off, the CDFs, the figures
        drawn = svgs(copy)
        assert len(drawn) >= 3 and all(d.count("<path") > 5 for d in drawn)
        assert "FitGpp s=4" in drawn[1] and "<table" in copy
    nb.metadata.pop("widgets", None)     # as if saved without widget state (JupyterLab's default)
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert body.count('<div class="fitgpp-static"') == len(copies)
    assert svgs(body) == [d for c in copies for d in svgs(c)]


def test_a_saved_quickstart_keeps_the_workbench_and_its_chart(tmp_path, monkeypatch):
    """Issue 35, item 3: a saved 00 lost all its figures: reopened it said "Error displaying
    widget: model not found" twice, and nbconvert's HTML held ``<altair.jupyter...JupyterChart
    object at 0x...>`` and ``Workbench(children=(GridBox(...``. Each widget output (the one
    chart and the workbench) is followed by its static copy: the workbench's summary table
    and its three charts (the CDFs and both utilizations), drawn."""
    import re
    nb = execute(NOTEBOOKS / "00_quickstart.ipynb", tmp_path, monkeypatch, tmp_path / "cache")
    saved = tmp_path / "saved.ipynb"
    nbformat.write(nb, saved)
    nb = nbformat.read(saved, as_version=4)
    nbformat.validate(nb)
    live = [o["data"]["text/plain"] for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    copies = [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code"
              for o in c.outputs if "fitgpp-static" in o.get("data", {}).get("text/html", "")]
    assert len(live) == 2 and len(copies) == 2, (live, len(copies))
    assert all("its static copy follows" in t for t in live), live
    chart, bench = copies
    assert len(svgs(chart)) == 1 and "FitGpp s=4" in svgs(chart)[0]
    drawn = svgs(bench)
    assert len(drawn) == 3 and all(d.count("<path") > 5 for d in drawn)
    assert "<table" in bench and "change vs FIFO" in bench and "TE p95" in bench
    nb.metadata.pop("widgets", None)     # as if saved without widget state
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert not re.search(r"object at 0x|Workbench\(children|GridBox\(", body)
    assert body.count('<div class="fitgpp-static"') == 2
    assert svgs(body) == [d for c in copies for d in svgs(c)]
