"""One field, ``mode`` ("exact" or "tiresias"), for Tiresias's own behaviour in every policy
that has one (issue 35 item 19): the new name on every surface (the class, simulate, the
CLI's --param, a sweep file, the workbench's controls, a rerun), and each old name (LAS's
``demotion``, SRTF's and SRSF's ``ties``, LPJF's ``scan``) still taken, with a
DeprecationWarning naming ``mode``, giving the same results, and a result saved with an
old name rerunning."""

from __future__ import annotations

import json
import textwrap
import warnings

import pytest

import fitgpp
from conftest import cluster_of, random_loaded_trace
from fitgpp.cli import main
from fitgpp.sim.policies import POLICIES, PolicyError, registry
from fitgpp.sim.policies.modes import FieldRenamed

#: the policies with a mode, and each one's old name for it (None: it always was ``mode``)
OLD = {"las": "demotion", "shortest": "ties", "shortest-gpu": "ties", "lpjf": "scan",
       "gittins": None}
#: parameters that make the two modes differ on the trace below
KW = {"las": {"thresholds": (60.0, 300.0)}, "gittins": {"delta": 120}}


def trace():
    df, cap = random_loaded_trace(1, 40, 1)
    return df, cluster_of(cap)


def finish(ds) -> list:
    return ds["finish"].values.tolist()


def test_the_policies_with_a_mode_are_these():
    """Every built-in policy with Tiresias's behaviour has it as ``mode``, and no other
    field (old or new) says the same thing."""
    have = {name for name, cls in POLICIES.items() if "mode" in registry.declared(cls)}
    assert have == set(OLD)
    for name in POLICIES:
        assert not {"demotion", "ties", "scan"} & set(registry.declared(name)), name
    for name in OLD:
        kind, default = registry.declared(name)["mode"]
        assert (kind, default) == (str, "exact")
        assert registry.metadata(name, "mode")["choices"] == ("exact", "tiresias")


