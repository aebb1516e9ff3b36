"""Fuzz layer over the command line (issue 13): hypothesis feeds random and malformed traces,
cluster files, model JSONs, adapter inputs, sweep configs, flag values and edited result
attrs through the entry points and checks the rule every input path must keep:

    exit 0 with a correct result, or exit 2 with one line on stderr; never a traceback
    (any other exception fails the test with it), never a hang, never a silent change.

The CLI runs in-process (``fitgpp.cli.main``) for speed; a few cases run as real
subprocesses. ``FITGPP_TEST_SCALE`` multiplies the number of examples.
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

import fitgpp
from conftest import scaled
from fitgpp.cli import main

ROOT = Path(__file__).resolve().parents[2]
MODEL_DOC = json.loads((ROOT / "traces" / "paper-default.json").read_text())
FUZZ = settings(max_examples=scaled(30), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large])

#: cell values that broke something once, or sit on a bound
NASTY_TEXT = ["", " ", "nan", "NaN", "inf", "-inf", "-1", "0", "-0", "1", "7", "1.5", "0.5",
              "1e300", "-1e300", "1e-300", "1e10", "1e10.5", "10000000001", "2e16", "9" * 25,
              "true", "False", "abc", "TE", "BE", "te", " BE ", "0x10", "1_000", '"', "'",
              "\x00", "é", "1,2", "60", "3600"]
NASTY_JSON = [None, True, False, 0, -1, 1, 1.5, 24, -1e6, 1e-308, 1e308, 1e300, 2**53, 2**70,
              -2**70, "", "x", "8", [], [1], [1, 2, 3], {}, {"a": 1}, 0.999999, 1e-9, 1e4]


def cli(argv, capsys, timeout=60) -> int:
    """Run the CLI; assert the exit-0-or-2 rule; return the status. It runs in a daemon
    thread, so that a hang (a blocking read, say) fails the test instead of the suite."""
    capsys.readouterr()
    got = []

    def target():
        try:
            got.append(main([str(a) for a in argv]))
        except BaseException as exc:  # re-raised below, with its traceback
            got.append(exc)
    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    assert got, f"no answer within {timeout} s: {argv}"
    if isinstance(got[0], BaseException):
        raise got[0]
    code = got[0]
    err = capsys.readouterr().err
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err, err
    if currently_in_test_context():
        event(f"exit {code}")
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("fitgpp"), err
        assert len(lines[0]) < 2000, "an error message should be one readable line"
    return code


def records(path: Path) -> int:
    """Data records of a CSV as the trace reader counts them (blank lines skipped)."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = [r for r in csv.reader(f) if r and not (len(r) == 1 and not r[0].strip())]
    return len(rows) - 1


# ---- traces ---------------------------------------------------------------------------------

BASE = [["job_id", "cls", "submit_time", "duration", "gpu", "cpu_milli", "mem_mib",
         "grace_period"],
        ["0", "TE", "0", "120", "1", "1000", "1024", ""],
        ["1", "BE", "30", "600", "2", "2000", "2048", "60"],
        ["2", "BE", "60", "300.5", "4", "4000", "4096", "0"],
        ["3", "TE", "61", "59", "1", "0", "0", ""],
        ["4", "BE", "200", "3600", "8", "8000", "8192", "120"]]


@st.composite
def malformed_traces(draw) -> bytes:
    rows = [list(r) for r in BASE]
    cell = st.one_of(st.sampled_from(NASTY_TEXT), st.text(max_size=6),
                     st.floats().map(repr), st.integers().map(str))
    for _ in range(draw(st.integers(0, 4)) * draw(st.integers(0, 1))):
        r = draw(st.integers(1, len(rows) - 1))
        rows[r][draw(st.integers(0, 7))] = draw(cell)
    if draw(st.booleans()):  # SPEC's optional columns: gangs and restart cost
        small = st.sampled_from(["1", "1", "1", "2", "", "", "30", "0", "3", "1.5", "1e300",
                                 "-1"])
        rows = [r + (["tasks", "restart_overhead"] if i == 0 else [draw(small), draw(small)])
                for i, r in enumerate(rows)]
    header = draw(st.sampled_from(["keep"] * 6 + ["drop", "duplicate", "rename", "extra"]))
    if header == "drop":
        k = draw(st.integers(0, 7))
        rows = [r[:k] + r[k + 1:] for r in rows]
    elif header == "duplicate":
        k = draw(st.integers(0, 7))
        rows = [r + [r[k]] for r in rows]
    elif header == "rename":
        rows[0][draw(st.integers(0, 7))] = draw(st.sampled_from(["GPU", "gpu ", "x", ""]))
    elif header == "extra":
        rows = [r + ["note" if i == 0 else draw(cell)] for i, r in enumerate(rows)]
    if draw(st.booleans()):
        del rows[draw(st.integers(1, len(rows) - 1))]
    text = "\n".join(",".join(r) for r in rows) + draw(st.sampled_from(["\n", "", "\n\n"]))
    data = text.encode("utf-8", "surrogatepass") if draw(st.integers(0, 9)) else \
        text.encode() + draw(st.binary(min_size=1, max_size=20))
    return data


