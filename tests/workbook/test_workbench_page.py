"""The workbench as a page (issue 35, items 3 and 17): it shows only the chosen policy's
fields, its controls and charts wrap rather than being cut in a narrow notebook, and it keeps
a static copy (summary table and charts as SVG) that a saved notebook shows without a kernel."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from fitgpp.sim.policies import FitGpp
from fitgpp.workbook import static
from fitgpp.workbook.widgets import GRID, Values, Workbench


@dataclass(frozen=True)
class Fewer(FitGpp):
    """A FitGpp with a field of its own (for the controls shown)."""

    lookahead: int = field(default=8, metadata={"min": 1, "max": 64})
    name = "fewer"


@pytest.fixture(scope="module")
def wb(tmp_path_factory):
    return Workbench(Values(n_jobs=300, n_seeds=1), policies=[Fewer],
                     cache=tmp_path_factory.mktemp("cells"))


def _shown(wb) -> set[str]:
    return {k for k, w in wb.params.items() if w.layout.display != "none"}


def test_only_the_chosen_policys_fields_are_shown(wb):
    """00 showed LAS's and Gittins' thresholds, demotion, scan, delta, distribution and
    mode (disabled) while FitGpp was chosen."""
    from fitgpp.sim.policies import registry
    try:
        for policy in ("fitgpp", "las", "gittins", "fifo", Fewer):
            wb.w["policy"].value = policy
            fields = {k for k in registry.declared(policy) if k != "seed"}
            assert _shown(wb) == fields, (policy, _shown(wb))
        assert _shown(wb) == {"s", "max_preemptions", "lookahead"}
        wb.w["lookahead"].value = 16          # a user's field is a control like any other
        assert '"lookahead": 16' in wb.ds.attrs["workbench"]
    finally:
        wb.w["policy"].value = "fitgpp"
    # every control has a layout of its own: hiding one hides no other
    layouts = [w.layout for w in wb.w.values()]
    assert len({id(x) for x in layouts}) == len(layouts)


def test_controls_and_charts_wrap_in_a_narrow_notebook(wb):
    """Two fixed columns (780 px) and two utilization charts side by side were cut at 1,400
    px with the file browser open: the grid has as many columns as fit, the rows wrap."""
    grid = wb.children[0]
    assert grid.layout.grid_template_columns == GRID and "auto-fill" in GRID
    assert wb.side.layout.flex_flow == "row wrap"
    assert all(b.layout.flex_flow == "row wrap" for b in wb.children[1:3])


class _Handle:
    def __init__(self, obj):
        self.shown = [obj]

    def update(self, obj, **_kw):
        self.shown.append(obj)


def test_the_workbench_keeps_a_static_copy_that_follows_it(wb, monkeypatch):
    handles, raw = [], []

    def display(obj, **kw):
        if kw.get("raw"):
            raw.append(obj)
            return None
        handles.append(_Handle(obj))
        return handles[-1]
    monkeypatch.setattr(static, "_display", display)
    wb._ipython_display_()
    try:
        assert "live workbench" in raw[0]["text/plain"] and len(handles) == 1
        first = handles[0].shown[0].data
        assert "fitgpp-static" in first and "<table" in first and "change vs FIFO" in first
        assert len(static.svgs(first)) == 3             # the CDFs and both utilizations
        assert all(v.static_key == wb.static.key for v in static.live_charts(wb))
        assert "FitGpp s=4" in first and "thresholds" not in first
        wb.w["s"].value = 6.0
        wb.static.wait()
        now = handles[0].shown[-1].data
        assert "FitGpp s=6" in now.split("<img")[0] and "FitGpp s=6" in static.svgs(now)[0]
    finally:
        wb.static.handle = None
        wb.w["s"].value = 4.0


def test_a_figure_keeps_its_copy(monkeypatch):
    from fitgpp.figures import plots
    handles = []
    monkeypatch.setattr(static, "_display", lambda obj, **kw: handles.append(
        _Handle(obj)) or handles[-1])
    from fitgpp import DEFAULT_CLUSTER, simulate
    from fitgpp.workload import load_model, synthesize
    trace = synthesize(load_model("paper-default"), n_jobs=100, seed=0, cluster=DEFAULT_CLUSTER)
    fig = static.Figure(plots.slowdown_cdf([simulate(trace, DEFAULT_CLUSTER, "fifo")]))
    fig._ipython_display_()
    raw, copy = handles
    assert "live chart" in raw.shown[0]["text/plain"]
    assert len(static.svgs(copy.shown[0].data)) == 1 and fig.view.static_key == fig.static.key
