"""Text from anywhere, made safe for where it is shown: one function per kind of sink.

A label, heading or caption can come from a researcher's policy, a trace's file name, a
model, a colleague's cache or result file; it reaches HTML (tables in a notebook, a panel
and the static copy saved with it), Markdown (``results.md``, findings), LaTeX (exported
tables), a terminal, and the renderer of figures (vl-convert). Each sink escapes what it
prints, here, and nowhere else:

- :func:`html_text`: ``< > & " '`` as entities (text and attribute values of HTML and SVG);
- :func:`md_text`: what would make markup in Markdown (``\\``, a backtick, ``|``, ``<``, a
  link's ``](``, an entity's ``&``) with a backslash, so a label is text in a paragraph or a
  table cell; :func:`md_code` and :func:`md_alt` for a code span and a link's text;
  :func:`md_inert` for Markdown fitgpp wrote around labels (a finding);
- :func:`tex_text`: LaTeX's special characters as commands;
- :func:`chart_text`: what the figure renderer can draw.

And in every sink, what cannot be seen is shown (:func:`visible`): control characters (C0 but
tab and the line breaks, DEL, C1), lone surrogates (half of a UTF-16 pair, which no UTF-8
file can hold), the non-characters U+FFFE and U+FFFF, and the bidirectional embeddings,
overrides and isolates (which make a label read as another), each as its Python escape
(``\\x1b``, ``\\ud800``, ``\\u202e``; in a figure, as its code point). The text itself is
never changed: a label with an escape character is still that label in the data, the table
and the cache; only its display shows the escape. Nothing is refused for it: the same label
may arrive from a file name or a colleague's result, which fitgpp cannot ask to be renamed
(docs/cli.md, "Text that is shown"). A label without any of these characters looks exactly
as before.
"""

from __future__ import annotations

import html
import re

#: Characters no sink shows as they are (see the module docstring).
_HIDDEN = ("\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff"
           "\u202a-\u202e\u2066-\u2069")
_HIDDEN_RE = re.compile(f"[{_HIDDEN}]")
_ALL_RE = re.compile(f"[{_HIDDEN}\t\n\r]")


def _escape(m: re.Match) -> str:
    c = ord(m.group(0))
    return {9: "\\t", 10: "\\n", 13: "\\r"}.get(c) or (f"\\x{c:02x}" if c < 0x100 else
                                                       f"\\u{c:04x}")


def visible(text, *, breaks: bool = True) -> str:
    """``text`` (made a string) with every character of :data:`_HIDDEN` as its Python escape;
    ``breaks=False``: tab, line feed and carriage return too (``\\t``, ``\\n``, ``\\r``),
    where a line break would end a table row or a paragraph."""
    text = str(text)
    pattern = _HIDDEN_RE if breaks else _ALL_RE
    return pattern.sub(_escape, text) if pattern.search(text) else text


def html_text(text) -> str:
    """``text`` for HTML or SVG, as element text or a quoted attribute value."""
    return html.escape(visible(text), quote=True)


_MD_RE = re.compile(r"[\\`|<]|\](?=[(\[])|&(?=#?\w+;)")


def md_text(text) -> str:
    """``text`` as plain text inside Markdown: a paragraph, a list item or a table cell. A
    backslash goes before ``\\``, a backtick (no code span), ``|`` (it cannot end a cell),
    ``<`` (no HTML, no autolink), a ``]`` that would close a link (``](`` or ``][``) and an
    ``&`` that would start an entity; a line break is shown as ``\\n``, so it cannot end
    the row or the paragraph. Everything else is as it was (an interval ``[1.0, 1.4]``, a
    cut bound's ``*``, ``las_wait``), so the Markdown of a normal table reads as before."""
    return _MD_RE.sub(lambda m: "\\" + m.group(0), visible(text, breaks=False))


def md_code(text) -> str:
    """``text`` as a Markdown code span: fenced by more backticks than any run of them inside
    (a label's backtick cannot close it early and let what follows be read as HTML), with a
    space inside each fence when the text starts or ends with a backtick."""
    text = visible(text, breaks=False)
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_ALT_RE = re.compile(r"[\\`|<\[\]]|&(?=#?\w+;)")


def md_alt(text) -> str:
    """``text`` as the text of a Markdown link or image (``![text](file)``):
    :func:`md_text`, and every bracket escaped (one would end the text early)."""
    return _ALT_RE.sub(lambda m: "\\" + m.group(0), visible(text, breaks=False))


#: A ``<``, or a ``]`` opening a link's target, after an even number of backslashes (so
#: not escaped yet: an odd number would escape it).
_OPEN_RE = re.compile(r"(?<!\\)((?:\\\\)*)(<|\](?=\())")


def md_inert(markdown) -> str:
    """Markdown that fitgpp wrote around labels (a finding, a study's details) made inert: a
    ``<`` anywhere gets a backslash (no HTML and no autolink can start, even where a label's
    backtick opened or closed a code span, or its backslash stood before it), as does a
    link's ``](``; :func:`visible`'s characters are shown (line breaks kept: they are the
    text's own). Its bold, code and lists stay; a normal finding, which holds no ``<``,
    reads as before."""
    return _OPEN_RE.sub(lambda m: m.group(1) + "\\" + m.group(2), visible(markdown))


#: LaTeX's special characters, and what stands for them in a table cell or caption.
_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
        "–": "--", "−": "$-$", "<": r"\textless{}", ">": r"\textgreater{}"}
_TEX_RE = re.compile("[" + re.escape("".join(_TEX)) + "]")


def tex_text(text) -> str:
    """``text`` for LaTeX (``5 %`` -> ``5 \\%``): its special characters escaped, tab and
    line breaks as spaces (as TeX reads one; two would end the paragraph, which a cell or a
    caption cannot hold), the rest of :func:`visible`'s characters as their escapes
    (``\\textbackslash{}x1b``), and a leading ``[`` braced (after a row's ``\\\\`` it would
    be read as the row's spacing)."""
    text = re.sub(r"[\t\n\r]", " ", str(text))
    text = _TEX_RE.sub(lambda m: _TEX[m.group(0)], visible(text))
    return "{[}" + text[1:] if text.startswith("[") else text


def chart_text(text) -> str:
    """``text`` as the figure renderer can draw it: vl-convert aborts the whole process on a
    control character or U+FFFE/U+FFFF (an SVG is XML, which cannot hold them) and refuses a
    lone surrogate; each is drawn as its code point, ``<U+001B>`` (not as ``\\x1b``: Vega-Lite
    reads a backslash in some titles as JavaScript does, and would make the character again;
    nor as a symbol: the renderer's fonts have none)."""
    text = str(text)
    return _HIDDEN_RE.sub(lambda m: f"<U+{ord(m.group(0)):04X}>", text) \
        if _HIDDEN_RE.search(text) else text
