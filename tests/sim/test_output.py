"""The result Dataset: contents, units, attrs sufficient to rerun, netCDF round trip,
the time series (sampling, and integrals that must match per-job totals), and
summarize() against numpy on the Dataset."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import fitgpp
from fitgpp import Cluster, load, make_policy, read_trace, save, simulate, SimulationError, summarize

JOB_VARS = ["cls", "submit_time", "submit", "duration", "work", "grace_period", "first_start",
            "finish", "wait", "stopped", "gpu", "cpu_milli", "mem_mib", "slowdown",
            "preemptions", "node"]
TIME_VARS = ["gpu_util", "gpu_stopping", "gpu_reserved", "waiting_te", "waiting_be"]
ATTRS = ["policy", "policy_params", "cluster", "cluster_description", "n_nodes", "total_gpus",
         "tick", "sample_every", "workload", "gpu_util_mean", "fitgpp_version"]
CLUSTER = Cluster.homogeneous(4, gpu=8, cpu_milli=32000, mem_mib=131072)


def busy_trace(seed=0, n=150, first_submit=600.0):
    """A loaded trace on CLUSTER: mixed TE/BE, grace periods 0..3 ticks, off-tick times."""
    rng = np.random.default_rng(seed)
    te = rng.random(n) < 0.3
    return pd.DataFrame({
        "job_id": rng.permutation(10 * n)[:n],
        "cls": np.where(te, "TE", "BE"),
        "submit_time": first_submit + np.sort(rng.uniform(0, 60 * n / 3, n)),
        "duration": rng.integers(1, 40, n) * 60.0 - rng.choice([0.0, 20.0], n),
        "gpu": rng.choice([1, 1, 2, 4, 8], n),
        "cpu_milli": rng.integers(1, 9, n) * 1000,
        "mem_mib": rng.integers(1, 33, n) * 1024,
        "grace_period": np.where(te, np.nan, rng.integers(0, 4, n) * 60.0 - 10 * rng.random(n)
                                 .round(0)).clip(0),
    })


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    p = tmp_path_factory.mktemp("out") / "busy.csv"
    busy_trace().to_csv(p, index=False)
    return p


@pytest.fixture(scope="module")
def result(csv_path):
    return simulate(csv_path, CLUSTER, "fitgpp", s=4.0, max_preemptions=2)


# ------------------------------------------------------------------ contents

def test_variables_units_and_dims(result):
    ds = result
    for v in JOB_VARS:
        assert ds[v].dims == ("job",), v
        assert "units" in ds[v].attrs and ds[v].attrs.get("description"), v
    for v in TIME_VARS:
        assert ds[v].dims == ("time",), v
        assert "units" in ds[v].attrs and ds[v].attrs.get("description"), v
    assert ds["time"].attrs["units"] == "s"
    assert ds["finish"].attrs["units"] == "s" and ds["gpu_util"].attrs["units"] == "1"
    assert set(ds["cls"].values) == {"TE", "BE"}
    assert ds.sizes["job"] == 150


def test_job_coordinate_order_and_time_unit(result):
    ds = result
    df = busy_trace()
    order = df.assign(t=np.floor(df.submit_time / 60)).sort_values(["t", "job_id"])
    assert ds.job.values.tolist() == order.job_id.tolist()
    for v in ("submit", "work", "first_start", "finish", "wait", "stopped"):
        assert (ds[v].values % 60 == 0).all(), v  # seconds = ticks x 60
    assert np.array_equal(ds.slowdown, (ds.finish - ds.submit) / ds.work)


def test_attrs(result, csv_path):
    a = result.attrs
    for k in ATTRS:
        assert k in a, k
    assert a["policy"] == "fitgpp" and json.loads(a["policy_params"]) == {
        "s": 4.0, "max_preemptions": 2}
    assert a["s"] == 4.0 and a["max_preemptions"] == 2 and "seed" not in a
    assert a["tick"] == 60.0 and a["n_nodes"] == 4 and a["total_gpus"] == 32
    assert a["fitgpp_version"] == fitgpp.__version__
    w = json.loads(a["workload"])
    assert w["path"] == str(csv_path.resolve())


@pytest.mark.parametrize("policy, params, keys", [
    ("fifo", {"backfill": "easy"}, set()), ("prio", {}, set()), ("lrtp", {"max_preemptions": 5},
                                               {"max_preemptions"}),
    ("rand", {"max_preemptions": 1, "seed": 9}, {"max_preemptions", "seed"})])
def test_policy_parameters_in_attrs(policy, params, keys):
    ds = simulate(busy_trace(n=30), CLUSTER, policy, **params)
    assert json.loads(ds.attrs["policy_params"]) == params
    assert {k for k in ("s", "max_preemptions", "seed") if k in ds.attrs} == keys
    for k in keys:
        assert ds.attrs[k] == params[k]


#: every variable of a result, in order (the order ``save`` writes them in)
ORDER = ["cls", "submit_time", "submit", "duration", "work", "gpu", "tasks", "cpu_milli",
         "mem_mib", "grace_period", "restart_overhead", "first_start", "finish", "slowdown",
         "wait", "stopped", "reload", "preemptions", "node", "job", *TIME_VARS, "time",
         *(f"ledger_{k}" for k in ("useful_te", "useful_be", "reload", "grace", "reserved",
                                   "idle_fits", "idle_nofit", "idle_empty", "capacity"))]


def generic(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` made again from its variables the way ``_dataset`` made it before it built the
    Dataset directly (issue 26): the job variables with their coordinate, then the time
    series, their coordinate, the attrs and the ledger, each through xarray's merge."""
    def base(names):
        return {k: ds.variables[k].to_base_variable() for k in names}

    def coord(dim):
        var = ds.variables[dim].to_base_variable()
        index = xr.indexes.PandasIndex(pd.Index(var.values), dim, coord_dtype=var.dtype)
        return xr.Coordinates({dim: var}, indexes={dim: index})

    by_dim = {d: [k for k in ds.data_vars if ds[k].dims == d] for d in (("job",), ("time",), ())}
    out = xr.Dataset(base(by_dim[("job",)]), coords=coord("job"))
    out = out.assign(base(by_dim[("time",)])).assign_coords(coord("time"))
    out.attrs = dict(ds.attrs)
    return out.assign(base(by_dim[()]))


