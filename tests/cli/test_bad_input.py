"""One test per cause of issue 13 ("Bad input and faults"): each input once ended in a
traceback, a hang or a silently wrong result; now it ends in exit 0 with a correct result
or exit 2 with one line naming what is wrong, where, and the bound it breaks."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import fitgpp
from fitgpp.cli import main
from fitgpp.sim.validate import MAX_PREEMPTIONS, MAX_SEED

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "traces" / "paper-default.json"


def refused(argv, capsys, *needles):
    """Run the CLI in-process; assert exit 2 with one stderr line holding every needle."""
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, err
    return err


def spec_rows(n=30, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "job_id": np.arange(n), "cls": np.where(np.arange(n) % 2 == 0, "TE", "BE"),
        "submit_time": np.sort(rng.uniform(0, 3600, n)).round(3),
        "duration": rng.uniform(60, 7200, n).round(3), "gpu": rng.integers(1, 5, n),
        "cpu_milli": 4000, "mem_mib": 8192,
        "grace_period": np.where(np.arange(n) % 2 == 0, np.nan, 60.0)})


@pytest.fixture
def trace(tmp_path) -> Path:
    p = tmp_path / "trace.csv"
    spec_rows(8).to_csv(p, index=False)
    return p


def alibaba_csv(path, n=30, **edit):
    rng = np.random.default_rng(1)
    df = pd.DataFrame({
        "name": [f"pod-{i}" for i in range(n)], "cpu_milli": 8000, "memory_mib": 16384,
        "num_gpu": rng.integers(1, 3, n), "gpu_milli": 1000,
        "qos": np.where(np.arange(n) % 2 == 0, "LS", "BE"), "pod_phase": "Succeeded",
        "creation_time": np.arange(n) * 100.0, "deletion_time": np.arange(n) * 100.0 + 900 +
        rng.uniform(0, 5000, n).round(), "scheduled_time": np.arange(n) * 100.0 + 10})
    for col, (row, value) in edit.items():
        df[col] = df[col].astype(object)
        df.loc[row, col] = value
    df.to_csv(path, index=False)
    return path


def chronus_csv(path, n=30, **edit):
    df = pd.DataFrame({"job_id": np.arange(n), "num_gpu": 1 + np.arange(n) % 4,
                       "submit_time": np.arange(n) * 3, "duration": 10 + np.arange(n) * 7,
                       "best_effort": np.arange(n) % 2, "job_type": np.where(
                           np.arange(n) % 2 == 1, "best", "strict")})
    for col, (row, value) in edit.items():
        df[col] = df[col].astype(object)
        df.loc[row, col] = value
    df.to_csv(path, index=False)
    return path


def out(tmp_path, name="o.nc"):
    return ["--out", tmp_path / name]


# ---- times and integers without bounds ------------------------------------------------------

@pytest.mark.parametrize("column", ["submit_time", "duration", "grace_period"])
def test_trace_times_beyond_the_horizon(tmp_path, capsys, column):
    df = spec_rows(8)
    df.loc[3, column] = 1e300  # row 3 is BE: its grace period counts
    df.to_csv(tmp_path / "t.csv", index=False)
    refused(["simulate", tmp_path / "t.csv", "--nodes", "2", *out(tmp_path)], capsys,
            "line 5", f"column '{column}'", "horizon of 1e+10 s")
    assert not (tmp_path / "o.nc").exists()


def test_tick_below_a_millisecond(trace, tmp_path, capsys):
    refused(["simulate", trace, "--nodes", "2", "--tick", "1e-300", *out(tmp_path)], capsys,
            "--tick", "[0.001, 1e+10]")


def test_max_preemptions_and_seeds_fit_a_netcdf_file(trace, tmp_path, capsys):
    refused(["simulate", trace, "--nodes", "2", "--max-preemptions", "1" + "0" * 20,
             *out(tmp_path)], capsys, "--max-preemptions", str(MAX_PREEMPTIONS))
    refused(["simulate", trace, "--nodes", "2", "--policy", "rand", "--seed", "1" * 21,
             *out(tmp_path)], capsys, "--seed", str(MAX_SEED))
    # the largest values allowed are saved and read back
    assert main(["simulate", str(trace), "--nodes", "2", "--policy", "rand", "--seed",
                 str(MAX_SEED), "--max-preemptions", str(MAX_PREEMPTIONS),
                 "--out", str(tmp_path / "o.nc")]) == 0
    ds = fitgpp.load(tmp_path / "o.nc")
    assert ds.attrs["seed"] == MAX_SEED and ds.attrs["max_preemptions"] == MAX_PREEMPTIONS


def test_sample_every_that_would_exhaust_memory(tmp_path, capsys):
    df = spec_rows(4)
    df.loc[2, "duration"] = 1e10
    df.to_csv(tmp_path / "t.csv", index=False)
    refused(["simulate", tmp_path / "t.csv", "--nodes", "2", "--tick", "1",
             "--sample-every", "1", *out(tmp_path)], capsys, "more than 10000000 samples")


def test_policy_params_and_classes_from_the_command_line(trace, tmp_path, capsys):
    refused(["simulate", trace, "--nodes", "2", "--policy", "rand", "--param",
             "max_preemptions=" + "1" * 21, *out(tmp_path)], capsys, "max_preemptions",
            str(MAX_PREEMPTIONS))
    refused(["simulate", trace, "--nodes", "2", "--policy", "rand", "--param",
             "seed=" + "1" * 21, *out(tmp_path)], capsys, "seed", str(MAX_SEED))
    refused(["simulate", trace, "--nodes", "2", "--policy", "../../x:Y", *out(tmp_path)],
            capsys, "--policy ../../x:Y", "import")


def test_node_resources_beyond_2_40(trace, tmp_path, capsys):
    refused(["simulate", trace, "--nodes", "2", "--node-gpu", 2**70, *out(tmp_path)], capsys,
            "--node-gpu", "2**40")
    (tmp_path / "c.toml").write_text(f"[[nodes]]\ncount = 2\ngpu = {2**70}\n"
                                     "cpu_milli = 8\nmem_mib = 8\n")
    refused(["simulate", trace, "--cluster", tmp_path / "c.toml", *out(tmp_path)], capsys,
            "c.toml", "field 'gpu'", "2**40")
    (tmp_path / "c.toml").write_text("[[nodes]]\ncount = 100000000\ngpu = 8\n"
                                     "cpu_milli = 8\nmem_mib = 8\n")
    refused(["simulate", trace, "--cluster", tmp_path / "c.toml", *out(tmp_path)], capsys,
            "field 'count'", "2**20")


def test_grace_scale_bounded(tmp_path, capsys):
    refused(["synth", "paper-default", "--jobs", "20", "--grace-scale", "1e300",
             *out(tmp_path, "t.csv")], capsys, "--grace-scale", "[0, 1e+06]")


def test_synthesized_times_beyond_the_horizon_name_the_model(tmp_path, capsys):
    doc = json.loads(MODEL.read_text())
    for c in ("TE", "BE"):
        doc["classes"][c]["arrival"]["rate_per_s"] = 1e-9  # 1000 jobs span ~1e12 s
    doc.pop("te_share")
    (tmp_path / "slow.json").write_text(json.dumps(doc))
    refused(["synth", tmp_path / "slow.json", "--jobs", "1000", *out(tmp_path, "t.csv")],
            capsys, "model 'paper-default'", "submit_time", "horizon")


# ---- unhandled I/O and parsing --------------------------------------------------------------

def test_out_in_an_unwritable_place(trace, capsys):
    refused(["simulate", trace, "--nodes", "2", "--out", "/proc/x.nc"], capsys,
            "/proc/x.nc", "cannot write")
    refused(["synth", "paper-default", "--jobs", "5", "--out", "/proc/t.csv"], capsys,
            "/proc/t.csv", "cannot write")
    refused(["reproduce", "--quick", "--only", "rq1", "--out", "/proc/report"], capsys,
            "/proc/report", "cannot create the directory")
    refused(["simulate", trace, "--nodes", "2", "--out", "/dev/null"], capsys,
            "/dev/null", "not a regular file")  # never replace a device node


def test_sweep_config_is_a_directory_or_not_utf8(tmp_path, capsys):
    refused(["sweep", tmp_path, *out(tmp_path)], capsys, "is a directory")
    (tmp_path / "bad.toml").write_bytes(b'name = "\xff"\n')
    refused(["sweep", tmp_path / "bad.toml", *out(tmp_path)], capsys, "not a UTF-8", "byte 8")


def test_config_size_limit(tmp_path, capsys):
    (tmp_path / "big.toml").write_bytes(b"#" * (16 * 2**20 + 1))
    refused(["sweep", tmp_path / "big.toml", *out(tmp_path)], capsys, "16777216 bytes")


def test_cache_that_is_a_file(trace, tmp_path, capsys):
    cfg = tmp_path / "exp.toml"
    cfg.write_text(f'[workload]\ntrace = "{trace}"\n[cluster]\nnodes = 2\n[policies.fifo]\n')
    refused(["sweep", cfg, "--cache", trace, "--workers", "0", "--quiet", *out(tmp_path)],
            capsys, "is not a directory")


def test_scheduler_that_is_not_an_address(trace, tmp_path, capsys):
    cfg = tmp_path / "exp.toml"
    cfg.write_text(f'[workload]\ntrace = "{trace}"\n[cluster]\nnodes = 2\n[policies.fifo]\n')
    refused(["sweep", cfg, "--scheduler", "not a url", "--no-cache", *out(tmp_path)], capsys,
            "not a Dask scheduler address")


@pytest.mark.parametrize("content", [b"", os.urandom(3000)], ids=["empty", "binary"])
def test_philly_runtime_file_empty_or_binary(tmp_path, capsys, content):
    (tmp_path / "rt.csv").write_bytes(content)
    chronus_csv(tmp_path / "mix.csv")
    refused(["fit", tmp_path / "mix.csv", "--format", "philly-chronus", "--runtimes",
             "philly", "--philly-runtime", tmp_path / "rt.csv", *out(tmp_path, "m.json")],
            capsys, "rt.csv", "run times")


def test_model_json_nested_too_deeply(tmp_path, capsys):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    refused(["synth", tmp_path / "deep.json", "--jobs", "5", *out(tmp_path, "t.csv")], capsys,
            "deep.json", "nested too deeply")


def _mkfifo(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize("argv", [
    ["simulate", "{trace}", "--cluster", "{special}", "--out", "{tmp}/o.nc"],
    ["synth", "{special}", "--jobs", "5", "--out", "{tmp}/t.csv"],
    ["sweep", "{special}", "--out", "{tmp}/o.nc"],
    ["simulate", "{special}", "--nodes", "1", "--out", "{tmp}/o.nc"],
], ids=["cluster", "model", "config", "trace"])
@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_fifo_or_device_as_a_file_is_refused_without_reading(tmp_path, trace, argv, special,
                                                            capsys):
    path = _mkfifo(tmp_path) if special == "fifo" else Path(special)
    argv = [a.format(trace=trace, special=path, tmp=tmp_path) for a in argv]
    # in a daemon thread, so that a regression (a read that blocks) fails instead of hanging
    got = []
    t = threading.Thread(target=lambda: got.append(main(argv)), daemon=True)
    t.start()
    t.join(timeout=30)
    assert got == [2], "no answer within 30 s: the FIFO or device was read"
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a" in err and "Traceback" not in err, err


def test_compressed_trace_that_expands_without_bound(tmp_path, capsys, monkeypatch):
    import gzip

    from fitgpp.workload import adapters
    monkeypatch.setattr(adapters, "MAX_DECOMPRESSED", 10_000)  # 1 GiB by default
    alibaba_csv(tmp_path / "a.csv", n=400)
    (tmp_path / "a.csv.gz").write_bytes(gzip.compress((tmp_path / "a.csv").read_bytes()))
    refused(["fit", tmp_path / "a.csv.gz", "--format", "alibaba-v2023", *out(tmp_path, "m.json")],
            capsys, "a.csv.gz: expands to more than 10000 bytes")
    (tmp_path / "b.csv.gz").write_bytes(b"\x1f\x8b not gzip")
    refused(["fit", tmp_path / "b.csv.gz", "--format", "alibaba-v2023", *out(tmp_path, "m.json")],
            capsys, "b.csv.gz: not a readable gzip file")


# ---- fit -------------------------------------------------------------------------------------

def test_fit_constant_durations(tmp_path, capsys):
    df = spec_rows(30)
    df["duration"] = 600.0
    df.to_csv(tmp_path / "t.csv", index=False)
    refused(["fit", tmp_path / "t.csv", *out(tmp_path, "m.json")], capsys,
            "run times", "all 15 values are 600")
    assert not (tmp_path / "m.json").exists()


def test_fit_negative_seed(tmp_path, capsys):
    alibaba_csv(tmp_path / "a.csv")
    refused(["fit", tmp_path / "a.csv", "--format", "alibaba-v2023", "--seed", "-1",
             *out(tmp_path, "m.json")], capsys, "--seed", "expected an integer >= 0")


def test_fit_header_only_alibaba_file(tmp_path, capsys):
    alibaba_csv(tmp_path / "a.csv")
    head = (tmp_path / "a.csv").read_text().splitlines()[0]
    (tmp_path / "h.csv").write_text(head + "\n")
    refused(["fit", tmp_path / "h.csv", "--format", "alibaba-v2023", *out(tmp_path, "m.json")],
            capsys, "h.csv", "only a header")


# ---- silent results --------------------------------------------------------------------------

def test_duplicated_column_is_refused(tmp_path, capsys):
    text = spec_rows(4).to_csv(index=False).splitlines()
    rows = [text[0] + ",gpu"] + [r + ",8" for r in text[1:]]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    refused(["simulate", tmp_path / "t.csv", "--nodes", "2", *out(tmp_path)], capsys,
            "line 1", "column 'gpu'", "given twice")
    df = spec_rows(4)
    with pytest.raises(fitgpp.TraceError, match="column 'gpu': column given twice"):
        fitgpp.read_trace(pd.concat([df, df[["gpu"]]], axis=1))
    alibaba_csv(tmp_path / "a.csv")
    lines = (tmp_path / "a.csv").read_text().splitlines()
    (tmp_path / "a2.csv").write_text("\n".join([lines[0] + ",num_gpu"] +
                                               [r + ",4" for r in lines[1:]]) + "\n")
    refused(["fit", tmp_path / "a2.csv", "--format", "alibaba-v2023", *out(tmp_path, "m.json")],
            capsys, "column 'num_gpu'", "given twice")


@pytest.mark.parametrize("fmt", ["alibaba-v2023", "philly-chronus"])
def test_fractional_num_gpu_is_refused_naming_the_line(tmp_path, capsys, fmt):
    make = alibaba_csv if fmt == "alibaba-v2023" else chronus_csv
    make(tmp_path / "x.csv", num_gpu=(6, 1.5))
    refused(["fit", tmp_path / "x.csv", "--format", fmt, *out(tmp_path, "m.json")], capsys,
            "x.csv: line 8, column 'num_gpu'", "not a whole number (1.5)")


def test_split_without_philly_runtimes(tmp_path, capsys):
    alibaba_csv(tmp_path / "a.csv")
    refused(["fit", tmp_path / "a.csv", "--format", "alibaba-v2023", "--split", "60",
             *out(tmp_path, "m.json")], capsys, "--split applies to --runtimes philly only")


def test_empty_s_list_in_a_sweep(trace, tmp_path, capsys):
    cfg = tmp_path / "exp.toml"
    cfg.write_text(f'[workload]\ntrace = "{trace}"\n[cluster]\nnodes = 2\n'
                   "[policies.fitgpp]\ns = []\n")
    refused(["sweep", cfg, "--workers", "0", "--no-cache", "--quiet", *out(tmp_path)], capsys,
            "[policies.fitgpp] key 's' is an empty list")


@pytest.mark.parametrize("path, value, field", [
    (("classes", "TE", "arrival", "rate_per_s"), 1e308, "classes.TE.arrival.rate_per_s"),
    (("classes", "BE", "run_time", "params", "loc"), -1e6, "classes.BE.run_time.params.loc"),
    (("classes", "BE", "run_time", "params", "s"), 1e300, "classes.BE.run_time.params.s"),
    (("classes", "BE", "grace_period", "max"), 1e30, "classes.BE.grace_period.max"),
], ids=["rate", "loc", "shape", "max"])
def test_tampered_model_is_refused(tmp_path, capsys, path, value, field):
    doc = json.loads(MODEL.read_text())
    d = doc
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value
    doc.pop("te_share")
    (tmp_path / "m.json").write_text(json.dumps(doc))
    refused(["synth", tmp_path / "m.json", "--jobs", "20", *out(tmp_path, "t.csv")], capsys,
            f"field '{field}'", "sane bound")


def test_adapter_errors_name_the_file_line(tmp_path, capsys):
    alibaba_csv(tmp_path / "a.csv", cpu_milli=(4, 8000.5))  # a kept row: the trace refuses it
    refused(["fit", tmp_path / "a.csv", "--format", "alibaba-v2023", *out(tmp_path, "m.json")],
            capsys, "a.csv: line 6", "column 'cpu_milli'", "not an integer")


# ---- cache -----------------------------------------------------------------------------------

@pytest.fixture
def cached_sweep(trace, tmp_path):
    from fitgpp.sweep import Experiment, run_sweep
    exp = Experiment(workload={"trace": str(trace)}, policies={"fifo": {}, "prio": {}},
                     cluster={"nodes": 2})
    kw = dict(workers=0, progress=False, cache=tmp_path / "cache")
    first = run_sweep(exp, **kw)
    files = sorted((tmp_path / "cache").rglob("*.cell"))
    assert len(files) == 2
    return exp, kw, first, files


@pytest.mark.parametrize("edit", ["short", "nan", "strings", "bad_util"])
def test_cache_entry_with_a_valid_checksum_but_wrong_content(cached_sweep, edit):
    from fitgpp.sweep import run_sweep
    from fitgpp.sweep.cache import CacheWarning, _decode, _encode
    exp, kw, first, files = cached_sweep
    key = files[0].stem
    res = dict(_decode(files[0].read_bytes(), key))
    if edit == "short":
        res = {**res, **{k: res[k][:3] for k in ("te", "slowdown", "wait", "preemptions")}}
    elif edit == "nan":
        res = {**res, "slowdown": np.full(len(res["slowdown"]), np.nan)}
    elif edit == "strings":
        res["wait"] = np.array(["x"] * len(res["wait"]))
    else:
        res["gpu_util"] = 7.0
    files[0].write_bytes(_encode(res, key))  # a fresh, matching checksum
    with pytest.warns(CacheWarning, match="corrupt"):
        again = run_sweep(exp, **kw)
    xr.testing.assert_identical(first, again)


def test_cache_entry_replaced_by_a_directory_or_a_fifo(cached_sweep):
    from fitgpp.sweep import run_sweep
    from fitgpp.sweep.cache import CacheWarning
    exp, kw, first, files = cached_sweep
    files[0].unlink()
    files[0].mkdir()
    files[1].unlink()
    os.mkfifo(files[1])  # reading it would block the sweep forever
    with pytest.warns(CacheWarning) as rec:
        again = run_sweep(exp, **kw)
    msgs = [str(w.message) for w in rec]
    assert any("is a directory" in m for m in msgs) and any("FIFO" in m for m in msgs), msgs
    assert any("cannot be written" in m for m in msgs), msgs  # the directory stays
    xr.testing.assert_identical(first, again)
    assert files[1].is_file()  # the FIFO was replaced by a good entry


# ---- rerun(ds) on edited attrs ---------------------------------------------------------------

@pytest.fixture(scope="module")
def synthetic_result():
    from fitgpp.workload import synthesize
    tr = synthesize("paper-default", n_jobs=60, seed=1, load=0.8, cluster=fitgpp.DEFAULT_CLUSTER)
    return fitgpp.simulate(tr, fitgpp.DEFAULT_CLUSTER, "fitgpp")


def _workload(ds, **edit):
    w = json.loads(ds.attrs["workload"])
    w.update(edit)
    return json.dumps(w)


@pytest.mark.parametrize("edit", [
    lambda ds: {"workload": "{not json"},
    lambda ds: {"workload": "[" * 50_000},
    lambda ds: {"workload": 5},
    lambda ds: {"workload": "[1, 2]"},
    lambda ds: {"workload": _workload(ds, n_jobs=10**12)},
    lambda ds: {"workload": _workload(ds, n_jobs="many")},
    lambda ds: {"workload": _workload(ds, seed=-3)},
    lambda ds: {"workload": _workload(ds, seed=10**30)},
    lambda ds: {"workload": _workload(ds, model=None)},
    lambda ds: {"workload": _workload(ds, grace_scale=1e300)},
    lambda ds: {"workload": _workload(ds, cluster=7)},
    lambda ds: {"workload": json.dumps({"kind": "csv", "path": 0})},
    lambda ds: {"workload": json.dumps({"kind": "csv", "path": "/dev/zero"})},
    lambda ds: {"workload": json.dumps({"kind": "csv", "path": None})},
    lambda ds: {"cluster": json.dumps([{"count": 10**9, "gpu": 8, "cpu_milli": 1,
                                        "mem_mib": 1}])},
    lambda ds: {"cluster": "{"},
    lambda ds: {"policy": "nope"},
    lambda ds: {"policy": "../../x:Y"},
    lambda ds: {"policy": "json:loads"},
    lambda ds: {"policy_params": json.dumps({"max_preemptions": 10**20})},
    lambda ds: {"policy_params": json.dumps({"s": "x"})},
    lambda ds: {"policy_params": "[]"},
    lambda ds: {"tick": "60"},
    lambda ds: {"tick": 1e-300},
    lambda ds: {"sample_every": -1.0},
])
def test_rerun_on_edited_attrs_raises_a_fitgpp_error(synthetic_result, edit):
    ds = synthetic_result.copy()
    ds.attrs = {**ds.attrs, **edit(ds)}
    with pytest.raises(fitgpp.FitgppError):
        fitgpp.rerun(ds)


def test_rerun_path_that_is_a_fifo_does_not_hang(tmp_path):
    code = (f"import fitgpp, json, xarray as xr\n"
            f"ds = xr.Dataset(attrs={{'workload': json.dumps({{'kind': 'csv', 'path': "
            f"{str(_mkfifo(tmp_path))!r}}}), 'cluster': fitgpp.DEFAULT_CLUSTER.to_json(), "
            f"'policy': 'fifo', 'policy_params': '{{}}', 'tick': 60.0, 'sample_every': 60.0}})\n"
            "try:\n    fitgpp.rerun(ds)\nexcept fitgpp.FitgppError as e:\n    print('refused', e)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "refused" in p.stdout and "FIFO" in p.stdout, p.stdout + p.stderr


# ---- Dask ------------------------------------------------------------------------------------

def test_local_cluster_listens_on_loopback_only(trace):
    psutil = pytest.importorskip("psutil")
    from fitgpp.sweep import Experiment, run_sweep
    exp = Experiment(workload={"trace": str(trace)}, policies={"fifo": {}, "prio": {}},
                     cluster={"nodes": 2})
    seen = set()

    def look(done, total):  # called while the cluster runs
        me = psutil.Process()
        for proc in [me, *me.children(recursive=True)]:
            try:
                conns = proc.net_connections(kind="inet")
            except psutil.Error:
                continue
            seen.update(c.laddr.ip for c in conns if c.status == psutil.CONN_LISTEN)
    run_sweep(exp, workers=1, cache=False, progress=look)
    assert seen and seen <= {"127.0.0.1", "::1"}, seen


def test_sweep_without_workers_fails_within_the_timeout(trace, monkeypatch):
    from distributed import LocalCluster

    from fitgpp.sweep import Experiment, SweepError, run_sweep
    from fitgpp.sweep import runner
    monkeypatch.setattr(runner, "NO_WORKERS_TIMEOUT_S", 1.0)
    exp = Experiment(workload={"trace": str(trace)}, policies={"fifo": {}},
                     cluster={"nodes": 2})
    with LocalCluster(n_workers=0, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster:
        with pytest.raises(SweepError, match="no Dask worker for 1 s"):
            run_sweep(exp, scheduler=cluster.scheduler_address, cache=False, progress=False)


# ---- outputs honour the umask ----------------------------------------------------------------

def test_outputs_honour_the_umask(trace, tmp_path):
    old = os.umask(0o027)
    try:
        assert main(["simulate", str(trace), "--nodes", "2", "--out", str(tmp_path / "o.nc")]) == 0
        assert main(["synth", "paper-default", "--jobs", "10", "--out",
                     str(tmp_path / "t.csv")]) == 0
        from fitgpp.sweep import Experiment, run_sweep
        run_sweep(Experiment(workload={"trace": str(trace)}, policies={"fifo": {}},
                             cluster={"nodes": 2}), workers=0, progress=False,
                  cache=tmp_path / "cache")
    finally:
        os.umask(old)
    files = [tmp_path / "o.nc", tmp_path / "t.csv", tmp_path / "t.csv.source.json",
             *(tmp_path / "cache").rglob("*.cell")]
    assert len(files) == 4
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == 0o640, f


# ---- the Python API itself -----------------------------------------------------------------

@pytest.mark.parametrize("tick", [1e-300, 0.0, -1.0, float("nan"), 1e300])
def test_simulate_bounds_the_tick(trace, tick):
    """simulate() applies the CLI's tick bounds: 1e-300 s used to overflow while rounding."""
    with pytest.raises(fitgpp.SimulationError, match=r"tick \(seconds\) must be a number in"):
        fitgpp.simulate(trace, fitgpp.Cluster.homogeneous(2), "fifo", tick=tick)


