"""Hard to break, round four (issue 37): a cached cell is served only with every entry its
readers take. A cell whose ``ledger`` is missing, not JSON, text or not a ledger is recomputed
(with a warning), whether read in full or known by its summary; a summary whose checksum holds
but whose value is of another type, shape or dtype, or nested too deep, is ignored and the
cell read instead. Through the API, RQ8 (which reads every cell's ledger) and the command
line, the results are those of an untouched cache."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import xarray as xr

from fitgpp.sweep import CellCache, Experiment, derived, run_sweep
from fitgpp.sweep.cache import CacheWarning, Summarized

EXP = Experiment(workload={"model": "paper-default", "n_jobs": 60}, seeds=(0, 1),
                 policies={"fifo": {}, "fitgpp": {"s": [4.0]}})


def sweep(cache, runs=None):
    return run_sweep(EXP, cache=cache, workers=0, progress=False, runs=runs)


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    return sweep(tmp_path_factory.mktemp("clean"))


def cells(cache):
    return sorted(cache.rglob("*.cell"))


def rewrite_cell(cache, path, change):
    """The cell at ``path`` written again through the cache (a valid checksum) with its
    result changed by ``change`` (a dict -> None); its summary removed."""
    store = CellCache(cache)
    e = store.get(path.stem, summarized=False)
    res = {k: e[k] for k in e}
    change(res)
    store.put(path.stem, res)
    path.with_suffix(".sum").unlink(missing_ok=True)


def rewrite_summary(path, change):
    """The summary beside the cell ``path`` with its body changed by ``change`` (a dict ->
    None) and its checksum made to hold again."""
    side = path.with_suffix(".sum")
    head, body = side.read_bytes().split(b"\n", 1)
    d = json.loads(body)
    change(d)
    body = json.dumps(d).encode()
    side.write_bytes(f"{derived.FORMAT} {hashlib.sha256(body).hexdigest()}\n".encode() + body)


def _ledger(v):
    def change(res):
        if v is None:
            res.pop("ledger")
        else:
            res["ledger"] = v
    return change


@pytest.mark.parametrize("ledger, why", [
    (None, "ledger: missing"), ("{", "Expecting"), ('"12 GPU-h"', "ledger: not a JSON object"),
    ('{"ledger_capacity": [1.0, 60]}', "ledger: parts"),
    ("use", "ledger_reload is"), ("sum", "do not add up")])
def test_a_cell_without_its_ledger_is_recomputed(tmp_path, clean, ledger, why):
    sweep(tmp_path)
    path = cells(tmp_path)[0]
    if ledger in ("use", "sum"):
        kept = json.loads(str(CellCache(tmp_path).get(path.stem, summarized=False)["ledger"]))
        if ledger == "use":
            kept["ledger_reload"] = [1.0, "60"]
        else:
            kept["ledger_reload"] = [kept["ledger_reload"][0], kept["ledger_reload"][1] + 1]
        ledger = json.dumps(kept)
    rewrite_cell(tmp_path, path, _ledger(ledger))
    runs = {}
    with pytest.warns(CacheWarning, match=f"is corrupt.*{why}.*recomputing"):
        got = sweep(tmp_path, runs)
    xr.testing.assert_identical(got, clean)
    fixed = CellCache(tmp_path).get(path.stem, summarized=False)
    assert json.loads(str(fixed["ledger"]))["ledger_capacity"][1] > 0   # written again


@pytest.mark.parametrize("meta", ["no ledger", "ledger text", "attrs a number", "no code"])
def test_a_summary_whose_cell_meta_lacks_an_entry_is_ignored(tmp_path, clean, meta):
    sweep(tmp_path)
    path = cells(tmp_path)[0]

    def change(d):
        m = json.loads(d["meta"])
        if meta == "no ledger":
            m.pop("ledger")
        elif meta == "ledger text":
            m["ledger"] = "lots"
        elif meta == "attrs a number":
            m["attrs"] = 5
        else:
            m.pop("code")
        d["meta"] = json.dumps(m)
    rewrite_summary(path, change)
    e = CellCache(tmp_path).get(path.stem)
    assert not isinstance(e, Summarized)            # read in full instead: the cell is whole
    assert json.loads(str(e["ledger"]))["ledger_capacity"][1] > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)   # nothing damaged: no warning
        xr.testing.assert_identical(sweep(tmp_path), clean)


#: Values a summary could hold under ``cell_metrics`` (its checksum made to hold).
BAD_VALUES = {
    "a string": "slowdown",
    "a number": 1.5,
    "wrong shape": {"map": [["slowdown_p95", {"nd": "<f8", "shape": [3], "v": [1.0, 2.0, 3.0]}]]},
    "2-d": None,
    "wrong dtype": None,
    "object dtype": None,
    "shape lies": None,
    "a list": {"list": [1, 2]},
    "deep": None,   # (nest_deep)
}


def _bad(kind, kept):
    """``kept`` (the encoded cell_metrics) harmed as ``kind`` says."""
    if BAD_VALUES[kind] is not None:
        return BAD_VALUES[kind]
    pairs = kept["map"]
    k, arr = pairs[0]
    pairs[0] = [k, {"2-d": {**arr, "shape": [1, 2]},
                    "wrong dtype": {**arr, "nd": "<U3", "v": ["a", "b"]},
                    "object dtype": {**arr, "nd": "|O"},
                    "shape lies": {**arr, "shape": [5]}}[kind]]
    return kept


def nest_deep(path):
    """The summary beside ``path`` with a value nested deeper than a JSON reader goes (its
    checksum made to hold)."""
    side = path.with_suffix(".sum")
    head, body = side.read_bytes().split(b"\n", 1)
    body = body.replace(b'"values": {', b'"values": {"deep": ' + b"[" * 100_000
                        + b"]" * 100_000 + b", ", 1)
    side.write_bytes(f"{derived.FORMAT} {hashlib.sha256(body).hexdigest()}\n".encode() + body)


def harm(path, kind):
    if kind == "deep":
        nest_deep(path)
    else:
        rewrite_summary(path, lambda d: d["values"].update(
            cell_metrics=_bad(kind, d["values"]["cell_metrics"])))


@pytest.mark.parametrize("kind", list(BAD_VALUES))
def test_a_summary_value_that_does_not_read_as_expected_is_ignored(tmp_path, clean, kind):
    sweep(tmp_path)
    for path in cells(tmp_path):
        harm(path, kind)
    derived._FORMS.clear()     # as in a new process: nothing learnt yet
    xr.testing.assert_identical(sweep(tmp_path), clean)
    for path in cells(tmp_path):
        harm(path, kind)
    # and in a process that learnt the form from a clean cell first
    xr.testing.assert_identical(sweep(tmp_path), clean)


CLI = textwrap.dedent("""
    seeds = [0, 1]
    [workload]
    model = "paper-default"
    n_jobs = 60
    [policies.fifo]
    [policies.fitgpp]
    s = [4.0]
