"""A panel's export area: figures and tables of what the panel shows when the button is
pressed (after a control change or an added value, not the result the cell ran with).

    paths = export_view(panel, "figures")   # what the Export button does

Figures go through :func:`fitgpp.export.export` (PNG, SVG, PDF with the configuration
inside and in ``manifest.json``); tables through :func:`fitgpp.tables.export_table` (CSV
at full precision, LaTeX as on screen) into the same folder and manifest. Nothing is
overwritten: a repeated export gets the next free names.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import ipywidgets as W

from . import export as _export
from .errors import FitgppError
from .tables import PeopleTable, export_table, people_table, rq_table


def view_config(panel) -> dict:
    """The declaration and selection the panel shows: study, model, its dimensions at the
    current size (values added included) and the value of every control."""
    dims = panel.study.dimensions(panel.size)
    return {"study": panel.study.key, "model": panel.study.model, "size": panel.size_name,
            "dimensions": dims, "selection": panel.selection()}


def view_charts(panel) -> dict:
    """The study's figures for the current declaration and the selected cell's slowdown
    distributions as drawn now."""
    return {**panel.result.charts,
            f"{panel.study.key}_selected_slowdown_cdf": panel.views["cell"].chart}


def view_tables(panel) -> dict[str, PeopleTable]:
    """The study's table for the current declaration and the selection's numbers."""
    from .panels import label, selection_numbers
    sel = panel._selection_for_outcome()
    nums = selection_numbers(panel.o, sel).reset_index()
    key = panel.study.key
    result = panel.result if hasattr(panel.result, "title") else SimpleNamespace(
        table=panel.table, title=panel.study.title)
    return {f"{key}_table": rq_table(result),
            f"{key}_selected_numbers": people_table(nums, [c for c in nums.columns
                                                           if c != "metric"],
                                                    ids={"metric": "metric"}, seeds=None,
                                                    caption=label(panel.o, sel))}


def export_view(panel, out_dir, *, log=None) -> list[Path]:
    """Write the panel's current figures and tables into ``out_dir``; the paths written."""
    cfg, tables = view_config(panel), view_tables(panel)   # all made before a file is written
    paths = _export.export(view_charts(panel), out_dir, config=cfg, log=log)
    for name, table in tables.items():
        paths += export_table(table, name, out_dir, config=cfg)
        if log:
            log(f"wrote {paths[-2]} and {paths[-1].name}")
    return paths


def export_area(panel, out_dir: str = "figures") -> W.VBox:
    """A folder box and a button that calls :func:`export_view` on ``panel``."""
    box = W.Text(value=str(out_dir), description="export to", style={"description_width": "80px"},
                 layout=W.Layout(width="330px"))
    button = W.Button(description="Export this view", icon="download", button_style="primary",
                      tooltip="figures (PNG, SVG, PDF) and tables (CSV, LaTeX) of what the "
                              "panel shows now; existing files are kept")
    out = W.Output()

    def click(_b=None):
        out.clear_output(wait=True)
        with out:
            try:
                export_view(panel, Path(box.value).expanduser(), log=print)
            except FitgppError as exc:
                print(f"error: {exc}")

    button.on_click(click)
    area = W.VBox([W.HBox([box, button]), out])
    area.export, area.folder = click, box
    return area
