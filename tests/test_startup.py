"""Start-up stays lean: a command imports only what it uses (benchmarks/bench_startup.py
measures the times; this checks the imports, which do not depend on the machine's load)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fitgpp.cli.fit import FORMATS as CLI_FORMATS
from fitgpp.workload.adapters import FORMATS

#: heavy packages no plain simulate or --help needs (scipy.stats: 0.4 s; distributed: 0.15 s;
#: altair: plots; fitgpp.workload/sweep/reproduce: other commands)
HEAVY = ("scipy.stats", "distributed", "altair", "fitgpp.workload", "fitgpp.sweep",
         "fitgpp.studies.reproduce")


def _imported(tmp_path, argv: list[str]) -> set[str]:
    code = ("import json, sys\nfrom fitgpp.cli import main\n"
            f"rc = main({argv!r})\n"
            "print(json.dumps([rc, sorted(sys.modules)]))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rc, mods = json.loads(r.stdout.splitlines()[-1])
    assert rc == 0
    return set(mods)


def test_cli_formats_match_the_adapters():
    assert CLI_FORMATS == FORMATS


def test_import_fitgpp_is_lazy_and_its_names_all_resolve(tmp_path):
    code = ("import json, sys\nimport fitgpp\nbefore = sorted(sys.modules)\n"
            "from fitgpp.workload import synthesize  # imports the module fitgpp.simulate first\n"
            "names = {n: type(getattr(fitgpp, n)).__name__ for n in fitgpp.__all__}\n"
            "print(json.dumps([before, names]))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    before, names = json.loads(r.stdout)
    assert not {"numpy", "pandas", "xarray"} & set(before)
    assert names["simulate"] == "function", "fitgpp.simulate must stay the function"
    assert names["Fifo"] == "type" and names["__version__"] == "str"
    assert len(names) == len(set(names)) >= 20


@pytest.mark.parametrize("argv", [["--help"], ["simulate", "t.csv", "--nodes", "2", "--out", "r.nc"]],
                         ids=["help", "simulate"])
def test_a_command_imports_only_what_it_uses(tmp_path, argv):
    from fitgpp import write_trace
    from fitgpp.workload import load_model, synthesize
    write_trace(synthesize(load_model("paper-default"), n_jobs=10, seed=0), tmp_path / "t.csv")
    mods = _imported(tmp_path, argv)
    assert "fitgpp.cli" in mods
    heavy = HEAVY + (("pandas", "xarray") if argv == ["--help"] else ())
    loaded = [m for m in heavy if m in mods]
    assert not loaded, f"fitgpp {' '.join(argv)} imported {loaded}"
    if argv[0] == "simulate":
        assert (tmp_path / "r.nc").is_file()


FIRST_CALL = """
import json, sys
import pandas as pd
import fitgpp
df = pd.DataFrame({"job_id": [1, 2, 3], "cls": ["TE", "BE", "BE"], "submit_time": [0.0, 0, 60],
                   "duration": [120.0, 600, 300], "gpu": [8, 8, 4], "cpu_milli": 1000,
                   "mem_mib": 1024, "grace_period": [0.0, 60, 0]})
ds = fitgpp.simulate(df, fitgpp.Cluster.homogeneous(1, 8, 96000, 786432), "las",
                     thresholds=(60.0,), segments=True)
from fitgpp.metrics import class_table
from fitgpp.sweep.runs import reduce_run
reduce_run(ds), class_table(ds)  # what a sweep cell and the command line do with it
print(json.dumps([int(ds.sizes["segment"]), sorted(m for m in sys.modules if m.startswith("dask"))]))
"""


def test_a_first_simulate_with_segments_imports_no_dask(tmp_path):
    """xarray's default index, Dataset.merge and DataArray.to_numpy ask whether arrays are
    dask arrays, which imports dask (0.3-2 s of a first call, and of each sweep cell's first
    call in a process)."""
    r = subprocess.run([sys.executable, "-c", FIRST_CALL], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    segments, dask = json.loads(r.stdout.splitlines()[-1])
    assert segments >= 3 and dask == []


def test_the_result_is_what_xarrays_generic_path_builds():
    import numpy as np
    import xarray as xr

    import fitgpp
    from conftest import cluster_of, random_loaded_trace
    df, cap = random_loaded_trace(4, 60, 2)
    ds = fitgpp.simulate(df, cluster_of(cap), "las", segments=True)
    generic = xr.Dataset({k: (v.dims, np.array(v.values), v.attrs) for k, v in ds.data_vars.items()},
                         coords={k: (v.dims, np.array(v.values), v.attrs)
                                 for k, v in ds.coords.items()}, attrs=ds.attrs)
    xr.testing.assert_identical(ds, generic)
    assert list(ds.data_vars) == list(generic.data_vars) and list(ds.coords) == list(generic.coords)
    for dim in ("job", "time"):
        assert ds.indexes[dim].equals(generic.indexes[dim])
        assert ds.indexes[dim].dtype == generic.indexes[dim].dtype == ds[dim].dtype
