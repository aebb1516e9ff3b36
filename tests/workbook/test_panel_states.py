"""A panel always ends on the declaration it shows: numbers, charts, the note, the finding and
its static copy from all its seeds, whatever seed is drawn and whatever failed on the way
(issue 35, item 2: RQ1 with "seed drawn" 3 and s=8 added stayed on a one-seed draw for good,
"0 cells match policy='fitgpp', seed=3")."""

from __future__ import annotations

import dataclasses

import pytest

from fitgpp.errors import FitgppError
from fitgpp.sim.policies.fifo import StrictFifo
from fitgpp.studies import reproduce
from fitgpp.studies.reproduce import Size
from fitgpp.workbook import views
from fitgpp.workbook.panels import Panel

@dataclasses.dataclass(frozen=True)
class Fewer(StrictFifo):   # (StrictFifo: no backfill field of its own to inherit)
    """A researcher's policy with a field of its own (FIFO that ignores it)."""

    lookahead: int = 8
    name = "fewer"


SIZE = Size(n_jobs=120, seeds=(0, 1, 2), timeline_jobs=50)
STUDY = reproduce.STUDIES["rq1"].replace(policies={"fifo": {}, "fitgpp": {"s": [4.0]}})


def _drawn(p) -> dict:
    """What panel ``p`` shows: note, numbers, finding, the seeds of its outcome, every chart's
    spec and the study's figures (captions and specs)."""
    return {"note": p.partial.value, "numbers": p.numbers.value, "finding": p.finding.value,
            "seeds": p.o.study.seeds(p.o.size),
            "views": {k: v.chart.to_dict() for k, v in p.views.items()},
            "study": [c.value if hasattr(c, "value") else c.chart.to_dict()
                      for c in p.study_box.children]}


def _warm(cache, study, **selection) -> dict:
    """What a panel opened on a warm cache draws at ``selection``."""
    p = Panel(study, SIZE, cache=cache)
    assert p.o.stats["computed"] == 0
    for dim, value in selection.items():
        p.controls[dim].value = value
    return _drawn(p)


def _add(p, dim: str, text: str) -> None:
    p.add_dim.value, p.add_value.value = dim, text
    p._add()


def test_adding_a_value_with_another_seed_drawn_ends_on_every_seed(tmp_path, capsys):
    p = Panel(STUDY, SIZE, cache=tmp_path)
    p.controls["seed"].value = 2
    _add(p, "s", "8")
    assert "error" not in capsys.readouterr().out    # outside a kernel, messages print
    # drawn first from the seed drawn (its cells are those of a declaration of its own), then
    # from all three
    assert [n for _, n in p.draw_times] == [1, 3]
    assert p.controls["seed"].value == 2 and p.controls["s"].value == 8.0
    assert p.partial.value == "" and p.o.study.seeds(p.o.size) == SIZE.seeds
    assert "mean over 3 seeds" in p.numbers.value and "one run" not in p.numbers.value
    drawn = _drawn(p)
    assert "Drawn from" not in str(drawn) and "seed 2" in str(drawn["views"]["cell"]["title"])
    # exactly what a panel opened on the now-warm cache draws at that selection
    assert drawn == _warm(tmp_path, p.study, seed=2, s=8.0)
    assert "Drawn from" not in p.static.html()


def test_a_first_draw_that_fails_is_given_up_for_the_whole_declaration(tmp_path, monkeypatch):
    real = views.cell_view
    failed = []

    def one_seed_fails(o, sel):
        if len(o.study.seeds(o.size)) == 1:
            failed.append(sel["seed"])
            raise views.PanelError("no such cell")
        return real(o, sel)
    from fitgpp.workbook import panels
    monkeypatch.setattr(panels, "cell_view", one_seed_fails)
    p = Panel(STUDY, SIZE, cache=tmp_path)
    assert failed == [0] and [n for _, n in p.draw_times] == [3]
    assert p.partial.value == "" and p.o.study.seeds(p.o.size) == SIZE.seeds
    assert "mean over 3 seeds" in p.numbers.value


def test_a_declaration_that_fails_leaves_the_one_shown_before(tmp_path, monkeypatch):
    p = Panel(STUDY, SIZE, cache=tmp_path)
    before = _drawn(p)
    run = type(p.study).run

    def refuse_s8(self, size, **kw):
        if 8.0 in self.dimensions(size).get("s", ()):
            raise FitgppError("refused for the test")
        return run(self, size, **kw)
    monkeypatch.setattr(type(p.study), "run", refuse_s8)
    shown = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: shown.append(" ".join(map(str, a))))
    _add(p, "s", "8")
    assert any("refused for the test" in m for m in shown), shown
    assert 8.0 not in p.study.dimensions(p.size)["s"]
    assert [v for _, v in p.controls["s"].options] == [4.0]
    assert _drawn(p) == before


@pytest.mark.parametrize("count", [2, 4])
def test_changing_the_seed_count_with_another_seed_drawn(tmp_path, count, capsys):
    """Fewer seeds than the seed drawn, or more: the panel ends on the declaration's seeds."""
    p = Panel(STUDY, SIZE, cache=tmp_path)
    p.controls["seed"].value = 2
    p.controls["seeds"].value = count
    assert "error" not in capsys.readouterr().out
    assert p.partial.value == "" and p.o.study.seeds(p.o.size) == tuple(range(count))
    assert p.controls["seed"].value == (2 if count > 2 else 0)


def test_a_panel_shows_only_the_chosen_policys_fields(tmp_path):
    """As the workbench (issue 35, item 17): a field of another policy is not shown, and
    hiding one control hides no other."""
    study = STUDY.replace(policies={"fifo": {}, "fitgpp": {"s": [4.0, 8.0]},
                                    "fewer": {"policy": Fewer, "lookahead": [1, 8]}})
    p = Panel(study, dataclasses.replace(SIZE, seeds=(0,)), cache=tmp_path, charts=False)

    def shown():
        return {d for d in study.params() if p.controls[d].layout.display != "none"}
    for policy, fields in (("fitgpp", {"s", "max_preemptions"}), ("fewer", {"lookahead"}),
                           ("fifo", {"backfill"})):
        p.controls["policy"].value = policy
        assert shown() == fields & set(study.params()), (policy, shown())
        assert all(p.controls[d].layout.display != "none" for d in ("policy", "seed", "load"))
