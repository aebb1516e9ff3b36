"""Hard to break, round three (issue 28): exported tables are safe to open in a spreadsheet,
exports fail cleanly and leave nothing the manifest does not list, the manifest is JSON and
lists what two writers at once wrote."""

from __future__ import annotations

import csv
import json
import math
import multiprocessing
import os
from types import SimpleNamespace

import pandas as pd
import pytest

from fitgpp.figures.export import MANIFEST, ExportError, save_manifest
from fitgpp.analysis.tables import people_table
from fitgpp.figures.export import export_table

HOSTILE = ["=HYPERLINK(\"http://x\",\"click\")", "+1+cmd|' /C calc'!A0", "-2+3+cmd|' /C x'!A0",
           "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1"]


def _table(policies):
    df = pd.DataFrame({"policy": policies, "slowdown_p95": [-1.5 + i for i in range(len(policies))],
                       "n": list(range(len(policies)))})
    return people_table(df, {"slowdown_p95": "TE p95"}, ids={"policy": "policy"}, seeds=None)


def _cells(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_exported_csv_defuses_formulas_and_keeps_numbers(tmp_path):
    t = _table([*HOSTILE, "fifo", "-1.5", "a\rb\nc"])
    path = export_table(t, "t", tmp_path, config={"study": "x"})[0]
    rows = _cells(path)
    head, body = rows[0], rows[1:]
    col = head.index("policy")
    for cell, original in zip([r[col] for r in body], [*HOSTILE, "fifo", "-1.5", "a\rb\nc"],
                                  strict=True):
        if original in ("fifo", "-1.5", "a\rb\nc"):
            assert cell == original     # plain text and text that is a number: as they are
        else:
            assert cell == "'" + original, cell
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
    back = pd.read_csv(path)
    assert back["slowdown_p95"].tolist() == t.full["slowdown_p95"].tolist()  # numbers stay
    assert back["slowdown_p95"].min() < 0


def test_a_heading_that_is_a_formula_is_defused():
    from fitgpp.analysis.tables import safe_csv
    text = safe_csv(pd.DataFrame({"=cmd|' /C calc'!A0": ["a"], "x": [-3]}))
    assert text.split("\r\n") == ["'=cmd|' /C calc'!A0,x", "a,-3", ""]


def test_the_panels_export_button_writes_defused_tables_and_reports_errors(tmp_path, capsys,
                                                                           monkeypatch):
    from fitgpp.workbook import panel_export
    t = _table(HOSTILE[:1])
    monkeypatch.setattr(panel_export, "view_charts", lambda panel, width: {})
    monkeypatch.setattr(panel_export, "view_config", lambda panel: {"study": "x"})
    monkeypatch.setattr(panel_export, "view_tables", lambda panel: {"sel": t})
    area = panel_export.export_area(object(), str(tmp_path / "ok"))
    area.export()
    assert _cells(tmp_path / "ok" / "sel.csv")[1][0] == "'" + HOSTILE[0]
    import fitgpp.figures.export as E

    def read_only(path, data, overwrite):   # what a read-only folder (for anyone but root) does
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr(E, "_write", read_only)
    area.folder.value = str(tmp_path / "ro")
    area.export()    # must not raise: the button shows the error
    text = capsys.readouterr().out   # (outside a kernel, the output area lets prints through)
    assert "error: cannot write table 'sel'" in text and "Permission denied" in text
    assert not [p for p in (tmp_path / "ro").iterdir() if p.name != MANIFEST]


def test_export_table_into_a_folder_it_cannot_write_is_an_export_error(tmp_path, monkeypatch):
    import fitgpp.figures.export as E
    real = E._write

    def fail_second(path, data, overwrite):   # the .tex write fails (a full or read-only disk)
        if path.suffix == ".tex":
            raise PermissionError(13, "Permission denied", str(path))
        real(path, data, overwrite)
    monkeypatch.setattr(E, "_write", fail_second)
    with pytest.raises(ExportError, match=r"cannot write table 't' in .*Permission denied"):
        export_table(_table(["fifo"]), "t", tmp_path, config={})
    assert sorted(p.name for p in tmp_path.iterdir()) == []   # no t.csv left behind


def test_a_dangling_symlink_takes_its_name(tmp_path):
    (tmp_path / "t.tex").symlink_to(tmp_path / "nowhere")
    paths = export_table(_table(["fifo"]), "t", tmp_path, config={})
    assert [p.name for p in paths] == ["t-2.csv", "t-2.tex"]
    man = json.loads((tmp_path / MANIFEST).read_text())
    assert sorted(man["tables"]) == ["t-2.csv", "t-2.tex"]
    assert not (tmp_path / "t.csv").exists()


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_config_value_is_no_bare_nan_in_the_manifest(tmp_path, bad):
    export_table(_table(["fifo"]), "t", tmp_path, config={"load": bad, "deep": [{"x": bad}]})
    text = (tmp_path / MANIFEST).read_text()
    man = json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in the manifest"))
    entry = man["tables"]["t.csv"]["config"]
    assert entry == {"load": repr(bad), "deep": [{"x": repr(bad)}]}


def _writer(folder, k, n):
    from fitgpp.figures.export import _read_manifest
    path = folder / MANIFEST
    for i in range(n):
        m = _read_manifest(path)     # read, then (later) write: the lost-update window
        m["figures"][f"w{k}-{i}.png"] = {"chart": f"w{k}-{i}"}
        save_manifest(path, m)


def test_two_writers_at_once_both_end_up_in_the_manifest(tmp_path):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(tmp_path, k, 40)) for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    figs = json.loads((tmp_path / MANIFEST).read_text())["figures"]
    assert len(figs) == 120, len(figs)
    assert not [p for p in tmp_path.iterdir() if p.name != MANIFEST]  # no tmp or lock file


