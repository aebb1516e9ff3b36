"""Hard to break, round four (issue 37): a study's report and its parameters.

A label reaches results.md, a finding and a study's details as text (Markdown renders no
element of its own from it, a ``|`` ends no table cell); a misspelt knob, an undeclared
metric, a bad size or figure option is one error naming it when it is declared; a policy
field named like the study's variant dimension is refused before anything runs; a sweep of
10**6 values is refused at once through the API as through a file."""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

import mistune
import pytest

from fitgpp.sim.policies.fifo import Fifo
from fitgpp.studies import reproduce
from fitgpp.studies.reproduce import ReproduceError, Size, Study
from html_tags import Tags, tags

TINY = Size(n_jobs=40, seeds=(0, 1, 2), timeline_jobs=20, real_jobs=60, workers=0)
HOSTILE = ["<img src=x onerror=alert(1)>", "<script>alert(2)</script>", "a|b`c",
           "[l](javascript:alert(3))", "x\\<svg onload=alert(4)>", "\x1b[2Jesc"]


@dataclass(frozen=True)
class Mine(Fifo):
    knob: float = 1.0


def rendered(markdown: str) -> Tags:
    """``markdown`` as a renderer that lets inline HTML through (JupyterLab's for a trusted
    output, GitHub's before sanitizing) makes it, parsed."""
    return tags(mistune.create_markdown(escape=False, plugins=["table"])(markdown))


def harmless(markdown: str) -> Tags:
    p = rendered(markdown)
    made = {tag for tag, _ in p.tags}
    assert made <= {"h1", "h2", "p", "ul", "li", "strong", "em", "code", "table", "thead",
                    "tbody", "tr", "th", "td", "a", "br"}, made
    assert not any(k.startswith("on") for _, attrs in p.tags for k in attrs)
    assert not any(tag == "a" for tag, _ in p.tags), "a label made a link"
    return p


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    pols = {lab: {"policy": Mine, "knob": [1.0, 2.0]} for lab in HOSTILE[:3]}
    st = Study("hostile", "Who <b>wins</b> | here", "Does <i>it</i>?",
               policies={**pols, "fifo": {}}, baseline="fifo")
    return st.result(TINY, cache=tmp_path_factory.mktemp("report"))


def test_the_finding_renders_the_labels_as_text(result):
    p = harmless(result.finding)
    text = "".join(p.text)
    for lab in HOSTILE[:2]:
        assert lab in text
    assert "\x1b" not in result.finding


def test_results_md_renders_no_element_from_a_label(result, tmp_path):
    text = reproduce.write_results({"hostile": result}, tmp_path, TINY, 1.0, []).read_text()
    p = harmless(text)
    shown = "".join(p.text)
    assert "<img src=x onerror=alert(1)>" in shown and "Who <b>wins</b> | here" in shown
    blocks = re.findall(r"(?m)(?:^\|.*\n)+", text)
    assert len(blocks) >= 2                  # the study's table and its steadiness
    for block in blocks:   # every row of a table has as many cells as its header
        widths = {len(re.split(r"(?<!\\)\|", row)) for row in block.splitlines()}
        assert len(widths) == 1, block


def test_a_label_with_a_backtick_cannot_close_the_configurations_code_span(result, tmp_path):
    result.config = {**result.config, "note": "x`<img src=y onerror=alert(5)>`y"}
    text = reproduce.write_results({"hostile": result}, tmp_path, TINY, 1.0, []).read_text()
    harmless(text)


def test_restart_cost_details_escape_a_bar_in_a_cell():
    from fitgpp.studies import restart_cost as rc
    import pandas as pd
    row = {"workload": "w|x", "policy": "<img src=x onerror=1>", "te_gain_0": 0.1,
           "te_gain_max": 0.2, "be_p95_cost_0": 0.1, "be_p95_cost_max": 0.2,
           "preemptions_per_be_max": 1.0, "reload_gpu_h_max": 1.0, "reload_share_max": 0.1,
           "stops_paying_min": math.nan, "stops_helping_te_min": math.nan,
           "max_overhead_min": 30.0, "seeds": 1,
           "pays_off": "cannot tell | 1 seed", "helps_te": "cannot tell"}
    md = rc.details(pd.DataFrame([row]))
    rows = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert len(rows) == 3
    assert len(re.split(r"(?<!\\)\|", rows[2])) == len(re.split(r"(?<!\\)\|", rows[0]))
    assert "<img" not in md.replace("\\<img", "")


# ---------------------------------------------------------------- declarations
@pytest.mark.parametrize("kw, why", [
    ({"knobs": {"grace_scal": (1.0, 2.0)}}, r"knob 'grace_scal' is not a workload knob; the "
                                           r"knobs are n_jobs, load, te_fraction, grace_scale"),
    ({"columns": ("be_p99",)}, r"column 'be_p99' is not a metric; columns are names in "
                               r"fitgpp.analysis.metrics.METRICS: te_median"),
    ({"columns": "te_p95"}, r"columns must be a tuple of metric names"),
    ({"knobs": [("load", 0.5)]}, r"knobs must be a mapping"),
    ({"variants": {"a": 3}}, r"variant 'a' must be a function"),
    ({"baseline": 3}, r"baseline must be a policy name or a configuration"),
    ({"one_seed": "yes"}, r"one_seed must be True or False"),
    ({"analyze": "generic"}, r"analyze must be a function or None"),
    ({"variant_dim": ""}, r"variant_dim must be a non-empty string"),
])
def test_a_study_declared_wrong_is_one_error_naming_the_field(kw, why):
    with pytest.raises(ReproduceError, match=f"study 's': {why}"):
        Study("s", "t", "q", policies={"fifo": {}}, **kw)


