"""Every chart the package makes passes the paper-ready check (fitgpp.figures.check), and the check
fires on a chart broken in each of the ways it looks for."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import pytest

from fitgpp import Cluster, simulate
from fitgpp.figures import check as figcheck, plots

from conftest import mixed_trace

CLUSTER = Cluster.homogeneous(2, gpu=4, cpu_milli=32000, mem_mib=65536)



def _change_lines(series: str, values, *, same=()):
    """Long table as the research questions hand to metric_lines: change vs FIFO (%) with
    intervals, one of them reaching below -100 %; the series in ``same`` get equal values."""
    rng = np.random.default_rng(1)
    rows = []
    for metric in ("TE p95 slowdown vs FIFO (%)", "BE p95 slowdown vs FIFO (%)"):
        for x in (1.0, 4.0, 16.0):
            base = rng.normal(-50, 20)
            for i, v in enumerate(values):
                val = base if v in same else base + 7 * i
                rows.append({"x": x, series: v, "metric": metric, "value": val,
                             "lo": val - 80, "hi": val + 30})
    return pd.DataFrame(rows)


def build_charts(size="full"):
    """One of each chart the package makes, built from small simulation results."""
    tr = mixed_trace()
    fifo = simulate(tr, CLUSTER, "fifo")
    fits = {s: simulate(tr, CLUSTER, "fitgpp", s=s) for s in (0.5, 4.0, 16.0)}
    runs = [fifo, fits[4.0], simulate(tr, CLUSTER, "lrtp")]
    table = plots.tradeoff_table([fifo, *fits.values(), simulate(tr, CLUSTER, "rand")])
    seg = plots.segments(tr, CLUSTER, "fitgpp", s=4.0)
    return {
        "slowdown_cdf": plots.slowdown_cdf(runs, size=size),
        "slowdown_cdf_identical": plots.slowdown_cdf({"FIFO": fifo, "FitGpp s=4": fits[4.0],
                                                     "FitGpp s=16": fits[16.0]}, size=size),
        "slowdown_bars": plots.slowdown_bars(plots.stats_table(runs, n_boot=50), size=size),
        "s_tradeoff": plots.s_tradeoff(table, size=size),
        "utilization": plots.utilization(fits[4.0], size=size),
        "node_timeline": plots.node_timeline(seg, nodes=[0, 1], size=size),
        "distribution_fit": plots.distribution_fit(mixed_trace(3, 200), mixed_trace(4, 200), size=size),
        "metric_lines_P": plots.metric_lines(_change_lines("P", ["1", "3", "10"]), x="x",
                                             series="P", x_title="threshold s", size=size),
        "metric_lines_same": plots.metric_lines(
            _change_lines("policy", ["FitGpp s=4", "FitGpp s=8"], same=("FitGpp s=4", "FitGpp s=8")),
            x="x", x_title="grace-period scale", size=size),
    }


@pytest.fixture(scope="module")
def laid_out():
    """Every chart of :func:`build_charts` at both printed widths, laid out as export does."""
    return {size: {n: plots.fit_width(c) for n, c in build_charts(size).items()}
            for size in ("column", "full")}


CHART_NAMES = ["slowdown_cdf", "slowdown_cdf_identical", "slowdown_bars", "s_tradeoff",
               "utilization", "node_timeline", "distribution_fit", "metric_lines_P",
               "metric_lines_same"]


@pytest.mark.parametrize("size", ["column", "full"])
@pytest.mark.parametrize("name", CHART_NAMES)
def test_every_chart_is_paper_ready_at_both_widths(laid_out, name, size):
    figcheck.assert_paper_ready(laid_out[size][name], f"{name} ({size})")


@pytest.mark.parametrize("size", ["column", "full"])
def test_exported_files_are_as_wide_as_their_preset_and_the_manifest_says(laid_out, size,
                                                                          tmp_path):
    import json

    from fitgpp.figures import export as E
    charts = {n: laid_out[size][n] for n in ("slowdown_cdf", "s_tradeoff", "metric_lines_P")}
    E.export(charts, tmp_path, config={"size": size})
    man = json.loads((tmp_path / E.MANIFEST).read_text())["figures"]
    assert len(man) == 9
    for name, rec in man.items():
        got = E.file_inches((tmp_path / name).read_bytes(), name[-4:], plots.DPI)
        assert abs(got - plots.preset(size).inches) < 0.01, (name, got)
        assert abs(rec["inches"] - got) < 0.001, (name, rec["inches"], got)
    assert figcheck.check_files(tmp_path) == []


#: The rules about the spec itself; the printed-figure rules have their own broken charts below.
SPEC_RULES = ("caption", "axis-title", "legend-title", "numeric-order", "clip", "coincide",
              "log-labels")


def _spec_rules(spec) -> set[str]:
    return {p.rule for p in figcheck.check(spec) if p.rule in SPEC_RULES}


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
    assert set(SPEC_RULES) <= fired, (set(SPEC_RULES) - fired, problems)
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
    assert _spec_rules(spec) == {"clip", "log-labels"}
    bars["mark"] = {"type": "rule", "clip": True}
    line["encoding"]["x"]["axis"] = bars["encoding"]["x"]["axis"] = {"values": [3, 30, 300]}
    assert _spec_rules(spec) == set()


def test_log_ticks_never_collide_at_column_width():
    p = plots.preset("column")
    for dom in ([1, 2], [1, 50], [1, 1000], [0.5, 2e5], [60, 3e6]):
        ticks = plots.log_ticks(dom, plots._panel(p, 2), p.font)
        assert len(ticks) >= 2 and ticks == sorted(ticks), dom
        assert plots._ticks_fit(ticks, *dom, plots._panel(p, 2), p.font), dom


def test_numbers_inside_labels_sort_as_numbers():
    st = plots._styles(["FitGpp s=16", "FIFO", "FitGpp s=4", "FitGpp s=0.5"])
    assert st["order"] == ["FIFO", "FitGpp s=0.5", "FitGpp s=4", "FitGpp s=16"]
    assert plots._styles(["10", "3", "1"])["order"] == ["1", "3", "10"]


def test_coincident_names_the_equal_series_and_where():
    df = pd.DataFrame({"s": ["a", "b", "c"] * 2, "panel": ["p"] * 3 + ["q"] * 3,
                       "x": [1, 1, 2, 1, 3, 2], "y": [0, 0, 0, 0, 0, 0]})
    assert plots.coincident(df, "s", ["x", "y"], ["panel"]) == [
        "a and b coincide in p (one line hides the other)."]
    assert plots.coincident(df.assign(x=1), "s", ["x", "y"], ["panel"]) == [
        "a, b and c coincide (one line hides the other)."]


@pytest.mark.slow
@pytest.mark.parametrize("width", ["column", "full"])
def test_every_research_question_chart_is_paper_ready(width):
    """The charts fitgpp reproduce exports (RQ1-RQ4, RQ6) at a tiny size, laid out at
    both printed widths (RQ5: same functions as RQ1, on the real trace)."""
    from fitgpp.studies import reproduce
    # 600 jobs: at 200 nothing contends, and RQ6's workloads (all slowdowns 1) draw
    # identical figures, which the check rightly refuses
    size = reproduce.Size(n_jobs=600, seeds=(0, 1), timeline_jobs=60)
    charts = {}
    with plots.printed_at(width):
        for rq in (reproduce.rq1, reproduce.rq3, reproduce.rq4):
            charts.update(rq(size).charts)
        charts.update(reproduce.rq2(size, s_values=(1.0, 4.0, 16.0), p_values=(1, 3, 10)).charts)
        from fitgpp.studies import rq6
        charts.update(rq6.study(overheads=(0.0, 600.0)).result(size, cache=False).charts)
    assert len(charts) >= 15
    problems = figcheck.check_all({n: plots.fit_width(c) for n, c in charts.items()})
    assert not problems, {k: list(map(str, v)) for k, v in problems.items()}


def test_s_tradeoff_is_not_much_taller_than_wide_at_column_width(laid_out):
    """Stacked at 3.3 in, the two panels are short enough that the figure is at most 1.2x as
    tall as wide (it was 1.9x); side by side at 7 in it is wider than tall."""
    import re
    for size, most in (("column", 1.2), ("full", 0.8)):
        svg = plots.render(laid_out[size]["s_tradeoff"], ".svg").decode()
        w, h = (float(re.search(rf'<svg\b[^>]*\b{k}="([\d.]+)"', svg).group(1))
                for k in ("width", "height"))
        assert abs(w - plots.preset(size).width) <= 1 and h <= most * w, (size, w, h)


def test_a_label_hemmed_in_by_markers_is_left_off_and_said():
    """Every corner of the labelled point is under another marker, so every place would sit
    nearer another point than its own: the label is left off (it named the wrong point in
    03), and s_tradeoff's subtitle says which label has no room."""
    xs = [10 ** (px / 100) for px in (100, 113, 113, 87, 87, 35, 35)]
    df = pd.DataFrame({"x": xs, "y": [50.0, 58, 41, 58, 41, 0, 100],
                       "lab": ["s=1", "", "", "", "", "", ""], "panel": "p"})
    assert plots._place_labels(df, "x", "y", "lab", "panel", [1, 100], 200, 100, 9)[0] == ""
    free = df.assign(x=[10.0, 50, 50, 2, 2, 1.5, 1.5])        # its neighbours far away
    assert plots._place_labels(free, "x", "y", "lab", "panel", [1, 100], 200, 100, 9)[0]
    table = pd.DataFrame({"policy": ["FIFO"] + [f"FitGpp s={s:g}" for s in (1, 2, 4)],
                          "family": ["FIFO", "FitGpp", "FitGpp", "FitGpp"],
                          "s": [np.nan, 1.0, 2.0, 4.0], "te_p95": [3.0, 1.50, 1.51, 1.52],
                          "be_median": [1.0, 1.2, 1.21, 1.22], "be_p95": [2.0, 2.3, 2.31, 2.32]})
    spec = plots.s_tradeoff(table, size="column").to_dict()
    rows = next(v for v in spec["datasets"].values() if v and "lab" in v[0])
    left = sorted({r["s_label"] for r in rows if r["s_label"] and not r["lab"]})
    sub = " ".join(spec["title"].get("subtitle", []))
    for lb in left:
        assert lb in sub and "no room" in sub, (left, sub)


