"""Hard to break, round four (issue 37): no label kills the process that draws it. vl-convert
aborts the whole interpreter on a control character in a title or legend (in a notebook: a
dead kernel) and refuses a lone surrogate; every way fitgpp draws a figure (render, export
with its check, a panel's static copy) draws such text as its code point instead. The drawing
runs in a child process, since on a panic the process is gone. And an exported table never
escapes as a UnicodeEncodeError."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from fitgpp.analysis.tables import people_table
from fitgpp.figures.export import ExportError, MANIFEST, export_table

#: Every character the renderer cannot take raw (tests/analysis/test_hard_text.py's list).
HIDDEN = ([chr(c) for c in range(32) if chr(c) not in "\t\n\r"] + ["\x7f"]
          + [chr(c) for c in range(0x80, 0xA0)] + ["\ud800", "\udfff", "\ufffe", "\uffff"]
          + [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))])

DRAW = textwrap.dedent("""
    import json, sys, tempfile
    import xml.etree.ElementTree as ET
    import altair as alt, pandas as pd
    from fitgpp.figures import plots
    from fitgpp.figures import export as E
    from fitgpp.figures.plots.render import render
    label = json.loads(sys.argv[1])
    df = pd.DataFrame({"x": [1.0, 2.0, 1.0, 2.0], "y": [1.0, 4.0, 2.0, 3.0],
                       "k": [label, label, "b", "b"]})
    p = plots.preset("column")
    chart = plots._finish(alt.Chart(df).mark_line().encode(
        x=alt.X("x:Q", title="time " + label), y=alt.Y("y:Q", title="waiting " + label),
        color=alt.Color("k:N", title="queue " + label),
        tooltip=[alt.Tooltip("k:N", title=label)]).properties(width=plots._panel(p, 1)),
        p, "A title " + label, notes=["a note " + label])
    for ext in (".png", ".svg", ".pdf"):
        data = render(chart, ext)
        assert len(data) > 100, ext
    svg = render(chart, ".svg")
    ET.fromstring(svg)                      # well-formed XML
    out = tempfile.mkdtemp()
    # (with the figure check, but for the long lists, whose code points fill the page)
    paths = E.export({"f": chart}, out, config={"label": label}, check=len(label) < 8)
    assert [q.name for q in paths] == ["f.png", "f.svg", "f.pdf"]
    for q in paths:
        assert E.read_config(q)["config"] == {"label": label}
    from fitgpp.workbook import static
    assert static.svgs(static._svg(chart))
    print("drawn")
