"""A result carries what is needed to rerun it: fitgpp.rerun(ds) rebuilds it from attrs alone."""

import pytest
import xarray as xr

import fitgpp
from fitgpp.workload import load_model, synthesize


@pytest.fixture(scope="module")
def synthetic():
    return synthesize(load_model("paper-default"), n_jobs=400, seed=3, load=0.9,
                      cluster=fitgpp.DEFAULT_CLUSTER)


@pytest.mark.parametrize("policy,params", [("fifo", {}), ("fitgpp", {"s": 2.0}),
                                           ("rand", {"seed": 5, "max_preemptions": 2})])
def test_rerun_synthetic_identical_after_netcdf_round_trip(tmp_path, synthetic, policy, params):
    ds = fitgpp.simulate(synthetic, fitgpp.DEFAULT_CLUSTER, policy, tick=30, **params)
    fitgpp.save(ds, tmp_path / "r.nc")
    back = fitgpp.load(tmp_path / "r.nc")
    xr.testing.assert_identical(fitgpp.rerun(back), back)


def test_rerun_csv_trace_and_refuse_changed_file(tmp_path, synthetic):
    path = tmp_path / "t.csv"
    fitgpp.write_trace(synthetic, path)
    ds = fitgpp.simulate(path, fitgpp.DEFAULT_CLUSTER, "lrtp", sample_every=600)
    xr.testing.assert_identical(fitgpp.rerun(ds), ds)
    with open(path, "a") as f:
        f.write("\n")
    with pytest.raises(fitgpp.SimulationError, match="changed since this result was made"):
        fitgpp.rerun(ds)


def test_rerun_refuses_in_memory_dataframe(synthetic):
    ds = fitgpp.simulate(synthetic.jobs, fitgpp.DEFAULT_CLUSTER, "prio")
    with pytest.raises(fitgpp.SimulationError, match="no recipe"):
        fitgpp.rerun(ds)
