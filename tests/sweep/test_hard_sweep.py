"""Hard to break, round three (issue 28): every built-in policy sweeps with its defaults,
tuple-valued fields are held at one value or refused saying what to write, and a
researcher's fields of unusual types or names never reach xarray or a TypeError."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass

import pytest

from fitgpp.sim.policies import POLICIES
# FIFO without its field backfill: the policies below are meant to have only their own
from fitgpp.sim.policies.fifo import StrictFifo as Fifo
from fitgpp.sim.policies.las import Las
from fitgpp.sim.policies.base import PolicyError
from fitgpp.studies.reproduce import Size, Study
from fitgpp.sweep import Experiment, ExperimentError, load_experiment, run_sweep
from fitgpp.sweep.cell import cells_of

WL = {"model": "paper-default", "n_jobs": 40}
TINY = Size(n_jobs=40, seeds=(0,), timeline_jobs=20, real_jobs=60, workers=0)


@dataclass(frozen=True)
class Pair(Fifo):
    pair: tuple = (1.0, 2.0)
    name = "pairpolicy"


@dataclass(frozen=True)
class Word(Fifo):
    word: str = "a"
    name = "wordpolicy"


@dataclass(frozen=True)
class Odd(Fifo):
    """A field of every kind a dataclass can hold, none given: the policy's defaults."""
    items: list = None
    table: dict = None
    maybe: int | None = None
    pair: tuple[float, ...] = (1.0,)
    name = "oddpolicy"


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_built_in_policy_sweeps_with_its_defaults(name):
    exp = Experiment(workload=WL, policies={name: {}})
    assert len(exp.policies[0].combos()) == 1  # its defaults: one configuration


def test_las_sweeps_its_modes_in_a_file(tmp_path):
    f = tmp_path / "las.toml"
    f.write_text(textwrap.dedent("""
        [workload]
        model = "paper-default"
        n_jobs = 40
        [cluster]
        nodes = 2
        [policies.las]
        mode = ["exact", "tiresias"]
        [policies.las60]
        policy = "las"
        thresholds = [60, 600]
    """))
    exp = load_experiment(f)
    assert [c.make_policy() for c in cells_of(exp)] == [
        Las(mode="exact"), Las(mode="tiresias"), Las(thresholds=(60.0, 600.0))]
    ds = run_sweep(exp, workers=0, cache=False, progress=False)
    assert list(ds["mode"].values) == ["exact", "tiresias"]
    assert "thresholds" not in ds.dims  # one tuple: recorded in the experiment, no dimension
    assert '"thresholds": [60.0, 600.0]' in ds.attrs["experiment"]
    # the recorded experiment reads back as the same sweep
    again = Experiment.from_dict(__import__("json").loads(ds.attrs["experiment"]))
    assert [c.make_policy() for c in cells_of(again)] == [c.make_policy() for c in cells_of(exp)]


def test_a_sweep_of_tuples_is_refused_saying_what_to_write():
    with pytest.raises(ExperimentError, match=r"cannot sweep tuples.*thresholds = \[60, 600\]"
                                              r".*one \[policies.LABEL\] table per tuple.*"
                                              r'policy = "las"'):
        Experiment(workload=WL, policies={"las": {"thresholds": [[60, 600], [100, 200]]}})
    with pytest.raises(ExperimentError, match=r"holds a tuple: write it as a list.*got 60"):
        Experiment(workload=WL, policies={"las": {"thresholds": 60}})


@pytest.mark.parametrize("bad, why", [
    ([1e25], "<= 1e"), ([10 ** 401], "<= 1e"), (list(range(1, 10_001)), "at most 63"),
    ([float("nan")], "finite|increasing"), ([600, 60], "increasing")])
def test_las_thresholds_out_of_bounds_are_refused(bad, why):
    with pytest.raises(PolicyError, match=why) as e:
        Las(thresholds=tuple(bad))
    assert len(str(e.value)) < 300
    with pytest.raises(ExperimentError, match=why):
        Experiment(workload=WL, policies={"las": {"thresholds": bad}})


def test_a_tuple_default_not_swept_is_one_configuration():
    exp = Experiment(workload=WL, policies=[Pair])
    assert exp.policies[0].combos() == [{}]
    assert "pair" not in exp.grid_params
    # given, it is held at that one tuple
    exp = Experiment(workload=WL, policies={"p": {"policy": Pair, "pair": [3.0, 4.0]}})
    assert [c.make_policy() for c in cells_of(exp)] == [Pair(pair=(3.0, 4.0))]


def test_fields_of_every_kind_keep_their_defaults_and_run():
    exp = Experiment(workload=WL, policies=[Odd, Pair, Word], cluster={"nodes": 2})
    ds = run_sweep(exp, workers=0, cache=False, progress=False)
    assert list(ds["policy"].values) == ["oddpolicy", "pairpolicy", "wordpolicy"]
    assert list(ds["word"].values) == ["a"]
    assert {"items", "table", "maybe", "pair"}.isdisjoint(ds.dims)


