"""Printed sizes, the caption and fonts every figure gets, and shared constants."""

from __future__ import annotations

import contextlib
import contextvars
import re
import textwrap
from dataclasses import dataclass

import altair as alt

from fitgpp.errors import FitgppError

POLICY_STYLE = {
    "FIFO": ("#000000", "square", [8, 3, 2, 3]),
    "PRIO": ("#999999", "triangle-down", [2, 2]),
    "FitGpp": ("#0072B2", "circle", [1, 0]),
    "LRTP": ("#E69F00", "diamond", [6, 3]),
    "RAND": ("#009E73", "triangle-up", [2, 1, 6, 1]),
}
_EXTRA = ["#D55E00", "#CC79A7", "#56B4E9", "#882255"]  # Okabe-Ito; Tol wine for yellow (faint on white)
_EXTRA_SHAPES = ["cross", "triangle-right", "triangle-left", "triangle"]
_EXTRA_DASH = [[4, 4], [8, 2], [1, 3], [3, 1]]
CLASS_NAMES = {"TE": "TE (trial-and-error)", "BE": "BE (best-effort)"}
COLUMN_WIDTH = 240  # px: a 3.3 in paper column at 72 px/in
THEME = "fitgpp_paper"
DPI = 300  # PNG export resolution


class PlotError(FitgppError):
    """A chart was asked for with input it cannot draw; the message names the input."""


@dataclass(frozen=True)
class Preset:
    """A printed size: total width in inches and font sizes in points.

    Vega-Lite draws 1 px = 1 pt (72 per inch), so a chart of ``width`` px prints at
    ``inches`` when exported at :data:`DPI` with scale ``DPI / 72``."""

    name: str
    inches: float
    font: int          # tick labels, legend labels, subtitles (pt)
    title_font: int    # axis and legend titles, panel headings, caption (pt)

    def __post_init__(self):
        import math
        import numbers
        if not isinstance(self.name, str) or not self.name:
            raise PlotError(f"figure preset: name must be a non-empty string, got {self.name!r}"
                            [:300])
        inches = self.inches
        if isinstance(inches, bool) or not isinstance(inches, numbers.Real) or \
                not math.isfinite(inches) or not MIN_INCHES <= inches <= MAX_INCHES:
            raise PlotError(f"figure preset {self.name!r}: inches must be a number from "
                            f"{MIN_INCHES} to {MAX_INCHES}, got {inches!r}"[:300])
        for k in ("font", "title_font"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= v <= MAX_FONT:
                raise PlotError(f"figure preset {self.name!r}: {k} must be a whole number of "
                                f"points from 1 to {MAX_FONT}, got {v!r}"[:300])

    @property
    def width(self) -> int:
        return round(self.inches * 72)


#: The printed widths a :class:`Preset` may have [in] (a stamp to a poster) and its largest font.
MIN_INCHES, MAX_INCHES, MAX_FONT = 0.5, 100, 200


PRESETS = {"column": Preset("column", 3.3, 7, 8), "full": Preset("full", 7.0, 9, 10)}


_WIDTH = contextvars.ContextVar("fitgpp_figure_width", default="full")


@contextlib.contextmanager
def printed_at(size: str | Preset):
    """Charts made inside ``with printed_at("column"):`` without a ``size`` of their own are
    laid out for that printed width (``fitgpp reproduce --width``, the export controls)."""
    token = _WIDTH.set(preset(size).name)
    try:
        yield preset(size)
    finally:
        _WIDTH.reset(token)


def at_width(build):
    """``size -> build()`` made inside :func:`printed_at`: give it to an export control
    that offers both widths (``widgets.export_panel(plots.at_width(lambda: r.charts), ...)``
    with ``r.charts`` rebuilt there, e.g. ``lambda: study.result(size).charts``)."""
    def at(size: str | Preset) -> dict:
        with printed_at(size):
            return build()
    return at


def preset(p: str | Preset | None = None) -> Preset:
    """The :class:`Preset` named ``p`` (``"column"``: 3.3 in, ``"full"``: 7 in); None: the
    width of the enclosing :func:`printed_at` (``"full"`` outside one)."""
    p = _WIDTH.get() if p is None else p
    if isinstance(p, Preset):
        return p
    if not isinstance(p, str) or p not in PRESETS:
        raise PlotError(f"unknown figure preset {p!r}: use one of {', '.join(PRESETS)}")
    return PRESETS[p]


def _panel(p: Preset, ncols: int, *, axis_px: int = 50, gap: int = 14) -> int:
    """Width of one of ``ncols`` panels side by side (each with its own y axis) in ``p``."""
    return max(50, int((p.width - ncols * axis_px - (ncols - 1) * gap) / ncols))


def _wrap(text: str, p: Preset, font: float | None = None, em: float = 0.55) -> list[str]:
    return textwrap.wrap(text, width=max(20, int(p.width / (em * (font or p.font)))))


def _finish(chart, p: Preset, title: str, notes=(), legend=(), own: bool = False
            ) -> alt.TopLevelMixin:
    """Caption, subtitle (``notes``, wrapped to the width) and the preset's fonts; the
    legend gets as many columns of its labels ``legend`` as fit the width. ``own``: the
    caller built ``chart`` for this figure alone, so it is finished in place rather than
    in a copy (copying a concatenation of layered panels deep-copies every layer)."""
    longest = max((len(str(lb)) for lb in legend), default=12)
    columns = max(1, min(len(legend) or 3, int(p.width // (0.6 * p.font * longest + 34))))
    sub = [ln for note in notes if note for ln in _wrap(note, p)]
    lines = _wrap(title, p, p.title_font + 1, em=0.62)   # bold: wider than 0.55 em
    head = alt.Title(lines if len(lines) > 1 else title,
                     subtitle=sub or alt.Undefined, anchor="start", fontSize=p.title_font + 1,
                     subtitleFontSize=p.font, fontWeight="bold")
    meta = {"fitgpp": {"preset": p.name, "inches": p.inches}}
    if own:
        chart.title, chart.usermeta = head, meta
        out = chart
    else:
        out = chart.properties(title=head, usermeta=meta)
    # the fonts set on the one copy properties() made, as configure_axis(...),
    # .configure_legend(...), ... would set them; each of those copies the whole chart, and
    # copying a layered or faceted chart deep-copies every layer: 1.1 of the 3 s of a warm
    # Panel(RQ2, "full") went there (issue 26). The dict is the same, key for key.
    config = alt.Config() if out.config is alt.Undefined else out.config.copy(deep=False)
    config["axis"] = alt.AxisConfig(labelFontSize=p.font, titleFontSize=p.title_font)
    config["legend"] = alt.LegendConfig(labelFontSize=p.font, titleFontSize=p.title_font,
                                        columns=columns, labelLimit=p.width,
                                        titleLimit=p.width, symbolSize=40)
    config["header"] = alt.HeaderConfig(labelFontSize=p.title_font, titleFontSize=p.title_font)
    config["text"] = alt.MarkConfig(fontSize=p.font)
    out.config = config
    return out


def natural_key(label) -> tuple:
    """Sort key that orders the numbers inside labels as numbers: ``s=4`` before ``s=16``."""
    parts = re.split(r"(-?\d+(?:\.\d+)?)", str(label))
    return tuple((0, float(x), "") if i % 2 else (1, 0.0, x) for i, x in enumerate(parts))