def test_s_tradeoff_point_labels_allow_for_the_y_padding():
    """Labels are placed on the panel as drawn: with the scale's padding, a point at the top
    of its panel sits ``y_pad`` px down, so the corners above it are free again."""
    df = pd.DataFrame({"x": [10.0, 10.0], "y": [1.0, 2.0], "lab": ["", "s=1"], "panel": "p"})
    args = ("x", "y", "lab", "panel", [1, 100], 200, 100, 9)
    assert plots._place_labels(df, *args)[1] in ("se", "sw")
    assert plots._place_labels(df, *args, y_pad=16)[1] in ("ne", "nw")


def test_point_labels_take_free_corners_or_none():
    df = pd.DataFrame({"x": [2.0, 2.05, 2.1, 50.0], "y": [1.0, 1.0, 1.0, 2.0],
                       "lab": ["s=1", "s=2", "s=4", ""], "panel": "p"})
    pos = plots._place_labels(df, "x", "y", "lab", "panel", [1, 100], 200, 100, 9)
    assert pos[3] == "" and pos[0] in plots._LABEL_OFFSETS
    # three points within a few pixels: at most the corners that do not overlap are used
    placed = [p for p in pos[:3] if p]
    assert len(placed) == len(set(placed)) and len(placed) >= 2
    far = plots._place_labels(df.assign(x=[2.0, 8.0, 30.0, 50.0]), "x", "y", "lab", "panel",
                              [1, 100], 200, 100, 9)
    assert all(far[:3])


