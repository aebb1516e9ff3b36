"""Charts build from simulation results, keep each policy's style, and export valid PNG/SVG/PDF."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from fitgpp import Cluster, simulate
from fitgpp.figures import plots

from conftest import mixed_trace

CLUSTER = Cluster.homogeneous(2, gpu=4, cpu_milli=32000, mem_mib=65536)


@pytest.fixture(scope="module")
def trace():
    return mixed_trace(3, 80, grace=300.0)


@pytest.fixture(scope="module")
def runs(trace):
    return [simulate(trace, CLUSTER, "fifo"), simulate(trace, CLUSTER, "fitgpp", s=4.0)]


def test_cdf_has_one_curve_per_policy_and_class(runs):
    spec = plots.slowdown_cdf(runs, points=50).to_dict()
    data = pd.DataFrame(next(iter(spec["datasets"].values())))
    assert set(data["policy"]) == {"FIFO", "FitGpp s=4"}
    assert data.groupby(["policy", "class"]).size().eq(50).all()
    # each curve is a CDF: fraction rises from 0 to 1, slowdown never decreases
    for _, g in data.groupby(["policy", "class"]):
        assert g["fraction"].iloc[0] == 0 and g["fraction"].iloc[-1] == 1
        assert (np.diff(g["slowdown"]) >= 0).all() and g["slowdown"].min() >= 1


def test_policy_styles_are_distinct_in_colour_shape_and_dash():
    st = plots._styles(["FIFO", "FitGpp s=4", "LRTP", "RAND", "FitGpp s=8"])
    for key in ("color", "shape", "dash"):
        rng = [str(x) for x in st[key].range]
        assert len(set(rng)) == len(rng), key
    assert st["color"].range[st["order"].index("FIFO")] == plots.POLICY_STYLE["FIFO"][0]


def test_bootstrap_ci_brackets_the_statistic(runs):
    s = plots.bootstrap_stats(runs[0], n_boot=100)
    assert set(s["stat"]) == {"median", "p95"}
    assert ((s["lo"] <= s["value"] + 1e-12) & (s["value"] <= s["hi"] + 1e-12)).all()
    med = float(np.median(runs[0]["slowdown"].where(runs[0]["cls"] == "TE", drop=True)))
    assert s.query("`class` == 'TE' and stat == 'median'")["value"].item() == pytest.approx(med)


def test_segments_are_exact_run_intervals(trace, runs):
    seg = plots.segments(trace, CLUSTER, "fitgpp", s=4.0)
    ds = runs[1]
    run = seg[seg["kind"] == "run"]
    # total run time per job equals its work; the last run ends at the job's finish
    total = (run["end"] - run["start"]).groupby(run["job"]).sum()
    assert np.allclose(total.reindex(ds["job"].to_numpy()), ds["work"].to_numpy())
    last = run.groupby("job")["end"].max().reindex(ds["job"].to_numpy())
    assert np.allclose(last, ds["finish"].to_numpy())
    grace = seg[seg["kind"] == "grace"]
    assert len(grace) == int(ds["preemptions"].sum())
    chart = plots.node_timeline(seg, nodes=[0, 1]).to_dict()
    assert "layer" in chart


def test_bad_input_names_what_is_missing(runs):
    with pytest.raises(plots.PlotError, match="missing"):
        plots.slowdown_cdf({"x": runs[0][["gpu"]]})
    with pytest.raises(plots.PlotError, match="columns"):
        plots.slowdown_bars(pd.DataFrame({"policy": ["a"]}))
    with pytest.raises(plots.PlotError, match=r"\.png"):
        plots.save(plots.utilization(runs[0]), "fig.gif")


def test_export_png_svg_pdf_are_valid(runs, tmp_path):
    charts = {"tradeoff": plots.s_tradeoff(plots.tradeoff_table(runs)),
              "util": plots.utilization(runs[1])}
    paths = plots.save_all(charts, tmp_path)
    assert len(paths) == 6
    for p in paths:
        data = p.read_bytes()
        assert len(data) > 500, p
        if p.suffix == ".png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
        elif p.suffix == ".pdf":
            assert data[:5] == b"%PDF-"
        else:
            root = ET.fromstring(data)
            assert root.tag.endswith("svg")
    assert not list(tmp_path.glob(".*.tmp"))


def test_save_reuses_a_rendered_figure_from_its_cache(tmp_path, monkeypatch):
    import altair as alt
    import vl_convert

    chart = alt.Chart(pd.DataFrame({"x": [1, 2], "y": [3, 4]})).mark_line().encode(x="x", y="y")
    first = plots.save(chart, tmp_path / "a.svg", cache=tmp_path / "fig").read_bytes()

    def boom(*a, **k):
        raise AssertionError("rendered again although the same figure is cached")
    monkeypatch.setattr(vl_convert, "vegalite_to_svg", boom)
    assert plots.save(chart, tmp_path / "b.svg", cache=tmp_path / "fig").read_bytes() == first
    other = chart.properties(title="changed")
    with pytest.raises(AssertionError, match="rendered again"):
        plots.save(other, tmp_path / "c.svg", cache=tmp_path / "fig")


def test_save_all_validates_a_spec_until_every_format_is_cached(tmp_path, monkeypatch):
    import altair as alt

    chart = alt.Chart(pd.DataFrame({"x": [1, 2], "y": [3, 4]})).mark_line().encode(x="x", y="y")
    assert chart.to_dict(validate=False) == chart.to_dict()
    calls = []
    to_dict = alt.Chart.to_dict

    def spy(self, *a, validate=True, **k):
        calls.append(validate)
        return to_dict(self, *a, validate=validate, **k)
    monkeypatch.setattr(alt.Chart, "to_dict", spy)
    fig = tmp_path / "fig"
    plots.save_all({"c": chart}, tmp_path / "one", (".svg",), cache=fig)
    assert True in calls, "a figure rendered for the first time is validated"
    calls.clear()
    plots.save_all({"c": chart}, tmp_path / "two", (".svg", ".png"), cache=fig)
    assert True in calls, "the .png is not cached yet: validated"
    calls.clear()
    plots.save_all({"c": chart}, tmp_path / "three", (".svg", ".png"), cache=fig)
    assert calls and True not in calls
    assert (tmp_path / "three" / "c.png").read_bytes() == (tmp_path / "two" / "c.png").read_bytes()


def test_bootstrap_intervals_from_their_cache_are_the_numbers_computed(tmp_path, monkeypatch):
    from fitgpp.analysis import metrics

    rng = np.random.default_rng(1)
    x = 1 + rng.lognormal(0, 1, 500)
    fresh = plots._cached_interval(x, 95, n_resamples=100, seed=0, level=0.95)
    first = plots._cached_interval(x, 95, n_resamples=100, seed=0, level=0.95, cache=tmp_path)
    assert first == fresh and fresh[0] < np.percentile(x, 95) < fresh[1]

    def boom(*a, **k):
        raise AssertionError("computed again although cached")
    monkeypatch.setattr(metrics, "bootstrap_interval", boom)
    assert plots._cached_interval(x, 95, n_resamples=100, seed=0, level=0.95,
                                  cache=tmp_path) == fresh
    with pytest.raises(AssertionError, match="computed again"):  # other values, other key
        plots._cached_interval(x[1:], 95, n_resamples=100, seed=0, level=0.95, cache=tmp_path)
    with pytest.raises(AssertionError, match="computed again"):  # other resampling
        plots._cached_interval(x, 95, n_resamples=101, seed=0, level=0.95, cache=tmp_path)
    for f in tmp_path.rglob("*.json"):  # an unreadable entry is computed again
        f.write_text("[1.0,")
    with pytest.raises(AssertionError, match="computed again"):
        plots._cached_interval(x, 95, n_resamples=100, seed=0, level=0.95, cache=tmp_path)


def test_each_percent_panel_gets_the_decimals_its_range_needs():
    """Whole-percent ticks repeat on a narrow panel ("-9%, -9%, -10%"; a TE change of
    -99.8 % on every tick): each panel has its own axis with as many decimals as its range
    needs, and its tick labels all differ."""
    import pandas as pd

    from fitgpp.figures import check as figcheck, plots

    def fmt(values):
        df = pd.DataFrame({"s": [1.0, 2.0, 4.0] * 2, "policy": "fitgpp",
                           "metric": ["m"] * 3 + ["wide"] * 3,
                           "value": list(values) + [-0.2, 0.1, 0.3]})
        chart = plots.metric_lines(df, x="s", percent=True, title="A test chart")
        assert not [p for p in figcheck.check(plots.fit_width(chart))
                    if p.rule == "repeated-ticks"]
        spec = chart.to_dict()
        formats = [c["layer"][0]["encoding"]["y"]["axis"]["format"] for c in spec["concat"]]
        assert formats[1] == "+.0~%"            # the wide panel keeps whole percents
        return formats[0]

    assert fmt([-0.091, -0.093, -0.099]) == "+.1~%"
    assert fmt([-0.88, -0.93, -0.94]) == "+.0~%"
    assert fmt([-0.9981, -0.9983, -0.9982]) == "+.3~%"


def test_charts_made_inside_printed_at_take_its_width():
    """``fitgpp reproduce --width column`` and the export controls rebuild charts inside
    ``printed_at``: a chart made there without a size is laid out for a column."""
    import pandas as pd

    from fitgpp.figures import plots
    df = pd.DataFrame({"s": [1.0, 2.0, 4.0], "policy": "FIFO", "metric": "m", "value": [1, 2, 3]})

    def build():
        return {"m": plots.metric_lines(df, x="s", title="A test chart")}
    meta = plots.at_width(build)("column")["m"].to_dict()["usermeta"]["fitgpp"]
    assert meta == {"preset": "column", "inches": 3.3}
    assert build()["m"].to_dict()["usermeta"]["fitgpp"]["preset"] == "full"


# ------------------------------------------------------------------ LAS labels
def test_a_las_configuration_reads_las_and_only_what_varies():
    """LAS is a family like FitGpp: ``LAS`` alone when it is the only LAS setting compared,
    and with exactly the fields that differ otherwise (no ``las``, no default thresholds)."""
    from fitgpp.sim.policies import Las
    las = dict(Las().__dict__)
    assert plots.family("las") == "LAS" and plots.policy_label("las") == "LAS"
    assert plots.config_label("las", las) == "LAS"
    assert plots.config_label("las", las, ["thresholds"]) == "LAS thresholds=3250,7200"
    assert plots.config_label("LAS", {"threshold": 3250.0}, ()) == "LAS"
    assert plots.config_label("LAS", {"threshold": 3250.0}, ["threshold"]) == "LAS threshold=3250"


def test_compared_las_runs_are_named_by_the_fields_that_differ(trace):
    from fitgpp.sim.policies import Las
    fit, las = simulate(trace, CLUSTER, "fitgpp", s=4.0), simulate(trace, CLUSTER, "las")
    assert plots.run_labels([fit, las]) == ["FitGpp s=4", "LAS"]
    other = simulate(trace, CLUSTER, Las(thresholds=(1000.0, 2000.0)))
    assert plots.run_labels([las, other, fit]) == [
        "LAS thresholds=3250,7200", "LAS thresholds=1000,2000", "FitGpp s=4"]
    slow = simulate(trace, CLUSTER, Las(mode="tiresias"))
    assert plots.run_labels([las, slow]) == ["LAS mode=exact", "LAS mode=tiresias"]
    # two LAS settings no longer collapse into one entry of a chart
    assert set(plots._as_runs([las, other])) == {"LAS thresholds=3250,7200",
                                                 "LAS thresholds=1000,2000"}


def test_a_grid_that_sweeps_one_las_threshold_labels_it_las():
    """Through a study's grid (``label_of``): RQ7's LAS with one threshold is ``LAS``; with
    the two it sweeps, each names its threshold."""
    from fitgpp.studies.base import label_of
    from fitgpp.studies.rq7 import LasThreshold
    from fitgpp.sweep import Experiment, Workload
    wl = Workload(model="paper-default", n_jobs=100)
    for values, want in (([3250.0], "LAS"), ([3250.0, 14000.0], "LAS threshold=3250")):
        exp = Experiment(workload=wl, policies={
            "fifo": {}, "LAS": {"policy": LasThreshold, "threshold": values}})
        assert label_of("LAS", {"threshold": 3250.0}, exp) == want
        assert label_of("fifo", {}, exp) == "FIFO"


def test_a_registered_policy_is_named_without_a_families_entry(monkeypatch):
    """Registering a policy is enough to name it: its registry name in capitals."""
    from fitgpp.sim import policies
    monkeypatch.setitem(policies.POLICIES, "sjf", policies.Fifo)
    assert plots.family("sjf") == "SJF" and plots.config_label("sjf", {}) == "SJF"
    assert plots.family("patient") == "patient"     # not registered: its own name


def test_fitgpp_points_are_drawn_over_policies_on_the_same_spot():
    """At load 0.8 and 600 jobs every FitGpp point of RQ2's trade-off lands on LRTP's and
    RAND's; drawn first, none could be clicked (browser test of notebook 03 after P 3 -> 1).
    FitGpp's rows come last, so Vega draws them on top."""
    import pandas as pd

    from fitgpp.figures.plots.tradeoff import _long_table
    t = pd.DataFrame({"policy": ["FIFO", "FitGpp s=1", "FitGpp s=4", "LRTP", "RAND"],
                      "family": ["FIFO", "FitGpp", "FitGpp", "LRTP", "RAND"],
                      "s": [None, 1.0, 4.0, None, None], "te_p95": [4.0, 1, 1, 1, 1],
                      "be_median": [1.0] * 5, "be_p95": [1.3, 1.39, 1.39, 1.39, 1.39]})
    long = _long_table(t)
    for _, g in long.groupby("metric"):
        fam = list(g["family"])
        assert fam[-2:] == ["FitGpp", "FitGpp"] and "FitGpp" not in fam[:-2], fam


