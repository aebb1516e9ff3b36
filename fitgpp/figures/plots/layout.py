"""Laying a figure of panels out to pass the rules of the page (:mod:`fitgpp.figures.plots.page`:
at most 1.4 times as tall as wide in a column, at most 8 in tall, the plots at least a quarter
of it), by measuring it: a chart function draws its figure at a panel height, and
:func:`fit_page` finds the height (and, of the layouts it is given, the first) at which the
figure passes. The figure's height grows with its panels' height, the rest (title, notes,
legend, axes) staying put, so one measure tells how high the panels may be.

    chart = fit_page(lambda lay: draw(lay), [stacked, two_columns], preset("column"))
"""

from __future__ import annotations

import hashlib
import json
import math

from fitgpp.figures.plots.base import Preset


def page_of(chart, p: Preset) -> tuple[float, float, float]:
    """(width pt, height pt, share of the figure the plots cover) of ``chart`` laid out at
    its printed width. Answering draws the chart, so the answer is kept in the cache
    directory of the sweeps (``figures/page``), keyed by the spec, the preset and vl-convert's
    version: a warm study (a notebook reopened, ``reproduce`` run again) draws nothing."""
    import vl_convert

    from fitgpp.figures.plots import page
    from fitgpp.figures.plots.render import fit_width, keep, kept_bytes, remember, rendered_svg
    from fitgpp.sweep.cache import default_cache_dir
    # the key from the spec unvalidated (altair builds the same dict either way): a chart
    # answered before was checked against the schema then (0.3 s each, 2 of a warm RQ6
    # panel's 8 s, issue 26); one drawn now is checked first, below
    # kept for the live view, which shows the chart from the same dict (render.spec_of)
    spec = remember(chart, chart.to_dict(validate=False))
    doc = json.dumps({"spec": spec, "preset": p.name, "vl": vl_convert.__version__},
                     sort_keys=True, default=str)
    key = hashlib.sha256(doc.encode()).hexdigest()
    path = default_cache_dir() / "figures" / "page" / key[:2] / key
    try:   # (kept_bytes: a regular file only; a FIFO in its place would block for ever)
        got = json.loads(kept_bytes(path) or b"null")
        if isinstance(got, list) and len(got) == 3:
            return tuple(float(x) for x in got)
    except (ValueError, TypeError, RecursionError):
        pass   # not answered before, or a damaged entry: draw it
    got = page.page_numbers(rendered_svg(fit_width(chart.to_dict())))
    keep(path, json.dumps(list(got)).encode())   # (not kept in a cache it cannot write)
    return got


def passes(numbers: tuple[float, float, float], p: Preset) -> bool:
    """Whether a figure of these :func:`page_of` numbers passes the page's rules."""
    from fitgpp.figures.plots.page import MAX_ASPECT, MAX_HEIGHT_IN, MIN_PLOT_SHARE
    w, h, share = numbers
    return (h <= MAX_HEIGHT_IN * 72 + 1 and share >= MIN_PLOT_SHARE
            and (p.name != "column" or h <= MAX_ASPECT * w + 1))


def _tallest(numbers, p: Preset, rows: int, height: float) -> int:
    """The panel height (pt) at which a figure measured ``numbers`` with ``rows`` rows of
    panels ``height`` high is as tall as the page allows."""
    from fitgpp.figures.plots.page import MAX_ASPECT, MAX_HEIGHT_IN
    w, h, _ = numbers
    cap = MAX_HEIGHT_IN * 72 if p.name != "column" else min(MAX_HEIGHT_IN * 72, MAX_ASPECT * w)
    rest = h - rows * height
    return math.floor((cap - rest) / rows) - 1


def fit_page(draw, layouts: list[dict], p: Preset):
    """The first of ``layouts`` at which ``draw(layout)`` passes the page's rules, its panels
    as high as the layout prefers (``height``) or, if that fails, as high as the page allows,
    never lower than its ``least``; each layout gives ``rows`` (rows of panels). None passing:
    the last drawn (the figure check then names what fails)."""
    chart = None
    for lay in layouts:
        chart = draw(lay)
        got = page_of(chart, p)
        if passes(got, p):
            return chart
        for _ in range(3):   # the rest of the figure moves little with the panels' height
            # (a y title folded on more lines beside a lower panel: less, so the least
            # height is tried when the estimate falls below it)
            h = max(min(_tallest(got, p, lay["rows"], lay["height"]), lay.get("most", 10**6)),
                    lay["least"])
            if h == lay["height"]:
                break
            lay = {**lay, "height": h}
            chart = draw(lay)
            got = page_of(chart, p)
            if passes(got, p):
                return chart
    return chart
