"""The numbers of the figure check's page rules (:mod:`fitgpp.figures.print_rules`:
``aspect``, ``plot-area``, ``narrow-axis``, ``prose``), here so that the chart functions can
lay a figure out to pass them without importing the check."""

from __future__ import annotations

import re

#: A subtitle is a note, not a paragraph: at most this many characters.
MAX_SUBTITLE = 260
#: A column figure is at most this many times as tall as it is wide.
MAX_ASPECT = 1.4
#: No figure is taller than this (in): it must fit a page with its caption.
MAX_HEIGHT_IN = 8.0
#: The plotting areas (every panel's frame) cover at least this share of the figure; the
#: rest is titles, notes, axes and legend.
MIN_PLOT_SHARE = 0.25
_RECT = re.compile(r"^M[-\d.e]+,[-\d.e]+h([-\d.e]+)v([-\d.e]+)")
_SVG = "{http://www.w3.org/2000/svg}"


def plot_rects(svg: bytes) -> list[tuple[float, float]]:
    """(width, height) in pt of every plotting area of the drawing: each item of the
    outermost views (Vega's ``role-scope`` groups: panels; facet ``cell`` groups inside a
    panel count instead of it; legends and the groups of lines inside a view aside), or
    the whole view of a single chart."""
    import xml.etree.ElementTree as ET

    def cls(g):
        return g.get("class") or ""

    def own_rect(item):
        p = item.find(f"{_SVG}path")
        m = _RECT.match(p.get("d") or "") if p is not None and p.get("class") == "background" \
            else None
        return (float(m.group(1)), float(m.group(2))) if m else None

    def walk(g, out):
        if "role-legend" in cls(g):
            return
        if "role-scope" in cls(g):
            cells = [c for c in g.iter(f"{_SVG}g") if "role-scope cell" in cls(c) and c is not g]
            for view in cells or [g]:
                out += [r for r in map(own_rect, view.findall(f"{_SVG}g")) if r]
            return
        for child in g.findall(f"{_SVG}g"):
            walk(child, out)
    root, out = ET.fromstring(svg), []
    walk(root, out)
    if not out:
        frame = next((g for g in root.iter(f"{_SVG}g") if "role-frame root" in cls(g)), None)
        item = frame.find(f"{_SVG}g") if frame is not None else None
        out = [r for r in [own_rect(item) if item is not None else None] if r]
    return out


def page_numbers(svg: bytes) -> tuple[float, float, float]:
    """(width pt, height pt, share of the figure the plots cover) of a drawing."""
    from fitgpp.figures.plots.render import svg_size
    w, h = svg_size(svg)
    return w, h, sum(a * b for a, b in plot_rects(svg)) / (w * h or 1)


def fits(svg: bytes, preset: str | None) -> bool:
    """Whether a drawing passes the aspect and plot-area rules."""
    w, h, share = page_numbers(svg)
    return (h <= MAX_HEIGHT_IN * 72 + 1 and share >= MIN_PLOT_SHARE
            and (preset != "column" or h <= MAX_ASPECT * w + 1))


#: An axis whose points differ by less than this share of their size, drawn without
#: intervals, makes noise look dramatic unless it is marked.
NARROW = 0.02
#: The words that mark a zoomed axis (in the subtitle, a panel note or the axis title).
ZOOM_MARK = "zoomed in"


def zoom_note(spread: float) -> str:
    """The note that marks a zoomed axis (:func:`narrow_axis`); ``spread``: how much the
    points differ, as a share of their size."""
    return f"Axis {ZOOM_MARK}: points differ by at most {spread:.1%}, no interval drawn."


