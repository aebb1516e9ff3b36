"""A policy written outside the package goes wherever a built-in goes: simulate, rerun, the
CLI, a sweep (serial and on Dask workers) and its cache, which an edit of the policy's code
invalidates."""

from __future__ import annotations

import importlib
import json
import linecache
import sys
import types
from dataclasses import dataclass

import numpy as np
import pytest
import xarray as xr

import fitgpp
from fitgpp.workload.rerun import RerunWarning
from fitgpp.cli import main
from fitgpp.sim.policies import FitGpp, registry
from fitgpp.sweep import Experiment, PolicyGrid, Workload, run_sweep


@dataclass(frozen=True)
class Picky(FitGpp):
    """FitGpp that preempts only for TE jobs of at least ``min_te_gpu`` GPUs."""

    min_te_gpu: int = 1

    def choose(self, eng, i, t):
        if eng.dg[i] < self.min_te_gpu:
            return None
        return super().choose(eng, i, t)


#: The same policy as source text, for modules written at test time.
PICKY = '''
from dataclasses import dataclass
from fitgpp.sim.policies import FitGpp


@dataclass(frozen=True)
class Picky(FitGpp):
    min_te_gpu: int = 1

    def choose(self, eng, i, t):
        if eng.dg[i] < self.min_te_gpu:
            return None
        return super().choose(eng, i, t)
'''
#: An edit that changes what it does: it never preempts (PRIO's behaviour).
PICKY_NEVER = PICKY.replace("        if eng.dg[i] < self.min_te_gpu:\n            return None\n",
                            "        return None  # edited: never preempt\n")
CLUSTER = fitgpp.Cluster.homogeneous(4, gpu=8)


@pytest.fixture(scope="module")
def trace():
    from fitgpp.workload import load_model, synthesize
    return synthesize(load_model("paper-default"), n_jobs=300, seed=4, load=1.1,
                      te_fraction=0.5, cluster=CLUSTER)


def same_jobs(a, b):
    for v in ("first_start", "finish", "preemptions", "node"):
        np.testing.assert_array_equal(a[v].values, b[v].values, err_msg=v)


def fake_main(monkeypatch, source, filename="<nbcell>", cache_lines=False):
    """A fresh ``__main__`` holding ``source``, as a notebook kernel's (no ``__file__``)."""
    mod = types.ModuleType("__main__")
    if cache_lines:  # IPython keeps each cell's text in linecache under a made-up file name
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), mod.__dict__)
    monkeypatch.setitem(sys.modules, "__main__", mod)
    return mod


def write_module(tmp_path, monkeypatch, name, source):
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # an edit is always re-read
    return importlib.import_module(name)


# ------------------------------------------------------------------ simulate
def test_a_test_module_policy_runs_and_behaves_as_written(trace):
    fit = fitgpp.simulate(trace, CLUSTER, "fitgpp")
    prio = fitgpp.simulate(trace, CLUSTER, "prio")
    assert fit["preemptions"].sum() > 0, "the workload must make FitGpp preempt"
    same_jobs(fitgpp.simulate(trace, CLUSTER, Picky(min_te_gpu=0), check=True), fit)
    same_jobs(fitgpp.simulate(trace, CLUSTER, Picky, min_te_gpu=10**6), prio)
    ds = fitgpp.simulate(trace, CLUSTER, Picky(s=8.0, min_te_gpu=2))
    assert ds.attrs["policy"] == f"{__name__}:Picky"
    assert json.loads(ds.attrs["policy_params"]) == {"s": 8.0, "max_preemptions": 3,
                                                     "min_te_gpu": 2}
    assert ds.attrs["min_te_gpu"] == 2 and len(ds.attrs["policy_digest"]) == 64


@pytest.mark.parametrize("cache_lines", [False, True])
def test_a_notebook_policy_in_main_runs_and_reruns(monkeypatch, trace, cache_lines):
    mod = fake_main(monkeypatch, PICKY, filename=f"<cell-{cache_lines}>", cache_lines=cache_lines)
    assert registry.class_source(mod.Picky)[0] == "code"  # no file for __main__
    ds = fitgpp.simulate(trace, CLUSTER, mod.Picky(min_te_gpu=10**6), check=True)
    assert ds.attrs["policy"] == "__main__:Picky"
    same_jobs(ds, fitgpp.simulate(trace, CLUSTER, "prio"))
    xr.testing.assert_identical(fitgpp.rerun(ds, policy=mod.Picky), ds)


