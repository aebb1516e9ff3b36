"""A panel's "Export this view" at a chosen printed width: every figure file is that wide
(read from the PNG's pixels and the SVG's width), the manifest says so, the figure check
passes at that width, and the tables (CSV, LaTeX) are written beside them."""

from __future__ import annotations

import dataclasses
import json
import re
import struct

import pandas as pd
import pytest

from fitgpp.analysis.tables import tex_escape
from fitgpp.figures import names
from fitgpp.studies import FULL, QUICK, reproduce
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


def test_a_refused_figure_leaves_the_tables_and_the_other_figures_written(panel, tmp_path,
                                                                        monkeypatch, capsys):
    """Issue 35: RQ6 at the full size wrote nothing, not even its tables, for one refused
    figure. The tables are written first, every figure that passes too, then the error
    names the refused figure and why (the button prints it)."""
    from fitgpp.figures import export as E
    from fitgpp.workbook import panel_export as pe
    real = pe.view_charts

    def with_a_bad_one(p, width="full"):
        charts = real(p, width)
        spec = charts["rq3_selected_slowdown_cdf"]
        spec = spec.to_dict() if hasattr(spec, "to_dict") else dict(spec)
        return {**charts, "rq3_untitled": {k: v for k, v in spec.items() if k != "title"}}
    monkeypatch.setattr(pe, "view_charts", with_a_bad_one)
    monkeypatch.setattr(pe, "view_captions", lambda p, charts: {})
    with pytest.raises(E.FiguresRefused, match=r"(?s)rq3_untitled is not paper-ready.*caption"):
        export_view(panel, tmp_path, width="column", formats=(".svg",))
    man = json.loads((tmp_path / MANIFEST).read_text())
    assert set(man["tables"]) == {"rq3_table.csv", "rq3_table.tex", "rq3_selected_numbers.csv",
                                  "rq3_selected_numbers.tex"}
    assert "rq3_selected_slowdown_cdf.svg" in man["figures"]
    assert not [n for n in man["figures"] if "untitled" in n]
    area = panel.children[-1]
    area.folder.value, area.width.value = str(tmp_path / "button"), "column"
    capsys.readouterr()
    area.export()                  # (outside a kernel the Output widget passes prints through)
    said = capsys.readouterr().out
    assert "error: 1 figure(s) refused" in said and "rq3_untitled" in said, said
    assert "wrote" in said and (tmp_path / "button" / "rq3_table.tex").is_file()


def test_the_exported_trade_off_says_nothing_of_clicks_and_each_figure_has_its_caption(
        panel, tmp_path):
    """Issue 13: "(click a point: its slowdown distributions appear below)" in an exported
    figure's title; "Figure. Net." as a caption. The live view says what a click does, the
    file does not; each file's caption is its study's (the manifest's ``caption``)."""
    from fitgpp.studies.captions import CAPTIONS, caption
    assert "click a point" in str(panel.views["tradeoff"].chart.to_dict()["title"])
    export_view(panel, tmp_path, width="full", formats=(".svg",))
    man = json.loads((tmp_path / MANIFEST).read_text())["figures"]
    assert man["rq3_selected_tradeoff.svg"]["caption"] == CAPTIONS["selected_tradeoff"]
    assert man["rq3_change_vs_grace.svg"]["caption"] == panel.study.captions["change_vs_grace"]
    for name, rec in man.items():
        assert "click" not in (tmp_path / name).read_text().lower() + rec["caption"].lower()
    with pytest.raises(Exception, match=r"figure 'rq3_map_load80' of study 'rq3' has no "
                                        r"caption: declare one in the study's captions"):
        caption(panel.study, "rq3_map_load80")
    rq8 = reproduce.STUDIES["rq8"]      # one caption for a figure drawn per load
    assert caption(rq8, "rq8_map_load80") == rq8.captions["map"]