def test_six_non_policy_series_get_six_different_styles():
    """The full run-length figure draws six offered loads: with four spare styles, 0.7 and
    0.9 (and 0.85 and 1) were drawn alike. Labels that are no policy now take the styles of
    the built-in families the chart does not draw once the spares are used."""
    from fitgpp.figures.plots.style import policy_styles
    styles = policy_styles(["0.5", "0.7", "0.8", "0.85", "0.9", "1"])
    assert len({v[0] for v in styles.values()}) == 6
    assert len({v[1] for v in styles.values()}) == 6
    mixed = policy_styles(["FIFO", "FitGpp s=4", "a", "b", "c", "d", "e"])
    assert mixed["FIFO"][0] != mixed["e"][0] and mixed["FitGpp s=4"][0] != mixed["e"][0]


def test_a_single_fitgpp_point_on_another_policys_is_said_to_coincide():
    """A panel's trade-off at one s (RQ1 at the quick size: FitGpp, LRTP, PRIO and RAND all at
    TE p95 1, BE median 1.2) drew FitGpp on top of three policies without a word; the figure
    check refused it, and with it the panel's "Export this view" in notebooks 02 and 05."""
    from fitgpp.figures import check
    rows = [("FitGpp s=4", "FitGpp", 4.0, 1.0, 1.2, 1.5), ("LRTP", "LRTP", np.nan, 1.0, 1.2, 1.5),
            ("PRIO", "PRIO", np.nan, 1.0, 1.2, 1.5), ("FIFO", "FIFO", np.nan, 4.2, 1.25, 1.6)]
    t = pd.DataFrame(rows, columns=["policy", "family", "s", "te_p95", "be_median", "be_p95"])
    for size in ("column", "full"):
        chart = plots.fit_width(plots.s_tradeoff(t, size=size))
        sub = " ".join(chart["title"]["subtitle"])
        assert "FitGpp, LRTP and PRIO coincide" in sub, sub
        assert not [p for p in check.check(chart) if p.rule == "coincide"]


