"""Every chart the package makes passes the paper-ready check (fitgpp.figcheck), and the check
fires on a chart broken in each of the ways it looks for."""

from __future__ import annotations

import altair as alt
import pandas as pd
import pytest

from fitgpp import figcheck


def _broken_chart():
    """A chart with every fault the check looks for, as the issue found them."""
    df = pd.DataFrame({"te_p95": [3.0, 30, 40, 100, 200, 3.0, 30, 40, 100, 200],
                       "be_p95": [1.0, 2, 3, 4, 5, 1.0, 2, 3, 4, 5],
                       "lo": [-150.0, 0, 1, 2, 3, -150.0, 0, 1, 2, 3],
                       "hi": [9.0] * 10,
                       "P": ["1", "1", "1", "1", "1", "10", "10", "10", "10", "10"]})
    df = pd.concat([df, df.head(5).assign(P="3", be_p95=[2.0, 3, 4, 5, 6])])
    x = alt.X("te_p95:Q", scale=alt.Scale(type="log"), title="te_p95")  # default log ticks
    line = alt.Chart(df).mark_line().encode(x=x, y="be_p95:Q",    # no y title in any layer
                                            color=alt.Color("P:N", title=None))  # sorted as text
    bars = alt.Chart(df).mark_rule().encode(                      # runs past the fixed domain
        x=x, y=alt.Y("lo:Q", scale=alt.Scale(domain=[-100, 10])), y2="hi:Q")
    return alt.layer(line, bars).properties(title="rq2_s_tradeoff_P1")  # a variable name


def test_check_fires_each_rule_on_a_broken_chart():
    problems = figcheck.check(_broken_chart())
    fired = {p.rule for p in problems}
    assert fired == set(figcheck.RULES), (set(figcheck.RULES) - fired, problems)
    text = "\n".join(map(str, problems))
    assert "1, 10, 3" in text                      # the P legend as the issue saw it
    assert "'1' and '10'" in text                  # the coinciding series named
    assert "rq2_s_tradeoff_P1" in text and "'te_p95' is a variable name" in text
    assert "the y axis has no title" in text
    with pytest.raises(figcheck.FigureError, match="broken is not paper-ready"):
        figcheck.assert_paper_ready(_broken_chart(), "broken")


def test_each_fix_silences_its_rule():
    """The rules are not noise: fixing the broken chart's faults one by one removes them."""
    spec = _broken_chart().to_dict()
    spec["title"] = {"text": "TE latency against BE slowdown",
                     "subtitle": "P 1 and 10 coincide."}
    line, bars = spec["layer"]
    line["encoding"]["x"]["title"] = bars["encoding"]["x"]["title"] = "TE p95 slowdown"
    ticks = {"values": [10, 20, 30, 40, 50, 100, 200]}           # "3040" at 200 px
    line["encoding"]["x"]["axis"] = bars["encoding"]["x"]["axis"] = ticks
    line["encoding"]["y"]["title"] = "BE p95 slowdown"
    line["encoding"]["color"]["title"] = "P (max preemptions)"
    line["encoding"]["color"]["scale"] = {"domain": ["1", "3", "10"]}
    assert {p.rule for p in figcheck.check(spec)} == {"clip", "log-labels"}
    bars["mark"] = {"type": "rule", "clip": True}
    line["encoding"]["x"]["axis"] = bars["encoding"]["x"]["axis"] = {"values": [3, 30, 300]}
    assert figcheck.check(spec) == []
