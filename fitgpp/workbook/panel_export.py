"""A panel's export area: figures and tables of what the panel shows when the button is
pressed (after a control change or an added value, not the result the cell ran with).

    paths = export_view(panel, "figures", width="column")   # what the Export button does

The figures are laid out for the printed width chosen (``"column"``, 3.3 in, or ``"full"``,
7 in: :data:`fitgpp.figures.plots.PRESETS`): drawn again inside :func:`fitgpp.figures.plots.printed_at`
(:func:`fitgpp.figures.plots.at_width`), so fonts, legends and panels are those of that width and
the figure check passes there; the manifest records the width of each file written.
Figures go through :func:`fitgpp.figures.export.export` (PNG, SVG, PDF with the configuration
inside and in ``manifest.json``, each with the caption its study declares,
:func:`fitgpp.studies.captions.declared`); tables through
:func:`fitgpp.figures.export.export_table` (CSV at full precision, LaTeX as on screen, both with
every key of their rows, :func:`fitgpp.studies.keys.keyed`) into the same folder and manifest.
Nothing is overwritten: a repeated export gets the next free names. The tables are written
first; a figure the figure check refuses is left out, every other one written, and then an
:class:`~fitgpp.figures.export.FiguresRefused` names each refused figure and why.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import ipywidgets as W

from fitgpp.figures import export as _export
from fitgpp.figures import plots
from fitgpp.errors import FitgppError
from fitgpp.figures.export import ExportError
from fitgpp.analysis.tables import PeopleTable, people_table
from fitgpp.figures.export import export_table
from fitgpp.studies.captions import declared
from fitgpp.studies.keys import keyed_table


#: The printed widths the export offers: label -> preset name.
WIDTHS = {"full width (7 in)": "full", "column (3.3 in)": "column"}


def view_config(panel) -> dict:
    """What the panel shows, as its manifest records it: what ran
    (:func:`fitgpp.studies.manifest.record` of the outcome shown: the grid's dimensions as
    swept, values added included, the size, seeds, tick and every configuration's policy,
    code digest and own fields), the size's name, the ``selection`` (the controls that
    pick the configuration shown: its policy and only the fields that policy has, the
    workload, the seed drawn and the number of seeds) and the ``selected`` configuration's
    record."""
    from fitgpp.studies.manifest import configuration, record
    from fitgpp.workbook.views import conf_of
    sel = panel._selection_for_outcome()
    full = panel.selection()
    return {**record(panel.o), "size": panel.size_name,
            "selection": sel | {k: full[k] for k in ("seed", "seeds") if k in full},
            "selected": configuration(panel.o, conf_of(panel.o, sel))}


def view_charts(panel, width: str = "full") -> dict:
    """The study's figures for the current declaration and the selected cell's slowdown
    distributions, laid out for the printed ``width`` (``"column"`` or ``"full"``)."""
    if width not in WIDTHS.values():
        raise ExportError(f"export width {width!r}: use one of {sorted(WIDTHS.values())}")
    return plots.at_width(lambda: _charts(panel))(width)


def _charts(panel) -> dict:
    """The panel's charts at the width of the enclosing :func:`fitgpp.figures.plots.printed_at`:
    the study's on screen when they were made at that width, else made anew (the study's
    analysis of the Outcome the panel holds, none when that analysis failed), the trade-off
    at the selection (made anew: on screen its title says what a click does, which a figure
    for print does not) and the cell's CDFs."""
    from fitgpp.workbook.views import cell_view, tradeoff_view
    key = panel.study.key
    # the trade-off the panel shows above the cell is part of the view (02 wrote six
    # figures without it; 08 and a researcher's study in 09 only the CDF)
    again = {f"{key}_selected_tradeoff": tradeoff_view(panel.o, panel.selection(), panel.table,
                                                       live=False)} \
        if "tradeoff" in panel.views else {}
    now = {**panel.result.charts, f"{key}_selected_slowdown_cdf": panel.views["cell"].chart}
    if all(_preset(c) == plots.preset().name for c in now.values()):
        return _one_of_each({**panel.result.charts, **again,
                             f"{key}_selected_slowdown_cdf": panel.views["cell"].chart})
    study = panel.result.charts and panel.study.analysis(panel.o).charts
    sel = panel._selection_for_outcome() | {"seed": panel.selection()["seed"]}
    return _one_of_each({**(study or {}), **again,
                         f"{key}_selected_slowdown_cdf": cell_view(panel.o, sel)})


