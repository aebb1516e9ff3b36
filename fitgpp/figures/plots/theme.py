"""The Altair theme of fitgpp figures (registered and enabled on import)."""

from __future__ import annotations

import altair as alt

from fitgpp.figures.plots.base import COLUMN_WIDTH, THEME


@alt.theme.register(THEME, enable=True)
def paper_theme() -> alt.theme.ThemeConfig:
    """Column-width defaults: 10-11 pt sans text, thin grid, no chart border."""
    font = "Helvetica, Arial, sans-serif"
    return {
        "config": {
            "view": {"continuousWidth": COLUMN_WIDTH, "continuousHeight": 160, "stroke": None},
            "font": font,
            "axis": {"labelFontSize": 10, "titleFontSize": 11, "titleFontWeight": "normal",
                     "gridColor": "#e6e6e6", "domainColor": "#555", "tickColor": "#555"},
            "legend": {"labelFontSize": 10, "titleFontSize": 10, "symbolSize": 60,
                       "orient": "bottom", "direction": "horizontal", "columns": 3},
            "header": {"labelFontSize": 11, "titleFontSize": 11},
            "title": {"fontSize": 11, "fontWeight": "normal", "anchor": "start"},
            "line": {"strokeWidth": 1.6},
            "point": {"size": 50, "filled": True},
        }
    }


