"""Numbers kept beside a cached cell (fitgpp.sweep.derived): read back exactly as computed from
the whole cell, and ignored (the cell read in full) whenever they may not be that cell's."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr

from fitgpp.sweep import CellCache, Experiment, derived, run_sweep
from fitgpp.sweep.cache import Summarized, _Entry
from fitgpp.sweep.summary import cell_metrics

EXP = Experiment(workload={"model": "paper-default", "n_jobs": 60}, seeds=(0, 1),
                 policies={"fifo": {}, "fitgpp": {"s": [4.0]}})


def _sweep(cache, runs=None):
    return run_sweep(EXP, cache=cache, workers=0, progress=False, runs=runs)


def _entries(cache):
    store = CellCache(cache)
    return {p.stem: store.get(p.stem) for p in sorted(cache.rglob("*.cell"))}


def _same(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


def test_kept_values_are_what_the_whole_cell_gives(tmp_path):
    cold = _sweep(tmp_path)
    got = _entries(tmp_path)
    assert got and all(isinstance(e, Summarized) for e in got.values())
    for key, e in got.items():
        whole = CellCache(tmp_path).get(key, summarized=False)   # read and checked in full
        assert isinstance(whole, _Entry) and not isinstance(whole, Summarized)
        kept = derived._dec(e.summary.values["cell_metrics"])
        _same(kept, cell_metrics(whole))
        assert {k: e[k] for k in ("gpu_util", "attrs", "code")} == \
            {k: whole[k] for k in ("gpu_util", "attrs", "code")}
        assert type(e["gpu_util"]) is np.float64 and list(e) == list(whole)
        assert e["slowdown"].tobytes() == whole["slowdown"].tobytes()   # read when asked
    runs = {}
    xr.testing.assert_identical(_sweep(tmp_path, runs), cold)
    assert all(isinstance(r, Summarized) and r._full is None for r in runs.values())


@pytest.mark.parametrize("harm", ["torn", "stale code", "other cell", "no summary"])
def test_a_summary_that_may_not_be_the_cells_is_ignored(tmp_path, monkeypatch, harm):
    _sweep(tmp_path)
    cell = sorted(tmp_path.rglob("*.cell"))[0]
    side = cell.with_suffix(".sum")
    if harm == "torn":
        blob = bytearray(side.read_bytes())
        blob[-5] ^= 1
        side.write_bytes(bytes(blob))
    elif harm == "stale code":
        monkeypatch.setattr(derived, "_DIGEST", "0" * 64)
    elif harm == "other cell":   # another payload in its place since (its header says so)
        cell.write_bytes(sorted(tmp_path.rglob("*.cell"))[1].read_bytes())
    else:
        side.unlink()
    with pytest.warns() if harm == "other cell" else _nothing():
        e = CellCache(tmp_path).get(cell.stem)
    assert not isinstance(e, Summarized)
    if harm == "other cell":
        assert e is None      # read in full: it is another key's
        return
    # read in full, and its summary is written again as numbers are derived from it
    want = cell_metrics(e)
    _same(derived.derived(e, "cell_metrics", cell_metrics), want)
    again = CellCache(tmp_path).get(cell.stem)
    assert isinstance(again, Summarized)
    _same(derived._dec(again.summary.values["cell_metrics"]), want)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_cell_of_another_size_is_not_served_by_its_summary(tmp_path):
    _sweep(tmp_path)
    key = sorted(tmp_path.rglob("*.cell"))[0].stem
    assert isinstance(CellCache(tmp_path).get(key, n_jobs=60), Summarized)
    with pytest.warns(UserWarning, match="corrupt"):
        assert CellCache(tmp_path).get(key, n_jobs=61) is None


def test_values_round_trip_type_for_type():
    values = [{"a": np.array([1.5, np.nan, -0.0]), "b": np.arange(3, dtype=np.int64),
               "c": np.array([True, False]), "d": np.float64(0.1 + 0.2), "e": np.int32(7)},
              (3, 0.1 + 0.2, math.nan, math.inf, "text", None, True, [1, 2.5]),
              np.zeros((2, 3), np.float32) + np.float32(1 / 3), np.array("x")]
    for v in values:
        import json
        back = derived._dec(json.loads(json.dumps(derived._enc(v))))
        _same(back, v)
    with pytest.raises(TypeError):
        derived._enc(object())