SIM_FLAGS = {
    "--policy": ["fifo", "prio", "fitgpp", "lrtp", "rand", "nope"],
    "--tick": ["60", "1", "0.001", "0", "-5", "nan", "inf", "1e-300", "1e10", "1e11", "x"],
    "--max-preemptions": ["1", "3", "0", "-1", "2147483647", "2147483648", "1e3"],
    "--seed": ["0", "5", "-1", "4294967295", "4294967296", "1" * 21],
    "--s": ["4", "0", "-1", "nan", "inf", "1e300", "x"],
    "--sample-every": ["60", "61", "0", "nan", "1e10", "120"],
    "--node-gpu": ["8", "0", "-1", str(2**40), str(2**40 + 1), str(2**70), "x"],
    "--nodes": ["1", "2", "0", "-1", str(2**20 + 1), "x"],
}


@st.composite
def sim_flags(draw) -> list[str]:
    out = ["--nodes", "2"]
    for flag, values in SIM_FLAGS.items():
        if draw(st.integers(0, 3)) == 0:
            out += [flag, draw(st.sampled_from(values))]
    return out


BASE_CSV = ("\n".join(",".join(r) for r in BASE) + "\n").encode()
GANGS_CSV = ("\n".join(",".join(r + (["tasks", "restart_overhead"] if i == 0 else ["2", "90"]))
                       for i, r in enumerate(BASE)) + "\n").encode()


@FUZZ
@example(data=BASE_CSV, flags=["--nodes", "2"])  # valid inputs: their results are checked
@example(data=GANGS_CSV, flags=["--nodes", "3", "--policy", "lrtp", "--tick", "7.5"])
@example(data=BASE_CSV, flags=["--nodes", "2", "--policy", "rand", "--seed", "4294967295",
                               "--max-preemptions", "2147483647", "--sample-every", "120"])
@given(data=malformed_traces(), flags=sim_flags())
def test_simulate_on_malformed_traces_and_flags(tmp_path, capsys, data, flags):
    trace, result = tmp_path / "t.csv", tmp_path / "r.nc"
    trace.write_bytes(data)
    result.unlink(missing_ok=True)
    if cli(["simulate", trace, *flags, "--out", result], capsys) == 0:
        ds = fitgpp.load(result)  # every row simulated: nothing dropped or repaired
        assert ds.sizes["job"] == records(trace)
        assert np.isfinite(ds["finish"].values).all() and (ds["slowdown"].values >= 1).all()
    else:
        assert not result.exists()


@pytest.mark.parametrize("data, flags", [
    (BASE_CSV, ["--nodes", "2"]),
    (GANGS_CSV, ["--nodes", "3", "--policy", "lrtp", "--tick", "7.5"]),
    (BASE_CSV, ["--nodes", "2", "--policy", "rand", "--seed", "4294967295",
                "--max-preemptions", "2147483647", "--sample-every", "120"]),
], ids=["base", "gangs", "bounds"])
def test_the_fuzz_seeds_are_valid(tmp_path, capsys, data, flags):
    """The explicit examples above must pass as valid input, so their results are checked."""
    (tmp_path / "t.csv").write_bytes(data)
    assert cli(["simulate", tmp_path / "t.csv", *flags, "--out", tmp_path / "r.nc"],
               capsys) == 0
    assert fitgpp.load(tmp_path / "r.nc").sizes["job"] == len(BASE) - 1


# ---- cluster files --------------------------------------------------------------------------

TOML_VALUES = ["1", "2", "8", "0", "-1", "1.5", "true", '"8"', "[1, 2]", "{a = 1}",
               str(2**40), str(2**40 + 1), str(2**63 - 1), "inf", "nan", "1e3", '"x"', "9" * 30,
               "2000000"]