def test_a_knob_misspelt_in_a_replace_is_refused_too():
    with pytest.raises(ReproduceError, match="knob 'te_fractoin'"):
        reproduce.STUDIES["rq4"].replace(knobs={"te_fractoin": (0.3,)})


@pytest.mark.parametrize("field, value, why", [
    ("timeline_jobs", -5, r"timeline_jobs must be an integer in \[1, 10000000\], got -5"),
    ("timeline_jobs", 0, r"timeline_jobs must be an integer"),
    ("n_jobs", -40, r"n_jobs must be an integer in \[1, 10000000\]"),
    ("n_jobs", 2.5, r"n_jobs must be an integer"),
    ("n_jobs", True, r"n_jobs must be an integer"),
    ("real_jobs", 0, r"real_jobs must be an integer"),
    ("seeds", (), r"seeds must be a non-empty tuple"),
    ("seeds", (-1,), r"seeds must be an integer in \[0, 4294967295\]"),
    ("seeds", 3, r"seeds must be a non-empty tuple"),
    ("load", math.nan, r"load must be a number in \(0, 1000\]"),
    ("load", 0.0, r"load must be a number in \(0, 1000\]"),
    ("workers", -1, r"workers must be an integer in \[0, 1024\]"),
    ("run_lengths", (0,), r"run_lengths must be an integer"),
    ("run_loads", (math.inf,), r"run_loads must be a number"),
    ("model", "", r"model must be a model's name or file"),
    ("cluster", "16x8", r"cluster must be a fitgpp.Cluster"),
    ("steady_window", "no", r"steady_window must be True or False"),
])
def test_a_size_out_of_bounds_is_refused_naming_the_field(field, value, why):
    with pytest.raises(ReproduceError, match=f"Size: {why}"):
        Size(**{"n_jobs": 40, "seeds": (0,), field: value})


def test_a_size_given_lists_keeps_tuples():
    s = Size(n_jobs=40, seeds=[0, 1], run_loads=[0.3, 1.3])
    assert s.seeds == (0, 1) and s.run_loads == (0.3, 1.3)
    hash(s)


@pytest.mark.parametrize("given", [["column"], {"column": 1}, {"full"}])
def test_printed_at_something_else_than_a_preset_name_is_a_plot_error(given):
    from fitgpp.figures import plots
    with pytest.raises(plots.PlotError, match="unknown figure preset"):
        with plots.printed_at(given):
            pass


@pytest.mark.parametrize("kw, why", [
    ({"inches": -1.0}, "inches must be a number from 0.5 to 100, got -1.0"),
    ({"inches": math.nan}, "inches must be a number from 0.5 to 100, got nan"),
    ({"inches": math.inf}, "inches must be a number"), ({"inches": 0}, "inches must be"),
    ({"inches": "3"}, "inches must be"), ({"inches": True}, "inches must be"),
    ({"font": -7}, "font must be a whole number of points from 1 to 200"),
    ({"font": 7.5}, "font must be a whole number"), ({"title_font": 0}, "title_font must be"),
    ({"name": ""}, "name must be a non-empty string")])
def test_a_preset_out_of_bounds_is_a_plot_error(kw, why):
    from fitgpp.figures import plots
    args = {"name": "x", "inches": 3.3, "font": 7, "title_font": 8, **kw}
    with pytest.raises(plots.PlotError, match=re.escape(why)):
        plots.Preset(**args)


def test_a_policy_field_named_variant_in_a_study_with_variants_is_refused_before_it_runs(
        tmp_path):
    @dataclass(frozen=True)
    class V(Fifo):
        variant: float = 1.0
    from fitgpp.sweep import ExperimentError
    st = Study("v", "t", "q", policies={"v": {"policy": V, "variant": [1.0, 2.0]}},
               variants={"a": lambda m: m, "b": lambda m: m})
    with pytest.raises(ExperimentError, match="parameter 'variant'.*rename the field"):
        st.run(TINY, cache=tmp_path)
    assert not list(tmp_path.rglob("*.cell"))   # nothing simulated first


def test_a_sweep_of_a_million_values_through_the_api_is_refused_at_once():
    from fitgpp.sweep import Experiment, ExperimentError
    values = [float(i) for i in range(10 ** 6)]
    t = time.process_time()
    with pytest.raises(ExperimentError, match="1000000 cells to run.*more than the bound of "
                                              "100000"):
        Experiment(workload={"model": "paper-default", "n_jobs": 40},
                   policies={"fitgpp": {"s": values}})
    assert time.process_time() - t < 1.0