@pytest.mark.parametrize("policy, params", [
    ("fitgpp", {"s": 4.0, "max_preemptions": 2}), ("fifo", {}), ("las", {}), ("dlas", {}),
    ("shortest", {}), ("rand", {"seed": 3, "max_preemptions": 2})])
def test_result_is_what_xarrays_merge_makes(csv_path, policy, params):
    """The result, built directly, is identical to what xarray's generic construction makes
    of the same variables: values, dtypes, attrs, indexes, coordinate names, order."""
    ds = simulate(csv_path, CLUSTER, policy, **params)
    assert_built_alike(ds, generic(ds))


def test_without_xarrays_direct_constructor_the_result_is_the_same(csv_path, monkeypatch):
    """An xarray without the private constructor (or with another signature): the result is
    merged the public way, and is the same Dataset."""
    import fitgpp.sim.run as run
    direct = simulate(csv_path, CLUSTER, "fitgpp", s=4.0, max_preemptions=2)

    def changed(*args):
        raise TypeError("_construct_direct() takes 2 positional arguments")
    for stand_in in (None, changed):
        monkeypatch.setattr(run, "_DIRECT", stand_in)
        assert_built_alike(simulate(csv_path, CLUSTER, "fitgpp", s=4.0, max_preemptions=2),
                           direct)


def assert_built_alike(ds: xr.Dataset, ref: xr.Dataset) -> None:
    xr.testing.assert_identical(ds, ref)
    assert list(ds.variables) == list(ref.variables) == ORDER
    assert list(ds.sizes.items()) == list(ref.sizes.items())
    assert ds.attrs == ref.attrs and ds.encoding == ref.encoding == {}
    for k, v in ds.variables.items():
        r = ref.variables[k]
        assert type(v) is type(r) and type(v._data) is type(r._data), k
        assert v.dtype == r.dtype and v.attrs == r.attrs and v.encoding == r.encoding, k
    for dim in ("job", "time"):
        a, b = ds.xindexes[dim], ref.xindexes[dim]
        assert type(a) is type(b) and a.coord_dtype == b.coord_dtype and a.dim == b.dim
        assert a.index.equals(b.index) and a.index.name == b.index.name == dim
        assert a.index.dtype == b.index.dtype and type(a.index) is type(b.index)