@st.composite
def cluster_tomls(draw) -> str:
    groups = []
    for _ in range(draw(st.integers(0, 3))):
        keys = draw(st.lists(st.sampled_from(["count", "gpu", "cpu_milli", "mem_mib", "name",
                                              "extra"]), max_size=6, unique=True))
        if draw(st.integers(0, 3)):
            keys = ["count", "gpu", "cpu_milli", "mem_mib"] + keys[:1]
        lines = ["[[nodes]]"]
        for k in keys:
            v = draw(st.sampled_from(TOML_VALUES)) if draw(st.integers(0, 7)) == 0 else \
                draw(st.sampled_from(["2", "4", "8", "100000", "1048576"]))
            if k == "count" and v.isdigit() and int(v) > 16 and int(v) <= 2**20:
                v = "3"  # keep valid clusters small
            lines.append(f"{k} = {v}")
        groups.append("\n".join(lines))
    text = "\n\n".join(groups) + "\n"
    extra = draw(st.sampled_from(["", "", "", "", "title = 1\n", "nodes = 3\n", "[nodes\n",
                                  "\x00"]))
    return extra + text if extra.startswith(("title", "nodes")) else text + extra


@FUZZ
@example(text="[[nodes]]\ncount = 2\ngpu = 4\ncpu_milli = 4\nmem_mib = 4\n\n[[nodes]]\n"
              f"count = 1\ngpu = {2**40}\ncpu_milli = 1\nmem_mib = 1\nname = 'big'\n")
@given(text=cluster_tomls())
def test_simulate_on_random_cluster_files(tmp_path, capsys, text):
    trace, cluster, result = tmp_path / "t.csv", tmp_path / "c.toml", tmp_path / "r.nc"
    small = [BASE[0]] + [r[:4] + ["1", "1", "1"] + r[7:] for r in BASE[1:]]  # fits any node
    trace.write_text("\n".join(",".join(r) for r in small) + "\n")
    cluster.write_text(text)
    result.unlink(missing_ok=True)
    if cli(["simulate", trace, "--cluster", cluster, "--out", result], capsys) == 0:
        ds = fitgpp.load(result)
        assert ds.sizes["job"] == len(BASE) - 1
        assert fitgpp.Cluster.from_json(ds.attrs["cluster"]) == fitgpp.Cluster.from_toml(cluster)


# ---- model JSONs ----------------------------------------------------------------------------