""")


def draw(label: str):
    env = {**os.environ, "FITGPP_CACHE": os.environ.get("FITGPP_CACHE", "")}
    return subprocess.run([sys.executable, "-c", DRAW, json.dumps(label)], capture_output=True,
                          text=True, timeout=600, env=env)


@pytest.mark.parametrize("label", ["".join(HIDDEN[:29]), "".join(HIDDEN[29:]),
                                   "a\x1bb", "\x00", "\ud800x", "\ufffe"],
                         ids=["C0", "DEL-C1-surrogates-nonchars-bidi", "ESC", "NUL",
                              "surrogate", "U+FFFE"])
def test_a_hidden_character_in_a_title_legend_or_data_is_drawn_not_fatal(label):
    p = draw(label)
    assert p.returncode == 0 and p.stdout.strip() == "drawn", (p.returncode, p.stderr[-1500:])


@pytest.mark.parametrize("label", ["a\\x00b", "a\\u0001b", "a\\\\\\x01", "a\\0b", "C:\\new\\b"])
def test_a_backslash_escape_written_in_a_title_is_not_made_a_control_character(label):
    """Vega-Lite writes a channel's title into the expression of each mark's aria-label as
    JavaScript, which reads ``\\x00`` in it as NUL: the figure could not be drawn."""
    p = draw(label)
    assert p.returncode == 0 and p.stdout.strip() == "drawn", (p.returncode, p.stderr[-1500:])


def test_a_normal_label_is_drawn_as_it_was():
    from fitgpp.figures.plots.render import drawable
    spec = {"title": "FitGpp s=4 (P=3) – 95 % [interval]", "encoding": {"x": {
        "title": "C:\\new"}}, "data": {"values": [{"k": "las_wait", "v": 1.5}]}}
    text = json.dumps(spec, sort_keys=True)
    assert drawable(text) == text


def _table(labels, caption="c"):
    df = pd.DataFrame({"policy": labels, "slowdown_p95": [1.5] * len(labels)})
    return people_table(df, {"slowdown_p95": "p95"}, ids={"policy": "policy"}, seeds=None,
                        caption=caption)


@pytest.mark.parametrize("where", ["label", "caption"])
def test_a_lone_surrogate_in_an_exported_table_is_an_export_error(tmp_path, where):
    t = _table(["s\udcff.csv" if where == "label" else "fifo"],
               caption="c\ud800" if where == "caption" else "c")
    if where == "caption":   # only the .tex shows the caption: escaped there
        paths = export_table(t, "t", tmp_path, config={})
        assert "\\textbackslash{}ud800" in paths[1].read_text()
        return
    with pytest.raises(ExportError, match=r"cannot write table 't': .*'\\udcff'.*lone "
                                          r"surrogate"):
        export_table(t, "t", tmp_path, config={})
    assert list(tmp_path.iterdir()) == []   # nothing left behind, not even the folder's files


def test_an_exported_tex_of_control_characters_compiles_line_by_line(tmp_path):
    t = _table(["a\rb", "c\x0cd", "e\x1bf", "g\n\nh", "[x]"], caption="cap\r\n\ntion\x0c")
    t.notes.append("note\x1b\n\nmore")
    paths = export_table(t, "t", tmp_path, config={})
    tex = paths[1].read_text()
    assert not [c for c in tex if ord(c) < 32 and c != "\n"], tex
    assert "\n\n" not in tex.strip()
    assert "{[}x]" in tex and "\\textbackslash{}x1b" in tex
    man = json.loads((tmp_path / MANIFEST).read_text())
    assert sorted(man["tables"]) == ["t.csv", "t.tex"]


# ---------------------------------------------------------------- the figure cache's entries
CACHED = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    import altair as alt, numpy as np, pandas as pd
    from fitgpp.figures import plots
    import importlib
    from fitgpp.figures.plots import layout, slowdown
    from fitgpp.figures import export as E
    R = importlib.import_module("fitgpp.figures.plots.render")
    kind, cache = sys.argv[1], Path(sys.argv[2])

    def harm(path):
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "zero":
            path.symlink_to("/dev/zero")
        else:      # nested deeper than a JSON reader goes
            path.write_text("[" * 100_000 + "]" * 100_000)
    chart = alt.Chart(pd.DataFrame({"x": [1.0, 2.0]})).mark_point().encode(x="x:Q")
    png = R.render(chart, ".png", cache=cache / "render")
    x = np.linspace(1.0, 9.0, 50)
    lo_hi = slowdown._cached_interval(x, 0.5, cache=cache / "boot", n_resamples=50, seed=0)
    p = plots.preset("column")
    fits = layout.page_of(chart, p)
    lay = E.laid_out(chart, cache=cache / "figs")
    for path in [q for q in cache.rglob("*") if q.is_file()]:
        harm(path)
    assert R.render(chart, ".png", cache=cache / "render") == png
    assert slowdown._cached_interval(x, 0.5, cache=cache / "boot", n_resamples=50,
                                     seed=0) == lo_hi
    assert layout.page_of(chart, p) == fits
    assert E.laid_out(chart, cache=cache / "figs") == lay
    print("read again")
""")


@pytest.mark.parametrize("kind", ["fifo", "zero", "deep"])
def test_a_figure_cache_entry_that_is_no_regular_file_is_made_again(tmp_path, kind):
    env = {**os.environ, "FITGPP_CACHE": str(tmp_path)}   # (the answers of layout.page_of live there)
    try:
        p = subprocess.run([sys.executable, "-c", CACHED, kind, str(tmp_path)],
                           capture_output=True, text=True, timeout=300, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("a figure cache entry that is a FIFO blocked its reader")
    assert p.returncode == 0 and p.stdout.strip() == "read again", p.stderr[-2000:]