# ------------------------------------------------------------------ the printed-figure rules
def _good(df=None, *, mark="line", y_fmt=None, subtitle=(), y_domain=None):
    """A small column-width figure that passes every rule, to be broken one way at a time."""
    df = pd.DataFrame({"h": [1.0, 2, 3, 4] * 2, "n": [1.0, 3, 2, 5, 2, 2, 4, 1],
                       "q": ["TE"] * 4 + ["BE"] * 4}) if df is None else df
    y = alt.Y("n:Q", title="waiting jobs", axis=alt.Axis(format=y_fmt) if y_fmt else alt.Axis(),
              scale=alt.Scale(domain=y_domain) if y_domain else alt.Scale())
    c = alt.Chart(df).mark_point(filled=True) if mark == "point" else alt.Chart(df).mark_line()
    c = c.encode(x=alt.X("h:Q", title="time (h)"), y=y, color=alt.Color("q:N", title="queue"))
    p = plots.preset("column")
    return plots._finish(c.properties(width=plots._panel(p, 1)), p, "A small test figure",
                         subtitle)


def _broken(rule):
    if rule == "font":
        return plots.fit_width(_good().configure_axis(labelFontSize=5))
    if rule == "width":
        return _good().to_dict()                     # not laid out: about 3.0 in, not 3.3
    if rule == "repeated-ticks":
        df = pd.DataFrame({"h": [1.0, 2, 3], "n": [-0.9981, -0.9983, -0.9982], "q": "TE"})
        return plots.fit_width(_good(df, y_fmt="+.1%"))   # every tick "-99.8%"
    if rule == "interval-clip":
        df = pd.DataFrame({"h": [1.0, 2], "lo": [-2.0, 0.5], "hi": [3.0, 1.0]})
        rule_ = alt.Chart(df).mark_rule(clip=True).encode(
            x=alt.X("h:Q", title="time (h)"),
            y=alt.Y("lo:Q", title="change", scale=alt.Scale(domain=[0, 2])), y2="hi:Q")
        p = plots.preset("column")
        return plots.fit_width(plots._finish(rule_.properties(width=200), p, "Intervals"))
    if rule == "flat-zero":
        df = pd.DataFrame({"h": [1.0, 2, 3] * 2, "n": [1.0, 3, 2, 0, 0, 0],
                           "q": ["TE"] * 3 + ["BE"] * 3})
        return plots.fit_width(_good(df))
    if rule == "off-scale":
        df = pd.DataFrame({"h": [1.0, 1.01, 1.02, 1.03, 500], "n": [1.0, 2, 3, 4, 5], "q": "a"})
        return plots.fit_width(_good(df, mark="point"))
    if rule == "prose":
        return plots.fit_width(_good(subtitle=["No room for the labels of s=0.5, s=1, s=2 "
                                               "(BE median slowdown); " * 6]))
    if rule == "aspect":            # a column figure 3.3 x 10 in (RQ6 printed 12.25 in tall)
        return plots.fit_width(_good().properties(height=650))
    if rule == "plot-area":         # a plot 12 pt high under its title and legend
        return plots.fit_width(_good().properties(height=12))
    if rule == "narrow-axis":       # 1.088 to 1.098, no interval: 0.9 % looks dramatic
        df = pd.DataFrame({"h": [1.0, 4, 16], "n": [1.098, 1.089, 1.089], "q": "s=4"})
        c = alt.Chart(df).mark_line(point=True).encode(
            x=alt.X("h:Q", title="grace-period scale"),
            y=alt.Y("n:Q", title="slowdown", scale=alt.Scale(zero=False)),
            color=alt.Color("q:N", title="policy"))
        p = plots.preset("column")
        return plots.fit_width(plots._finish(c.properties(width=200), p, "Long BE jobs"))
    raise KeyError(rule)


