"""Workload model files: round trip, shipped models, and every malformed-field error."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fitgpp
from fitgpp.workload import (WorkloadModel, WorkloadModelError, fit_best, list_models,
                             load_model, models_dir, paper_default)
from fitgpp.workload.dists import FitError

from conftest import model_with_gangs

SHIPPED = ("paper-default", "paper-wide-te", "alibaba-gpu-v2023", "alibaba-gpu-v2023-observed",
           "philly-chronus-mix1")


def test_round_trip(tmp_path):
    m = paper_default()
    p = tmp_path / "m.json"
    m.save(p)
    back = WorkloadModel.load(p)
    assert back == m
    assert back.to_json() == m.to_json()
    assert back.file_sha256 == m.sha256()  # save writes the canonical text


def test_shipped_models_are_listed_load_and_carry_provenance():
    assert set(SHIPPED) <= set(list_models())
    for name in SHIPPED:
        m = load_model(name)
        assert m.name == name
        assert m.path == str(models_dir() / f"{name}.json")
        prov = m.provenance
        assert "fitgpp_version" in prov
        if not name.startswith("paper-"):  # the paper-* models are hand-written, not fitted
            src = prov["source"]
            assert len(src["sha256"]) == 64 and src["file"].endswith((".csv", ".csv.gz"))
            assert src["options"] and src["mapping"] and src["report"]["rows_in"] > 0
            assert prov["rows"] == src["report"]["rows_out"]
            assert "citation" in prov
            for c in ("TE", "BE"):
                f = m.classes[c].run_time.fit
                assert f["n"] > 100 and 0 < f["ks"] < 1 and len(f["candidates"]) >= 4
                assert f["aic"] == min(x["aic"] for x in f["candidates"])


def test_shipped_paper_default_is_the_code():
    assert load_model("paper-default") == paper_default()


def test_shipped_paper_wide_te_differs_from_default_only_in_te_demands():
    from fitgpp.workload import paper_wide_te
    wide, base = load_model("paper-wide-te"), paper_default()
    assert wide == paper_wide_te()
    assert wide.classes["BE"] == base.classes["BE"] and wide.te_share == base.te_share
    assert wide.classes["TE"].gpu.values == (4, 8)
    assert wide.classes["TE"].run_time == base.classes["TE"].run_time


def test_paper_default_premise():
    m = paper_default()
    te, be = m.classes["TE"], m.classes["BE"]
    assert 60 < te.run_time.median() < 3600 < be.run_time.median()
    assert max(te.gpu.values) <= 2 and max(be.gpu.values) == 8
    assert 5 < be.grace_period.median() < 300
    assert m.te_share == pytest.approx(0.3)
    # ~0.9 offered load on the default cluster at the model's own rate.
    work = sum(m.classes[c].rate * m.classes[c].mean_gpu_seconds() for c in ("TE", "BE"))
    assert work / fitgpp.DEFAULT_CLUSTER.total_gpus == pytest.approx(0.9, abs=0.05)


def test_unknown_name_lists_the_shipped_models():
    with pytest.raises(WorkloadModelError, match="no model file or shipped model named 'nope'"
                                                 ".*paper-default"):
        load_model("nope")


def _doc():
    return json.loads(paper_default().to_json())


def _set(doc, path, value):
    keys = path.split(".")
    d = doc
    for k in keys[:-1]:
        d = d[int(k)] if isinstance(d, list) else d[k]
    if value is KeyError:
        del d[keys[-1]]
    elif isinstance(d, list):
        d[int(keys[-1])] = value
    else:
        d[keys[-1]] = value


BE = "classes.BE"
CASES = [  # (path to change, new value or KeyError to delete, field named, problem)
    ("format", "other", "format", "expected 'fitgpp-workload'"),
    ("version", 2, "version", "unsupported version"),
    ("name", KeyError, "name", "missing"),
    ("name", "", "name", "empty"),
    ("description", 3, "description", "expected a string"),
    ("classes", [], "classes", "expected an object"),
    ("classes.XX", {}, "classes", "unknown class"),
    ("classes.TE", KeyError, "classes.TE", "missing"),
    (f"{BE}.arrival.rate_per_s", 0, f"{BE}.arrival.rate_per_s", "must be > 0"),
    (f"{BE}.arrival.rate_per_s", "fast", f"{BE}.arrival.rate_per_s", "finite number"),
    (f"{BE}.arrival.daily_profile", [1.0] * 23, f"{BE}.arrival.daily_profile", "24 hourly"),
    (f"{BE}.arrival.daily_profile", [2.0] * 24, f"{BE}.arrival.daily_profile", "mean 1"),
    (f"{BE}.arrival.daily_profile", "flat", f"{BE}.arrival.daily_profile", "expected a list"),
    (f"{BE}.run_time.family", "cauchy", f"{BE}.run_time.family", "unknown family"),
    (f"{BE}.run_time.params.s", -1, f"{BE}.run_time.params.s", "must be > 0"),
    (f"{BE}.run_time.params.s", KeyError, f"{BE}.run_time.params.s", "missing"),
    (f"{BE}.run_time.params.c", 1.0, f"{BE}.run_time.params", "unknown parameter"),
    (f"{BE}.run_time.max", 0, f"{BE}.run_time.max", "must be > 0"),
    (f"{BE}.run_time.fit", 3, f"{BE}.run_time.fit", "expected an object or null"),
    (f"{BE}.run_time", None, f"{BE}.run_time", "expected an object"),
    (f"{BE}.gpu.values", [1, 2, 4], f"{BE}.gpu", "same length"),
    (f"{BE}.gpu.values", [1, 2, 4, 4.5], f"{BE}.gpu.values[3]", "integer"),
    (f"{BE}.gpu.values", [1, 2, 4, 4], f"{BE}.gpu.values", "duplicate"),
    (f"{BE}.gpu.probs", [0.5, 0.5, 0.5, 0.5], f"{BE}.gpu.probs", "sum to 1"),
    (f"{BE}.gpu.probs", [0.4, 0.25, 0.2, -0.15], f"{BE}.gpu.probs[3]", ">= 0"),
    (f"{BE}.cpu_mem.8", KeyError, f"{BE}.cpu_mem.8", "missing"),
    (f"{BE}.cpu_mem.8", [], f"{BE}.cpu_mem.8", "no (cpu_milli"),
    (f"{BE}.cpu_mem.8", [[1, 2]], f"{BE}.cpu_mem.8[0]", "expected [cpu_milli"),
    (f"{BE}.cpu_mem.8", [[-1, 2, 1.0]], f"{BE}.cpu_mem.8[0][0]", "integer >= 0"),
    (f"{BE}.cpu_mem.8", [[1, 2, 0]], f"{BE}.cpu_mem.8[0][2]", "must be > 0"),
    (f"{BE}.cpu_mem.3", [[1, 2, 1.0]], f"{BE}.cpu_mem", "not in gpu.values"),
    (f"{BE}.grace_period", None, f"{BE}.grace_period", "need a grace-period"),
    (f"{BE}.grace_period.family", "foo", f"{BE}.grace_period.family", "unknown family"),
    ("te_share", 0.9, "te_share", "disagrees with the class rates"),
    ("provenance", [], "provenance", "expected an object"),
]


def _refused(tmp_path, doc, path, value):
    """Write ``doc`` with ``value`` at ``path`` and load it: (the file, the error message)."""
    _set(doc, path, value)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(WorkloadModelError) as exc:
        WorkloadModel.load(p)
    return p, str(exc.value)


@pytest.mark.parametrize("path, value, field, problem", CASES, ids=[c[0] + ":" + c[3]
                                                                      for c in CASES])
def test_every_malformed_field_is_named(tmp_path, path, value, field, problem):
    p, msg = _refused(tmp_path, _doc(), path, value)
    assert msg.startswith(str(p)), msg
    assert f"field '{field}'" in msg, msg
    assert problem in msg, msg


def test_gpu_zero_needs_cpu_or_memory(tmp_path):
    doc = _doc()
    doc["classes"]["TE"]["gpu"] = {"values": [0, 1], "probs": [0.5, 0.5]}
    doc["classes"]["TE"]["cpu_mem"]["0"] = [[0, 0, 1.0]]
    del doc["classes"]["TE"]["cpu_mem"]["2"]
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(WorkloadModelError, match=r"classes.TE.cpu_mem.0\[0\]'.*0 GPUs"):
        WorkloadModel.load(p)


@pytest.mark.parametrize("content, problem", [
    (None, "no such model file"), ("{not json", "not valid JSON"), ("[1, 2]", "JSON object"),
])
def test_unreadable_files(tmp_path, content, problem):
    p = tmp_path / "m.json"
    if content is not None:
        p.write_text(content)
    with pytest.raises(WorkloadModelError, match=problem):
        load_model(p)


def test_model_errors_are_fitgpp_errors():
    assert issubclass(WorkloadModelError, fitgpp.FitgppError)


def test_fit_best_picks_the_true_family_by_aic():
    rng = np.random.default_rng(0)
    x = rng.weibull(0.7, 5000) * 1000.0
    d = fit_best(x)
    assert d.family == "weibull_min"
    assert d.params["c"] == pytest.approx(0.7, rel=0.05)
    assert d.params["loc"] == 0.0 and d.max == x.max()
    assert d.fit["ks"] < 0.03


@pytest.mark.parametrize("x, match", [([1.0] * 5, "at least 10"),
                                      ([1.0] * 9 + [0.0], "> 0"),
                                      ([1.0] * 9 + [np.nan], "finite")])
def test_fit_best_rejects_bad_data(x, match):
    with pytest.raises(FitError, match=match):
        fit_best(x)


def test_truncated_sampling_respects_max():
    d = paper_default().classes["BE"].run_time
    x = d.rvs(100_000, np.random.default_rng(1))
    assert x.max() <= d.max and x.min() > 0
    assert x.mean() == pytest.approx(d.mean(), rel=0.03)
    assert np.median(x) == pytest.approx(d.median(), rel=0.03)


# ---- the optional tasks distribution (multi-node jobs) --------------------------------------


def test_round_trip_with_tasks_and_without_is_byte_identical(tmp_path):
    m = model_with_gangs()
    m.save(tmp_path / "t.json")
    back = WorkloadModel.load(tmp_path / "t.json")
    assert back == m and back.to_json() == m.to_json()
    assert back.classes["BE"].tasks[8] == ((1, 6.0), (2, 3.0), (4, 1.0))
    assert back.classes["TE"].tasks is None
    assert "tasks" in back.to_dict()["classes"]["BE"]
    # without tasks: no key written, and every shipped file reads back byte for byte
    assert "tasks" not in paper_default().to_dict()["classes"]["BE"]
    for name in SHIPPED:
        m = load_model(name)
        assert m.sha256() == m.file_sha256, name


def test_tasks_marginal_and_mean_gpus():
    be = model_with_gangs().classes["BE"]
    p8 = dict(zip(be.gpu.values, be.gpu.probs))[8]
    marg = dict(zip(*[be.tasks_marginal().values, be.tasks_marginal().probs]))
    assert marg[4] == pytest.approx(p8 * 0.1) and marg[2] == pytest.approx(p8 * 0.3)
    assert sum(marg.values()) == pytest.approx(1.0)
    base = paper_default().classes["BE"]
    assert be.mean_gpus() == pytest.approx(base.gpu.mean() + p8 * 8 * (1.6 - 1.0))
    assert base.tasks_given_gpu(8).values == (1,)


TASK_CASES = [
    (f"{BE}.tasks", [], f"{BE}.tasks", "expected an object"),
    (f"{BE}.tasks.8", KeyError, f"{BE}.tasks.8", "missing"),
    (f"{BE}.tasks.8", [], f"{BE}.tasks.8", "no (tasks, weight)"),
    (f"{BE}.tasks.8", [[2]], f"{BE}.tasks.8[0]", "expected [tasks, weight]"),
    (f"{BE}.tasks.8", [[0, 1.0]], f"{BE}.tasks.8[0][0]", "at least 1 task"),
    (f"{BE}.tasks.8", [[1.5, 1.0]], f"{BE}.tasks.8[0][0]", "integer"),
    (f"{BE}.tasks.8", [[2, 0]], f"{BE}.tasks.8[0][1]", "must be > 0"),
    (f"{BE}.tasks.8", [[2, 1.0], [2, 3.0]], f"{BE}.tasks.8", "listed twice"),
    (f"{BE}.tasks.3", [[1, 1.0]], f"{BE}.tasks", "not in gpu.values"),
]


@pytest.mark.parametrize("path, value, field, problem", TASK_CASES,
                         ids=[c[0] + ":" + c[3] for c in TASK_CASES])
def test_every_malformed_tasks_field_is_named(tmp_path, path, value, field, problem):
    _, msg = _refused(tmp_path, json.loads(model_with_gangs().to_json()), path, value)
    assert f"field '{field}'" in msg and problem in msg, msg


def test_fit_records_tasks_only_for_traces_with_gangs():
    import pandas as pd
    from fitgpp.workload import fit, synthesize
    tr = synthesize(paper_default(), n_jobs=400, seed=3)
    assert all(c.tasks is None for c in fit(tr).classes.values())
    jobs = tr.jobs.copy()
    be8 = (jobs["cls"] == "BE") & (jobs["gpu"] == 8)
    jobs["tasks"] = 1
    jobs.loc[be8[be8].index[::3], "tasks"] = 4
    m = fit(fitgpp.read_trace(jobs))
    want = jobs[be8]["tasks"].value_counts().sort_index()
    assert m.classes["BE"].tasks[8] == tuple((int(k), float(v)) for k, v in want.items())
    assert m.classes["BE"].tasks[1] == ((1, float(((jobs["cls"] == "BE") & (jobs["gpu"] == 1))
                                                   .sum())),)
    assert set(m.classes["TE"].tasks) == set(m.classes["TE"].gpu.values)
    assert pd.Series([k for k, _ in m.classes["TE"].tasks[1]]).tolist() == [1]


def test_importing_the_studies_leaves_scipy_stats_for_the_first_draw():
    """scipy.stats costs about 0.9 s to import (issue 26: ``import fitgpp.studies`` was 1.8x
    ``import xarray, altair``); the workload imports it at the first draw or fit, and a draw
    still works after the deferred import."""
    import subprocess
    import sys

    code = ("import sys, fitgpp.studies; print('scipy.stats' in sys.modules); "
            "import numpy as np; from fitgpp.workload.dists import Dist; "
            "x = Dist('lognorm', {'s': 1.0, 'loc': 0.0, 'scale': 60.0}).rvs(3, np.random.default_rng(0)); "
            "print(len(x), 'scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "3", "True"]


def test_shape_names_are_scipys():
    """Loading a model names each family's parameters from a table, not from scipy.stats
    (importing it cost every warm panel 0.6 s): the table is scipy's."""
    from scipy import stats

    from fitgpp.workload.dists import FAMILIES, SHAPES, param_names
    assert set(SHAPES) == set(FAMILIES)
    for fam in FAMILIES:
        shapes = getattr(stats, fam).shapes
        assert param_names(fam) == ([s.strip() for s in shapes.split(",")] if shapes else []) \
            + ["loc", "scale"], fam
    with pytest.raises(fitgpp.FitgppError, match="unknown distribution family"):
        param_names("norm")
