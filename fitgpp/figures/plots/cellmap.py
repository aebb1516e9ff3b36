"""A map of judged changes: one cell per (x, y) setting, coloured by the sign and size of a
change only where its verdict gives it a sign, one panel per (row, column) group."""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from fitgpp.figures.plots.base import PlotError, Preset, _finish, _panel, natural_key, preset
from fitgpp.figures.plots.layout import fit_page

#: Fill of a cell whose change has no sign by its verdict (interval across 0, or too few seeds).
NO_SIGN = "#d9d9d9"
SIGNED = ("cost", "gain")
#: Changes are coloured up to this size (a fraction; a square-root scale, so small changes
#: still show their colour); larger ones take the end colour, their cell text the number.
CAP = 1.0


def change_map(df: pd.DataFrame, *, x: str, y: str, panel: str, x_title: str, y_title: str,
               title: str, notes=(), legend_title: str = "change (%)",
               size: str | Preset | None = None) -> alt.TopLevelMixin:
    """Cells of ``change`` (a fraction) over ``x`` and ``y`` (ordinal, numbers ordered as
    numbers), one panel per ``panel`` value (in order of appearance). Columns: ``x``, ``y``,
    ``panel``, ``change``, ``verdict`` (``cost``/``gain`` colour the cell, red/blue by size;
    anything else is grey; capped at :data:`CAP`), ``mark`` (text after the value, e.g. ``?``) and
    ``outline`` (bool: a black frame). Each cell prints its change in percent."""
    need = {x, y, panel, "change", "verdict", "mark", "outline"}
    if not need <= set(df.columns):
        raise PlotError(f"change_map needs columns {sorted(need)}, got {list(df.columns)}")
    p = preset(size)
    d = df.copy()
    d["x_label"] = d[x].map("{:g}".format)
    d["y_label"] = d[y].map("{:g}".format)
    d["signed"] = np.where(d["verdict"].isin(SIGNED), d["change"], np.nan)
    lim = CAP
    d["text"] = [("n/a" if not np.isfinite(c) else f"{100 * c:+.0f}") + str(m)
                 for c, m in zip(d["change"], d["mark"])]
    d["dark"] = np.abs(d["signed"].fillna(0)) > 0.5 * lim
    xs = sorted(d["x_label"].unique(), key=natural_key)
    ys = sorted(d["y_label"].unique(), key=natural_key)
    panels = list(dict.fromkeys(d[panel]))
    ncols = 2 if p.name == "full" and len(panels) > 1 else 1
    width = _panel(p, ncols, axis_px=46)
    # square cells up to 40 px side by side; lower ones when stacked, as low as the page
    # needs (RQ8's two maps of 3 TE shares printed 3.3 x 5.25 in), 12 pt a row at the least
    height = max(60, int(len(ys) * min(40 if ncols > 1 else 28, width / max(len(xs), 1))))
    colour = alt.Color("signed:Q", title=legend_title,
                       scale=alt.Scale(type="pow", exponent=0.5, scheme="redblue",
                                       reverse=True, domain=[-lim, lim], clamp=True),
                       legend=alt.Legend(format="+.0%", orient="bottom", gradientLength=
                                         min(200, p.width - 120), titleOrient="left"))

    def draw(lay):
        charts = []
        for i, name in enumerate(panels):
            g = d[d[panel] == name]
            # stacked, the x axis is shared: labelled under the last panel only (a map of
            # four TE shares stacked twice was 6.1 in tall on a 3.3 in column)
            last = ncols > 1 or i == len(panels) - 1
            base = alt.Chart(g).encode(
                x=alt.X("x_label:O", sort=xs, title=x_title if last else None,
                        axis=alt.Axis(labelAngle=0, labels=last, ticks=last)),
                y=alt.Y("y_label:O", sort=ys, title=y_title))
            fill = base.mark_rect(fill=NO_SIGN).transform_filter("!isValid(datum.signed)")
            cells = base.mark_rect().encode(color=colour).transform_filter(
                "isValid(datum.signed)")
            frame = base.mark_rect(fill=None, stroke="black", strokeWidth=2.5).transform_filter(
                "datum.outline")
            text = base.mark_text(fontSize=p.font).encode(
                text="text:N", color=alt.condition("datum.dark", alt.value("white"),
                                                   alt.value("black")))
            charts.append(alt.layer(fill, cells, frame, text).properties(
                width=width, height=lay["height"],
                title=alt.Title(str(name), fontSize=p.title_font)))
        return _finish(alt.concat(*charts, columns=ncols, spacing=6 if ncols == 1 else 16)
                       .resolve_scale(color="shared"), p, title, notes)
    least = max(40, (p.font + 5) * len(ys))
    return fit_page(draw, [dict(height=height, least=min(least, height), most=height,
                                rows=math.ceil(len(panels) / ncols))], p)