PRINTED = ["font", "width", "repeated-ticks", "interval-clip", "flat-zero", "off-scale",
           "prose", "aspect", "plot-area", "narrow-axis"]


def test_the_good_figure_passes():
    assert figcheck.check(plots.fit_width(_good())) == []


@pytest.mark.parametrize("rule", PRINTED)
def test_each_printed_rule_fires_on_its_broken_figure(rule):
    fired = {p.rule for p in figcheck.check(_broken(rule))}
    assert rule in fired, fired


def test_identical_figures_under_two_names_are_refused(tmp_path):
    from fitgpp.figures import export as E
    a = plots.fit_width(_good())
    b = plots.fit_width(_good().properties(title="Another title, the same data"))
    assert [p.rule for ps in figcheck.check_all({"a": a, "b": b}).values() for p in ps] \
        == ["identical"]
    with pytest.raises(E.ExportError, match="identical"):
        E.export({"a": a, "b": b}, tmp_path, config={})
    E.export({"a": a}, tmp_path / "x", config={})
    E.export({"b": a}, tmp_path / "x", config={})       # one at a time: the folder check
    assert {p.rule for p in figcheck.check_files(tmp_path / "x")} == {"identical"}


def test_repeated_ticks_reads_the_format_as_d3_does():
    from fitgpp.figures.print_rules import d3_format
    assert d3_format(-0.99825, "+.2~%") == "-99.83%" and d3_format(-0.2, "+.1~%") == "-20%"
    assert d3_format(0.5, ".0%") == "50%" and d3_format(0.123, "+.1%") == "+12.3%"


