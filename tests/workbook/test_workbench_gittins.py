"""The workbench offers gittins like every built-in policy: in the policy list, with a
control per field (quantum, thresholds, distribution file, mode), and a changed control
reruns it."""

from __future__ import annotations

import json

import ipywidgets as W

from fitgpp.workbook.widgets import Values, Workbench, policy_choices


def test_the_workbench_runs_gittins_and_its_mode(tmp_path):
    assert ("Gittins", "gittins") in policy_choices()
    wb = Workbench(Values(policy="gittins", n_jobs=300, n_seeds=1), cache=tmp_path / "cells")
    assert isinstance(wb.w["delta"], W.FloatText) and wb.w["delta"].value == 3250.0
    # one control for the field five policies share, a dropdown of its values, described as
    # the chosen policy describes it
    assert isinstance(wb.w["mode"], W.Dropdown) and wb.w["mode"].value == "exact"
    assert list(wb.w["mode"].options) == ["exact", "tiresias"]
    from fitgpp.sim.policies import registry
    assert wb.w["mode"].tooltip == registry.metadata("gittins", "mode")["description"]
    assert wb.w["distribution"].value == ""
    params = json.loads(wb.ds.attrs["policy_params"])
    assert (wb.ds.attrs["policy"], params["mode"]) == ("gittins", "exact")
    wb.w["mode"].value = "tiresias"
    assert json.loads(wb.ds.attrs["policy_params"])["mode"] == "tiresias"
    assert "Gittins" in wb.cur.label
    wb.w["policy"].value = "las"
    assert wb.w["mode"].tooltip == registry.metadata("las", "mode")["description"] != \
        registry.metadata("gittins", "mode")["description"]


def test_thresholds_are_json_in_the_workbench(tmp_path):
    """LAS's and Gittins's thresholds (a tuple) were shown as '(3250.0, 7200.0)' and handed
    back as that string, which the policy refused: the workbench failed on LAS. Now JSON."""
    wb = Workbench(Values(policy="las", n_jobs=200, n_seeds=1), cache=tmp_path / "cells")
    assert wb.w["thresholds"].value == "[3250.0, 7200.0]"
    wb.w["thresholds"].value = "[600, 3000]"
    assert json.loads(wb.ds.attrs["policy_params"])["thresholds"] == [600.0, 3000.0]
