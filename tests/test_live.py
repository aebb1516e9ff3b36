"""fitgpp.live in-process: a selection observer survives updates of the chart (altair's
JupyterChart drops it at the first update: its chart setter makes a new ``selections``)."""

import altair as alt
import pandas as pd

from fitgpp import live

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