def test_label_overlap_fails_labels_drawn_on_top_of_each_other_and_passes_spaced_ones():
    """The rule reads the SVG as drawn: Vega's own ticks on a 40 pt wide axis put "500"
    against "1,000"; the same axis 300 pt wide keeps them apart."""
    import vl_convert as vlc

    from fitgpp.figures import print_rules as figrules

    def svg(width):
        return vlc.vegalite_to_svg({
            "width": width, "data": {"values": [{"x": 520, "y": 1}, {"x": 2000, "y": 2}]},
            "mark": "point", "encoding": {
                "x": {"field": "x", "type": "quantitative", "scale": {"zero": False},
                      "axis": {"values": [500, 1000, 1500, 2000], "labelOverlap": False}},
                "y": {"field": "y", "type": "quantitative"}}}).encode()
    probs = figrules.label_overlap(svg(40))
    assert [p.rule for p in probs] == ["label-overlap"] and "'500'" in probs[0].message
    assert figrules.label_overlap(svg(300)) == []


def test_metric_lines_on_a_narrow_linear_axis_ticks_the_values_run():
    """The run-length figure at full width drew "5001,000" under its middle panel (Vega's
    ticks on a domain from about 620): a linear x with few values is ticked at them."""
    import pandas as pd
    import vl_convert as vlc

    from fitgpp.figures import print_rules as figrules, plots
    rows = [("0.9", n, m, v) for m in ("TE p95 vs FIFO (%)", "BE median vs FIFO (%)",
                                      "BE p95 vs FIFO (%)")
            for n, v in ((600, -0.06), (2000, -0.15))]
    rows += [("0.7", n, "TE p95 vs FIFO (%)", v) for n, v in ((600, -0.01), (2000, -0.3))]
    df = pd.DataFrame(rows, columns=["load", "n_jobs", "metric", "value"])
    ch = plots.metric_lines(df, x="n_jobs", series="load", x_title="jobs per run",
                            percent=True, size="full")
    drawn = vlc.vegalite_to_svg(ch.to_dict()).encode()
    assert figrules.label_overlap(drawn) == []
    assert b">600<" in drawn and b">2,000<" in drawn


def test_a_panel_whose_every_series_is_zero_is_left_out_and_said_so():
    """At load 0.8 and 600 jobs no policy moves RQ2's BE median: every series of that panel
    was dropped as flat at zero, leaving an empty view (Vega: "Infinite extent for field
    value", 4 warnings in the browser). The panel is now left out and the subtitle says so."""
    import pandas as pd

    from fitgpp.figures import plots
    rows = [(pol, s, m, v) for pol in ("FitGpp", "LRTP") for s in (1.0, 4.0)
            for m, v in (("TE p95 vs FIFO (%)", -0.5 - s / 10), ("BE median vs FIFO (%)", 0.0))]
    df = pd.DataFrame(rows, columns=["policy", "s", "metric", "value"])
    spec = plots.metric_lines(df, x="s", percent=True, size="full").to_dict()
    views = spec["concat"]
    assert len(views) == 1
    sub = " ".join(spec["title"]["subtitle"])
    assert "BE median: 0 throughout (not drawn)" in sub
    for name, rows_ in spec["datasets"].items():
        assert rows_, f"an empty dataset {name}"
    assert [q for q in figcheck.check(spec) if q.rule != "width"] == []   # export lays out


def test_a_figure_of_nothing_but_zeros_draws_points_and_says_so():
    """Every change 0 in every panel (a tiny run): no line lies along the axis (the
    flat-zero rule), no view is empty (Vega's infinite extent), the points are drawn and
    the subtitle says every series is 0."""
    import pandas as pd

    from fitgpp.figures import plots
    df = pd.DataFrame([(pol, g, m, 0.0) for pol in ("FitGpp s=4", "FitGpp s=8")
                       for g in (1.0, 4.0) for m in ("TE p95 vs FIFO (%)", "BE p95 vs FIFO (%)")],
                      columns=["policy", "grace", "metric", "value"])
    spec = plots.metric_lines(df, x="grace", percent=True, size="full").to_dict()
    assert len(spec["concat"]) == 2
    marks = [lay["mark"]["type"] for v in spec["concat"] for lay in v["layer"]]
    assert "line" not in marks and "point" in marks
    assert "0 throughout for every policy in every panel" in " ".join(spec["title"]["subtitle"])
    assert [q for q in figcheck.check(spec) if q.rule != "width"] == []


