"""The sweep's Datasets are made without importing dask.array (fitgpp.sweep.lazy_dask), and a
dask array made afterwards is still one to xarray (chunked, computed lazily)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("dask")

CHECK = """
import json, sys
import numpy as np
import xarray as xr
{setup}
ds = xr.Dataset({{"x": (("a", "b"), np.ones((2, 3)))}}, coords={{"a": [1, 2], "b": list("xyz")}})
m = (ds["x"].sel(a=1) * 2).mean("b")
before = "dask.array" in sys.modules
import dask.array as da
from xarray.namedarray.pycompat import array_type
arr = xr.DataArray(da.ones((4, 2), chunks=2), dims=("p", "q"))
total = arr.sum()
print(json.dumps([before, float(m), arr.chunks is not None, isinstance(total.data, da.Array),
                  float(total), isinstance(arr.data, array_type("dask"))]))
"""


def _run(setup: str) -> list:
    r = subprocess.run([sys.executable, "-c", CHECK.format(setup=setup)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_datasets_without_dask_array_and_dask_arrays_after_as_before():
    plain = _run("")
    lazy = _run("import fitgpp.sweep.summary\nfrom xarray.namedarray import pycompat\n"
                "assert type(pycompat._cached_duck_array_modules['dask']).__name__ == 'Deferred'")
    assert plain[0], "xarray alone imports dask.array for a Dataset (else this test shows nothing)"
    assert not lazy[0], "a Dataset made after fitgpp.sweep is imported must not import dask.array"
    assert lazy[1:] == plain[1:] == [2.0, True, True, 8.0, True]


def test_defer_is_a_no_op_once_xarray_looked_dask_up():
    code = ("import numpy as np, xarray as xr\nxr.Dataset({'x': ('a', np.ones(2))})\n"
            "from fitgpp.sweep import lazy_dask\nprint(lazy_dask.defer())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_a_warm_sweep_does_not_import_dask_array(tmp_path):
    code = f"""
import sys, warnings
from fitgpp.sweep import Experiment, run_sweep
exp = Experiment(workload={{"model": "paper-default", "n_jobs": 40}}, seeds=(0, 1),
                 policies={{"fifo": {{}}, "fitgpp": {{"s": [4.0]}}}})
run_sweep(exp, cache={str(tmp_path)!r}, workers=0, progress=False)
print("dask.array" in sys.modules)
"""
    for _ in range(2):   # cold (fills the cache), then warm
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