def _one_of_each(charts: dict) -> dict:
    """``charts`` less a panel view that draws the same data as a study figure already in it
    (the selected trade-off at the settings of one of RQ2's ``s_tradeoff`` figures): the
    export writes that figure once, under the study's name, which the figure check asks."""
    from fitgpp.figures.print_rules import identical
    twins = {p.where for p in identical(charts) if "_selected_" in p.where}
    return {k: c for k, c in charts.items() if k not in twins}


def _preset(chart) -> str | None:
    """The printed width ``chart`` was laid out for (its preset's name), if it records one."""
    meta = getattr(chart, "usermeta", None)
    meta = meta if isinstance(meta, dict) else (
        chart.get("usermeta") if isinstance(chart, dict) else None) or {}
    return (meta.get("fitgpp") or {}).get("preset")


def view_tables(panel) -> dict[str, PeopleTable]:
    """The study's table for the current declaration, every key of its rows first
    (:func:`fitgpp.studies.keys.keyed_table`), and the selection's numbers."""
    from fitgpp.workbook.views import label, selection_numbers
    sel = panel._selection_for_outcome()
    nums = selection_numbers(panel.o, sel).reset_index()
    key = panel.study.key
    result = SimpleNamespace(table=panel.result.table if hasattr(panel.result, "title")
                             else panel.table, title=panel.study.title,
                             columns=panel.study.columns, baseline=panel.o.baseline_label())
    return {f"{key}_table": keyed_table(result, panel.study),
            f"{key}_selected_numbers": people_table(nums, [c for c in nums.columns
                                                           if c != "metric"],
                                                    ids={"metric": "metric"}, seeds=None,
                                                    caption=label(panel.o, sel))}


def view_captions(panel, charts: dict) -> dict[str, str]:
    """The caption each of ``charts`` has (:func:`fitgpp.studies.captions.declared`; a figure
    without one is captioned by its title, and the figure check refuses one without either)."""
    return {name: said for name in charts if (said := declared(panel.study, name))}


def export_view(panel, out_dir, *, width: str = "full", log=None,
                formats=plots.FORMATS) -> list[Path]:
    """Write the panel's current tables and figures (laid out ``width`` wide: ``"column"``,
    3.3 in, or ``"full"``, 7 in; in ``formats``) into ``out_dir``; the paths written. A
    figure the figure check refuses is not written, every other file is, and then
    :class:`~fitgpp.figures.export.FiguresRefused` names it and why."""
    charts = view_charts(panel, width)   # everything made before a file is written
    cfg, tables = {**view_config(panel), "width": width}, view_tables(panel)
    captions = view_captions(panel, charts)
    paths: list[Path] = []
    for name, table in tables.items():
        paths += export_table(table, name, out_dir, config=cfg)
        if log:
            log(f"wrote {paths[-2]} and {paths[-1].name}")
    try:
        paths += _export.export(charts, out_dir, config=cfg, log=log, formats=formats,
                                captions=captions, partial=True)
    except _export.FiguresRefused as exc:     # said with every file written, tables too
        raise _export.FiguresRefused(exc.refused, paths + exc.written) from None
    return paths


def export_area(panel, out_dir: str = "figures") -> W.VBox:
    """A folder box, a width menu and a button that calls :func:`export_view` on ``panel``."""
    box = W.Text(value=str(out_dir), description="export to", style={"description_width": "80px"},
                 layout=W.Layout(width="330px"))
    width = W.Dropdown(options=list(WIDTHS.items()), value="full", description="width",
                       style={"description_width": "50px"}, layout=W.Layout(width="230px"),
                       tooltip="the printed width the figures are laid out for")
    button = W.Button(description="Export this view", icon="download", button_style="primary",
                      tooltip="figures (PNG, SVG, PDF) and tables (CSV, LaTeX) of what the "
                              "panel shows now; existing files are kept")
    out = W.Output()

    def click(_b=None):
        out.clear_output(wait=True)
        with out:
            try:
                export_view(panel, Path(box.value).expanduser(), width=width.value, log=print)
            except FitgppError as exc:
                print(f"error: {exc}")

    button.on_click(click)
    area = W.VBox([W.HBox([box, width, button], layout=W.Layout(flex_flow="row wrap")), out])
    area.export, area.folder, area.width = click, box, width
    return area