def test_a_marked_zoom_passes_the_narrow_axis_rule():
    """The narrow-axis rule is silenced by the mark, not by anything else."""
    from fitgpp.figures import print_rules as figrules
    spec = _broken("narrow-axis")
    spec["title"]["subtitle"] = [figrules.zoom_note(0.009)]
    assert "narrow-axis" not in {p.rule for p in figcheck.check(spec)}



def test_a_narrow_panel_with_intervals_drawn_needs_no_zoom_mark():
    """Intervals drawn as a rule layer (y/y2, the scale left to Vega, as metric_lines draws
    them) count: RQ2 on paper-wide-te at full size has a TE p95 change panel whose means span
    0.5 % inside wide intervals, and the docs build failed on it while metric_lines rightly
    wrote no zoom note. The same chart without the rule layer still fails."""
    df = pd.DataFrame({"s": [1.0, 4, 16], "v": [-0.1376, -0.1372, -0.137], "lo": [-0.3] * 3,
                       "hi": [0.02] * 3, "q": "FitGpp"})
    base = alt.Chart(df).encode(x=alt.X("s:Q", title="threshold s"),
                                color=alt.Color("q:N", title="policy"))
    pts = base.mark_line(point=True).encode(
        y=alt.Y("v:Q", title="TE p95 change", scale=alt.Scale(zero=False)))
    rule = base.mark_rule().encode(y="lo:Q", y2="hi:Q")
    p = plots.preset("column")
    with_rule = plots.fit_width(plots._finish(alt.layer(pts, rule).properties(width=200), p,
                                              "TE p95 against s"))
    without = plots.fit_width(plots._finish(pts.properties(width=200), p, "TE p95 against s"))
    assert "narrow-axis" not in {q.rule for q in figcheck.check(with_rule)}
    assert "narrow-axis" in {q.rule for q in figcheck.check(without)}

def _rq6_like(n_panels: int, constant=()):
    """A workload chart of RQ6's shape: ``n_panels`` metrics against the overhead, five
    policies; the metrics in ``constant`` are 1 for every policy and overhead."""
    rng = np.random.default_rng(3)
    rows = []
    for k in range(n_panels):
        metric = f"metric {k} slowdown"
        for pol in ("PRIO", "FitGpp s=1", "FitGpp s=4", "LRTP", "RAND"):
            for x in (0, 10, 30, 60):
                v = 1.0 if metric in constant else 1 + rng.random()
                rows.append({"overhead_min": x, "policy": pol, "metric": metric, "value": v})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("n", [3, 5])
@pytest.mark.parametrize("size", ["column", "full"])
def test_many_panels_fit_the_page_at_both_widths(n, size):
    """Five stacked panels printed 3.3 x 12.25 in (RQ6): the panels go side by side and
    lower until the figure is within the aspect rule and its plots keep their share."""
    from fitgpp.figures import print_rules as figrules
    from fitgpp.figures.plots.render import svg_size
    ch = plots.metric_lines(_rq6_like(n), x="overhead_min", x_title="restart overhead (min)",
                            title="What restarts cost", size=size)
    spec = plots.fit_width(ch)
    svg = plots.render(spec, ".svg")
    w, h = svg_size(svg)
    assert h <= (figrules.MAX_ASPECT * w if size == "column" else 8 * 72) + 1, (w, h)
    assert [p for p in figcheck.check(spec, svg=svg)] == []


def test_a_panel_of_one_constant_is_left_out_and_said_so():
    """RQ6's TE p95 and BE median panels were flat lines at 1 with a single tick: they are
    left out, and the subtitle gives their value."""
    ch = plots.metric_lines(_rq6_like(4, constant=("metric 0 slowdown", "metric 1 slowdown")),
                            x="overhead_min", x_title="restart overhead (min)",
                            title="What restarts cost", size="column").to_dict()
    assert len(ch["concat"]) == 2
    sub = " ".join(ch["title"]["subtitle"])
    assert "metric 0 slowdown: 1, metric 1 slowdown: 1, throughout (not drawn)" in sub