def test_a_trade_off_on_a_narrow_be_axis_is_marked():
    """RQ4's panel at the quick size: BE slowdowns 1 to 1.019 drawn without intervals; the
    figure check refused the chart, and with it the panel's "Export this view" (notebook 05)."""
    from fitgpp.figures import check
    rows = [("FitGpp s=4", "FitGpp", 4.0, 1.0, 1.0, 1.01), ("LRTP", "LRTP", np.nan, 1.2, 1.019, 1.015),
            ("FIFO", "FIFO", np.nan, 3.0, 1.012, 1.018)]
    t = pd.DataFrame(rows, columns=["policy", "family", "s", "te_p95", "be_median", "be_p95"])
    chart = plots.fit_width(plots.s_tradeoff(t, size="full"))
    assert "zoomed in" in " ".join(chart["title"]["subtitle"])
    assert not [p for p in check.check(chart) if p.rule == "narrow-axis"]


def test_slowdown_bars_mark_each_whisker_cut_at_1():
    """Bar charts cut whiskers at 1 (a slowdown's floor) with only "(cut at 1)" in the
    subtitle: which whisker was cut could not be told. Each cut one is marked "*", as a cut
    bound is in the tables (fitgpp.analysis.metrics.cut_interval)."""
    rows = [dict(policy=pol, stat=stat, value=v, lo=lo, hi=hi, **{"class": cls})
            for pol, v, lo, hi in [("FIFO", 7.97, 0.5, 19.0), ("PRIO", 2.0, 1.5, 2.5)]
            for cls in ("TE", "BE") for stat in ("median", "p95")]
    spec = plots.slowdown_bars(pd.DataFrame(rows)).to_dict()
    layers = spec["spec"]["layer"]
    star = [l for l in layers if (l["mark"]["type"] if isinstance(l["mark"], dict)
                                  else l["mark"]) == "text"]
    assert len(star) == 1 and star[0]["encoding"]["text"]["field"] == "cut"
    data = next(iter(spec["datasets"].values()))
    marks = {(r["policy"], r["lo_c"], r["cut"]) for r in data}
    assert marks == {("FIFO", 1.0, "*"), ("PRIO", 1.5, "")}
    def sub(s):
        t = s["title"]["subtitle"]
        return t if isinstance(t, str) else " ".join(t)
    assert "* where cut at 1" in sub(spec)
    uncut = plots.slowdown_bars(pd.DataFrame([r for r in rows if r["policy"] == "PRIO"]))
    assert "95 % interval; log scale" in sub(uncut.to_dict()) and "cut" not in sub(uncut.to_dict())


