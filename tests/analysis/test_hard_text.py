"""Hard to break, round four (issue 37): a label, heading, caption or note reaches a table's
notebook HTML, its Markdown, its LaTeX and its text as text: no markup of its own, no control
character or lone surrogate raw, and a normal table exactly as before."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from fitgpp.analysis.tables import people_table, to_latex
from html_tags import tags

#: Every character no sink shows as it is: C0 but tab and line breaks, DEL, C1, surrogates
#: (both halves, both ends), the non-characters U+FFFE/U+FFFF, the bidi controls.
HIDDEN = ([chr(c) for c in range(32) if chr(c) not in "\t\n\r"] + ["\x7f"]
          + [chr(c) for c in range(0x80, 0xA0)] + ["\ud800", "\udbff", "\udc00", "\udfff",
                                                     "\ufffe", "\uffff"]
          + [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))])
HOSTILE = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>",
           "<svg onload=alert(3)>", "`code` <b>", "\\<i>x</i>", "a|<iframe src=x>"]


def table(labels, *, caption="", notes=(), heading="policy"):
    df = pd.DataFrame({"policy": list(labels), "slowdown_p95": [1.5 + i for i in
                                                                range(len(labels))]})
    t = people_table(df, {"slowdown_p95": "p95 slowdown"}, ids={"policy": heading}, seeds=None,
                     caption=caption)
    t.notes.extend(notes)
    return t


parsed = tags       # what an HTML text makes (tests/html_tags.py)


@pytest.mark.parametrize("where", ["cell", "heading", "caption", "note"])
@pytest.mark.parametrize("bad", HOSTILE)
def test_the_notebook_html_of_a_table_has_no_markup_from_its_text(where, bad):
    t = table([bad if where == "cell" else "fifo"], caption=bad if where == "caption" else "c",
              notes=[bad] if where == "note" else (), heading=bad if where == "heading" else "p")
    p = parsed(t._repr_html_())
    tags = {tag for tag, _ in p.tags}
    assert tags <= {"style", "table", "caption", "thead", "tbody", "tr", "th", "td", "p"}, tags
    assert not any(k.startswith("on") for _, attrs in p.tags for k in attrs)
    assert bad in "".join(p.text)    # shown as the text it is


@pytest.mark.parametrize("ch", HIDDEN, ids=lambda c: f"U+{ord(c):04X}")
def test_no_sink_of_a_table_shows_a_hidden_character_raw(ch):
    label = f"a{ch}b"
    t = table([label], caption=f"cap{ch}", notes=[f"note{ch}"], heading=f"h{ch}")
    esc = f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"
    for name, text in (("html", t._repr_html_()), ("markdown", t.to_markdown()),
                       ("latex", to_latex(t)), ("text", str(t))):
        assert ch not in text, name
        text.encode("utf-8")    # a file can hold it
        shown = text.replace("\\textbackslash{}", "\\").replace("\\\\", "\\")
        assert shown.count(esc) >= 3, (name, text)   # label, heading, caption (and note)


def test_a_bar_or_a_line_break_in_a_label_keeps_the_markdown_table_whole():
    t = table(["a|b", "c\nd", "plain"], heading="po|licy")
    lines = t.to_markdown().splitlines()
    rows = [ln for ln in lines if ln.startswith("|")]
    assert len(rows) == 2 + 3
    for row in rows:   # every row has its two cells: no | left unescaped inside one
        assert len(re.split(r"(?<!\\)\|", row)) == 4, row
    assert "<" not in "".join(re.sub(r"\\<", "", ln) for ln in lines)


@pytest.mark.parametrize("bad", [*HOSTILE, "[click](javascript:alert(4))"])
def test_the_markdown_of_a_table_starts_no_html_nor_link(bad):
    text = table([bad], caption=bad, notes=[bad], heading=bad).to_markdown()
    assert not re.search(r"(?<!\\)<[a-z/]", text), text
    assert not re.search(r"(?<!\\)\]\(", text), text


def test_a_normal_table_looks_as_before():
    """(A guard, as before the escaping: it fails if the escaping changes a normal table.)"""
    t = table(["FitGpp s=4", "las_wait", "FIFO (P=3)"], caption="RQ1: 95 % [interval]",
              notes=["Cells: value [95 % interval]."])
    t.shown.loc[0, "p95 slowdown"] = "1.5 [1.0*, 2.0]"
    assert t.to_markdown() == "\n".join([
        "*RQ1: 95 % [interval]*", "", "| policy | p95 slowdown |", "|---|---:|",
        "| FitGpp s=4 | 1.5 [1.0*, 2.0] |", "| las_wait | 2.5 |", "| FIFO (P=3) | 3.5 |", "",
        "Cells: value [95 % interval]."])
    text = t._repr_html_()
    assert ">FitGpp s=4</td>" in text and ">RQ1: 95 % [interval]</caption>" in text
    assert ">1.5 [1.0*, 2.0]</td>" in text
    assert "las\\_wait" in to_latex(t) and "RQ1: 95 \\% [interval]" in to_latex(t)


@pytest.mark.parametrize("bad, raw", [("a\rb", "\r"), ("a\x0cb", "\x0c"), ("a\x1bb", "\x1b"),
                                      ("a\n\nb", "\n\n"), ("a\x0bb", "\x0b"), ("a\tb", "\t")])
def test_the_latex_of_a_table_holds_no_raw_control_character_nor_blank_line(bad, raw):
    tex = to_latex(table([bad, "[x] first"], caption=bad, notes=[bad]))
    assert raw not in tex
    assert "\n\n" not in tex.strip() and not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", tex)
    assert "\\\\\n{[}x] first" in tex     # a row starting with [ is no \\[length]
    body = tex.split("\\midrule\n")[1].split("\n\\bottomrule")[0]
    assert len(body.splitlines()) == 2    # one line per row


def test_a_table_printed_in_a_terminal_moves_no_cursor():
    t = table(["\x1b[2J\x1b]0;pwned\x07", "ok"], caption="\x1b[31mred")
    text = str(t)
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b[2J" in text and "\\x1b[31mred" in text
    assert repr(t) == text