@pytest.mark.parametrize("name", sorted(OLD))
def test_the_new_name_everywhere_in_python(name):
    df, cluster = trace()
    cls = registry.policy_class(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecation on the new name
        a = fitgpp.simulate(df, cluster, cls(mode="tiresias", **KW.get(name, {})))
        b = fitgpp.simulate(df, cluster, name, mode="tiresias", **KW.get(name, {}))
        exact = fitgpp.simulate(df, cluster, name, **KW.get(name, {}))
    assert finish(a) == finish(b) != finish(exact)  # the mode matters on this trace
    assert json.loads(a.attrs["policy_params"])["mode"] == "tiresias"
    assert a.attrs["mode"] == "tiresias"
    with pytest.raises(PolicyError, match=f"{cls.name}: mode must be 'exact' or 'tiresias'"):
        cls(mode="late")


@pytest.mark.parametrize("name", sorted(k for k, v in OLD.items() if v))
def test_each_old_name_warns_and_gives_the_same_results(name):
    df, cluster = trace()
    old, cls, kw = OLD[name], registry.policy_class(name), KW.get(name, {})
    new = fitgpp.simulate(df, cluster, cls(mode="tiresias", **kw))
    with pytest.warns(DeprecationWarning, match=f"'{old}' is deprecated; use 'mode'") as rec:
        by_class = cls(**{old: "tiresias"}, **kw)
    assert rec[0].category is FieldRenamed and rec[0].filename == __file__  # the caller's line
    assert by_class == cls(mode="tiresias", **kw)
    with pytest.warns(FieldRenamed, match=f"'{old}' is deprecated; use 'mode'"):
        by_name = fitgpp.simulate(df, cluster, name, **{old: "tiresias"}, **kw)
    for ds in (fitgpp.simulate(df, cluster, by_class), by_name):
        assert finish(ds) == finish(new)
        assert json.loads(ds.attrs["policy_params"]) == json.loads(new.attrs["policy_params"])
    with pytest.warns(FieldRenamed), pytest.raises(PolicyError, match=f"give 'mode' only"):
        cls(**{old: "tiresias"}, mode="exact")
    with pytest.warns(FieldRenamed), pytest.raises(PolicyError, match="mode must be"):
        cls(**{old: "late"})


@pytest.mark.parametrize("name", sorted(k for k, v in OLD.items() if v))
def test_the_cli_takes_the_new_name_and_the_old_one_with_a_warning(name, tmp_path, capsys):
    df, cluster = trace()
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    args = ["simulate", str(src), "--nodes", "1", "--node-gpu", str(int(cluster.capacity[0, 0])),
            "--node-cpu-milli", str(int(cluster.capacity[0, 1])),
            "--node-mem-mib", str(int(cluster.capacity[0, 2])), "--policy", name]
    args += [f"--param={k}={json.dumps(list(v))}" for k, v in KW.get(name, {}).items()]
    assert main([*args, "--param", "mode=tiresias", "--out", str(tmp_path / "new.nc")]) == 0
    assert "deprecated" not in capsys.readouterr().err
    assert main([*args, "--param", f"{OLD[name]}=tiresias", "--out",
                 str(tmp_path / "old.nc")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"fitgpp simulate: warning: --param: {name}: parameter '{OLD[name]}' is "
                   "deprecated; use 'mode' (the same values: mode=...)"]
    new, old = fitgpp.load(tmp_path / "new.nc"), fitgpp.load(tmp_path / "old.nc")
    assert finish(new) == finish(old)
    assert new.attrs["policy_params"] == old.attrs["policy_params"]
    assert json.loads(old.attrs["policy_params"])["mode"] == "tiresias"


SWEEP = """
    [workload]
    model = "paper-default"
    n_jobs = 40
    [cluster]
    nodes = 2
    [policies.las]
    thresholds = [60, 300]
    {key} = ["exact", "tiresias"]
    [policies.shortest]
    {key2} = ["tiresias"]
"""


def test_a_sweep_file_with_the_old_names_is_the_same_sweep(tmp_path):
    """Same cells (so the same cache keys) and a dimension ``mode``, with a warning per old
    name naming the table."""
    from fitgpp.sweep import load_experiment
    from fitgpp.sweep.cell import cell_key, cells_of, resolve_source
    (tmp_path / "new.toml").write_text(textwrap.dedent(SWEEP.format(key="mode", key2="mode")))
    (tmp_path / "old.toml").write_text(textwrap.dedent(SWEEP.format(key="demotion",
                                                                    key2="ties")))
    new = load_experiment(tmp_path / "new.toml")
    with pytest.warns(FieldRenamed) as rec:
        old = load_experiment(tmp_path / "old.toml")
    said = {str(w.message) for w in rec}
    assert "[policies.las] las: parameter 'demotion' is deprecated; use 'mode' " \
           "(the same values: mode=...)" in said
    assert any(s.startswith("[policies.shortest] shortest: parameter 'ties'") for s in said)
    assert cells_of(old) == cells_of(new)
    src = resolve_source(new)
    assert [cell_key(old, src, c) for c in cells_of(old)] == \
           [cell_key(new, src, c) for c in cells_of(new)]
    assert [g.params for g in old.policies] == [g.params for g in new.policies] == \
           [{"mode": ("exact", "tiresias")}, {"mode": ("tiresias",)}]


def test_the_cli_sweep_says_an_old_name_on_one_line(tmp_path, capsys):
    (tmp_path / "s.toml").write_text(textwrap.dedent(SWEEP.format(key="demotion", key2="mode")))
    assert main(["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "s.nc"),
                 "--workers", "0", "--no-cache", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "fitgpp sweep: warning: [policies.las] las: parameter 'demotion' is deprecated; " \
           "use 'mode'" in err
    assert list(fitgpp.load(tmp_path / "s.nc")["mode"].values) == ["exact", "tiresias"]


@pytest.mark.parametrize("name", sorted(k for k, v in OLD.items() if v))
def test_a_result_saved_with_an_old_name_reruns(name, tmp_path):
    """A result as the code before the rename wrote it: its ``policy_params`` and its own
    attr under the old name. It reruns (the old name read as ``mode``) to the same run."""
    df, cluster = trace()
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    ds = fitgpp.simulate(str(src), cluster, name, mode="tiresias", **KW.get(name, {}))
    params = json.loads(ds.attrs["policy_params"])
    params[OLD[name]] = params.pop("mode")
    ds.attrs["policy_params"] = json.dumps(params, sort_keys=True)
    ds.attrs[OLD[name]] = ds.attrs.pop("mode")
    fitgpp.save(ds, tmp_path / "old.nc")
    with pytest.warns(FieldRenamed, match=f"'{OLD[name]}' is deprecated"):
        again = fitgpp.rerun(fitgpp.load(tmp_path / "old.nc"))
    assert finish(again) == finish(ds)
    assert json.loads(again.attrs["policy_params"])["mode"] == "tiresias"


def test_the_workbench_has_one_mode_control_for_all_of_them():
    from fitgpp.workbook.widgets import param_controls
    controls = param_controls(sorted(OLD))
    assert "mode" in controls and not {"demotion", "ties", "scan"} & set(controls)
    assert controls["mode"].value == "exact"


def test_a_user_policy_may_rename_its_own_field():
    """The same mechanism for a researcher's policy: ``renamed`` on its class."""
    from dataclasses import dataclass

    from fitgpp.sim.policies.fifo import Fifo
    from fitgpp.sim.policies.modes import renamed

    @renamed(patience="wait_ticks")
    @dataclass(frozen=True)
    class Patient(Fifo):
        wait_ticks: int = 2
        name = "patient"
    with pytest.warns(FieldRenamed, match="patient: parameter 'patience' is deprecated; use "
                                          "'wait_ticks'"):
        assert Patient(patience=5) == Patient(wait_ticks=5)
    with pytest.warns(FieldRenamed):
        assert registry.resolve(Patient, patience=7).wait_ticks == 7