def test_a_table_keeps_every_key_of_its_rows():
    """Issue 11: rq6_table.tex had 72 rows cycling PRIO, FitGpp s=1, ... with no workload or
    restart cost. The keys of a study's table are its variant, each knob (in the unit the
    controls show) and the policy, read from the table's own columns."""
    from fitgpp.studies.keys import keyed
    from fitgpp.studies import rq6, rq7
    rows = [{"workload": w, "policy": p, "overhead_s": o, "overhead_min": o / 60, "te_p95": 1.0,
             "te_p95_lo": 1.0, "te_p95_hi": 1.0, "seeds": 3}
            for w in ("a", "b") for o in (0.0, 600.0) for p in ("PRIO", "RAND")]
    t, keys = keyed(pd.DataFrame(rows), rq6.RQ6)
    assert keys == {"workload": "workload", "overhead_min": "restart cost (min)",
                    "policy": "policy"}
    assert not t.duplicated(list(keys)).any()
    rows = [{"workload": r["workload"], "policy": r["policy"], "restart_overhead": r["overhead_s"],
             "te_p95": 1.0} for r in rows]
    t, keys = keyed(pd.DataFrame(rows), rq7.RQ7)          # seconds only: minutes added
    assert list(keys) == ["workload", "restart_overhead_min", "policy"]
    assert sorted(set(t["restart_overhead_min"])) == [0.0, 10.0]


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


# ------------------------------------------------------------------ every study, both widths
#: The full size's grid (its knobs, run lengths and loads; RQ8's full grid from 5,000 jobs on,
#: :data:`fitgpp.studies.rq8.FULL_FROM`), each fixed by ``Study.at_size`` ...
SHAPE = dataclasses.replace(FULL, run_lengths=(100, 150, 200, 250, 300))
#: ... run with few jobs and seeds (three: enough for intervals, as at the full size).
FEW = dataclasses.replace(SHAPE, n_jobs=300, seeds=(0, 1, 2), real_jobs=300, timeline_jobs=100,
                          workers=0)
#: A caption made from a figure's name ("Map load80.", "Paper-default reloads.", "Net.").
PLACEHOLDER = re.compile(r"^[A-Z][a-z0-9 -]*\.$")


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    return tmp_path_factory.mktemp("every-study-cells")


def _key_headings(study) -> list[str]:
    """The headings of the columns that tell a study's rows apart: its variant, each knob,
    the policy (names as the controls give them)."""
    dims = ([study.variant_dim] if study.variants else []) + list(study.knobs) + ["policy"]
    return [names.title(d) for d in dims]


def _unique_by(header: list[str], rows: list[list[str]], keys: list[str]) -> None:
    """Every key heading is in ``header`` and no two ``rows`` share their key cells."""
    assert set(keys) <= set(header), (keys, header)
    at = [header.index(k) for k in keys]
    seen = [tuple(r[i] for i in at) for r in rows]
    assert len(set(seen)) == len(seen), [s for s in seen if seen.count(s) > 1][:3]


def _tex_rows(text: str) -> tuple[list[str], list[list[str]]]:
    body = text.split("\\midrule\n")[1].split("\\bottomrule")[0]
    head = text.split("\\toprule\n")[1].split("\\midrule")[0]

    def cells(line):
        return [c.strip() for c in line.strip().removesuffix("\\\\").split(" & ")]
    return cells(head), [cells(ln) for ln in body.strip().splitlines()]


def _domains_within_range(spec, where="chart") -> list[str]:
    """Axes with a fixed domain that starts below the range of the quantity they title
    (:func:`fitgpp.figures.plots.axes.quantity_range`)."""
    from fitgpp.figures.plots.axes import quantity_range
    out = []
    if isinstance(spec, dict):
        for ch in ("x", "y"):
            e = (spec.get("encoding") or {}).get(ch)
            dom = ((e or {}).get("scale") or {}).get("domain") if isinstance(e, dict) else None
            title = (e.get("title") or (e.get("axis") or {}).get("title")) \
                if isinstance(e, dict) else None
            title = " ".join(title) if isinstance(title, list) else title
            if isinstance(dom, list) and title and len(dom) == 2 and \
                    isinstance(dom[0], (int, float)) and dom[0] < quantity_range(title)[0] - 1e-9:
                out.append(f"{where}: {title!r} from {dom[0]}")
        for k, v in spec.items():
            if k not in ("datasets", "data", "config"):
                out += _domains_within_range(v, f"{where}.{k}")
    elif isinstance(spec, list):
        for i, v in enumerate(spec):
            out += _domains_within_range(v, f"{where}[{i}]")
    return out


