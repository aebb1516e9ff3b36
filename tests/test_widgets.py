"""The workbench in-process: a widget change reruns, the Dataset attrs and the chart spec follow,
the summary changes, a rerun on the default quick workload takes under 1 s, and export writes PNGs."""

from __future__ import annotations

import json
import time

import ipywidgets as W
import pytest

from fitgpp.export import read_config
from fitgpp.widgets import Values, Workbench, run


@pytest.fixture(scope="module")
def wb():
    return Workbench(Values(n_jobs=2000))   # the default quick workload: paper-default, 2000 jobs


def _spec(chart):
    return json.dumps(chart.to_dict(), sort_keys=True)


def _summary(wb):
    return wb.text   # what the summary Output shows (it captures only inside a kernel)


def test_s_is_a_float_slider_and_export_button_is_named(wb):
    assert isinstance(wb.w["s"], W.FloatSlider)
    assert wb.export_button.description == "Export figures"
    assert wb.ds.attrs["workbench_s"] == 4.0 and wb.ds.attrs["policy"] == "fitgpp"


def test_changing_s_reruns_and_redraws_within_one_second(wb):
    before = _spec(wb.charts["slowdown_cdf"])
    view_before = json.dumps(wb.views["slowdown_cdf"].spec, sort_keys=True, default=str)
    t0 = time.perf_counter()
    wb.w["s"].value = 0.5
    elapsed = time.perf_counter() - t0
    assert json.loads(wb.ds.attrs["workbench"])["s"] == 0.5
    assert json.loads(wb.ds.attrs["policy_params"])["s"] == 0.5
    assert _spec(wb.charts["slowdown_cdf"]) != before
    assert json.dumps(wb.views["slowdown_cdf"].spec, sort_keys=True, default=str) != view_before
    assert elapsed < 1.0, f"rerun + redraw took {elapsed:.2f} s"


@pytest.mark.parametrize("name,value", [("policy", "lrtp"), ("max_preemptions", 1), ("load", 1.2),
                                        ("grace_scale", 4.0), ("te_fraction", 0.6), ("seed", 3)])
def test_every_control_lands_in_attrs_and_changes_the_summary(wb, name, value):
    before = _summary(wb)
    wb.w[name].value = value
    assert json.loads(wb.ds.attrs["workbench"])[name] == value
    assert wb.ds.attrs[f"workbench_{name}"] == value
    assert _summary(wb) != before
    if name in ("load", "grace_scale", "te_fraction", "seed"):
        assert json.loads(wb.ds.attrs["workload"])[name] == value


def test_run_is_a_plain_function_that_the_widget_wraps(wb):
    v = wb.values()
    again = run(v)
    assert again.attrs["workbench"] == wb.ds.attrs["workbench"]
    assert (again["slowdown"].to_numpy() == wb.ds["slowdown"].to_numpy()).all()


def test_export_writes_png_and_prints_paths(wb, tmp_path):
    wb.out_dir.value = str(tmp_path / "figs")
    wb.export_button.click()
    pngs = sorted((tmp_path / "figs").glob("*.png"))
    assert len(pngs) == 2
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    # the files carry the values; a second click adds files instead of replacing them
    assert read_config(pngs[0])["config"]["policy"] == wb.values().policy
    wb.export_button.click()
    assert len(list((tmp_path / "figs").glob("*.png"))) == 4


def test_export_panel_exports_any_notebooks_charts(wb, tmp_path):
    from fitgpp.widgets import export_panel
    sizes = []

    def make(size):
        sizes.append(size)
        return {"cdf": wb.charts["slowdown_cdf"]}

    panel = export_panel(make, {"n_jobs": 600, "seeds": [0, 1]}, defaults={"n_jobs": 10000,
                                                                          "seeds": [0, 1]},
                         out_dir=tmp_path)
    panel.export()
    assert sizes == ["full"]
    assert sorted(p.name for p in tmp_path.glob("cdf*")) == [
        "cdf__n_jobs=600.pdf", "cdf__n_jobs=600.png", "cdf__n_jobs=600.svg"]


def test_several_seeds_give_intervals_and_a_pinned_baseline_stands_beside():
    wb = Workbench(Values(n_jobs=600, n_seeds=3))
    assert len(wb.dss) == 3 and [d.attrs["workbench_seed"] for d in wb.dss] == [0, 1, 2]
    assert "[95 % interval]" in wb.text and "range" not in wb.text
    wb.pin()
    wb.w["s"].value = 0.5
    assert "FitGpp s=0.5 vs pinned: FitGpp s=4" in wb.text
    assert set(wb.charts) == {"slowdown_cdf", "utilization", "utilization_pinned"}
    assert "pinned: FitGpp s=4" in json.dumps(wb.charts["slowdown_cdf"].to_dict())
    assert wb.views["utilization_pinned"] in wb.side.children
    wb.unpin()
    assert "vs pinned" not in wb.text and "utilization_pinned" not in wb.charts
    assert wb.views["utilization_pinned"] not in wb.side.children
    wb.w["n_seeds"].value = 2
    assert "an interval needs 3 seeds" in wb.text and "[" not in wb.text.split("over 2 seeds")[1]


def test_slider_values_are_recorded_without_float_noise():
    wb = Workbench(Values(n_jobs=300))
    wb.w["load"].value = 0.3 + 20 * 0.05       # 1.3000000000000003
    assert json.loads(wb.ds.attrs["workbench"])["load"] == 1.3
