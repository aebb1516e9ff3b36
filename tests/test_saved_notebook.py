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
