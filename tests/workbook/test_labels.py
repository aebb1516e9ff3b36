"""One configuration, one name (issue 35, item 16): a configuration is named by
:func:`fitgpp.figures.plots.config_label` everywhere a panel shows or writes it (table,
numbers, controls, legends, the trade-off, exports, the finding), an integer field as an
integer, a knob in its declared unit; tested with a researcher's policy with an int field."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pytest

from fitgpp.figures.plots import config_label
from fitgpp.sim.policies import Fifo, FitGpp
from fitgpp.studies.reproduce import Size, Study
from fitgpp.workbook import panel_export
from fitgpp.workbook.panels import Panel
from fitgpp.workbook.views import tradeoff_view


@dataclass(frozen=True)
class Fewer(Fifo):
    """A researcher's FIFO with an int field of its own."""

    lookahead: int = field(default=8, metadata={"min": 1, "max": 64})
    name = "fewer"


@dataclass(frozen=True)
class Patient(FitGpp):
    """A researcher's FitGpp (it has ``s`` and ``P``) with an int field of its own."""

    patience: int = 10
    name = "patient"


def test_config_label_writes_whole_numbers_as_integers_and_knobs_in_their_unit():
    assert config_label("fewer", {"lookahead": 8.0}, ["lookahead"]) == "fewer lookahead=8"
    assert config_label("fewer", {"lookahead": 1234567}, ["lookahead"]) == \
        "fewer lookahead=1234567"                       # was 1.23457e+06
    assert config_label("fitgpp", {"s": 0.1 + 0.2, "max_preemptions": 3},
                        ["max_preemptions"]) == "FitGpp s=0.3 P=3"
    assert config_label("las", {"thresholds": (3250.0, 7200)}, ["thresholds"]) == \
        "LAS thresholds=3250,7200"
    assert config_label("fifo", {"restart_overhead": 600.0}, ["restart_overhead"]) == \
        "FIFO restart cost 10 min"


SIZE = Size(n_jobs=120, seeds=(0, 1, 2), timeline_jobs=50)


@pytest.fixture(scope="module")
def panel(tmp_path_factory):
    study = Study(key="mine", title="mine", question="Does looking ahead help?",
                  policies={"fifo": {}, "fitgpp": {"s": [4.0]},
                            "fewer": {"policy": Fewer, "lookahead": [1, 8, 32]},
                            "patient": {"policy": Patient, "patience": [0, 80],
                                        "max_preemptions": [1, 3]}})
    p = Panel(study, SIZE, cache=tmp_path_factory.mktemp("cells"))
    p.controls["policy"].value = "fewer"
    p.controls["lookahead"].value = 8
    return p


def test_every_place_a_panel_names_a_configuration_uses_its_one_label(panel, tmp_path):
    labels = list(panel.table["policy"])
    assert labels == ["FIFO", "FitGpp s=4", "fewer lookahead=1", "fewer lookahead=8",
                      "fewer lookahead=32", "patient s=4 P=1 patience=0",
                      "patient s=4 P=1 patience=80", "patient s=4 P=3 patience=0",
                      "patient s=4 P=3 patience=80"]
    assert [t for t, _ in panel.controls["lookahead"].options] == ["1", "8", "32"]
    assert "<b>fewer lookahead=8</b> against FIFO" in panel.numbers.value
    cdf = json.dumps(panel.views["cell"].chart.to_dict())
    assert "fewer lookahead=8" in cdf
    assert "fewer lookahead=8" in panel.finding.value
    paths = panel_export.export_view(panel, tmp_path, width="full")
    table = (tmp_path / "mine_table.tex").read_text()
    assert all(lb in table for lb in labels)
    numbers = (tmp_path / "mine_selected_numbers.tex").read_text()
    assert "fewer lookahead=8" in numbers
    written = " ".join(p.read_text(errors="replace") for p in paths if p.suffix in (".svg", ".tex"))
    assert not re.search(r"lookahead=\d+\.0\b|patience=\d+\.0\b", written)


def test_the_tradeoff_at_one_p_keeps_every_other_field_of_a_label(panel):
    """The trade-off at P=3 dropped everything after " P=" from a label: a researcher's
    policy at two patience values read "patient s=4" twice."""
    sel = panel.selection() | {"policy": "patient", "max_preemptions": 3}
    data = tradeoff_view(panel.o, sel, panel.table).to_dict()["datasets"]
    # (rows without a policy are the axes' end marks of the figure, not configurations)
    shown = {r["policy"] for rows in data.values() for r in rows if r.get("policy") is not None}
    assert {"patient s=4 patience=0", "patient s=4 patience=80"} <= shown
    assert not any("P=" in x for x in shown)