def test_digest_follows_code_and_parameters(monkeypatch):
    a = fake_main(monkeypatch, PICKY, "<cell-a>", cache_lines=True).Picky
    b = fake_main(monkeypatch, PICKY, "<cell-b>", cache_lines=True).Picky
    c = fake_main(monkeypatch, PICKY_NEVER, "<cell-c>", cache_lines=True).Picky
    assert registry.digest(a()) == registry.digest(b())  # same code: same digest
    assert registry.digest(a()) != registry.digest(c())
    assert registry.digest(a()) != registry.digest(a(min_te_gpu=2))
    assert registry.digest(FitGpp()) != registry.digest(Picky())
    d = fake_main(monkeypatch, PICKY + "    table = object()\n", "<cell-d>").Picky
    assert registry.class_source(d)[0] == "cloudpickle"  # a class attribute with no repr
    assert registry.digest(d()) == registry.digest(d())


def test_digest_of_a_module_file_follows_the_text_and_the_code_that_runs(tmp_path,
                                                                         monkeypatch):
    name = f"digpol_{tmp_path.name}"
    mod = write_module(tmp_path, monkeypatch, name, PICKY)
    assert registry.class_source(mod.Picky)[0] == "source"
    d1 = registry.digest(mod.Picky())
    (tmp_path / f"{name}.py").write_text(PICKY_NEVER)  # edited, not reloaded: old code runs
    d2 = registry.digest(mod.Picky())
    importlib.reload(mod)
    d3 = registry.digest(mod.Picky())
    assert len({d1, d2, d3}) == 3


def test_digest_follows_a_module_function_the_class_calls(tmp_path, monkeypatch):
    """The digest hashes the class's module file, not only the class's own text: a change to
    a module-level helper the class calls changes what runs, so it changes the digest (the
    getsource digest, which read the class body alone, missed it)."""
    helper = PICKY.replace("@dataclass(frozen=True)\nclass Picky(FitGpp):",
                           "def too_small(g, least):\n    return g < least\n\n\n"
                           "@dataclass(frozen=True)\nclass Picky(FitGpp):").replace(
        "if eng.dg[i] < self.min_te_gpu:", "if too_small(eng.dg[i], self.min_te_gpu):")
    assert "def too_small" in helper and "if too_small(" in helper
    name = f"helperpol_{tmp_path.name}"
    mod = write_module(tmp_path, monkeypatch, name, helper)
    assert registry.class_source(mod.Picky)[0] == "source"
    d1 = registry.digest(mod.Picky())
    (tmp_path / f"{name}.py").write_text(helper.replace("return g < least", "return g <= least"))
    importlib.reload(mod)
    assert registry.digest(mod.Picky()) != d1


def test_rerun_says_when_the_policy_cannot_be_built(trace):
    ds = fitgpp.simulate(trace, CLUSTER, Picky())
    ds.attrs["policy"] = "no_such_module_xyz:Picky"
    with pytest.raises(fitgpp.PolicyError, match="cannot import module 'no_such_module_xyz'"):
        fitgpp.rerun(ds, allow_modules=("no_such_module_xyz",))
    ds.attrs["policy"] = f"{__name__}:Gone"
    with pytest.raises(fitgpp.PolicyError, match="has no 'Gone'"):
        fitgpp.rerun(ds, allow_modules=(__name__,))


def test_rerun_warns_when_the_policy_code_changed(monkeypatch, trace):
    mod = fake_main(monkeypatch, PICKY, "<cell-old>", cache_lines=True)
    ds = fitgpp.simulate(trace, CLUSTER, mod.Picky())
    fake_main(monkeypatch, PICKY_NEVER, "<cell-new>", cache_lines=True)
    with pytest.warns(RerunWarning, match="code differs"):
        fitgpp.rerun(ds, allow_modules=("__main__",))


def test_specs_that_are_not_policies_are_refused():
    with pytest.raises(fitgpp.PolicyError, match="not a policy class"):
        registry.policy_class("json:JSONDecoder")
    with pytest.raises(fitgpp.PolicyError, match="expected module:Class"):
        registry.policy_class("json:")
    for bad in ("..:X", ".x:X", "a\0b:X"):
        with pytest.raises(fitgpp.PolicyError, match="importing module|cannot import"):
            registry.policy_class(bad)
    with pytest.raises(fitgpp.PolicyError, match=r"takes no parameter\(s\) patience"):
        registry.resolve(Picky, patience=3)


# ------------------------------------------------------------------ CLI
TRACE_CSV = """job_id,cls,submit_time,duration,gpu,cpu_milli,mem_mib,grace_period
1,BE,0,600,8,1000,1024,60
2,TE,60,60,4,1000,1024,
3,TE,60,60,1,1000,1024,
"""