""")


@pytest.mark.parametrize("kind", ["wrong shape", "wrong dtype", "deep", "a string"])
def test_fitgpp_sweep_with_summaries_that_do_not_read_exits_0(tmp_path, clean, kind):
    (tmp_path / "s.toml").write_text(CLI)
    env = {**os.environ, "FITGPP_CACHE": str(tmp_path / "cache")}

    def run(out):
        return subprocess.run([sys.executable, "-m", "fitgpp", "sweep", "s.toml", "--out", out,
                               "--workers", "0", "--quiet"], capture_output=True, text=True,
                              timeout=600, cwd=tmp_path, env=env)
    assert run("a.nc").returncode == 0
    for path in cells(tmp_path / "cache"):
        harm(path, kind)
    p = run("b.nc")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
    import fitgpp
    a, b = fitgpp.load(tmp_path / "a.nc"), fitgpp.load(tmp_path / "b.nc")
    xr.testing.assert_identical(a, b)


def test_rq8_reads_every_ledger_again_after_the_cache_lost_them(tmp_path):
    import dataclasses

    from fitgpp.studies import QUICK, STUDIES
    st = STUDIES["rq8"].replace(knobs={"load": (0.8,), "te_fraction": (0.5,),
                                       "restart_overhead": (0.0, 600.0)})
    size = dataclasses.replace(QUICK, n_jobs=80, seeds=(0, 1, 2))
    want = st.result(size, cache=tmp_path)
    for path in cells(tmp_path):
        rewrite_cell(tmp_path, path, _ledger(None if path.stem[0] in "0123456789" else "{"))
    with pytest.warns(CacheWarning, match="ledger"):
        got = st.result(size, cache=tmp_path)
    # every cell of the map is computed again; RQ8's ridge search runs cells of its own
    # (not counted in the map's stats): a third run finds every one of them whole
    assert got.stats["computed"] == got.stats["unique"] > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        assert st.result(size, cache=tmp_path).stats["computed"] == 0
    assert got.finding == want.finding
    cols = [c for c in want.table.columns if c.startswith("ledger_")]
    assert cols and got.table[cols].equals(want.table[cols])