#: Every study at both sizes (RQ8's at the full size's grid too, since its figures were split
#: per load and laid out for both widths).
CASES = [(key, size) for key in reproduce.STUDIES for size in ("quick", "full")]


@pytest.mark.slow
@pytest.mark.parametrize("key,size", CASES)
def test_every_study_exports_at_both_widths_with_captions_and_keyed_tables(key, size, cells,
                                                                          tmp_path, monkeypatch):
    """Issue 35: "Export this view" at column width wrote nothing for RQ6 at the full size
    (plot-area 16 %); its tables had rows without their keys (72 rows of RQ6 with no workload
    or restart cost); captions were placeholders ("Net.") or live-view instructions ("click
    a point"); axes ran below their quantity's range. Every study's panel, at the quick size
    and at the full size's grid (few jobs), exports at both widths: every figure passes the
    check, each with its study's caption, and every table format keeps its rows' keys."""
    from fitgpp.analysis.tables import to_latex
    from fitgpp.studies.captions import declared
    from fitgpp.workbook import panel_export as pe
    study = reproduce.STUDIES[key]
    panel = Panel(study.at_size(QUICK if size == "quick" else SHAPE),
                  QUICK if size == "quick" else FEW, cache=cells)
    shown, real = {}, pe.view_charts

    def keep(p, width="full"):                      # the charts the export writes, kept
        shown[width] = real(p, width)
        return shown[width]
    monkeypatch.setattr(pe, "view_charts", keep)
    for width in ("column", "full"):
        out = tmp_path / width
        pe.export_view(panel, out, width=width, formats=(".svg",))   # nothing refused
        man = json.loads((out / MANIFEST).read_text())
        assert not files(out), files(out)
        for name, rec in man["figures"].items():
            text = " ".join([rec["caption"], rec["title"]])
            assert rec["caption"] and not PLACEHOLDER.match(rec["caption"]), (name, rec["caption"])
            assert "click" not in text.lower(), (name, text)
            assert "click" not in (out / name).read_text().lower(), name   # nor drawn
        for name in panel.result.charts:            # every figure of the study: its own caption
            assert declared(panel.study, name), f"{name} has no caption declared"
        bad = [p for c in shown[width].values() for p in _domains_within_range(
            c.to_dict() if hasattr(c, "to_dict") else c)]
        assert not bad, bad
        # the table, in every format, with every key of its rows
        keys = _key_headings(panel.study)
        head, rows = _tex_rows((out / f"{key}_table.tex").read_text())
        assert len(rows) == len(pd.read_csv(out / f"{key}_table.csv")) > 0
        _unique_by(head, rows, [tex_escape(k) for k in keys])
        table = pe.view_tables(panel)[f"{key}_table"]
        _unique_by(list(table.shown.columns), table.shown.to_numpy().tolist(), keys)
        md = table.to_markdown().splitlines()
        md = [ln for ln in md if ln.startswith("| ") and not ln.startswith("|---")]
        _unique_by([c.strip() for c in md[0].strip("| ").split(" | ")],
                   [[c.strip() for c in ln.strip("| ").split(" | ")] for ln in md[1:]], keys)
        assert all(f">{k}<" in table._repr_html_() for k in keys)
        assert to_latex(table) == (out / f"{key}_table.tex").read_text()


def test_the_button_says_when_the_export_has_ended(panel, tmp_path, capsys):
    """Tables are written before figures, so a manifest with tables is no sign the export
    ended (the browser test read the folder between the two and found no PNG): the button's
    last line says it, with the number of files written, and only when nothing failed."""
    area = panel.children[-1]
    area.folder.value, area.width.value = str(tmp_path / "out"), "column"
    capsys.readouterr()
    area.export()
    lines = capsys.readouterr().out.strip().splitlines()
    written = sorted(p for p in (tmp_path / "out").iterdir() if p.name != MANIFEST)
    assert lines[-1] == f"done: {len(written)} files in {tmp_path / 'out'}", lines[-3:]
    assert not any(line.startswith("done:") for line in lines[:-1]), lines