def test_cli_runs_a_policy_from_a_module_with_typed_params(tmp_path, monkeypatch, capsys):
    name = f"clipol_{tmp_path.name}"
    (tmp_path / f"{name}.py").write_text(PICKY)
    (tmp_path / "t.csv").write_text(TRACE_CSV)
    monkeypatch.chdir(tmp_path)  # the CLI imports module:Class from the current directory
    monkeypatch.setattr(sys, "path", list(sys.path))
    rc = main(["simulate", "t.csv", "--nodes", "1", "--policy", f"{name}:Picky", "--param",
               "min_te_gpu=2", "--param", "s=8", "--out", "r.nc"])
    assert rc == 0, capsys.readouterr().err
    ds = fitgpp.load(tmp_path / "r.nc")
    assert ds.attrs["policy"] == f"{name}:Picky"
    params = json.loads(ds.attrs["policy_params"])
    assert params == {"s": 8.0, "max_preemptions": 3, "min_te_gpu": 2}
    assert isinstance(params["s"], float) and isinstance(params["min_te_gpu"], int)
    # the 4-GPU TE job preempts the BE job; the 1-GPU one is below min_te_gpu and fits anyway
    assert int(ds["preemptions"].sel(job=1)) == 1
    assert main(["simulate", "t.csv", "--nodes", "1", "--policy", f"{name}:Picky", "--param",
                 "min_te_gpu=8", "--out", "r2.nc"]) == 0
    assert int(fitgpp.load(tmp_path / "r2.nc")["preemptions"].sel(job=1)) == 0


@pytest.mark.parametrize("argv, needle", [
    (["--policy", "no_such_mod_q:X"], "cannot import module 'no_such_mod_q'"),
    (["--param", "bogus=1"], "has no parameter 'bogus'"),
    (["--param", "s"], "expected NAME=VALUE"),
    (["--param", "max_preemptions=two"], "expected an integer"),
    (["--param", "max_preemptions=99999999999"], "2147483647]"),  # the --max-preemptions bound
    (["--policy", "rand", "--param", "seed=-1"], "seed must be an integer in [0, 4294967295]"),
    (["--param", "s=nan"], "expected a finite number"),
    (["--param", "s=2", "--s", "3"], "both given"),
    (["--policy", "prio", "--param", "s=2"], "has no parameter 's'"),
])
def test_cli_policy_errors_are_one_line(tmp_path, monkeypatch, capsys, argv, needle):
    (tmp_path / "t.csv").write_text(TRACE_CSV)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    rc = main(["simulate", "t.csv", "--nodes", "1", *argv, "--out", "r.nc"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and needle in err, err
    assert not (tmp_path / "r.nc").exists()


def test_cli_aliases_still_set_the_built_in_parameters(tmp_path, monkeypatch, capsys):
    (tmp_path / "t.csv").write_text(TRACE_CSV)
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "t.csv", "--nodes", "1", "--s", "2", "--max-preemptions", "5",
                 "--out", "r.nc"]) == 0
    assert json.loads(fitgpp.load(tmp_path / "r.nc").attrs["policy_params"]) == {
        "s": 2.0, "max_preemptions": 5}


# ------------------------------------------------------------------ sweeps
def experiment(policies, **kw):
    return Experiment(workload=Workload(model="paper-default", n_jobs=250, load=1.1,
                                        te_fraction=0.5),
                      policies=policies, seeds=[0, 1], cluster=CLUSTER, **kw)


def test_any_field_is_swept_and_grids_take_objects_classes_and_specs():
    exp = experiment({"prio": {}, "picky": {"policy": Picky, "min_te_gpu": [0, 4]},
                      "strict": {"policy": Picky(s=1.0), "max_preemptions": [1, 2]}})
    assert exp.grid_params == ("s", "max_preemptions", "min_te_gpu")
    assert exp.grid_values("min_te_gpu") == (0, 1, 4)  # strict keeps its default 1
    grid = exp.policies[2]
    assert grid.s == (1.0,) and grid.max_preemptions == (1, 2) and grid.name == "strict"
    cells = [c for c in fitgpp.sweep.cells_of(exp) if c.policy == "picky"]
    assert {c.make_policy() for c in cells} == {Picky(min_te_gpu=0), Picky(min_te_gpu=4)}
    with pytest.raises(fitgpp.sweep.ExperimentError, match=r"\[policies.picky\] key "
                                                            r"'min_te_gpu' must be an integer"):
        experiment({"picky": {"policy": Picky, "min_te_gpu": [0.5]}})
    with pytest.raises(fitgpp.sweep.ExperimentError, match="unknown key 'patience'"):
        PolicyGrid(Picky, patience=[1])
    assert PolicyGrid(f"{__name__}:Picky").cls is Picky