def test_simulate_caps_the_number_of_samples(monkeypatch):
    """A sample_every far below the run's length is refused before allocating the series."""
    import sys
    import fitgpp.sim.run  # noqa: F401  (the module that runs; fitgpp.simulate is the function)
    monkeypatch.setattr(sys.modules["fitgpp.sim.run"], "MAX_SAMPLE_BINS", 50)
    df = spec_rows(20)
    with pytest.raises(fitgpp.SimulationError, match="more than 50; choose a longer step"):
        fitgpp.simulate(df, fitgpp.Cluster.homogeneous(2), "fifo", sample_every=60)


# ---- issue 19: a result file never runs code, no grid hangs, no NaN becomes a default ---------

@pytest.mark.parametrize("name", ["unittest.__main__:X", "venv.__main__:X", "tqdm.__main__:X",
                                  "ran_on_import:X", "fitgpp.sim.policies.base:TwoQueuePolicy"])
def test_rerun_imports_nothing_the_file_names(synthetic_result, tmp_path, monkeypatch, name):
    (tmp_path / "ran_on_import.py").write_text(
        f"open({str(tmp_path / 'ran')!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = synthetic_result.copy()
    ds.attrs = {**ds.attrs, "policy": name}
    before = set(sys.modules)
    with pytest.raises(fitgpp.PolicyError, match="imports no module it names") as info:
        fitgpp.rerun(ds)
    assert len(str(info.value).splitlines()) == 1
    assert set(sys.modules) == before and not (tmp_path / "ran").exists()


@pytest.mark.filterwarnings("ignore::fitgpp.workload.rerun.RerunWarning")
def test_rerun_runs_a_user_policy_the_caller_allowed(synthetic_result, tmp_path, monkeypatch):
    from fitgpp.sim.policies import FitGpp, registry
    from fitgpp.sim.policies.base import TwoQueuePolicy
    (tmp_path / "allowed_pol.py").write_text(
        "from dataclasses import dataclass\nfrom fitgpp.sim.policies import FitGpp\n"
        "@dataclass(frozen=True)\nclass Mine(FitGpp):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = synthetic_result.copy()
    ds.attrs = {**ds.attrs, "policy": "allowed_pol:Mine"}
    again = fitgpp.rerun(ds, allow_modules=("allowed_pol",))
    assert again.sizes["job"] == ds.sizes["job"]
    assert fitgpp.rerun(ds, policy=sys.modules["allowed_pol"].Mine).sizes == again.sizes
    with pytest.raises(fitgpp.PolicyError, match="but the policy given is 'fitgpp'"):
        fitgpp.rerun(ds, policy=FitGpp)
    ds.attrs["policy"] = "fitgpp.sim.policies.fitgpp:FitGpp"  # built in, by its full name
    assert fitgpp.rerun(ds).attrs["policy"] == "fitgpp"
    small = fitgpp.Cluster.from_json(ds.attrs["cluster"]).to_dict()  # crowded: TE jobs wait
    small[0]["count"] = 2
    ds.attrs.update(policy=registry.ref(TwoQueuePolicy), policy_params="{}",  # abstract
                    cluster=json.dumps(small))
    with pytest.raises(fitgpp.PolicyError, match="abstract two-queue policy"):
        fitgpp.rerun(ds, policy=TwoQueuePolicy)


def test_the_abstract_base_policy_is_refused(trace, tmp_path, capsys):
    refused(["simulate", trace, "--nodes", "1", "--policy",
             "fitgpp.sim.policies.base:TwoQueuePolicy", *out(tmp_path)], capsys,
            "abstract two-queue policy", "writes no choose()")
    assert not (tmp_path / "o.nc").exists()


def test_a_grid_beyond_the_bound_is_refused_before_it_is_built(tmp_path, capsys):
    from fitgpp.sim.validate import MAX_CELLS
    many = list(range(1, 101))
    cfg = tmp_path / "huge.toml"  # (100**2 + 100) * 100**3 cells
    cfg.write_text(f"seeds = {list(range(100))}\n[workload]\nmodel = 'paper-default'\n"
                   f"n_jobs = {[10 + i for i in many]}\n"
                   f"load = {[i / 100 for i in many]}\n"
                   f"[policies.fitgpp]\ns = {[float(i) for i in many]}\n"
                   f"max_preemptions = {many}\n[policies.lrtp]\nmax_preemptions = {many}\n")
    refused(["sweep", cfg, "--out", tmp_path / "o.nc", "--no-cache"], capsys,
            "huge.toml", "10100000000 cells to run", f"bound of {MAX_CELLS}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["huge.toml"]
    # two policies sweeping different fields: few cells, a dense result grid of 100**2 points
    grid = {"fitgpp": {"s": [float(i) for i in many]}, "rand": {"seed": 0},
            "lrtp": {"max_preemptions": many}}
    with pytest.raises(fitgpp.FitgppError, match="points in its result grid"):
        fitgpp.sweep.Experiment(workload={"model": "paper-default", "load": [0.5, 0.9]},
                                policies=grid, seeds=list(range(6)))


@pytest.mark.parametrize("argv", [
    ["reproduce", "--quick", "--workers", "100000000000000000000", "--out", "rr"],
    ["sweep", "CFG", "--workers", "1025", "--out", "o.nc"]])
def test_worker_counts_are_bounded_in_every_command(tmp_path, trace, capsys, monkeypatch, argv):
    from fitgpp.sweep.runner import local_cluster
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "s.toml"
    cfg.write_text(f"[workload]\ntrace = '{trace}'\n[policies]\nfifo = {{}}\n")
    refused([str(cfg) if a == "CFG" else a for a in argv], capsys, "--workers", "<= 1024")
    assert not (tmp_path / "rr").exists() and not (tmp_path / "o.nc").exists()
    with pytest.raises(fitgpp.FitgppError, match="1 to 1024 workers"):
        local_cluster(10**20)
    with pytest.raises(fitgpp.FitgppError, match=r"workers must be an integer in \[0, 1024\]"):
        fitgpp.sweep.run_sweep(cfg, workers=10**20, cache=False)


@pytest.mark.parametrize("argv, flag", [
    (["reproduce", "--quick", "--out", ""], "--out"),
    (["sweep", "CFG", "--cache", "", "--out", "o.nc"], "--cache"),
    (["sweep", "CFG", "--out", ""], "--out"),
    (["simulate", "TRACE", "--nodes", "2", "--out", ""], "--out")])
def test_an_empty_path_is_refused(tmp_path, trace, capsys, monkeypatch, argv, flag):
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "s.toml"
    cfg.write_text(f"[workload]\ntrace = '{trace}'\n[policies]\nfifo = {{}}\n")
    before = sorted(tmp_path.rglob("*"))
    refused([{"CFG": cfg, "TRACE": trace}.get(a, a) for a in argv], capsys, flag, "''")
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("column, spelled", [("tasks", "nan"), ("tasks", "NA"),
                                             ("restart_overhead", "NaN"),
                                             ("restart_overhead", "null")])
def test_nan_in_an_optional_column_is_not_the_default(tmp_path, capsys, column, spelled):
    df = spec_rows(8)
    df[column] = pd.Series([1] * 8, dtype=object)
    df.loc[3, column] = spelled
    df.loc[5, column] = ""  # empty: the default, still accepted
    df.to_csv(tmp_path / "t.csv", index=False)
    refused(["simulate", tmp_path / "t.csv", "--nodes", "2", *out(tmp_path)], capsys,
            "t.csv", "line 5", f"'{column}'", "NaN")
    assert not (tmp_path / "o.nc").exists()
    df.loc[3, column] = 1
    df.to_csv(tmp_path / "t.csv", index=False)
    assert fitgpp.read_trace(tmp_path / "t.csv").jobs[column].iloc[5] == \
        {"tasks": 1, "restart_overhead": 0.0}[column]


def test_model_tasks_weights_are_bounded_like_cpu_mem(tmp_path, capsys):
    from fitgpp.workload import load_model
    doc = json.loads(load_model("paper-default").to_json())
    be = doc["classes"]["BE"]
    be["tasks"] = {str(g): [[1, 1e308], [2, 1e308]] for g in be["gpu"]["values"]}
    (tmp_path / "m.json").write_text(json.dumps(doc))
    refused(["synth", tmp_path / "m.json", "--jobs", "10", "--nodes", "4", "--out",
             tmp_path / "t.csv"], capsys, "m.json", "classes.BE.tasks.1[0][1]", "1e+308")
    be["tasks"]["1"] = [[2**21, 1.0]]
    (tmp_path / "m.json").write_text(json.dumps(doc))
    refused(["synth", tmp_path / "m.json", "--jobs", "10", "--nodes", "4", "--out",
             tmp_path / "t.csv"], capsys, "classes.BE.tasks.1[0][0]", "at most 1048576")
    assert not (tmp_path / "t.csv").exists()


@pytest.mark.parametrize("fault", ["folder_is_a_file", "corrupt_manifest", "manifest_is_a_folder",
                                   "manifest_not_an_object"])
def test_export_errors_name_the_file_and_leave_nothing(tmp_path, fault):
    import altair as alt
    from fitgpp.figures.export import export
    chart = alt.Chart(pd.DataFrame({"x": [1, 2], "y": [3, 4]}), title="t").mark_line().encode(
        x=alt.X("x:Q", title="x [s]"), y=alt.Y("y:Q", title="y [1]"))
    out_dir = tmp_path / "figs"
    if fault == "folder_is_a_file":
        out_dir.write_text("")
    else:
        out_dir.mkdir()
        m = out_dir / "manifest.json"
        {"corrupt_manifest": lambda: m.write_text("{not json"),
         "manifest_is_a_folder": m.mkdir,
         "manifest_not_an_object": lambda: m.write_text("[1]")}[fault]()
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(fitgpp.FitgppError) as info:
        export({"a": chart}, out_dir, config={"k": 1}, formats=(".svg",), check=False)
    assert len(str(info.value).splitlines()) == 1
    assert str(out_dir) in str(info.value)
    assert sorted(tmp_path.rglob("*")) == before


STR_POLICY = """from dataclasses import dataclass
from fitgpp.sim.policies import FitGpp

@dataclass(frozen=True)
class Moody(FitGpp):
    mode: str = "calm"
    patience: int = 0
"""


def test_a_swept_str_field_is_shown_in_the_sweep_table(tmp_path, trace, capsys):
    (tmp_path / "moody_pol.py").write_text(STR_POLICY)
    cfg = tmp_path / "s.toml"
    cfg.write_text(f"[workload]\ntrace = '{trace}'\n[policies.fifo]\n[policies.moody]\n"
                   "policy = 'moody_pol:Moody'\nmode = ['calm', 'eager']\npatience = [0, 80]\n")
    try:
        assert main(["sweep", str(cfg), "--out", str(tmp_path / "o.nc"), "--no-cache",
                     "--workers", "0", "--quiet"]) == 0
    finally:
        sys.modules.pop("moody_pol", None)
    rows = [ln.split("  ")[0] for ln in capsys.readouterr().out.splitlines()[1:-1]]
    assert rows == ["fifo backfill=none", *(f"moody s=4 P=3 mode={m} patience={p}"
                              for m in ("calm", "eager") for p in (0, 80))]
    assert (tmp_path / "o.nc").exists()


@pytest.mark.parametrize("knobs, workers, needles", [
    ("gang_fraction = 0.5\ngang_tasks = 64", "0", ["gang_tasks = 64", "4 node(s)"]),
    ("gang_fraction = 0.5\ngang_tasks = 64", "1", ["gang_tasks = 64", "4 node(s)"]),
    ("restart_overhead = 9e9\nrestart_sigma = 5", "0",
     ["restart_overhead = 9000000000.0", "column 'restart_overhead'", "horizon"])])
def test_a_workload_a_sweep_cannot_draw_names_the_file_and_keys(tmp_path, capsys, knobs,
                                                                workers, needles):
    cfg = tmp_path / "draw.toml"
    cfg.write_text(f"[workload]\nmodel = 'paper-default'\nn_jobs = 100\n{knobs}\n"
                   "[cluster]\nnodes = 4\n[policies.fifo]\n")
    err = refused(["sweep", cfg, "--out", tmp_path / "o.nc", "--no-cache", "--quiet",
                   "--workers", workers], capsys, "draw.toml: [workload]", "seed 0", *needles)
    assert "<DataFrame>" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["draw.toml"]


@pytest.mark.parametrize("body, needle", [
    ("import sys\nsys.exit(0)\n", "exited while loading (sys.exit(0))"),
    ("raise SystemExit('bye')\n", "exited while loading (sys.exit('bye'))"),
    ("raise RuntimeError('boom\\nsecond line')\n", "failed (RuntimeError: boom second line)")])
def test_a_policy_module_that_exits_or_raises_while_loading(tmp_path, trace, capsys, monkeypatch,
                                                            body, needle):
    name = f"loadfail_{abs(hash(body)) % 10**6}"
    (tmp_path / f"{name}.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    refused(["simulate", trace, "--nodes", "2", "--policy", f"{name}:X", *out(tmp_path)],
            capsys, f"module '{name}'", needle)
    assert not (tmp_path / "o.nc").exists() and name not in sys.modules


def test_a_sweep_cell_reruns_only_with_the_callers_allowance(tmp_path, trace, monkeypatch):
    """The same rule for a sweep's cells (live or from the cache): their attrs name the policy,
    and reading them imports nothing."""
    from fitgpp.sweep import run_dataset, run_sweep
    (tmp_path / "moody_cell.py").write_text(STR_POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = tmp_path / "s.toml"
    cfg.write_text(f"[workload]\ntrace = '{trace}'\n[policies.moody]\n"
                   "policy = 'moody_cell:Moody'\nmode = 'eager'\n")
    runs: dict = {}
    run_sweep(cfg, workers=0, cache=tmp_path / "cache", progress=False)
    run_sweep(cfg, workers=0, cache=tmp_path / "cache", progress=False, runs=runs)  # cached
    ds = run_dataset(next(iter(runs.values())))
    cls = sys.modules["moody_cell"].Moody
    with pytest.raises(fitgpp.PolicyError, match="imports no module it names"):
        fitgpp.rerun(ds)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # same code: no "its code differs"
        assert fitgpp.rerun(ds, policy=cls).attrs["policy_params"] == ds.attrs["policy_params"]
    sys.modules.pop("moody_cell")


@pytest.mark.parametrize("kwargs, needle", [
    ({"dpi": 10**9}, "export dpi must be an integer in [1, 1200]"),
    ({"dpi": 0}, "export dpi"), ({"dpi": 300.0}, "export dpi"),
    ({"out_dir": ""}, "output folder: expected a path"),
    ({"out_dir": None}, "output folder: expected a path"),
    ({"charts": {"ok": None, "bad name": None}}, "figure name 'bad name'"),
    ({"charts": {5: None}}, "figure name 5")])
def test_export_arguments_are_checked_before_anything_is_written(tmp_path, monkeypatch,
                                                                 kwargs, needle):
    from fitgpp.figures.export import export
    monkeypatch.chdir(tmp_path)
    args = {"charts": {"a": None}, "out_dir": tmp_path / "figs", **kwargs}
    with pytest.raises(fitgpp.FitgppError, match=re.escape(needle)):
        export(args.pop("charts"), args.pop("out_dir"), config={}, check=False, **args)
    assert list(tmp_path.iterdir()) == []


def test_an_empty_cache_path_is_refused_in_python_too(tmp_path, monkeypatch):
    from fitgpp.sweep import CellCache
    monkeypatch.chdir(tmp_path)
    for root in ("", "  "):
        with pytest.raises(fitgpp.FitgppError, match="expected a directory path"):
            CellCache(root)
    assert list(tmp_path.iterdir()) == []


UNTYPED_POLICY = """from dataclasses import dataclass
from fitgpp.sim.policies import FitGpp

@dataclass(frozen=True)
class Loose(FitGpp):
    extra: object = None
"""


@pytest.mark.parametrize("value", ["NaN", "Infinity", "[1, -Infinity]", '{"a": NaN}'])
def test_nan_is_no_value_of_an_untyped_policy_field(tmp_path, trace, capsys, monkeypatch, value):
    (tmp_path / "loose_pol.py").write_text(UNTYPED_POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    refused(["simulate", trace, "--nodes", "2", "--policy", "loose_pol:Loose", "--param",
             f"extra={value}", *out(tmp_path)], capsys, "--param extra=", "finite numbers only")
    cfg = tmp_path / "s.toml"
    cfg.write_text(f"[workload]\ntrace = '{trace}'\n[policies.loose]\n"
                   "policy = 'loose_pol:Loose'\nextra = [nan, 1.0]\n")
    refused(["sweep", cfg, "--out", tmp_path / "s.nc", "--no-cache", "--workers", "0"], capsys,
            "s.toml: [policies.loose] key 'extra'", "finite number")
    assert not (tmp_path / "o.nc").exists() and not (tmp_path / "s.nc").exists()


@pytest.mark.parametrize("env, needle", [
    ({"FITGPP_CACHE": "FILE"}, "exists and is not a directory"),
    ({"FITGPP_SCHEDULER": "nonsense"}, "$FITGPP_SCHEDULER 'nonsense'")])
def test_reproduce_checks_its_environment_before_making_out(tmp_path, capsys, monkeypatch, env,
                                                            needle):
    (tmp_path / "file").write_text("")
    for k, v in env.items():
        monkeypatch.setenv(k, str(tmp_path / "file") if v == "FILE" else v)
    refused(["reproduce", "--quick", "--workers", "2", "--out", tmp_path / "rr"], capsys, needle)
    assert not (tmp_path / "rr").exists()