def test_a_whisker_below_its_quantitys_least_value_is_cut_there_and_marked():
    """RQ6's GPU-hours lost to reloads cannot fall below 0: a 95 % interval from a few seeds
    that reaches below 0 is drawn from 0, with a bar and a subtitle saying so."""
    df = pd.DataFrame({"overhead": [0, 10, 30], "policy": "RAND", "metric": "GPU-hours lost",
                       "value": [2.0, 40.0, 120.0], "lo": [-30.0, 10.0, 90.0],
                       "hi": [34.0, 70.0, 150.0], "lowest": 0.0})
    spec = plots.metric_lines(df, x="overhead", title="A test chart").to_dict()
    rows = max(spec["datasets"].values(), key=len)    # every point; the bar layer has one
    assert sorted(r["lo_c"] for r in rows) == [0.0, 10.0, 90.0]
    assert [r["cut"] for r in rows if r["cut"] is not None] == [0.0]
    subtitle = " ".join(spec["title"]["subtitle"])
    assert "cut at the least value the quantity can take (marked with a bar)" in subtitle


def test_an_axis_starts_at_its_quantitys_least_value_not_below_it():
    """RQ6 (quick): 'GPU-hours lost to reloads' drew its axis from -50, philly's slowdowns
    from 0 (Vega's padding and nice rounding); 09's preemptions below 0 (no ``lowest``
    column). Every axis is computed: from the ``lowest`` column, else from the range of the
    quantity the metric names (a slowdown from 1, a count from 0), never below it, the marks
    inside it (not clipped); far above it, the axis starts near the data."""
    def y_domains(df):
        spec = plots.metric_lines(df, x="overhead", title="A test chart").to_dict()
        views = spec.get("concat") or [spec]
        out = []
        for v in views:
            layers = v["layer"]
            scales = [l["encoding"]["y"].get("scale") for l in layers[:2]]
            assert all(l["mark"].get("clip") is False for l in layers[:2])
            out.append(scales[0]["domain"])
        return out
    df = pd.DataFrame({"overhead": [0, 10, 30, 60], "policy": "RAND", "metric": "GPU-hours",
                       "value": [0.0, 27.0, 97.0, 317.0]})
    assert [d[0] for d in y_domains(df.assign(lowest=0.0))] == [0.0]
    assert [d[0] for d in y_domains(df)] == [0.0]          # values from 0: not below 0
    assert y_domains(df.assign(value=df["value"] + 500.0, lowest=0.0))[0][0] >= 450
    slow = pd.DataFrame({"overhead": [0, 10, 30, 60] * 2, "policy": ["RAND"] * 4 + ["LRTP"] * 4,
                         "metric": "TE p95 slowdown",
                         "value": [1.02, 1.3, 2.0, 2.9, 1.0, 1.1, 1.6, 2.2]})
    (lo, hi), = y_domains(slow)
    assert lo == 1.0 and hi >= 2.9                          # not from 0, nor from 0.9
    counts = pd.DataFrame({"overhead": [0, 10, 30], "policy": "patient",
                           "metric": "BE preemptions per job", "value": [0.02, 0.1, 0.3],
                           "lo": [-0.05, 0.0, 0.1], "hi": [0.09, 0.2, 0.5]})
    (lo, _), = y_domains(counts)
    assert lo == 0.0                                        # the whisker at -0.05 is cut at 0
    from fitgpp.figures.plots.axes import quantity_range
    assert quantity_range("load 0.8, TE share 0.3") == (-np.inf, np.inf)   # a setting


