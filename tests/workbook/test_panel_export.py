"""A panel's "Export this view" at a chosen printed width: every figure file is that wide
(read from the PNG's pixels and the SVG's width), the manifest says so, the figure check
passes at that width, and the tables (CSV, LaTeX) are written beside them."""

from __future__ import annotations

import json
import struct

import pytest

from fitgpp.studies import reproduce
from fitgpp.figures.files import MANIFEST, file_inches
from fitgpp.figures.export import ExportError
from fitgpp.figures.print_rules import files
from fitgpp.workbook.panel_export import WIDTHS, export_view
from fitgpp.workbook.panels import Panel
from fitgpp.studies.reproduce import Size

TINY = Size(n_jobs=120, seeds=(0, 1), timeline_jobs=50, real_jobs=200)
INCHES = {"column": 3.3, "full": 7.0}


@pytest.fixture(scope="module")
def panel(tmp_path_factory):
    study = reproduce.STUDIES["rq3"].replace(knobs={"grace_scale": (1.0, 4.0)})
    return Panel(study, TINY, cache=tmp_path_factory.mktemp("panel-export-cache"))


def _png_px(data: bytes) -> int:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">I", data[16:20])[0]


@pytest.mark.parametrize("width", ["column", "full"])
def test_the_view_exports_at_the_chosen_width(panel, width, tmp_path):
    area = panel.children[-1]
    area.folder.value, area.width.value = str(tmp_path), width
    area.export()                                  # what the button does
    man = json.loads((tmp_path / MANIFEST).read_text())
    figs = man["figures"]
    # every chart the panel shows: the study's, the trade-off and the cell's CDFs
    names = {f"{n}.svg" for n in panel.result.charts} | {"rq3_selected_slowdown_cdf.svg",
                                                          "rq3_selected_tradeoff.svg"}
    assert names <= set(figs), sorted(figs)
    for name, rec in figs.items():
        data = (tmp_path / name).read_bytes()
        if name.endswith(".png"):                  # 300 dpi: 990 px for 3.3 in, 2100 for 7
            assert abs(_png_px(data) - INCHES[width] * rec["dpi"]) <= rec["dpi"] / 72 + 1, name
        if name.endswith(".svg"):
            assert abs(file_inches(data, ".svg") - INCHES[width]) <= 1 / 72, name
        assert rec["preset"] == width and abs(rec["inches"] - INCHES[width]) <= 1 / 72, rec
        assert rec["config"]["width"] == width
    assert not files(tmp_path), files(tmp_path)    # the figure check's width rule, per file
    assert set(man["tables"]) == {"rq3_table.csv", "rq3_table.tex", "rq3_selected_numbers.csv",
                                  "rq3_selected_numbers.tex"}
    assert r"\toprule" in (tmp_path / "rq3_table.tex").read_text()
    assert not [o for o in area.children[-1].outputs if "error" in str(o)], area.children[-1].outputs


def test_the_width_menu_offers_the_two_presets_and_a_bad_width_is_named(panel, tmp_path):
    assert [v for _, v in panel.children[-1].width.options] == list(WIDTHS.values())
    assert set(WIDTHS.values()) == set(INCHES)
    with pytest.raises(ExportError, match=r"export width 'a4'"):
        export_view(panel, tmp_path, width="a4")
    assert not list(tmp_path.iterdir())            # nothing written


def test_a_panel_view_that_repeats_a_study_figure_is_exported_once():
    """Notebook 03 (browser): the selected trade-off at P=3 draws the same data as the study's
    rq2_s_tradeoff_P3 figure, and the figure check refused the whole export ("identical")."""
    import altair as alt
    import pandas as pd

    from fitgpp.workbook.panel_export import _one_of_each
    df = pd.DataFrame({"x": [1, 2], "y": [3, 4]})
    same = alt.Chart(df).mark_point().encode(x="x:Q", y="y:Q")
    other = alt.Chart(df.assign(y=[5, 6])).mark_point().encode(x="x:Q", y="y:Q")
    charts = {"rq2_s_tradeoff_P3": same, "rq2_selected_tradeoff": same.properties(title="t"),
              "rq2_selected_slowdown_cdf": other}
    assert list(_one_of_each(charts)) == ["rq2_s_tradeoff_P3", "rq2_selected_slowdown_cdf"]
    charts.pop("rq2_s_tradeoff_P3")
    assert list(_one_of_each(charts)) == ["rq2_selected_tradeoff", "rq2_selected_slowdown_cdf"]
