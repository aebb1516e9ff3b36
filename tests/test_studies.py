"""A study over a researcher's own policy: every swept field of it is a configuration of its
own (a row, a control value, an interval), never pooled with the other values."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from fitgpp import reproduce
from fitgpp.policies import FitGpp
from fitgpp.reproduce import RQResult, Size, Study

TINY = Size(n_jobs=600, seeds=(0, 1, 2), timeline_jobs=50, real_jobs=200)


@dataclass(frozen=True)
class Patient(FitGpp):
    """FitGpp that preempts for a TE job only once it has waited ``patience`` ticks."""

    patience: int = field(default=10, metadata={"min": 0, "max": 120, "units": "ticks"})
    name = "patient"

    def choose(self, eng, i, t):
        due = eng.submit[i] + self.patience
        if t < due:
            eng.wake(due)
            return None
        return super().choose(eng, i, t)


def _analyze(o) -> RQResult:
    return RQResult(o.study.key, o.study.title, o.study.question, o.table(), {}, finding="-")


STUDY = Study(key="rqp", title="RQP: patience", question="Does waiting before preempting help?",
              policies={"fifo": {}, "patient": {"policy": Patient, "patience": [0, 80]}},
              analyze=_analyze)


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    return STUDY.run(TINY, cache=tmp_path_factory.mktemp("studies-cache"))


def test_a_swept_user_field_is_a_dimension_of_the_study():
    assert STUDY.dimensions(TINY)["patience"] == (0, 80)


def test_each_field_value_is_its_own_row_with_its_own_numbers(outcome):
    table = outcome.table()
    rows = table[table["name"] == "patient"]
    assert sorted(rows["patience"]) == [0, 80]
    assert rows["policy"].nunique() == 2          # the label tells them apart
    for _, r in rows.iterrows():
        conf = next(c for c in outcome.configurations()
                    if c["name"] == "patient" and c["params"]["patience"] == r["patience"])
        per_seed = outcome.values(conf, "slowdown_p95", "TE")
        assert per_seed.shape == (len(TINY.seeds),)   # one value per seed, not pooled
        assert r["te_p95"] == pytest.approx(np.mean(per_seed))
        assert np.isfinite(r["te_p95_lo"]) and r["te_p95_lo"] <= r["te_p95"] <= r["te_p95_hi"]
    assert rows["te_p95"].nunique() == 2          # waiting 80 ticks shows in the TE tail
    # the per-seed values are those of the cell run at that patience
    for p in (0, 80):
        ds = outcome.run("patient", seed=1, patience=p)
        assert int(ds.attrs.get("patience", p)) == p


def test_the_panel_offers_the_field_and_shows_an_interval_per_value(tmp_path_factory):
    from fitgpp.panels import Panel, selection_numbers
    p = Panel(STUDY, TINY, cache=tmp_path_factory.mktemp("panel-cache"), charts=False)
    assert [v for _, v in p.controls["patience"].options] == [0, 80]
    p.controls["policy"].value = "patient"
    shown = {}
    for v in (0, 80):
        p.controls["patience"].value = v
        assert not p.messages.outputs, p.messages.outputs
        nums = selection_numbers(p.o, p._selection_for_outcome())
        shown[v] = nums.iloc[:, 0].tolist()
        assert all("[" in x for x in shown[v])        # an interval, not a pooled range
        assert f"patience={v}" in p.numbers.value
    assert shown[0] != shown[80]


def test_results_md_has_one_row_per_field_value(outcome, tmp_path):
    r = _analyze(outcome)
    path = reproduce.write_results({"rqp": r}, tmp_path, TINY, 1.0, [])
    text = path.read_text()
    for v in (0, 80):
        assert f"patience={v}" in text


def test_a_metric_is_one_declaration(outcome, tmp_path, monkeypatch, tmp_path_factory):
    """Declared once in fitgpp.metrics, a metric reaches the table, the panel and the report."""
    from fitgpp import metrics, tables
    from fitgpp.panels import Panel
    waits = metrics.Metric("te_wait_max", "longest TE wait", unit="s",
                           per_run=lambda ds: float(ds["wait"].where(ds["cls"] == "TE").max()))
    monkeypatch.setitem(metrics.METRICS, waits.name, waits)
    outcome.memo.clear()
    table = outcome.table()
    assert {"te_wait_max", "change_te_wait_max"} <= set(table.columns)
    fifo = table.set_index("policy").loc["FIFO"]
    want = np.mean([float(outcome.run("fifo", seed=s)["wait"].where(
        outcome.run("fifo", seed=s)["cls"] == "TE").max()) for s in TINY.seeds])
    assert fifo["te_wait_max"] == pytest.approx(want) and fifo["change_te_wait_max"] == 0
    r = _analyze(outcome)
    assert "longest TE wait" in tables.rq_table(r).shown.columns
    p = Panel(STUDY, TINY, cache=tmp_path_factory.mktemp("metric-cache"), charts=False)
    assert "longest TE wait" in p.numbers.value
    text = reproduce.write_results({"rqp": r}, tmp_path, TINY, 1.0, []).read_text()
    assert "longest TE wait" in text and "longest TE wait vs FIFO" in text


def test_the_baseline_is_part_of_the_study(outcome):
    """Changes are against the declared baseline (here a configuration of the user's policy)."""
    o = STUDY.replace(baseline={"policy": "patient", "patience": 0}).run(TINY, cache=outcome.cache_dir)
    t = o.table().set_index("policy")
    assert o.baseline_label() == "patient s=4 patience=0"
    assert t.loc["patient s=4 patience=0", "change_te_p95"] == 0
    conf = next(c for c in o.configurations() if c["params"].get("patience") == 80)
    base = next(c for c in o.configurations() if c["params"].get("patience") == 0)
    per_seed = (o.metric_values(conf, reproduce.METRICS["te_p95"])
                / o.metric_values(base, reproduce.METRICS["te_p95"]) - 1)
    assert t.loc["patient s=4 patience=80", "change_te_p95"] == pytest.approx(per_seed.mean())


def test_notebook_07_and_reproduce_run_one_declaration_and_agree(tmp_path):
    """RQ6 is an ordinary study: the notebook's panel and ``fitgpp reproduce`` run the same
    declaration at the same sizes and print the same numbers (here at the quick size)."""
    import json
    from pathlib import Path

    import pandas as pd

    from fitgpp.panels import SIZES, Panel
    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "07_rq6_restart_cost.ipynb")
                    .read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert 'reproduce.STUDIES["rq6"]' in code and "Panel(study, size)" in code
    assert SIZES["quick"] is reproduce.QUICK and SIZES["full"] is reproduce.FULL
    cache = tmp_path / "cache"
    cmd = reproduce.run_all(tmp_path / "out", size=reproduce.QUICK, which=["rq6"], cache=cache,
                            formats=(), log=lambda *_: None)["rq6"]
    panel = Panel(reproduce.STUDIES["rq6"], "quick", cache=cache, charts=False)
    assert panel.o.stats["computed"] == 0     # the same cells: all read from the cache
    pd.testing.assert_frame_equal(panel.result.table, cmd.table)
    assert panel.result.finding == cmd.finding


def test_reproduce_figures_go_through_export(tmp_path):
    """One figure path: checked, configuration embedded, in the manifest, never overwritten."""
    import json

    from fitgpp.export import MANIFEST, read_config
    size = Size(n_jobs=150, seeds=(0, 1, 2), timeline_jobs=50)
    out = tmp_path / "out"
    for _ in range(2):
        reproduce.run_all(out, size=size, which=["rq3"], formats=(".png",),
                          cache=tmp_path / "cache", log=lambda *_: None)
    png = out / "rq3_change_vs_grace.png"
    cfg = read_config(png)["config"]
    assert cfg["study"] == "rq3" and cfg["knobs"]["grace_scale"] == [1.0, 4.0, 16.0]
    assert (out / "rq3_change_vs_grace-2.png").is_file()       # the second run: a new name
    manifest = json.loads((out / MANIFEST).read_text())["figures"]
    assert {"rq3_change_vs_grace.png", "rq3_change_vs_grace-2.png"} <= set(manifest)
    assert "rq3_change_vs_grace-2.png" in (out / "results.md").read_text()