def _finish_chained(chart, p, title, notes=(), legend=()):
    """What plots.base._finish did before issue 26: properties() and four configure_*()
    calls, each copying the whole chart."""
    import altair as alt

    from fitgpp.figures.plots import base
    longest = max((len(str(lb)) for lb in legend), default=12)
    columns = max(1, min(len(legend) or 3, int(p.width // (0.6 * p.font * longest + 34))))
    sub = [ln for note in notes if note for ln in base._wrap(note, p)]
    lines = base._wrap(title, p, p.title_font + 1, em=0.62)
    head = alt.Title(lines if len(lines) > 1 else title, subtitle=sub or alt.Undefined,
                     anchor="start", fontSize=p.title_font + 1, subtitleFontSize=p.font,
                     fontWeight="bold")
    return (chart.properties(title=head, usermeta={"fitgpp": {"preset": p.name,
                                                               "inches": p.inches}})
            .configure_axis(labelFontSize=p.font, titleFontSize=p.title_font)
            .configure_legend(labelFontSize=p.font, titleFontSize=p.title_font, columns=columns,
                              labelLimit=p.width, titleLimit=p.width, symbolSize=40)
            .configure_header(labelFontSize=p.title_font, titleFontSize=p.title_font)
            .configure_text(fontSize=p.font))


@pytest.mark.parametrize("kind", ["chart", "layer", "facet", "configured"])
def test_finish_gives_the_dict_the_configure_calls_gave(kind):
    """Issue 26: _finish sets the fonts on one copy instead of five; the Vega-Lite it gives is
    the same, key for key and in the same order, and the chart it was given is unchanged."""
    import json

    import pandas as pd

    import altair as alt

    from fitgpp.figures.plots import base
    df = pd.DataFrame({"x": [1, 2, 3], "y": [3, 1, 2], "g": ["a", "b", "a"]})
    one = alt.Chart(df).mark_line().encode(x="x", y="y", color="g")
    chart = {"chart": one, "layer": alt.layer(one, one.mark_point()),
             "facet": alt.layer(one, one.mark_point()).facet(column="g"),
             "configured": one.configure_view(stroke=None)}[kind]
    before = json.dumps(chart.to_dict())
    for p in base.PRESETS.values():
        args = (p, "A title long enough to be wrapped at the column width, surely", ["a note"],
                ["a", "b"])
        got, want = base._finish(chart, *args), _finish_chained(chart, *args)
        assert json.dumps(got.to_dict()) == json.dumps(want.to_dict())
    assert json.dumps(chart.to_dict()) == before


def test_a_fit_answered_before_is_not_validated_again_one_drawn_now_is(tmp_path, monkeypatch):
    """Issue 26: the page's measure (layout.page_of) keys its kept answer on the unvalidated
    spec (the same dict); a chart answered before is not checked against the schema again, a
    new one still is."""
    import altair as alt
    import pandas as pd

    from fitgpp.figures.plots import base, layout
    monkeypatch.setenv("FITGPP_CACHE", str(tmp_path))
    chart = alt.Chart(pd.DataFrame({"x": [1, 2], "y": [2, 1]})).mark_line().encode(
        x="x", y="y").properties(width=300, height=140)
    checked = []
    real = alt.Chart.to_dict

    def to_dict(self, *a, validate=True, **kw):
        checked.append(validate)
        return real(self, *a, validate=validate, **kw)
    monkeypatch.setattr(alt.Chart, "to_dict", to_dict)
    first = layout.page_of(chart, base.PRESETS["full"])
    assert True in checked                       # drawn now: validated
    checked.clear()
    assert layout.page_of(chart, base.PRESETS["full"]) == first
    assert checked == [False]                    # answered before: not validated again
    bad = chart.copy()
    bad._kwds["width"] = "wide"                  # not a width Vega-Lite takes
    with pytest.raises(Exception, match="wide"):
        layout.page_of(bad, base.PRESETS["full"])


def _x_domain(spec: dict) -> list:
    layer = spec["spec"]["layer"][1]                 # the points
    return layer["encoding"]["x"]["scale"]["domain"]


def test_a_trade_off_starts_its_slowdown_axes_at_1_and_says_off_scale_only_what_is():
    """Issue 35: 09's trade-off drew TE p95 from 0.5 and a user study's BE p95 from 0.8 (a
    slowdown is at least 1); "fewer lookahead=8 off the scale (TE p95 9.13), drawn at the edge"
    while the axis ran to 10 and the point was drawn where it is. Both axes start at 1 at the
    lowest; a policy is said off the scale exactly when it lies outside the axis."""
    rows = [("FitGpp s=1", "FitGpp", 1.0, 1.0, 1.0, 1.05), ("FitGpp s=4", "FitGpp", 4.0, 1.2, 1.01, 1.1),
            ("FitGpp s=8", "FitGpp", 8.0, 1.6, 1.02, 1.2), ("LRTP", "LRTP", np.nan, 1.3, 1.0, 1.15),
            ("fewer lookahead=8", "fewer", np.nan, 9.13, 1.0, 1.3),
            ("FIFO", "FIFO", np.nan, 40.0, 1.05, 1.4)]
    t = pd.DataFrame(rows, columns=["policy", "family", "s", "te_p95", "be_median", "be_p95"])
    for size in ("column", "full"):
        spec = plots.fit_width(plots.s_tradeoff(t, size=size))
        lo, hi = _x_domain(spec)
        assert lo >= 1.0, (size, lo)
        sub = " ".join(spec["title"]["subtitle"])
        said = {p for p in t["policy"] if f"{p} off the scale" in sub}
        outside = set(t.loc[(t["te_p95"] < lo) | (t["te_p95"] > hi), "policy"])
        assert said == outside and "FIFO" in said, (size, said, outside, (lo, hi))
        ends = [r["be"] for rows_ in spec["datasets"].values() for r in rows_ if r.get("end")]
        assert len(ends) == 4 and min(ends) >= 1.0, ends      # each BE axis from 1 at the lowest
        assert not [p for p in check_chart(spec) if p.rule in ("off-scale", "clip")]


def test_a_slowdown_cdf_starts_at_1(runs):
    """The CDF's axis went to 0.8 to leave room left of the step at slowdown 1."""
    spec = plots.slowdown_cdf(runs).to_dict()
    assert spec["encoding"]["x"]["scale"]["domain"][0] >= 1.0


def check_chart(spec):
    from fitgpp.figures import check
    return check.check(spec)


def test_a_note_for_one_panel_of_several_says_one_panel():
    """RQ8's map note read "FIFO: 0 throughout in 1 panels (not drawn)"."""
    from fitgpp.figures.plots.lines import _merged_notes
    note = "FIFO: 0 throughout (not drawn)."
    assert _merged_notes({note: ["a"]}, ["a", "b", "c"]) == \
        ["FIFO: 0 throughout in 1 panel (not drawn)."]
    assert _merged_notes({note: ["a", "b"]}, ["a", "b", "c"]) == \
        ["FIFO: 0 throughout in 2 panels (not drawn)."]
