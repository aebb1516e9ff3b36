"""fitgpp.save writes a simulation result through h5netcdf directly (no dask.array import);
the file must be the one xarray's h5netcdf store writes, down to HDF5 attributes, dtypes,
fill values and the order of everything."""

from __future__ import annotations

import json
import subprocess
import sys

import h5py
import numpy as np
import pytest
import xarray as xr

from fitgpp import Cluster, load, save, simulate, write_trace
from fitgpp.sim.run import _plain, _save_xarray
from fitgpp.workload import load_model, synthesize

CLUSTER = Cluster.homogeneous(3, gpu=8, cpu_milli=96000, mem_mib=786432)


def _h5(path) -> list:
    """Everything in an HDF5 file, in its stored order (dimension references as names)."""
    def attrs(obj):
        out = []
        for k, v in obj.attrs.items():
            if k in ("DIMENSION_LIST", "REFERENCE_LIST"):
                v = len(v)
            out.append((k, repr(v)))
        return out
    rows = []
    with h5py.File(path, "r") as f:
        rows.append(("/", attrs(f)))
        for name, obj in f.items():
            rows.append((name, str(obj.dtype), obj.shape, obj.maxshape, obj.chunks,
                         obj.compression, repr(obj.fillvalue), attrs(obj), repr(obj[()].tolist())))
    return rows


@pytest.fixture(scope="module")
def trace():
    return synthesize(load_model("paper-default"), n_jobs=60, seed=3, load=1.2, cluster=CLUSTER)


@pytest.mark.parametrize("segments", [False, True], ids=["plain", "segments"])
def test_direct_file_is_xarrays_file(trace, tmp_path, segments):
    ds = simulate(trace, CLUSTER, "fitgpp", s=4.0, segments=segments)
    assert _plain(ds), "a simulation result takes the direct path"
    save(ds, tmp_path / "direct.nc")
    _save_xarray(ds, str(tmp_path / "xarray.nc"))
    assert _h5(tmp_path / "direct.nc") == _h5(tmp_path / "xarray.nc")
    back = load(tmp_path / "direct.nc")
    xr.testing.assert_identical(back, load(tmp_path / "xarray.nc"))
    xr.testing.assert_identical(back, ds)


def test_other_datasets_go_through_xarray(tmp_path):
    ok = xr.Dataset({"a": ("x", np.arange(3.0))}, coords={"x": [1, 2, 3]})
    assert _plain(ok)
    for ds in (ok.assign(flag=("x", np.array([True, False, True]))),   # bool: encoded by xarray
               ok.assign(m=(("x", "y"), np.zeros((3, 2)))),              # 2-D
               ok.assign_coords(lab=("x", ["p", "q", "r"])),             # non-dimension coordinate
               ok.assign(f=("x", np.zeros(3, np.float32)))):             # other dtype
        assert not _plain(ds)
        save(ds, tmp_path / "o.nc")
        xr.testing.assert_identical(load(tmp_path / "o.nc"), ds)
    assert not _plain(ok.assign_attrs(flag=True))  # (netCDF has no boolean attrs at all)
    enc = ok.copy()
    enc["a"].encoding["zlib"] = True
    assert not _plain(enc)


def test_simulate_command_does_not_import_dask_array(tmp_path, trace):
    write_trace(trace, tmp_path / "t.csv")
    code = ("import json, sys\nfrom fitgpp.cli import main\n"
            "rc = main(['simulate', 't.csv', '--nodes', '3', '--out', 'r.nc'])\n"
            "print(json.dumps([rc, 'dask.array' in sys.modules]))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rc, imported = json.loads(r.stdout.splitlines()[-1])
    assert rc == 0 and not imported
    assert load(tmp_path / "r.nc").sizes["job"] == 60
