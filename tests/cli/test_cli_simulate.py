"""``fitgpp simulate``: the summary on success, and one line plus exit 2 for every bad input.

Run both as a real subprocess (``python -m fitgpp``) and in-process through
``fitgpp.cli.main``. Bad input must never leave a traceback or an output file.
The two subprocess tests are marked slow: building the parser imports every
subcommand module, and ``reproduce`` currently pulls in altair at that point.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import fitgpp
from fitgpp import load, summarize
from fitgpp.cli import main

HEADER = ",".join(fitgpp.COLUMNS)
# Worked by hand (tick 60, one node of 8 GPUs, FitGpp s=4 P=3): BE 1 (8 GPU, 10 ticks, gp 1
# tick) runs from 0; TE 2 (4 GPU, 2 ticks) arrives at tick 1 and preempts it (size 1.0 <=
# 4 * 0.5); BE 1 is released at 2, TE 2 runs 2..4, BE 1 resumes at 4 with 9 ticks left: done 13.
# TE slowdown (4-1)/2 = 1.5; BE slowdown 13/10 = 1.3; GPU-ticks busy 8*10 + 4*2 = 88 of 8*13.
TRACE = f"""{HEADER}
1,BE,0,600,8,1000,1024,60
2,TE,60,120,4,1000,1024,
"""
NODE = ["--nodes", "1", "--node-gpu", "8"]


@pytest.fixture
def trace(tmp_path):
    p = tmp_path / "trace.csv"
    p.write_text(TRACE)
    return p


def run_inproc(argv, capsys):
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's own errors exit from parse_args
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def run_sub(argv, cwd):
    p = subprocess.run([sys.executable, "-m", "fitgpp", *map(str, argv)], cwd=cwd,
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def files(d):
    return sorted(p.name for p in d.iterdir())


def check_summary(out):
    lines = out.splitlines()
    assert lines[0].startswith("policy fitgpp")
    te = next(ln for ln in lines if ln.startswith("TE")).split()
    be = next(ln for ln in lines if ln.startswith("BE")).split()
    # class, jobs, median, p95, preemptions
    assert te == ["TE", "1", "1.500", "1.500", "0"]
    assert be == ["BE", "1", "1.300", "1.300", "1"]
    assert f"GPU utilization {88 / 104:.3f}" in out


def check_result(path, trace_path):
    ds = load(path)
    assert ds.attrs["policy"] == "fitgpp"
    assert json.loads(ds.attrs["policy_params"]) == {"s": 4.0, "max_preemptions": 3}
    assert ds.attrs["tick"] == 60.0
    assert fitgpp.Cluster.from_json(ds.attrs["cluster"]) == fitgpp.Cluster.homogeneous(1, gpu=8)
    workload = json.loads(ds.attrs["workload"])
    assert workload["kind"] == "csv" and workload["path"] == str(trace_path.resolve())
    assert ds.finish.sel(job=1).item() == 13 * 60 and ds.first_start.sel(job=2).item() == 2 * 60
    return ds


# ------------------------------------------------------------------ success

@pytest.mark.slow  # a fresh interpreter imports every subcommand (seconds; see module doc)
def test_simulate_subprocess(tmp_path, trace):
    out_nc = tmp_path / "r.nc"
    rc, out, err = run_sub(["simulate", trace, *NODE, "--out", out_nc], tmp_path)
    assert rc == 0, err
    assert err == ""
    check_summary(out)
    assert f"wrote {out_nc}" in out
    check_result(out_nc, trace)
    assert files(tmp_path) == ["r.nc", "trace.csv"]  # no temporary left behind


def test_simulate_in_process(tmp_path, trace, capsys):
    out_nc = tmp_path / "r.nc"
    rc, out, err = run_inproc(["simulate", trace, *NODE, "--out", out_nc], capsys)
    assert (rc, err) == (0, "")
    check_summary(out)
    ds = check_result(out_nc, trace)
    table = summarize(ds)
    assert table.loc["TE", "slowdown_p95"] == 1.5 and table.loc["BE", "preemptions"] == 1


def test_cluster_from_toml(tmp_path, trace, capsys):
    toml = tmp_path / "c.toml"
    toml.write_text("[[nodes]]\ncount = 1\ngpu = 8\ncpu_milli = 96000\nmem_mib = 786432\n")
    rc, out, err = run_inproc(["simulate", trace, "--cluster", toml, "--out", tmp_path / "r.nc"],
                              capsys)
    assert (rc, err) == (0, "")
    check_summary(out)


def test_huge_max_preemptions_works(tmp_path, trace, capsys):
    out_nc = tmp_path / "r.nc"
    rc, out, err = run_inproc(["simulate", trace, *NODE, "--max-preemptions", "1000000000",
                               "--out", out_nc], capsys)
    assert (rc, err) == (0, "")
    assert load(out_nc).attrs["max_preemptions"] == 10**9


@pytest.mark.parametrize("policy, flags, params", [
    ("fifo", [], {"backfill": "none"}), ("prio", [], {}),
    ("lrtp", ["--max-preemptions", "2"], {"max_preemptions": 2}),
    ("rand", ["--max-preemptions", "2", "--seed", "5"], {"max_preemptions": 2, "seed": 5})])
def test_policy_parameters_reach_the_result(tmp_path, trace, capsys, policy, flags, params):
    out_nc = tmp_path / "r.nc"
    rc, _, err = run_inproc(["simulate", trace, *NODE, "--policy", policy, *flags,
                             "--out", out_nc], capsys)
    assert (rc, err) == (0, "")
    assert json.loads(load(out_nc).attrs["policy_params"]) == params


@pytest.mark.parametrize("policy, flag, value", [
    ("fifo", "--max-preemptions", "2"), ("prio", "--seed", "5"), ("lrtp", "--s", "8"),
    ("fitgpp", "--seed", "1"), ("las", "--max-preemptions", "3")])
def test_a_flag_the_policy_lacks_is_an_error(tmp_path, trace, capsys, policy, flag, value):
    out_nc = tmp_path / "r.nc"
    rc, out, err = run_inproc(["simulate", trace, *NODE, "--policy", policy, flag, value,
                               "--out", out_nc], capsys)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert flag in err and "has no parameter" in err and not out_nc.exists()


def test_version(capsys):
    rc, out, _ = run_inproc(["--version"], capsys)
    assert rc == 0 and out.strip() == f"fitgpp {fitgpp.__version__}"


def test_help_still_shows_usage(capsys):
    rc, out, _ = run_inproc(["simulate", "--help"], capsys)
    assert rc == 0 and "usage: fitgpp simulate" in out and "--max-preemptions" in out


# ------------------------------------------------------------------ bad input

BAD_TOML = "[[nodes]]\ncount = 1\ngpu = -8\ncpu_milli = 96000\nmem_mib = 786432\n"


def bad_cases(tmp_path, trace):
    bad_trace = tmp_path / "bad.csv"
    bad_trace.write_text(TRACE + "3,BE,120,60,-2,1000,1024,0\n")
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text(BAD_TOML)
    good_toml = tmp_path / "good.toml"
    good_toml.write_text(BAD_TOML.replace("-8", "8"))
    out = ["--out", tmp_path / "out" / "r.nc"]  # a missing directory only where said below
    r = ["--out", tmp_path / "r.nc"]
    return {
        "bad trace row": ([bad_trace, *NODE, *r], ["bad.csv", "line 4", "'gpu'", "negative"]),
        "missing trace": ([tmp_path / "none.csv", *NODE, *r], ["none.csv", "no such file"]),
        "no cluster": ([trace, *r], ["no cluster"]),
        "nodes and cluster": ([trace, *NODE, "--cluster", good_toml, *r], ["not both"]),
        "bad toml": ([trace, "--cluster", bad_toml, *r], ["bad.toml", "'gpu'", ">= 0"]),
        "missing toml": ([trace, "--cluster", tmp_path / "no.toml", *r], ["no such file"]),
        "P 0": ([trace, *NODE, "--max-preemptions", "0", *r], ["--max-preemptions"]),
        "P -1": ([trace, *NODE, "--max-preemptions", "-1", *r], ["--max-preemptions"]),
        "P abc": ([trace, *NODE, "--max-preemptions", "abc", *r], ["--max-preemptions"]),
        "unknown policy": ([trace, *NODE, "--policy", "srpt", *r], ["--policy", "srpt"]),
        "tick 0": ([trace, *NODE, "--tick", "0", *r], ["tick"]),
        "tick nan": ([trace, *NODE, "--tick", "nan", *r], ["tick"]),
        "out in missing dir": ([trace, *NODE, *out], ["does not exist"]),
        "out is a directory": ([trace, *NODE, "--out", tmp_path], ["directory"]),
        "out is the trace": ([trace, *NODE, "--out", trace], ["input trace"]),
        "s negative": ([trace, *NODE, "--s", "-1", *r], ["s must be"]),
        "seed negative": ([trace, *NODE, "--policy", "rand", "--seed", "-1", *r], ["seed"]),
        "sample_every": ([trace, *NODE, "--sample-every", "90", *r], ["sample_every"]),
        "job fits no node": ([trace, "--nodes", "1", "--node-gpu", "4", *r], ["fits no node"]),
        "node gpu negative": ([trace, "--nodes", "2", "--node-gpu", "-1", *r],
                              ["--node-gpu", ">= 0"]),
        "node size with cluster": ([trace, "--cluster", good_toml, "--node-gpu", "4", *r],
                                   ["--node-gpu", "only used with --nodes"]),
        "node size without nodes": ([trace, "--node-mem-mib", "4", *r], ["--node-mem-mib"]),
        "no --out": ([trace, *NODE], ["--out"]),
    }


CASE_IDS = ["bad trace row", "missing trace", "no cluster", "nodes and cluster", "bad toml",
            "missing toml", "P 0", "P -1", "P abc", "unknown policy", "tick 0", "tick nan",
            "out in missing dir", "out is a directory", "out is the trace", "s negative",
            "seed negative", "sample_every", "job fits no node", "node gpu negative",
            "node size with cluster", "node size without nodes", "no --out"]


def assert_one_line_error(rc, out, err, needles):
    assert rc == 2, (rc, err)
    assert out == ""
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.endswith("\n"), repr(err)
    assert err.startswith("fitgpp simulate: error: "), err
    for n in needles:
        assert n in err, (n, err)


@pytest.mark.parametrize("case", CASE_IDS)
def test_bad_input_in_process(tmp_path, trace, capsys, case):
    argv, needles = bad_cases(tmp_path, trace)[case]
    before = files(tmp_path)
    rc, out, err = run_inproc(["simulate", *argv], capsys)
    assert_one_line_error(rc, out, err, needles)
    assert files(tmp_path) == before  # no output, no temporary file
    assert trace.read_text() == TRACE


@pytest.mark.slow
def test_bad_input_subprocess(tmp_path, trace):
    # one representative case; every case runs in-process above (a subprocess costs
    # seconds of imports each)
    argv, needles = bad_cases(tmp_path, trace)["bad trace row"]
    before = files(tmp_path)
    rc, out, err = run_sub(["simulate", *argv], tmp_path)
    assert_one_line_error(rc, out, err, needles)
    assert files(tmp_path) == before


def test_case_ids_cover_every_case(tmp_path, trace):
    assert sorted(CASE_IDS) == sorted(bad_cases(tmp_path, trace))


def test_an_existing_out_file_is_kept_unless_overwrite_is_asked(tmp_path, trace, capsys):
    """One rule with the exports: `fitgpp simulate --out X.nc` replaced X.nc silently; now
    it stops before running, names the file and the flag, and leaves it as it was."""
    out_nc = tmp_path / "r.nc"
    out_nc.write_bytes(b"an earlier result")
    rc, out, err = run_inproc(["simulate", trace, *NODE, "--out", out_nc], capsys)
    assert rc != 0 and f"--out {out_nc}: exists; pass --overwrite" in err, (rc, err)
    assert out_nc.read_bytes() == b"an earlier result"
    rc, out, err = run_inproc(["simulate", trace, *NODE, "--out", out_nc, "--overwrite"], capsys)
    assert (rc, err) == (0, "")
    check_result(out_nc, trace)