def test_an_ad_hoc_study_runs_las_and_a_tuple_default(tmp_path):
    study = Study("adhoc", "t", "q", policies={"fifo": {}, "las": {}, "p": {"policy": Pair}})
    o = study.run(TINY, cache=tmp_path)
    labels = [c["label"] for c in o.configurations()]
    assert labels == ["FIFO", "LAS", "p"], labels


@pytest.mark.parametrize("field", ["gpu_util", "slowdown_p95_mean", "jobs", "model", "trace",
                                   "load", "cls"])
def test_fields_named_like_the_results_variables_are_refused(field):
    cls = type("Clash", (Fifo,), {"__annotations__": {field: float}, field: 1.0})
    cls = dataclass(frozen=True)(cls)
    with pytest.raises(ExperimentError, match=f"parameter '{field}'.*rename the field"):
        Experiment(workload=WL, policies=[cls])


def test_a_field_named_like_the_studys_variant_dimension_is_refused():
    @dataclass(frozen=True)
    class V(Fifo):
        variant: float = 1.0
    study = Study("v", "t", "q", policies={"v": {"policy": V}},
                  variants={"a": lambda m: m, "b": lambda m: m})
    with pytest.raises(ExperimentError, match="parameter 'variant'.*rename the field"):
        study.dimensions(TINY)


def test_adding_a_value_to_a_string_field(tmp_path):
    from fitgpp.workbook.panels import PanelError, extend
    study = Study("w", "t", "q", policies={"w": {"policy": Word}})
    st, _ = extend(study, TINY, "word", "b")
    assert st.grid().policies[0].params["word"] == ("a", "b")
    with pytest.raises(PanelError, match="expected text"):
        extend(study, TINY, "word", 2.0)
    with pytest.raises(PanelError, match="not a number"):
        extend(Study("f", "t", "q", policies={"fitgpp": {}}), TINY, "s", "abc")
    with pytest.raises(PanelError, match="an integer"):
        extend(study, TINY, "n_jobs", "1.5")


def test_the_panels_add_button_takes_text_for_a_string_field(tmp_path):
    from fitgpp.workbook.panels import Panel
    study = Study("w", "t", "q", policies={"w": {"policy": Word}})
    p = Panel(study, TINY, cache=tmp_path, charts=False)
    p.add_dim.value, p.add_value.value = "word", "b"
    p._add()
    assert not p.messages.outputs, p.messages.outputs
    assert p.controls["word"].value == "b"
    assert [v for _, v in p.controls["word"].options] == ["a", "b"]


def test_a_huge_module_name_gives_a_short_message():
    name = "m" * 300_000
    with pytest.raises(ExperimentError) as e:
        Experiment(workload=WL, policies={"x": {"policy": f"{name}:P"}})
    assert len(str(e.value)) < 2100 and str(e.value).endswith("(PYTHONPATH) here?")
    from fitgpp.sim.policies import registry
    for spec in (f"{name}:P", name, f"{name}.:P", f"os:{name}"):
        with pytest.raises(PolicyError) as e:
            registry.policy_class(spec)
        assert len(str(e.value)) < 2100, spec
    assert sys.modules.get(name) is None


@pytest.mark.parametrize("field", ["name", "label"])
def test_a_field_named_like_the_policys_label_is_refused_not_a_type_error(field):
    cls = dataclass(frozen=True)(type("Named", (Fifo,), {"__annotations__": {field: str},
                                                          field: "x"}))
    with pytest.raises(ExperimentError, match=f"parameter '{field}'.*rename the field"):
        Experiment(workload=WL, policies={"p": {"policy": cls, field: "y"}})
    with pytest.raises(ExperimentError, match=f"parameter '{field}'.*rename the field"):
        Experiment(workload=WL, policies=[cls])


def test_a_default_a_result_cannot_record_is_refused_before_anything_runs():
    import enum

    class Color(enum.Enum):
        RED = 1

    @dataclass(frozen=True)
    class Colored(Fifo):
        color: Color = Color.RED
    with pytest.raises(ExperimentError, match=r"field 'color': its default <Color.RED: 1> is "
                                              r"not a value a result can record"):
        Experiment(workload=WL, policies=[Colored])
    import fitgpp
    jobs = fitgpp.read_trace(__import__("pandas").DataFrame(
        [[0, "BE", 0.0, 60.0, 1, 0, 0, 0.0]], columns=list(fitgpp.COLUMNS)))
    with pytest.raises(PolicyError, match=r"parameter color = <Color.RED: 1> is not a value"):
        fitgpp.simulate(jobs, fitgpp.DEFAULT_CLUSTER, Colored())


def test_a_required_field_given_is_not_missing_when_another_is_checked():
    @dataclass(frozen=True)
    class Needs(Fifo):
        need: int
        other: float = 1.0
    exp = Experiment(workload=WL, policies={"n": {"policy": Needs, "need": [1, 2],
                                                  "other": [0.5, 2.0]}})
    assert len(cells_of(exp)) == 4