# ------------------------------------------------------------------ rerun and round trip

@pytest.mark.parametrize("policy, params", [
    ("fitgpp", {"s": 8.0, "max_preemptions": 1}), ("rand", {"seed": 3, "max_preemptions": 2}),
    ("lrtp", {"max_preemptions": 3}), ("fifo", {})])
def test_attrs_are_enough_to_rerun(csv_path, policy, params):
    ds = simulate(csv_path, CLUSTER, policy, tick=30, **params)
    a = ds.attrs
    cluster = Cluster.from_json(a["cluster"])
    pol = make_policy(a["policy"], **json.loads(a["policy_params"]))
    w = json.loads(a["workload"])
    trace = read_trace(w["path"])
    assert trace.source["sha256"] == w["sha256"]  # the very same file
    again = simulate(trace, cluster, pol, tick=a["tick"], sample_every=a["sample_every"])
    xr.testing.assert_identical(ds, again)


def test_netcdf_round_trip(result, tmp_path):
    path = tmp_path / "r.nc"
    save(result, path)
    back = load(path)
    xr.testing.assert_identical(result, back)
    for v in list(JOB_VARS) + TIME_VARS:
        assert back[v].dtype.kind == result[v].dtype.kind or v == "cls", v
    assert back["cls"].values.tolist() == result["cls"].values.tolist()
    assert summarize(back).equals(summarize(result))


# ------------------------------------------------------------------ time series

def test_default_sampling_is_at_most_2000_points():
    # one 10^6-tick job: the default step grows so the series stays <= 2000 samples
    df = pd.DataFrame([(1, "BE", 0.0, 60.0 * 10**6, 1, 0, 0, 0.0),
                       (2, "TE", 6e5, 60.0, 1, 0, 0, np.nan)], columns=list(fitgpp.COLUMNS))
    ds = simulate(df, CLUSTER, "fitgpp")
    assert 1000 < ds.sizes["time"] <= 2000
    step = ds.attrs["sample_every"]
    assert step % 60 == 0 and np.allclose(np.diff(ds.time), step)
    assert ds.time.values[-1] + step >= 60.0 * 10**6
    # one of 32 GPUs busy the whole run, plus a second for one tick
    assert ds.gpu_util.values[0] == pytest.approx(1 / 32)
    assert ds.attrs["gpu_util_mean"] == pytest.approx((10**6 + 1) / 32 / 10**6)


def test_short_run_samples_every_tick(result):
    t_end = int(result.finish.max()) // 60
    assert result.attrs["sample_every"] == 60.0
    assert result.sizes["time"] == t_end
    assert result.time.values.tolist() == [60.0 * k for k in range(t_end)]


@pytest.mark.parametrize("every", [120, 600, 60 * 7])
def test_sample_every(csv_path, every):
    ds = simulate(csv_path, CLUSTER, "fitgpp", sample_every=every)
    t_end = float(ds.finish.max())
    assert ds.attrs["sample_every"] == every
    assert np.allclose(np.diff(ds.time), every) and ds.time.values[0] == 0
    assert ds.sizes["time"] == math.ceil(t_end / every)


@pytest.mark.parametrize("every", [90, 30, 0, -60, 60.5, float("nan"), float("inf")])
def test_sample_every_must_be_a_multiple_of_tick(every):
    with pytest.raises(SimulationError, match="sample_every"):
        simulate(busy_trace(n=5), CLUSTER, "fitgpp", sample_every=every)


