"""Is a chart ready for a paper? Every rule, on its Vega-Lite spec (``chart.to_dict()``)
and, when given, on its SVG as drawn:

    problems = check(chart)           # [] when the chart passes
    assert_paper_ready(chart, "rq1")  # raises FigureError listing every problem

The rules about the spec are in :mod:`fitgpp.figures.chart_rules`, those about the printed
figure in :mod:`fitgpp.figures.print_rules`.
"""

from __future__ import annotations

import re

from fitgpp.figures import print_rules as R
from fitgpp.figures.chart_rules import (RULES, FigureError, Problem, _axis_titles, _caption, _clip,
                                        _coincide, _legend_titles, _log_labels, _numeric_order,
                                        _titles, _units)
from fitgpp.figures.plots.text import label_clash
from fitgpp.figures.print_rules import files, identical

__all__ = ["RULES", "FigureError", "Problem", "assert_paper_ready", "check", "check_all",
           "check_files", "label_clash"]


# ------------------------------------------------------------------ entry points
def check(chart, *, svg: bytes | None = None) -> list[Problem]:
    """Every problem of ``chart`` (an Altair chart or its ``to_dict()``) under :data:`RULES`.
    ``svg``: the chart as :func:`fitgpp.figures.plots.render` drew it in SVG from this very spec
    (as :func:`fitgpp.figures.export.export` does); the width rule measures that drawing instead
    of drawing the chart again."""
    spec = chart.to_dict() if hasattr(chart, "to_dict") else chart
    datasets = spec.get("datasets", {})
    units = list(_units(spec))
    font = ((spec.get("config") or {}).get("axis") or {}).get("labelFontSize", 10)
    return (_caption(spec) + _axis_titles(units) + _legend_titles(units)
            + _numeric_order(units, datasets) + _clip(units, datasets)
            + _coincide(units, datasets, _titles(spec)) + _log_labels(units, datasets, font)
            + _printed(spec, units, datasets, svg))


def _width(spec, svg: bytes | None) -> list[Problem]:
    """:func:`fitgpp.figures.print_rules.width`, measured on ``svg`` when it is given."""
    meta = (spec.get("usermeta") or {}).get("fitgpp") or {}
    if svg is None or not meta.get("inches"):
        return R.width(spec)
    m = re.search(rb'<svg\b[^>]*\bwidth="([\d.]+)"', svg)
    if m is None:
        raise FigureError("the SVG given to the figure check has no width")
    got, want = float(m.group(1)), meta["inches"] * 72
    if abs(got - want) > R.TOLERANCE_PT:
        return [Problem("width", "chart", f"drawn {got / 72:.2f} in wide for a "
                        f"{meta['inches']:g} in preset: lay it out with plots.fit_width")]
    return []


def _printed(spec, units, datasets, svg: bytes | None = None) -> list[Problem]:
    """The rules of :mod:`fitgpp.figures.print_rules`: the figure at its printed size."""
    t = spec.get("title")
    sub = (t.get("subtitle") if isinstance(t, dict) else None) or []
    sub = [sub] if isinstance(sub, str) else list(sub)
    wide = _width(spec, svg)            # first: it names a drawing without a width
    meta = (spec.get("usermeta") or {}).get("fitgpp") or {}
    drawn = svg
    if drawn is None and meta.get("inches"):
        from fitgpp.figures.plots.render import rendered_svg
        drawn = rendered_svg(spec)
    page = (R.aspect(drawn, meta.get("preset")) + R.plot_area(drawn)) if drawn else []
    return (R.fonts(spec) + wide + R.repeated_ticks(units, datasets)
            + R.interval_clip(units, datasets, " ".join(sub)) + R.flat_zero(units, datasets)
            + R.off_scale(units, datasets) + R.prose(_titles(spec), sub) + page
            + R.narrow_axis(units, datasets, " ".join(_titles(spec)))
            + (R.label_overlap(svg) if svg is not None else []))


def check_all(charts: dict) -> dict[str, list[Problem]]:
    """:func:`check` of every chart of ``{name: chart}``, plus figures that draw the same
    data under two names (rule ``identical``): ``{name: problems}``, only names with some."""
    out = {n: check(c) for n, c in charts.items()}
    for p in identical(charts):
        out[p.where].append(p)
    return {n: ps for n, ps in out.items() if ps}


def assert_paper_ready(chart, name: str = "chart", *, svg: bytes | None = None) -> None:
    """Raise :class:`FigureError` listing every problem of ``chart`` (``svg``: see
    :func:`check`); return None if none."""
    probs = check(chart, svg=svg)
    if probs:
        raise FigureError(f"{name} is not paper-ready:\n  " + "\n  ".join(map(str, probs)))


def check_files(folder) -> list[Problem]:
    """Problems of the files :func:`fitgpp.figures.export.export` wrote into ``folder``: a file not
    as wide as its preset or as its manifest entry says, two byte-identical figures."""
    return files(folder)