def test_a_question_named_twice_runs_once(tmp_path, monkeypatch):
    from fitgpp.studies import reproduce
    calls = []

    class Once:
        def result(self, size, **kw):
            calls.append(size)
            return SimpleNamespace(charts={}, table=pd.DataFrame({"policy": ["=1+1"]}),
                                   stats={"unique": 0, "computed": 0, "cached": 0},
                                   title="t", finding="f", key="rq1", config={})
    monkeypatch.setitem(reproduce.STUDIES, "rq1", Once())
    monkeypatch.setattr(reproduce, "write_results", lambda *a, **k: None)
    out = reproduce.run_all(tmp_path, which=["rq1", "rq1"], cache=False, log=lambda s: None)
    assert len(calls) == 1 and list(out) == ["rq1"]
    assert (tmp_path / "rq1.csv").read_bytes() == b"policy\r\n'=1+1\r\n"   # defused there too


def test_a_name_taken_by_another_writer_mid_export_moves_to_the_next(tmp_path, monkeypatch):
    """Two exports into one folder at once: the second picks ``f`` too, finds it taken when it
    writes, and takes ``f-2`` instead of failing (its first formats taken back)."""
    import altair as alt

    import fitgpp.figures.export as E
    chart = alt.Chart(pd.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q")
    real, raced = E._write, []

    def race(path, data, overwrite):
        if path.name == "f.svg" and not raced:   # the other writer gets there first
            raced.append(path)
            (path.parent / "f.svg").write_bytes(b"theirs")
        real(path, data, overwrite)
    monkeypatch.setattr(E, "_write", race)
    paths = E.export({"f": chart}, tmp_path, config={"a": 1}, check=False)
    assert [p.name for p in paths] == ["f-2.png", "f-2.svg", "f-2.pdf"]
    assert not (tmp_path / "f.png").exists()   # ours, taken back
    assert (tmp_path / "f.svg").read_bytes() == b"theirs"
    figs = json.loads((tmp_path / MANIFEST).read_text())["figures"]
    assert sorted(figs) == ["f-2.pdf", "f-2.png", "f-2.svg"]


def _export_four(folder):
    import altair as alt

    import fitgpp.figures.export as E
    for k in range(4):
        chart = alt.Chart(pd.DataFrame({"x": [1, k + 2]})).mark_point().encode(x="x:Q")
        E.export({f"f{k}": chart}, folder, config={"k": k}, check=False, formats=[".svg"])


def test_two_processes_exporting_into_one_folder_are_both_listed(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_export_four, args=(tmp_path,)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    files = sorted(p.name for p in tmp_path.glob("*.svg"))
    assert len(files) == 8, files
    assert sorted(json.loads((tmp_path / MANIFEST).read_text())["figures"]) == files
