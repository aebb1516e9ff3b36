"""A manifest records what ran (issue 35, item 12): the git state of the whole package and
which files differ, every configuration's policy (registry name or ``module:Class``) with its
code digest and only the fields it has, the grid's dimensions as swept, the tick it ran."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field

import pytest

from fitgpp.figures import export as E
from fitgpp.sim.policies import registry
from fitgpp.sim.policies.fifo import StrictFifo
from fitgpp.studies import reproduce
from fitgpp.studies.reproduce import Size, Study
from fitgpp.workbook import panel_export
from fitgpp.workbook.panels import Panel


def test_an_edit_anywhere_in_the_package_is_named(tmp_path, monkeypatch):
    """``git_dirty`` looked at fitgpp/figures/ only: an edited fitgpp/sim/engine.py read
    clean. Now the whole package is looked at, and the files are named."""
    repo = tmp_path / "repo"
    for path in ("fitgpp/figures/export.py", "fitgpp/sim/engine.py"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text("a = 1\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    monkeypatch.setattr(E, "__file__", str(repo / "fitgpp" / "figures" / "export.py"))
    assert E.git_dirty() is False
    (repo / "fitgpp" / "sim" / "engine.py").write_text("a = 2\n")
    assert E.git_dirty() is True
    assert E.git_modified() == ["fitgpp/sim/engine.py"]
    (repo / "fitgpp" / "sim" / "mine.py").write_text("b = 1\n")    # a new module runs too
    prov = E.provenance()
    assert prov["git_dirty"] is True
    assert prov["git_modified"] == ["fitgpp/sim/engine.py", "fitgpp/sim/mine.py"]
    (repo / "notes.txt").write_text("outside the package")
    assert E.git_modified() == ["fitgpp/sim/engine.py", "fitgpp/sim/mine.py"]


@dataclass(frozen=True)
class Fewer(StrictFifo):   # (StrictFifo: no backfill field of its own to inherit)
    """A researcher's FIFO with an int field of its own (and no ``s`` nor ``P``)."""

    lookahead: int = field(default=8, metadata={"min": 1, "max": 64})
    name = "fewer"


SIZE = Size(n_jobs=120, seeds=(0, 1), timeline_jobs=50)


@pytest.fixture(scope="module")
def panel(tmp_path_factory):
    study = Study(key="mine", title="mine", question="Does looking ahead help?",
                  policies={"fifo": {}, "fitgpp": {"s": [4.0]},
                            "fewer": {"policy": Fewer, "lookahead": [1, 8]}})
    p = Panel(study, SIZE, cache=tmp_path_factory.mktemp("cells"), charts=False)
    p.controls["policy"].value = "fewer"
    p.controls["lookahead"].value = 8
    return p


def test_a_panel_export_records_the_users_policy_and_only_its_fields(panel, tmp_path):
    """It recorded ``"policy": [..., "fewer"]`` with no module:Class nor digest, and ``"s":
    4.0, "max_preemptions": 3`` for a policy that has neither."""
    panel_export.export_view(panel, tmp_path, width="full")
    man = json.loads((tmp_path / E.MANIFEST).read_text())
    entry = next(iter(man["figures"].values()))
    cfg = entry["config"]
    assert set(entry) >= {"fitgpp_version", "git_commit", "git_dirty", "git_modified"}
    ref = f"{Fewer.__module__}:Fewer"
    assert cfg["selected"]["policy"] == ref and cfg["selected"]["label"] == "fewer lookahead=8"
    assert cfg["selected"]["fields"] == {"lookahead": 8}
    assert cfg["selected"]["digest"] == registry.digest(Fewer(lookahead=8))
    assert cfg["selection"]["policy"] == "fewer" and cfg["selection"]["lookahead"] == 8
    assert "s" not in cfg["selection"] and "max_preemptions" not in cfg["selection"]
    confs = {c["label"]: c for c in cfg["configurations"]}
    assert set(confs) == {"FIFO", "FitGpp s=4", "fewer lookahead=1", "fewer lookahead=8"}
    assert confs["FIFO"]["policy"] == "fifo" and confs["FIFO"]["fields"] == {"backfill": "none"}
    assert confs["FitGpp s=4"]["fields"] == {"s": 4.0, "max_preemptions": 3}
    assert confs["fewer lookahead=1"]["fields"] == {"lookahead": 1}
    assert confs["fewer lookahead=1"]["digest"] != confs["fewer lookahead=8"]["digest"]
    assert cfg["policies"]["fewer"]["policy"] == ref
    assert cfg["dimensions"]["lookahead"] == [1, 8] and cfg["seeds"] == [0, 1]
    assert cfg["n_jobs"] == 120 and cfg["tick_s"] == 60.0
    tables = {k: v for k, v in man["tables"].items()}
    assert all(t["config"]["selected"]["policy"] == ref for t in tables.values())


def test_a_study_config_records_p_as_swept_and_the_tick_as_run(tmp_path):
    """``_config`` said P = 3 and a 60 s tick for RQ2, which sweeps P = 1, 3 and 10."""
    from fitgpp.studies.base import _config
    study = reproduce.STUDIES["rq2"].replace(
        policies={"fifo": {}, "fitgpp": {"s": [4.0], "max_preemptions": [1, 3, 10]}})
    o = study.run(Size(n_jobs=120, seeds=(0,), timeline_jobs=50), cache=tmp_path)
    cfg = _config(o)
    assert "max_preemptions" not in cfg
    assert cfg["dimensions"]["max_preemptions"] == [1, 3, 10]
    assert cfg["tick_s"] == next(iter(o.experiments.values())).tick
    ps = sorted(c["fields"]["max_preemptions"] for c in cfg["configurations"]
                if c["name"] == "fitgpp")
    assert ps == [1, 3, 10]
    json.dumps(cfg)      # all of it JSON, as every exported file carries it


def test_the_workbench_export_records_both_policies_code(tmp_path):
    from fitgpp.workbook import workbench as wbf
    from fitgpp.sim.cluster import DEFAULT_CLUSTER
    cur, pin = wbf.Values(policy=Fewer, params=(("lookahead", 16),), n_jobs=120), \
        wbf.Values(policy="fitgpp", n_jobs=120)
    a, b = wbf.compare(cur, pin, DEFAULT_CLUSTER, cache=tmp_path)
    config, defaults = wbf.export_config(a, b, DEFAULT_CLUSTER)
    assert config["policy"] == f"{Fewer.__module__}:Fewer" and config["lookahead"] == 16
    assert "s" not in config and "max_preemptions" not in config
    assert config["digests"] == {"current": registry.digest(Fewer(lookahead=16)),
                                 "pinned": registry.digest(registry.resolve("fitgpp"))}
    assert defaults["digests"] == config["digests"]     # recorded, never in a file name