def _leaves(doc, path=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(doc, list) and doc and not isinstance(doc[0], (int, float)):
        for i, v in enumerate(doc):
            yield from _leaves(v, (*path, i))
    yield path


LEAVES = [p for p in _leaves(MODEL_DOC) if p and p[0] != "provenance"]


@st.composite
def tampered_models(draw) -> str:
    doc = json.loads(json.dumps(MODEL_DOC))
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(LEAVES))
        parent = doc
        try:
            for k in path[:-1]:
                parent = parent[k]
            action = draw(st.sampled_from(["set", "set", "set", "delete"]))
            if action == "delete":
                del parent[path[-1]]
            elif isinstance(parent[path[-1]], float) and draw(st.booleans()):
                parent[path[-1]] *= draw(st.sampled_from([0.5, 0.9, 2.0, 10.0, 1e3, 1e-3]))
            else:
                parent[path[-1]] = draw(st.one_of(st.sampled_from(NASTY_JSON),
                                                  st.floats(), st.integers()))
        except (KeyError, IndexError, TypeError):
            pass  # an earlier mutation removed or replaced this place
    text = json.dumps(doc)  # NaN and Infinity are written as JSON's extensions
    return draw(st.sampled_from([text, text, text, text[: len(text) // 2], "[" * 3000]))


@FUZZ
@given(text=tampered_models(), load=st.sampled_from([None, "0.5", "1e-300", "1e3"]))
def test_synth_on_tampered_models(tmp_path, capsys, text, load):
    model, out = tmp_path / "m.json", tmp_path / "t.csv"
    model.write_text(text)
    out.unlink(missing_ok=True)
    extra = ["--nodes", "2", "--load", load, "--on-unfit", "restrict"] if load else []
    if cli(["synth", model, "--jobs", "25", "--seed", "1", *extra, "--out", out], capsys) == 0:
        tr = fitgpp.read_trace(out)  # a valid trace of exactly the jobs asked for
        assert len(tr) == 25
    else:
        assert not out.exists()


# ---- adapter inputs (fit) -------------------------------------------------------------------

def _alibaba_base(n=24) -> pd.DataFrame:
    i = np.arange(n)
    return pd.DataFrame({
        "name": [f"p{k}" for k in i], "cpu_milli": 4000, "memory_mib": 8192,
        "num_gpu": 1 + i % 3, "gpu_milli": 1000, "qos": np.where(i % 2 == 0, "LS", "BE"),
        "pod_phase": "Succeeded", "creation_time": i * 50.0,
        "deletion_time": i * 50.0 + 100 + (i * 37) % 900, "scheduled_time": i * 50.0 + 5})


@FUZZ
@given(data=st.data())
def test_fit_on_malformed_alibaba_files(tmp_path, capsys, data):
    df = _alibaba_base().astype(object)
    for _ in range(data.draw(st.integers(0, 4))):
        col = data.draw(st.sampled_from(list(df.columns)))
        df.loc[data.draw(st.integers(0, len(df) - 1)), col] = data.draw(
            st.sampled_from(NASTY_TEXT + ["Burstable", "", "1.5"]))
    if data.draw(st.integers(0, 4)) == 0:
        df = df.drop(columns=[data.draw(st.sampled_from(list(df.columns)))])
    path, model = tmp_path / "a.csv", tmp_path / "m.json"
    df.to_csv(path, index=False)
    model.unlink(missing_ok=True)
    opts = data.draw(st.sampled_from([[], ["--seed", "-1"], ["--max-gpu", "0"],
                                      ["--other-qos", "TE"], ["--split", "60"],
                                      ["--sharing", "drop"]]))
    if cli(["fit", path, "--format", "alibaba-v2023", *opts, "--out", model], capsys) == 0:
        from fitgpp.workload import WorkloadModel
        WorkloadModel.load(model)  # what fit writes, loading accepts


# ---- sweep configs --------------------------------------------------------------------------

def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) \
            else repr(v)
    if isinstance(v, (int, str)):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    return json.dumps(str(v))


def to_toml(doc: dict) -> str:
    """A small TOML writer: top-level keys, then one table per dict (nested as a.b)."""
    out, tables = [], []

    def walk(prefix, d):
        scalars = [(k, v) for k, v in d.items() if not isinstance(v, dict) or not v or
                   not all(isinstance(x, dict) for x in v.values()) and prefix]
        subs = [(k, v) for k, v in d.items() if (k, v) not in scalars]
        if prefix:
            tables.append(f"[{prefix}]")
        (tables if prefix else out).extend(f"{json.dumps(k)} = {_toml_value(v)}"
                                           for k, v in scalars)
        for k, v in subs:
            walk(f"{prefix}.{json.dumps(k)}" if prefix else json.dumps(k), v)
    walk("", doc)
    return "\n".join(out + tables) + "\n"


SWEEP_NASTY = {
    "tick": [0, -1, 1e-300, 0.5, 1e11, "60", [60], True],
    "seeds": [[], [-1], [0, 0], [2**32], "x", [0, 1], 3, [1.5]],
    "n_jobs": [0, -1, 1.5, "x", 10**8, 20, [10, 20], []],
    "load": [0, -1, 1e-300, 1e3, 1e4, [0.5, 0.5], "x", 0.7],
    "te_fraction": [-0.1, 1.1, [0.2, 0.4], None, "x", 0.5],
    "grace_scale": [-1, 1e300, 1e6, 2, []],
    "s": [[], [-1], [1, 1], ["x"], 1e300, [2.0, 8.0], float("nan")],
    "max_preemptions": [[], [0], [2**31], [1.5], 2, [1, 2]],
    "seed": [-1, 2**32, "x", 7],
    "nodes": [0, -1, 2**21, 2, "x", 1.5],
    "gpu": [0, -1, 2**41, 4],
    "model": ["paper-default", "nope", "", 5, "/dev/zero", "../x.json"],
    "on_unfit": ["error", "restrict", "x"],
    "name": [5, "x"],
    "extra": [1],
}


@st.composite
def sweep_configs(draw, trace: str) -> str:
    workload = ({"trace": trace} if draw(st.booleans()) else
                {"model": "paper-default", "n_jobs": 20, "load": 0.7})
    doc = {"tick": 60, "seeds": [0], "workload": workload, "cluster": {"nodes": 2},
           "policies": {"fifo": {}, "fitgpp": {"s": [2.0, 4.0]}, "rand": {}}}
    places = [doc, doc["workload"], doc["cluster"], doc["policies"]["fitgpp"],
              doc["policies"]["rand"], doc["policies"]["fifo"]]
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(sorted(SWEEP_NASTY)))
        value = draw(st.sampled_from(SWEEP_NASTY[key]))
        if value is None:
            continue
        draw(st.sampled_from(places))[key] = value
    if draw(st.integers(0, 5)) == 0:
        doc.pop(draw(st.sampled_from(["workload", "policies", "cluster"])))
    return to_toml(doc)


@FUZZ
@given(data=st.data())
def test_sweep_on_random_configs(tmp_path, capsys, data):
    trace, cfg, out = tmp_path / "t.csv", tmp_path / "exp.toml", tmp_path / "s.nc"
    trace.write_text("\n".join(",".join(r) for r in BASE) + "\n")
    cfg.write_text(data.draw(sweep_configs(str(trace))))
    out.unlink(missing_ok=True)
    if cli(["sweep", cfg, "--workers", "0", "--no-cache", "--quiet", "--out", out],
           capsys) == 0:
        ds = fitgpp.load(out)
        assert "slowdown_median" in ds and ds.sizes["policy"] >= 1


# ---- edited result attrs --------------------------------------------------------------------

@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from fitgpp.workload import synthesize
    d = tmp_path_factory.mktemp("rerun")
    tr = synthesize("paper-default", n_jobs=30, seed=2, load=0.8, cluster=fitgpp.DEFAULT_CLUSTER)
    fitgpp.write_trace(tr, d / "t.csv")
    return [fitgpp.simulate(tr, fitgpp.DEFAULT_CLUSTER, "rand", seed=1),
            fitgpp.simulate(d / "t.csv", fitgpp.DEFAULT_CLUSTER, "fitgpp", s=2.0)]


@pytest.mark.filterwarnings("ignore::fitgpp.workload.rerun.RerunWarning")  # an edited policy's code
@FUZZ
@given(data=st.data())
def test_rerun_on_edited_attrs(results, data):
    ds = data.draw(st.sampled_from(results)).copy()
    attrs = dict(ds.attrs)
    for _ in range(data.draw(st.integers(1, 3))):
        key = data.draw(st.sampled_from(["workload", "cluster", "policy", "policy_params",
                                         "tick", "sample_every"]))
        value = attrs.get(key)
        if isinstance(value, str) and value.startswith(("{", "[")) and data.draw(st.booleans()):
            doc = json.loads(value)
            if isinstance(doc, dict) and doc:
                doc[data.draw(st.sampled_from(sorted(doc)))] = data.draw(
                    st.sampled_from(NASTY_JSON))
            elif isinstance(doc, list) and doc:
                doc[0][data.draw(st.sampled_from(sorted(doc[0])))] = data.draw(
                    st.sampled_from(NASTY_JSON))
            attrs[key] = json.dumps(doc)
        elif data.draw(st.integers(0, 5)) == 0:
            attrs.pop(key, None)
        elif key in ("tick", "sample_every") and data.draw(st.booleans()):
            attrs[key] = data.draw(st.sampled_from([30.0, 60.0, 120.0, 600.0]))
        else:
            attrs[key] = data.draw(st.one_of(st.sampled_from(NASTY_JSON),
                                             st.text(max_size=8), st.floats()))
    ds.attrs = attrs
    try:
        again = fitgpp.rerun(ds)
    except fitgpp.FitgppError:
        event("refused")
        return
    event("rerun")
    assert again.sizes["job"] == ds.sizes["job"]


# ---- any command, any flag ------------------------------------------------------------------

PATHS = ["{d}/t.csv", "{d}/m.json", "{d}/c.toml", "{d}/exp.toml", "{d}", "/dev/zero", "/proc/x",
         "/dev/null", "{d}/missing", "{d}/fifo", ""]
FLAG_VALUES = {
    "simulate": {"--nodes": ["2", "0", "x"], "--cluster": PATHS, "--tick": ["60", "0", "nan"],
                 "--node-cpu-milli": ["1", "-1", str(2**41)], "--node-mem-mib": ["1", "x"],
                 "--policy": ["rand", "x", "../x:Y", "os:path", "json:JSONDecoder", ":"],
                 "--param": ["seed=" + "9" * 20, "max_preemptions=0", "s=nan", "s=1e300",
                             "x=1", "=", "seed", "max_preemptions=" + "[" * 5000],
                 "--sample-every": ["600", "-1"], "--out": PATHS},
    "synth": {"--jobs": ["5", "0", "-1", str(10**7 + 1), "x"], "--seed": ["0", "-1", "x"],
              "--load": ["0.5", "0", "-1", "nan", "1e300"], "--nodes": ["2", "0"],
              "--te-fraction": ["0.5", "2", "nan", "-0"], "--grace-scale": ["2", "-1", "inf"],
              "--on-unfit": ["restrict", "x"], "--cluster": PATHS, "--out": PATHS,
              "--list": [None]},
    "fit": {"--format": ["spec", "alibaba-v2023", "philly-chronus", "x"],
            "--runtimes": ["observed", "philly"], "--philly-runtime": PATHS,
            "--split": ["3600", "0", "-1", "nan"], "--max-gpu": ["8", "0", "-1"],
            "--seed": ["1", "-1"], "--grace": ["fit", "default"], "--other-qos": ["TE"],
            "--sharing": ["drop"], "--out": PATHS},
    "sweep": {"--workers": ["0", "-1", "x", "100000"], "--cache": PATHS,
              "--scheduler": ["x", "tcp://", "127.0.0.1:0", ":::", "tcp://[::1]:99999"],
              "--no-cache": [None], "--out": PATHS},
    "reproduce": {"--only": ["rq9", "x"], "--out": ["/proc/x", "{d}/t.csv", "/dev/null"]},
}
FIRST = {"simulate": PATHS, "synth": ["paper-default", "nope", *PATHS], "fit": PATHS,
         "sweep": PATHS, "reproduce": []}


@FUZZ
@given(data=st.data())
def test_every_command_on_random_flags(tmp_path_factory, capsys, data):
    d = tmp_path_factory.getbasetemp() / "anyflag"
    if not d.exists():
        d.mkdir()
        (d / "t.csv").write_text("\n".join(",".join(r) for r in BASE) + "\n")
        (d / "m.json").write_text(json.dumps(MODEL_DOC))
        (d / "c.toml").write_text("[[nodes]]\ncount = 2\ngpu = 8\ncpu_milli = 9000\n"
                                  "mem_mib = 9000\n")
        (d / "exp.toml").write_text(f'[workload]\ntrace = "{d}/t.csv"\n[cluster]\nnodes = 2\n'
                                    "[policies.fifo]\n")
        os.mkfifo(d / "fifo")
    cmd = data.draw(st.sampled_from(sorted(FLAG_VALUES)))
    argv = [cmd]
    if FIRST[cmd]:
        argv.append(data.draw(st.sampled_from(FIRST[cmd])))
    for flag in data.draw(st.lists(st.sampled_from(sorted(FLAG_VALUES[cmd])), max_size=5,
                                   unique=True)):
        v = data.draw(st.sampled_from(FLAG_VALUES[cmd][flag]))
        argv += [flag] if v is None else [flag, v]
    if cmd == "reproduce" and "--out" not in argv:
        argv += ["--out", "/proc/x"]  # never run the whole reproduction here
    if cmd == "sweep" and "--workers" not in argv and "--scheduler" not in argv:
        argv += ["--workers", "0"]
    cli([a.replace("{d}", str(d)) for a in argv], capsys)


# ---- a few real processes -------------------------------------------------------------------

@pytest.mark.parametrize("argv, files", [
    (["simulate", "{d}/t.csv", "--nodes", "1", "--out", "{d}/o.nc"],
     {"t.csv": "job_id,cls,submit_time,duration,gpu,cpu_milli,mem_mib,grace_period\n"
               "0,TE,0,1e300,1,1,1,\n"}),
    (["synth", "{d}/m.json", "--jobs", "5", "--out", "{d}/t.csv"],
     {"m.json": json.dumps({**MODEL_DOC, "classes": {**MODEL_DOC["classes"], "TE": {
         **MODEL_DOC["classes"]["TE"], "arrival": {"rate_per_s": 1e308,
                                                   "daily_profile": None}}}})}),
    (["sweep", "{d}/c.toml", "--out", "{d}/o.nc", "--workers", "0", "--no-cache"],
     {"c.toml": "[workload]\nmodel = 'paper-default'\nn_jobs = 10\n[policies.fitgpp]\ns = []\n"}),
], ids=["simulate", "synth", "sweep"])
def test_as_a_real_process(tmp_path, argv, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    p = subprocess.run([sys.executable, "-m", "fitgpp", *(a.format(d=tmp_path) for a in argv)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr
