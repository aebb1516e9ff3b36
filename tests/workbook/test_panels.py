"""The research-question control panel: controls from the declaration, on-grid values
redraw without simulating, off-grid values run only the missing cells."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from fitgpp.studies import reproduce
from fitgpp.workbook.panels import Panel, extend
from fitgpp.workbook.views import CAPTIONS, PanelError, caption
from fitgpp.workbook.views import selection_numbers
from fitgpp.studies.reproduce import Size

TINY = Size(n_jobs=120, seeds=(0, 1), timeline_jobs=50, real_jobs=200)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("panel-cache")


@pytest.fixture(scope="module")
def rq3(cache):
    study = reproduce.STUDIES["rq3"].replace(knobs={"grace_scale": (1.0, 4.0)})
    p = Panel(study, TINY, cache=cache)
    # the tests below count what a redraw builds: not what the background thread does
    p.prebuilding.join(timeout=60)
    return p


def test_controls_are_the_declared_dimensions(rq3):
    dims = rq3.study.dimensions(rq3.size)
    assert set(rq3.controls) == set(dims) | {"seeds"}
    for d, values in dims.items():
        assert [v for _, v in rq3.controls[d].options if v in values] == list(values), d
    assert rq3.controls["seeds"].value == len(TINY.seeds)
    # a knob declared by the study (and nowhere in the panel) gets its control
    other = reproduce.STUDIES["rq3"].replace(knobs={"te_fraction": (0.3, 0.6)})
    assert "te_fraction" in other.dimensions(TINY)
    assert "te_fraction" in Panel(other, TINY, cache=rq3.cache, charts=False).controls


def test_on_grid_values_redraw_without_simulating(rq3, monkeypatch):
    def no_run(*a, **k):
        raise AssertionError("an on-grid value ran the study again")
    monkeypatch.setattr(type(rq3.study), "run", no_run)
    before = rq3.numbers.value, rq3.views["cell"].chart.to_json()
    rq3.controls["s"].value = 8.0
    rq3.controls["grace_scale"].value = 4.0
    assert not rq3.messages.outputs, rq3.messages.outputs
    assert "FitGpp s=8" in rq3.numbers.value and rq3.numbers.value != before[0]
    assert rq3.views["cell"].chart.to_json() != before[1]
    assert 0 < rq3.last_seconds < 2.0
    rq3.controls["s"].value = 4.0
    rq3.controls["grace_scale"].value = 1.0


def test_a_tradeoff_seen_before_is_not_built_again(rq3, monkeypatch):
    from fitgpp.workbook import panels
    built = []
    real = panels.tradeoff_view
    monkeypatch.setattr(panels, "tradeoff_view", lambda *a, **k: built.append(1) or real(*a, **k))
    first = rq3.views["tradeoff"].chart
    for g in (4.0, 1.0, 4.0, 1.0):
        rq3.controls["grace_scale"].value = g
    # built at most once (grace scale 4 if not seen yet); back at 1.0 the same chart is shown
    assert len(built) <= 1 and rq3.views["tradeoff"].chart is first
    rq3.controls["grace_scale"].value = 4.0
    head = rq3.views["tradeoff"].spec["title"]["text"]   # a caption and its notes below
    assert "grace scale 4" in " ".join([head] if isinstance(head, str) else head)
    rq3.controls["grace_scale"].value = 1.0


def test_every_other_tradeoff_is_built_in_the_background_and_shown_unchanged(rq3,
                                                                          monkeypatch):
    """Once drawn, the panel builds the trade-off of each knob value and P in a thread, so
    a first change of grace scale draws a chart already built, equal to one built on the
    spot."""
    from fitgpp.workbook import panels
    rq3.prebuilding.join(timeout=60)
    assert not rq3.prebuilding.is_alive()
    dims = rq3.study.dimensions(rq3.size)
    n = len(dims["grace_scale"]) * len(dims.get("max_preemptions", (None,)))
    mine = [k for k in rq3._tradeoffs if k[0] == id(rq3.o)]
    assert len(mine) == n
    monkeypatch.setattr(panels, "tradeoff_view", lambda *a, **k: (_ for _ in ()).throw(
        AssertionError("built on a change after the background built it")))
    rq3.controls["grace_scale"].value = 4.0
    shown = rq3.views["tradeoff"].spec
    monkeypatch.undo()
    fresh = panels.tradeoff_view(rq3.o, rq3.selection(), rq3.table).to_dict()
    assert shown["title"] == fresh["title"]
    assert shown["datasets"] == fresh["datasets"]
    rq3.controls["grace_scale"].value = 1.0


def test_two_seeds_show_a_range_not_an_interval(rq3):
    nums = selection_numbers(rq3.o, rq3._selection_for_outcome())
    assert not nums.apply(lambda c: c.str.contains(r"\[")).any().any()
    assert nums["FIFO"].str.contains("range|both seeds").all()
    assert "no interval" in rq3.numbers.value


def test_off_grid_value_runs_only_the_missing_cells(cache):
    study = reproduce.STUDIES["rq3"].replace(knobs={"grace_scale": (1.0,)})
    p = Panel(study, TINY, cache=cache, charts=False)
    n_before = p.o.stats["unique"]
    p.add_dim.value, p.add_value.value = "s", "2"
    p._add()
    assert not p.messages.outputs, p.messages.outputs
    st = p.o.stats
    # the new value's cells only (its first seed's first, drawn from that seed alone)
    assert p.simulated == len(TINY.seeds) and st["unique"] == n_before + len(TINY.seeds)
    assert [n for _, n in p.draw_times] == [1, 2]
    assert 2.0 in [v for _, v in p.controls["s"].options] and p.controls["s"].value == 2.0
    assert "FitGpp s=2" in p.numbers.value
    # three seeds: the third seed's cells are computed and intervals appear
    p.controls["seeds"].value = 3
    assert p.simulated == p.o.stats["computed"] == p.o.stats["unique"] - st["unique"]
    assert "[" in p.numbers.value and "95 %" in p.numbers.value


def test_a_click_on_the_tradeoff_selects_that_cell(rq3):
    rq3._picked({"new": SimpleNamespace(value=[{"family": "FitGpp", "s": 8.0}])})
    assert rq3.controls["s"].value == 8.0 and "FitGpp s=8" in rq3.numbers.value
    rq3._picked({"new": SimpleNamespace(value=[{"family": "FIFO", "s": None}])})
    assert rq3.controls["policy"].value == "fifo" and rq3.controls["s"].disabled


def test_a_click_as_the_browser_sends_it_reaches_the_panel(rq3):
    """The front end reports a click by setting the chart's ``_vl_selections``; the panel's
    observer must get it (it was never attached from 1a7b211 on: the selection stayed inside
    a layer of the faceted trade-off, where alt.JupyterChart does not look)."""
    view = rq3.views["tradeoff"]
    assert "pick" in view._vl_selections, view._vl_selections   # the front end listens to it
    for s in (8.0, 4.0):
        view._vl_selections = {"pick": {"value": {"vlPoint": {"or": [
            {"family": "FitGpp", "s": s}]}}, "store": []}}
        assert rq3.controls["s"].value == s and f"FitGpp s={s:g}" in rq3.numbers.value


def test_extend_refuses_what_the_study_does_not_declare():
    with pytest.raises(PanelError, match="grace_scale"):
        extend(reproduce.STUDIES["rq1"], TINY, "grace_scale", 2.0)
    fifo_only = reproduce.STUDIES["rq1"].replace(policies={"fifo": {}, "lrtp": {}})
    with pytest.raises(PanelError, match="cannot add a value to 's'"):
        extend(fifo_only, TINY, "s", 2.0)
    # P is not swept in RQ1 (FitGpp runs its default): adding one sweeps it
    st, _ = extend(reproduce.STUDIES["rq1"], TINY, "max_preemptions", 5)
    assert st.policies["fitgpp"]["max_preemptions"] == [3, 5]
    with pytest.raises(PanelError, match="at least 1"):
        extend(reproduce.STUDIES["rq1"], TINY, "seed", 0)
    st, size = extend(reproduce.STUDIES["rq2"], TINY, "max_preemptions", 5)
    assert 5 in st.dimensions(size)["max_preemptions"]
    assert extend(reproduce.STUDIES["rq1"], TINY, "load", 0.7)[1].load == 0.7


def test_the_study_figures_carry_captions_not_variable_names(rq3):
    shown = [w.value for w in rq3.study_box.children if hasattr(w, "value")]
    assert len(shown) == len(rq3.result.charts) > 0
    for name, text in zip(rq3.result.charts, shown):
        assert name not in text and caption(rq3.study, name) in text
    assert caption(rq3.study, "rq3_long_be_jobs") == rq3.study.captions["long_be_jobs"]
    assert caption(rq3.study, "rq3_slowdown_cdf") == CAPTIONS["slowdown_cdf"]   # a shared one
    assert "P=10" in caption(reproduce.STUDIES["rq2"], "rq2_s_tradeoff_P10")
    assert "bootstrap" in caption(reproduce.STUDIES["rq5"], "rq5_slowdown_bars")


class _Handle:
    """A display handle that records what it shows (as IPython's does in a notebook)."""

    def __init__(self, obj):
        self.shown = [obj]

    def update(self, obj, **_kw):
        self.shown.append(obj)


def test_the_static_copy_follows_the_view(rq3, monkeypatch):
    from fitgpp.workbook import static
    handles = []
    monkeypatch.setattr(static, "_display", lambda obj, **kw: handles.append(_Handle(obj))
                        or handles[-1])
    rq3.controls["policy"].value, rq3.controls["s"].value = "fitgpp", 4.0
    rq3.static.show()
    try:
        first = handles[0].shown[0].data
        charts = list(static.live_charts(rq3))
        assert len(charts) == 2 + len(rq3.result.charts)
        assert len(static.svgs(first)) == len(charts) and "fitgpp-static" in first
        assert all(v.static_key == rq3.static.key for v in charts)
        assert rq3.static.key in first and "FitGpp s=4" in first
        # and the rule that hides the panel's output while it shows the widget manager's
        # "model not found" (a saved notebook reopened; tests/test_browser.py sees it work)
        assert static.hide_dead_panel(rq3.static.key) in first
        assert f'#fitgpp-static-{rq3.static.key}' in static.hide_dead_panel(rq3.static.key)
        drawn = rq3.static.draws
        rq3.controls["s"].value = 8.0
        assert rq3.last_seconds < 1.0          # the copy is not drawn on the redraw's time
        rq3.static.wait()
        now = handles[0].shown[-1].data
        assert "FitGpp s=8" in static.svgs(now)[1]   # the CDF, as drawn now
        assert "FitGpp s=8" in now.split("<img")[0]        # and the numbers
        # only the cell's CDF changed: one SVG drawn, the others reused
        assert rq3.static.draws == drawn + 1
    finally:
        rq3.static.handle = None
        rq3.controls["s"].value = 4.0


def test_the_first_computation_shows_its_progress(tmp_path, monkeypatch):
    from fitgpp.workbook import static
    handles, seen = [], []
    monkeypatch.setattr(static, "in_kernel", lambda: True)
    monkeypatch.setattr(static, "_display", lambda obj, **kw: handles.append(_Handle(obj))
                        or handles[-1])
    study = reproduce.STUDIES["rq3"].replace(knobs={"grace_scale": (1.0,)},
                                             policies={"fifo": {}, "lrtp": {}})
    run = type(study).run

    def watched(self, size, **kw):
        def progress(done, total):
            kw["progress"](done, total)
            bar, eta = handles[0].shown[0].children
            seen.append((bar.value, bar.max, bar.layout.visibility, eta.value))
        return run(self, size, **{**kw, "progress": progress})
    monkeypatch.setattr(type(study), "run", watched)
    p = Panel(study, TINY, cache=tmp_path, charts=False)
    assert handles[0].shown[0] is p.progress_box       # on screen before the panel is
    n = p.o.stats["unique"]
    # the first seed's cells first (then drawn), then the rest, counted on from there
    k = n // len(TINY.seeds)
    assert seen[0][:3] == (0, k, "visible") and seen[k][:3] == (k, k, "visible")
    assert seen[k + 1][:3] == (k, n, "visible") and seen[-1][:3] == (n, n, "visible")
    assert len(seen) == n + 2
    assert f"0 of {k:,} cells" in seen[0][3] and "left at the pace so far" in seen[1][3]
    assert "seed 0 first (of 2)" in seen[0][3] and "seed 0 first" not in seen[-1][3]
    assert p.eta.value == ""                           # gone once the panel is drawn
    assert handles[0].shown[-1] == {"text/plain": ""}  # blanked once the panel can show


def test_the_export_writes_what_the_panel_shows_now(rq3, tmp_path):
    import json
    import re

    from fitgpp.figures import export as E
    rq3.controls["policy"].value, rq3.controls["s"].value = "fitgpp", 8.0
    area = rq3.children[-1]
    area.folder.value = str(tmp_path)
    try:
        area.export()
    finally:
        rq3.controls["s"].value = 4.0
    man = json.loads((tmp_path / E.MANIFEST).read_text())
    cdf = "rq3_selected_slowdown_cdf.svg"
    assert man["figures"][cdf]["config"]["selection"]["s"] == 8.0
    assert "FitGpp s=8" in (tmp_path / cdf).read_text()
    assert {f"{n}.svg" for n in rq3.result.charts} <= set(man["figures"])
    assert set(man["tables"]) == {"rq3_table.csv", "rq3_table.tex", "rq3_selected_numbers.csv",
                                  "rq3_selected_numbers.tex"}
    assert "FitGpp s=8" in (tmp_path / "rq3_selected_numbers.tex").read_text()
    # after "add a value" the export holds the added value (the cell's first result did not)
    rq3.add_dim.value, rq3.add_value.value = "s", "2"
    rq3._add()
    assert not rq3.messages.outputs, rq3.messages.outputs
    area.export()
    man = json.loads((tmp_path / E.MANIFEST).read_text())
    second = man["figures"]["rq3_selected_slowdown_cdf-2.svg"]["config"]
    assert 2.0 in second["dimensions"]["s"] and second["selection"]["s"] == 2.0
    table = (tmp_path / "rq3_table-2.csv").read_text()
    assert re.search(r"FitGpp s=2\b", table) and not re.search(r"FitGpp s=2\b",
                                                                (tmp_path / "rq3_table.csv").read_text())


def test_the_numbers_never_show_a_slowdown_interval_below_its_declared_floor():
    """metric_rows (the panel's and the workbench's numbers) cut an interval at the metric's
    declared ``lowest``: three seeds at 1.0, 1.0 and 5.0 give a Student-t interval whose
    lower end is far below 1, which a slowdown cannot be."""

    from fitgpp.analysis.metrics import METRICS, t_interval
    from fitgpp.workbook.views import metric_rows

    values = np.array([1.0, 1.0, 5.0])
    assert t_interval(values)[1] < 0       # the raw interval does go below the floor
    arm = SimpleNamespace(label="A", metric=lambda m: values)
    rows = metric_rows(arm, None, [METRICS["te_p95"], METRICS["gpu_util"]])
    mean, _, hi = t_interval(values)
    assert rows.loc["TE p95", "A"] == f"{mean:.3g} [1*, {hi:.3g}]"    # cut, and marked
    lo = rows.loc["GPU utilization", "A"].split("[")[1].split(",")[0]
    assert lo == "0*"                       # a utilization is cut at its own floor, 0


def test_the_tradeoff_says_fifo_is_off_the_scale(rq3):
    """The panel's "TE against BE slowdown" drew FIFO (TE p95 56.8) at the axis edge with no
    note: the panel set its own title and dropped the figure's subtitle."""
    from fitgpp.workbook.views import tradeoff_view
    t = rq3.table.copy()
    fifo = t["family"] == "FIFO"
    assert fifo.any()
    t.loc[fifo, "te_p95"] = 500.0
    spec = tradeoff_view(rq3.o, rq3.selection(), t).to_dict()
    assert "TE against BE slowdown" in str(spec["title"]["text"])
    assert "FIFO off the scale (TE p95 500), drawn at the edge." in " ".join(
        spec["title"]["subtitle"])


@pytest.fixture(scope="module")
def rq6(cache):
    """RQ6 cut down: PRIO and FitGpp s=4 on one workload, restart overheads 0 and 10 min."""
    st = reproduce.STUDIES["rq6"]
    first = next(iter(st.variants))
    study = st.replace(policies={"prio": {}, "fitgpp": {"s": [4.0]}},
                       variants={first: st.variants[first]},
                       knobs={"restart_overhead": (0.0, 600.0)})
    return Panel(study, TINY, cache=cache, charts=False)


def test_restart_cost_control_and_titles_in_minutes(rq6):
    """07 offered "0/600" with no unit while the prose says minutes; the cell's title read
    "restart_overhead 0.0". A value added is typed in the unit the control shows."""
    w = rq6.controls["restart_overhead"]
    assert w.description == "restart cost (min)"
    assert [t for t, _ in w.options] == ["0", "10"] and [v for _, v in w.options] == [0.0, 600.0]
    w.value = 600.0
    assert not rq6.messages.outputs, rq6.messages.outputs
    texts = []
    for view in (rq6.views["cell"], rq6.views["tradeoff"]):
        head = view.spec["title"]["text"]
        texts.append(" ".join([head] if isinstance(head, str) else head))
    assert all("restart cost 10 min" in t for t in texts), texts
    assert not any("restart_overhead" in t for t in texts), texts
    assert "restart cost (min)" in [t for t, _ in rq6.add_dim.options]
    rq6.add_dim.value, rq6.add_value.value = "restart_overhead", "20"
    rq6._add()
    assert not rq6.messages.outputs, rq6.messages.outputs
    w = rq6.controls["restart_overhead"]
    assert [t for t, _ in w.options] == ["0", "10", "20"] and w.value == 1200.0


def test_a_model_control_only_where_the_model_changes_the_runs(rq6, rq3):
    """08 showed a "model" control beside "workload" that changed nothing (its variants load
    their own models): a control is absent unless changing it changes what is run."""
    from fitgpp.workbook.views import model_matters
    assert "workload" in rq6.controls and "model" not in rq6.controls
    assert not model_matters(rq6.study, rq6.size)
    assert "model" in rq3.controls and model_matters(rq3.study, rq3.size)
    for key in ("rq6", "rq7"):
        assert not model_matters(reproduce.STUDIES[key], TINY), key
    for key in ("rq1", "rq2", "rq3", "rq4", "rq8"):
        assert model_matters(reproduce.STUDIES[key].at_size(TINY), TINY), key


def test_every_control_name_fits_its_description_column():
    """00's "P (max preem…" and "grace-period s…" were cut: every description a panel or the
    workbench shows fits its column (JupyterLab's 13 px font: at most 7.5 px a character)."""
    from fitgpp.figures import names
    from fitgpp.workbook import panels, widgets
    from fitgpp.workbook.views import specs
    def fits(text, style):
        return 7.5 * len(text) <= int(style["description_width"].removesuffix("px"))
    for key, st in reproduce.STUDIES.items():
        st = st.at_size(TINY)
        for dim in st.dimensions(TINY):
            text = names.title(dim, specs(st))
            assert fits(text, panels.STYLE), (key, text)
    shown = widgets.param_controls([v for _, v in widgets.policy_choices()])
    texts = [w.description for w in shown.values()] + [
        names.title(k) for k in ("te_fraction", "load", "grace_scale", "seed", "model")]
    assert "P (max preemptions)" in texts and "grace scale" in texts
    for text in texts:
        assert fits(text, widgets.STYLE), text


def test_run_length_panel_opens_where_the_effect_shows(cache):
    """10 opened at load 0.5 and 1,000 jobs, where every number read "1 [1, 1] +0.0 %": a
    panel opens at the size's load (0.8) and the longest run; its finding, a headline and a
    list, is drawn as one (not as one paragraph of Markdown marks)."""
    study = reproduce.STUDIES["runlen"].replace(knobs={"load": (0.5, 0.8), "n_jobs": (120, 240)})
    p = Panel(study, TINY, cache=cache, charts=False)
    assert TINY.load == 0.8
    assert (p.controls["load"].value, p.controls["n_jobs"].value) == (0.8, 240)
    html = p.finding.value
    assert "<ul>" in html and "<li>" in html and "**" not in html and "<b>Usable capacity" in html


def _shown(p) -> tuple:
    return (p.numbers.value, json.dumps(p.views["cell"].spec, sort_keys=True, default=str),
            json.dumps(p.views["tradeoff"].spec, sort_keys=True, default=str))


@pytest.mark.parametrize("which", ["rq3", "rq6"])
def test_every_control_changes_what_it_claims(which, request):
    """08's "model" control re-ran and showed identical numbers. Each control of a panel
    changes what is shown (a dropdown of computed values), or what is run (the size, the
    model, the number of seeds: the declaration's experiments differ)."""
    from fitgpp.workload import list_models
    p = request.getfixturevalue(which)
    p.controls["policy"].value = "fitgpp"
    for dim, w in p.controls.items():
        if dim == "seeds" or dim == "model" or len(w.options) == 1:
            study, size = p.study, p.size
            value = {"seeds": len(size.seeds) + 1, "n_jobs": size.n_jobs + 60,
                     "load": 0.9 if size.load != 0.9 else 0.7}.get(dim)
            if dim == "model":
                value = next(m for m in list_models() if m != (study.model or size.model))
            if value is None:      # one computed value of the grid: nothing to change to
                assert dim in (*study.params(), *study.knobs, study.variant_dim), dim
                continue
            st2, size2 = extend(study, size, "seed" if dim == "seeds" else dim, value)
            before = [e.to_dict() for e in study.experiments(size).values()]
            after = [e.to_dict() for e in st2.experiments(size2).values()]
            assert after != before, (which, dim)
            continue
        old, before = w.value, _shown(p)
        w.value = next(v for _, v in w.options if v != old)
        assert not p.messages.outputs, p.messages.outputs
        assert _shown(p) != before, (which, dim)
        w.value = old


def test_progress_says_the_time_left_from_the_cells_simulated_here():
    from fitgpp.workbook.views import progress_text
    assert progress_text(0, 210, 0, 0.0) == "0 of 210 cells"
    assert progress_text(50, 210, 50, 3.0) == "50 of 210 cells"    # all from the cache so far
    # 10 simulated in 20 s: 150 left at 2 s each
    assert progress_text(60, 210, 50, 20.0) == "60 of 210 cells, about 5 min left at the pace so far"
    assert progress_text(1, 3, 0, 10.0) == "1 of 3 cells, about 20 s left at the pace so far"
    assert progress_text(3, 3, 0, 10.0) == "3 of 3 cells"


def _drawn(p) -> dict:
    """What panel ``p`` shows now: the note, numbers, finding, every chart's spec, the study's
    figures' captions and specs."""
    return {"note": p.partial.value, "numbers": p.numbers.value, "finding": p.finding.value,
            "seeds": p.o.study.seeds(p.o.size),
            "views": {k: v.chart.to_dict() for k, v in p.views.items()},
            "study": [c.value if hasattr(c, "value") else c.chart.to_dict()
                      for c in p.study_box.children]}


def test_a_cold_panel_draws_from_the_first_seed_then_from_all(tmp_path, monkeypatch):
    """Issue 26: the first panel appears from the first seeds while the rest compute, and
    says so; its sentences claim what one seed allows; the last draw is the warm one."""
    study = reproduce.STUDIES["rq3"].replace(knobs={"grace_scale": (1.0,)})
    size = Size(n_jobs=120, seeds=(0, 1, 2), timeline_jobs=50)
    draws = []
    assemble = Panel._assemble

    def spy(self):            # called once each draw is done
        assemble(self)
        draws.append(_drawn(self))
    monkeypatch.setattr(Panel, "_assemble", spy)
    cold = Panel(study, size, cache=tmp_path)
    assert [d["seeds"] for d in draws] == [(0,), (0, 1, 2)]
    assert [n for _, n in cold.draw_times] == [1, 3]
    assert cold.draw_times[0][0] < cold.draw_times[1][0]
    first, last = draws
    assert "Drawn from 1 of 3 seeds" in first["note"] and "will update" in first["note"]
    assert "cannot tell" in first["note"] and [first["note"]] == first["study"][:1]
    assert last["note"] == "" and "Drawn from" not in str(last["study"])
    assert "one run (one seed: no interval over seeds)" in first["numbers"]
    # the first draw is exactly the one-seed declaration's (what one seed allows: its
    # sentences say "cannot tell"), the last exactly what a warm panel draws
    one = Panel(study, Size(n_jobs=120, seeds=(0,), timeline_jobs=50), cache=tmp_path)
    assert len(one.draw_times) == 1 and one.partial.value == ""
    assert {**first, "note": "", "study": first["study"][1:]} == _drawn(one)
    assert "cannot tell" in first["finding"]
    draws.clear()
    warm = Panel(study, size, cache=tmp_path)
    assert len(draws) == 1 and len(warm.draw_times) == 1 and warm.o.stats["computed"] == 0
    assert last == draws[0]
    assert "Drawn from" not in warm.static.html()


def test_a_panel_drawn_early_says_so_in_the_notebook(tmp_path, monkeypatch):
    """In a kernel the first draw is shown while the rest compute, as a picture (its live
    charts would wait for the kernel to be idle): the note, the numbers and every chart as
    SVG; the note stays on the panel until the last draw; the picture is blanked once the
    panel itself is displayed."""
    from fitgpp.workbook import static
    handles = []
    monkeypatch.setattr(static, "in_kernel", lambda: True)
    monkeypatch.setattr(static, "_display", lambda obj, **kw: handles.append(_Handle(obj))
                        or handles[-1])
    study = reproduce.STUDIES["rq3"].replace(knobs={"grace_scale": (1.0,)},
                                             policies={"fifo": {}, "lrtp": {}})
    during = []
    run = type(study).run

    def watched(self, size, **kw):   # what the screen shows while the rest compute
        during.append((len(size.seeds), [h.shown[-1] for h in handles]))
        return run(self, size, **kw)
    monkeypatch.setattr(type(study), "run", watched)
    p = Panel(study, TINY, cache=tmp_path, charts=False)
    (n1, first), (n2, second) = during
    assert n1 == 1 and len(first) == 1                 # the progress bar alone
    assert n2 == 2 and len(second) == 2                # and the first draw beside it
    shown = second[1].data
    assert "Drawn from 1 of 2 seeds" in shown and "one run (one seed" in shown
    assert "no interval over the seeds" in shown and "will update" in shown
    svgs = static.svgs(shown)
    assert len(svgs) == 2 and all(x.startswith("<svg") for x in svgs)   # both charts
    assert "Static copy" not in shown                  # a picture of now, not the saved copy
    assert p.partial.value == "" and "Drawn from" not in p.static.html()
    assert [h.shown[-1] for h in handles] == [{"text/plain": ""}] * 2


def test_the_note_stays_until_the_last_draw(tmp_path, monkeypatch):
    """The note is on the panel from the first draw until the last one is done (it was once
    cleared as the rest began to compute, so it never reached the screen)."""
    study = reproduce.STUDIES["rq3"].replace(knobs={"grace_scale": (1.0,)},
                                             policies={"fifo": {}, "lrtp": {}})
    notes = []
    run = type(study).run
    box = {}

    def watched(self, size, **kw):
        notes.append(box["p"].partial.value if "p" in box else None)
        return run(self, size, **kw)
    monkeypatch.setattr(type(study), "run", watched)
    init = Panel.declare

    def declare(self, **kw):
        box["p"] = self
        return init(self, **kw)
    monkeypatch.setattr(Panel, "declare", declare)
    p = Panel(study, TINY, cache=tmp_path, charts=False)
    assert notes[0] != "" and "Drawn from 1 of 2 seeds" in notes[1]
    assert p.partial.value == ""