def test_a_zoomed_axis_without_intervals_is_marked():
    """rq3_long_be_jobs spanned 1.088 to 1.098 with no interval (2 seeds): the subtitle now
    says the axis is zoomed in and by how little the points differ."""
    df = pd.DataFrame({"grace": [1.0, 4, 16] * 2, "policy": ["FitGpp s=4"] * 3 + ["FitGpp s=8"] * 3,
                       "metric": "p95 slowdown of long BE jobs",
                       "value": [1.0975, 1.0891, 1.0891, 1.0976, 1.0892, 1.0890]})
    spec = plots.fit_width(plots.metric_lines(df, x="grace", x_title="grace-period scale",
                                              y_title="slowdown", size="column"))
    assert "Axis zoomed in: points differ by at most 0.8%, no interval drawn" in " ".join(
        spec["title"]["subtitle"])
    assert figcheck.check(spec) == []


def test_series_piled_at_one_value_are_dodged_apart():
    """Six loads at -99.x % at two run lengths hid loads 0.9 and 1 behind each other: at
    column width neighbouring series are now at least 5 pt apart along x."""
    rows = [(f"{ld:g}", n, "TE p95 slowdown vs FIFO (%)", -0.995 + ld / 1000)
            for ld in (0.7, 0.8, 0.85, 0.9, 0.95, 1.0) for n in (600, 2000)]
    df = pd.DataFrame(rows, columns=["load", "n_jobs", "metric", "value"])
    spec = plots.fit_width(plots.metric_lines(df, x="n_jobs", series="load", percent=True,
                                              x_title="jobs per run", size="column"))
    data = next(v for v in spec["datasets"].values() if v and "x_plot" in v[0])
    xs = sorted(r["x_plot"] for r in data if r["n_jobs"] == 600)
    width = spec["concat"][0]["width"]
    lo, hi = min(r["x_plot"] for r in data), max(r["x_plot"] for r in data)
    gaps = np.diff(xs) / (hi - lo) * width
    assert gaps.min() >= 5, gaps


def test_every_s_label_is_nearer_its_own_point_than_any_other():
    """03 (paper-default, P = 3): "s=4, 8, 16" sat next to the s=2 point, "s=0.5" next to
    s=4's. Over many crowded panels, each label placed is nearer its own point than any
    other point of its panel (distance from the point to the label's box)."""
    from fitgpp.figures.plots.tradeoff import _LABEL_OFFSETS, _place_labels
    rng = np.random.default_rng(7)
    width, height, font = 200, 76, 7
    checked = 0
    for _ in range(300):
        n = int(rng.integers(3, 8))
        df = pd.DataFrame({"x": np.exp(rng.uniform(0, 1.2, n)), "y": rng.uniform(7.7, 8.0, n),
                           "s_label": [f"s={s:g}" for s in (0.5, 1, 2, 4, 8, 16, 32)[:n]],
                           "metric": "BE p95"})
        lab = _place_labels(df, "x", "y", "s_label", "metric", (1.0, 4.0), width, height, font)
        px = width * np.log(df["x"].to_numpy()) / np.log(4.0)
        y0, y1 = df["y"].min(), df["y"].max()
        py = height * (1 - (df["y"].to_numpy() - y0) / (y1 - y0))
        for i, pos in enumerate(lab):
            if not pos:
                continue
            dx, dy = _LABEL_OFFSETS[pos]
            w = 0.6 * font * len(df["s_label"].iat[i])
            x0 = px[i] + dx if dx > 0 else px[i] - w / 2 if dx == 0 else px[i] + dx - w
            box = (x0, py[i] + dy - (font + 1) / 2, x0 + w, py[i] + dy + (font + 1) / 2)

            def dist(a, b):
                return np.hypot(max(box[0] - a, 0, a - box[2]), max(box[1] - b, 0, b - box[3]))
            own = dist(px[i], py[i])
            for j in range(n):
                if j != i:
                    assert own < dist(px[j], py[j]), (df, lab, i, j)
            checked += 1
    assert checked > 500
