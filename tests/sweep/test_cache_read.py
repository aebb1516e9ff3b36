"""A cache entry's arrays read in place (issue 26) are what numpy's npz reading gives."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fitgpp.sweep import cache as C


def test_arrays_read_in_place_are_numpys():
    rng = np.random.default_rng(0)
    arrays = {"f": rng.random(1000), "i": rng.integers(0, 9, 7).astype(np.int32),
              "b": rng.random(5) < 0.5, "e": np.array([], dtype=np.int64),
              "two": np.asfortranarray(rng.random((3, 4))), "big": rng.random((2, 3)) > 0.1,
              "s": np.array(["a", "bc"]), "nan": np.array([np.nan, 1.0])}
    blob = C._encode({**arrays, "gpu_util": 0.5, "code": "x"}, "k")
    e = C._decode(blob, "k")
    for name, want in arrays.items():
        got = e[name]
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert got.tobytes() == want.tobytes() == e._z[name].tobytes(), name
        assert got.flags.writeable and got.flags.aligned, name
    assert e["gpu_util"] == 0.5 and e["code"] == "x"


def test_a_damaged_member_is_an_error_not_an_array():
    blob = C._encode({"f": np.arange(4.0), "gpu_util": 0.5}, "k")
    e = C._decode(blob, "k")
    info = e._z.zip.getinfo("f.npy")
    bad = bytearray(e._payload)
    bad[info.header_offset] = 0        # not a local file header any more
    e._payload = memoryview(bytes(bad))
    with pytest.raises(ValueError, match="bad member header"):
        e["f"]


def test_checking_an_entry_copies_no_array(tmp_path):
    """The check reads every array in place; only the arrays used are copied out (a cell
    of a long run is several MB, issue 26), writeable as numpy gives them."""
    from fitgpp.sim.ledger import PARTS
    from fitgpp.sweep.runs import JOB_VARS, TIME_VARS
    n = 6
    res = {"te": np.array([True, False] * 3), "job_id": np.arange(n),
           **{k: np.ones(n, np.int64 if k == "preemptions" else float) for k in JOB_VARS},
           "time": np.arange(3.0), **{f"series_{k}": np.zeros(3) for k in TIME_VARS},
           "gpu_util": 0.5, "code": "c", "fitgpp": "f", "dtypes": "{}", "attrs": "{}",
           "units": "{}", "ledger": json.dumps({f"ledger_{p}": [0.0, 0]
                                                for p in (*PARTS, "capacity")})}
    cache = C.CellCache(tmp_path)
    cache.put("k", res)
    e = cache.get("k", n_jobs=n)
    assert e is not None and not e._arrays and not e._views["slowdown"].flags.writeable
    got = e["slowdown"]
    assert got.flags.writeable and got.tobytes() == res["slowdown"].tobytes()
    assert list(e._arrays) == ["slowdown"]