def test_sweep_cells_are_the_simulations(trace):
    exp = experiment({"picky": {"policy": Picky, "min_te_gpu": [0, 10**6]}, "fitgpp": {}})
    ds = run_sweep(exp, workers=0, cache=False, progress=False)
    a = ds["slowdown_p95_mean"].sel(policy="picky", s=4.0, max_preemptions=3, cls="TE")
    b = ds["slowdown_p95_mean"].sel(policy="fitgpp", s=4.0, max_preemptions=3, cls="TE")
    assert float(a.sel(min_te_gpu=0)) == float(b.isel(min_te_gpu=0))  # Picky(0) is FitGpp
    assert float(a.sel(min_te_gpu=10**6)) != float(a.sel(min_te_gpu=0))
    assert ds["min_te_gpu"].attrs["description"] == "parameter min_te_gpu of policy picky"


def test_editing_a_policy_module_invalidates_its_cached_cells(tmp_path, monkeypatch):
    name = f"editpol_{tmp_path.name}"
    mod = write_module(tmp_path, monkeypatch, name, PICKY)
    exp = experiment({"picky": {"policy": f"{name}:Picky", "min_te_gpu": [0]}})
    cache = tmp_path / "cache"
    st1, st2, st3 = {}, {}, {}
    first = run_sweep(exp, workers=0, cache=cache, progress=False, stats=st1)
    again = run_sweep(exp, workers=0, cache=cache, progress=False, stats=st2)
    assert (st1["computed"], st2["computed"], st2["cached"]) == (2, 0, 2)
    xr.testing.assert_identical(again, first)
    (tmp_path / f"{name}.py").write_text(PICKY_NEVER)
    importlib.reload(mod)
    edited = run_sweep(exp, workers=0, cache=cache, progress=False, stats=st3)
    assert (st3["computed"], st3["cached"]) == (2, 0), "an edited policy must be recomputed"
    fresh = run_sweep(exp, workers=0, cache=False, progress=False)
    xr.testing.assert_identical(edited, fresh)
    te = dict(cls="TE", policy="picky")
    assert float(edited["preemptions_per_job_mean"].sel(cls="BE", policy="picky").max()) == 0
    assert not np.array_equal(edited["slowdown_p95"].sel(**te).values,
                              first["slowdown_p95"].sel(**te).values)


@pytest.mark.slow
def test_a_main_policy_sweeps_on_two_dask_workers_as_serially(monkeypatch, tmp_path):
    pytest.importorskip("distributed")
    mod = fake_main(monkeypatch, PICKY, "<cell-dask>")  # no source anywhere: by value only
    exp = experiment({"fitgpp": {}, "picky": {"policy": mod.Picky, "min_te_gpu": [0, 4]}})
    serial = run_sweep(exp, workers=0, cache=False, progress=False)
    st = {}
    ds = run_sweep(exp, workers=2, cache=tmp_path / "c", progress=False, stats=st)
    assert st["computed"] == st["unique"] == 6
    xr.testing.assert_identical(ds, serial)


# ------------------------------------------------------------------ widgets
@dataclass(frozen=True)
class Knobs(FitGpp):
    """Fields of every kind a control can be built for."""

    strict: bool = False
    weight: float = 0.5
    tag: str = "x"


def test_widget_controls_derive_from_the_fields():
    import ipywidgets as W
    from fitgpp.sim.policies import Lrtp
    from fitgpp.workbook.widgets import param_controls
    ctl = param_controls([Lrtp, FitGpp, Picky, Knobs, fitgpp.Rand])
    assert list(ctl) == ["max_preemptions", "s", "min_te_gpu", "strict", "weight", "tag"]
    s, p = ctl["s"], ctl["max_preemptions"]
    assert isinstance(s, W.FloatSlider) and (s.min, s.max, s.step, s.value) == (0.5, 16, 0.5, 4)
    assert isinstance(p, W.IntSlider) and p.description == "P (max preemptions)"
    assert isinstance(ctl["min_te_gpu"], W.IntText) and ctl["min_te_gpu"].value == 1
    assert isinstance(ctl["strict"], W.Checkbox) and isinstance(ctl["weight"], W.FloatText)
    assert isinstance(ctl["tag"], W.Text) and ctl["tag"].value == "x"
    assert param_controls([Picky], [("min_te_gpu", 7)])["min_te_gpu"].value == 7


