"""The live view converts a chart without the schema check; the static copy still checks it."""

from __future__ import annotations

import altair as alt
import pandas as pd
import pytest

from fitgpp.workbook import live, static


def _bad_chart():
    """A chart whose mark property is outside the Vega-Lite schema (opacity must be a number)."""
    chart = alt.Chart(pd.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q")
    chart.mark = {"type": "point", "opacity": "very"}   # set after construction: unchecked
    return chart


def test_the_live_view_does_not_wait_for_the_schema_check():
    spec = live.spec_of(_bad_chart())          # validated, this would raise
    assert spec["mark"]["opacity"] == "very"


def test_the_static_copy_still_reports_a_chart_that_breaks_the_schema():
    with pytest.raises(Exception, match="opacity"):
        static._svg(_bad_chart())