@pytest.mark.parametrize("every", [None, 60, 300])
def test_time_integrals_match_per_job_totals(csv_path, every):
    ds = simulate(csv_path, CLUSTER, "fitgpp", max_preemptions=3, sample_every=every)
    step = ds.attrs["sample_every"]
    total = ds.attrs["total_gpus"]
    t0, t_end = float(ds.submit.min()), float(ds.finish.max())
    assert t0 > 0  # the trace starts late, so the mean is over [first submit, last finish)
    # every job runs exactly its work, so busy GPU-seconds = sum(gpu * work)
    busy = float((ds.gpu * ds.work).sum())
    assert float(ds.gpu_util.sum()) * step == pytest.approx(busy / total, rel=1e-12)
    assert ds.attrs["gpu_util_mean"] == pytest.approx(busy / (total * (t_end - t0)), rel=1e-12)
    assert float(ds.gpu_util.sum()) * step / (t_end - t0) == pytest.approx(
        ds.attrs["gpu_util_mean"], rel=1e-12)
    # GPUs in grace periods and queue lengths integrate to the per-job stopped and wait times
    assert float(ds.gpu_stopping.sum()) * step * total == pytest.approx(
        float((ds.gpu * ds.stopped).sum()), rel=1e-12)
    te = ds.cls == "TE"
    assert float(ds.waiting_te.sum()) * step == pytest.approx(float(ds.wait.where(te).sum()))
    assert float(ds.waiting_be.sum()) * step == pytest.approx(float(ds.wait.where(~te).sum()))
    assert float(ds.preemptions.sum()) > 0 and float(ds.stopped.sum()) > 0  # not vacuous
    assert (ds.gpu_util + ds.gpu_stopping).max() <= 1 + 1e-12


# ------------------------------------------------------------------ summarize

@pytest.mark.parametrize("policy", ["fifo", "fitgpp"])
def test_summarize_matches_numpy(csv_path, policy):
    ds = simulate(csv_path, CLUSTER, policy)
    table = summarize(ds)
    assert list(table.index) == ["TE", "BE"]
    for c in ("TE", "BE"):
        sd = ds.slowdown.values[ds.cls.values == c]
        assert table.loc[c, "jobs"] == len(sd) > 0
        assert table.loc[c, "slowdown_median"] == np.median(sd)
        assert table.loc[c, "slowdown_p95"] == np.percentile(sd, 95)
        assert table.loc[c, "preemptions"] == ds.preemptions.values[ds.cls.values == c].sum()
    assert table.loc["TE", "preemptions"] == 0
    assert (ds.slowdown >= 1).all()


def test_segments_partition_each_jobs_time_in_the_system():
    """segments=True: run intervals sum to work and end at finish; one grace interval per
    preemption, lasting stopped/preemptions on average; nothing else in the Dataset changes."""
    import numpy as np
    from fitgpp.workload import load_model, synthesize
    cl = fitgpp.Cluster.homogeneous(4, gpu=8)
    tr = synthesize(load_model("paper-default"), n_jobs=300, seed=1, load=1.2, cluster=cl)
    plain = fitgpp.simulate(tr, cl, "fitgpp", s=8.0)
    ds = fitgpp.simulate(tr, cl, "fitgpp", s=8.0, segments=True)
    xr.testing.assert_identical(ds.drop_dims("segment"), plain)
    kind = ds["segment_kind"].to_numpy()
    job = ds["segment_job"].to_numpy()
    length = (ds["segment_end"] - ds["segment_start"]).to_numpy()
    assert (length[kind == "run"] > 0).all() and (length >= 0).all()
    run_total = pd.Series(length[kind == "run"]).groupby(job[kind == "run"]).sum()
    np.testing.assert_array_equal(run_total.reindex(ds["job"].to_numpy()), ds["work"].to_numpy())
    grace = pd.Series(length[kind == "grace"]).groupby(job[kind == "grace"])
    assert int((kind == "grace").sum()) == int(ds["preemptions"].sum()) > 0
    np.testing.assert_array_equal(grace.sum().reindex(ds["job"].to_numpy(), fill_value=0),
                                  ds["stopped"].to_numpy())
    last = pd.Series(ds["segment_end"].to_numpy()[kind == "run"]).groupby(job[kind == "run"]).max()
    np.testing.assert_array_equal(last.reindex(ds["job"].to_numpy()), ds["finish"].to_numpy())