def test_workbench_runs_a_notebook_policy_and_follows_the_choice(monkeypatch):
    from fitgpp.workbook.widgets import Values, Workbench
    mod = fake_main(monkeypatch, PICKY, "<cell-wb>", cache_lines=True)
    wb = Workbench(Values(policy=mod.Picky, params=(("min_te_gpu", 2),), n_jobs=300),
                   cluster=CLUSTER, baseline=False)
    labels = [label for label, _ in wb.w["policy"].options]
    assert labels[:5] == ["FIFO", "PRIO", "FitGpp", "LRTP", "RAND"] and labels[-1] == "Picky"
    assert len(labels) == len(fitgpp.POLICIES) + 1  # every registered policy, then the cell's
    assert wb.ds.attrs["policy"] == "__main__:Picky"
    assert json.loads(wb.ds.attrs["policy_params"])["min_te_gpu"] == 2
    wb.w["min_te_gpu"].value = 10**6
    assert json.loads(wb.ds.attrs["workbench"])["min_te_gpu"] == 10**6
    assert int(wb.ds["preemptions"].sum()) == 0  # no TE job is that big: it never preempts
    wb.w["policy"].value = "lrtp"
    assert wb.ds.attrs["policy"] == "lrtp" and "min_te_gpu" not in wb.ds.attrs["policy_params"]
    assert wb.w["min_te_gpu"].disabled and wb.w["s"].disabled
    assert not wb.w["max_preemptions"].disabled


def test_sweep_file_names_a_policy_module_beside_it(tmp_path, monkeypatch, capsys):
    name = f"tomlpol_{tmp_path.name}"
    (tmp_path / f"{name}.py").write_text(PICKY)
    (tmp_path / "exp.toml").write_text(f"""
seeds = [0]
[workload]
model = "paper-default"
n_jobs = 120
[cluster]
nodes = 4
[policies.prio]
[policies.picky]
policy = "{name}:Picky"
min_te_gpu = [0, 8]
""")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir("/")  # the module is found beside the TOML file, not from here
    rc = main(["sweep", str(tmp_path / "exp.toml"), "--out", str(tmp_path / "s.nc"),
               "--workers", "0", "--no-cache", "--quiet"])
    assert rc == 0, capsys.readouterr().err
    ds = fitgpp.load(tmp_path / "s.nc")
    assert list(ds["min_te_gpu"].values) == [0, 8] and "picky" in ds["policy"].values
    exp = json.loads(ds.attrs["experiment"])
    assert exp["policies"]["picky"] == {"policy": f"{name}:Picky", "s": [4.0],
                                        "max_preemptions": [3], "min_te_gpu": [0, 8]}


def test_a_cell_carries_a_policy_module_the_worker_cannot_import(tmp_path, monkeypatch):
    """What a remote Dask worker gets: the class by value, not a module name to import."""
    import pickle
    import subprocess
    name = f"farpol_{tmp_path.name}"
    mod = write_module(tmp_path, monkeypatch, name, PICKY)
    cell = fitgpp.sweep.Cell("picky", (("min_te_gpu", 5),), (), 0, mod.Picky)
    blob = pickle.dumps(cell)
    code = ("import pickle, sys; c = pickle.loads(sys.stdin.buffer.read()); "
            "p = c.make_policy(); print(type(p).__module__, p.min_te_gpu, p.choose.__name__)")
    out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True,
                         cwd="/", env={"PATH": "/usr/bin:/bin"}, timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode().split() == [name, "5", "choose"]
    with pytest.raises(subprocess.CalledProcessError):  # the module itself is not importable
        subprocess.run([sys.executable, "-c", f"import {name}"], cwd="/", check=True,
                       capture_output=True, env={"PATH": "/usr/bin:/bin"}, timeout=60)


def test_cli_help_lists_each_policys_parameters_from_its_fields(capsys):
    assert main(["simulate", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "fitgpp: s=4.0 (float), max_preemptions=3 (int)" in out
    assert "rand: max_preemptions=3 (int), seed=0 (int)" in out and "prio: none" in out
    assert "fifo: backfill='none' (none | easy | greedy)" in out   # a Literal: its values


def test_a_sweeps_experiment_attr_declares_the_policy_again(tmp_path):
    exp = experiment({"fitgpp": {}, "picky": {"policy": Picky, "min_te_gpu": [0, 4]}})
    back = Experiment.from_dict(json.loads(exp.to_json()))
    assert back.policies[1].policy == f"{__name__}:Picky" and back.policies[1].cls is Picky
    assert [c.make_policy() for c in fitgpp.sweep.cells_of(back)] == \
        [c.make_policy() for c in fitgpp.sweep.cells_of(exp)]
