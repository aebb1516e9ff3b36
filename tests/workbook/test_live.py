"""fitgpp.workbook.live in-process: a selection observer survives updates of the chart (altair's
JupyterChart drops it at the first update: its chart setter makes a new ``selections``)."""

import altair as alt
import pytest
import pandas as pd

from fitgpp.workbook import live

CLICK = {"pick": {"value": {"vlPoint": {"or": [{"a": 1}]}}, "store": []}}


def _chart():
    return alt.Chart(pd.DataFrame({"a": [1, 2]})).mark_point().encode(x="a").add_params(
        alt.selection_point(name="pick", fields=["a"]))


def test_selection_observer_survives_updates():
    view, got = live.show(_chart()), []
    view.observe_selection(lambda ch: got.append(ch["new"]), "pick")
    live.update(view, _chart())
    live.update(view, _chart())
    view._vl_selections = CLICK   # what the front end sends on a click
    assert [s.value for s in got] == [[{"a": 1}]]


def test_update_replaces_the_spec_in_place():
    view = live.show(_chart())
    other = _chart().properties(title="other")
    live.update(view, other)
    assert view.spec["title"] == "other"
    assert view.embed_options["renderer"] == "svg"


def test_a_chart_shown_again_is_converted_once(monkeypatch):
    chart, other = _chart(), _chart().properties(title="other")
    calls = []
    real = type(chart).to_dict
    monkeypatch.setattr(type(chart), "to_dict", lambda self, *a, **k: calls.append(1)
                        or real(self, *a, **k))
    view = live.show(chart)
    for c in (other, chart, other, chart):
        live.update(view, c)
    assert len(calls) == 2 and view.spec == real(chart)
    assert "to_dict" not in vars(chart)          # the chart itself is left as it was
    assert chart.to_dict() == real(chart) and len(calls) == 3


def _faceted(lifted: bool):
    """A faceted layer chart whose point layer gets a selection after it was built (as the
    panel's trade-off does); ``lifted``: then built again, which lifts it to the top."""
    df = pd.DataFrame({"a": [1, 2, 1, 2], "m": ["x", "x", "y", "y"]})
    base = alt.Chart().encode(x="a:Q", y="a:Q")
    chart = alt.layer(base.mark_line(), base.mark_point(), data=df).facet(column="m:N")
    chart.spec.layer[1] = chart.spec.layer[1].add_params(
        alt.selection_point(name="pick", fields=["a"], on="click"))
    return chart.copy(deep=False) if lifted else chart


def test_a_selection_left_inside_a_layer_is_refused_not_ignored():
    view = live.show(_faceted(lifted=False))
    assert view.spec["params"][0]["name"] == "pick"    # vega-lite draws it: clicks select
    with pytest.raises(live.LiveError, match="no selection 'pick'"):
        view.observe_selection(lambda ch: None, "pick")   # but no click would reach fn
    got = []
    view = live.show(_faceted(lifted=True))
    view.observe_selection(lambda ch: got.append(ch["new"]), "pick")
    view._vl_selections = CLICK
    assert [s.value for s in got] == [[{"a": 1}]]
    with pytest.raises(live.LiveError, match="no selection 'pick'"):
        live.update(view, _faceted(lifted=False))   # a later chart without it: said, too
