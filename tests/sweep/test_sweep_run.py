"""Sweeps run in process: metrics, broadcasting, summaries, the cache, resuming, the CLI."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import fitgpp
from fitgpp.cli import main
from fitgpp.sweep import CacheWarning, CellCache, Experiment, Workload, run_sweep
from fitgpp.sweep import cell as cell_mod


def small_trace(path, n=120, seed=5):
    """A busy little trace: TE jobs of minutes, BE jobs of hours on 4 nodes of 4 GPUs."""
    rng = np.random.default_rng(seed)
    te = rng.random(n) < 0.4
    pd.DataFrame({
        "job_id": np.arange(n), "cls": np.where(te, "TE", "BE"),
        "submit_time": np.sort(rng.uniform(0, 6 * 3600, n)),
        "duration": np.where(te, rng.exponential(600, n), rng.lognormal(8.0, 1.0, n)) + 1,
        "gpu": np.where(te, rng.integers(1, 3, n), rng.choice([1, 2, 4], n)),
        "cpu_milli": 1000, "mem_mib": 1024,
        "grace_period": np.where(te, np.nan, rng.uniform(0, 600, n)),
    }).to_csv(path, index=False)
    return path


CLUSTER = fitgpp.Cluster.homogeneous(4, gpu=4)


@pytest.fixture
def trace_exp(tmp_path):
    return Experiment(workload=Workload(trace=str(small_trace(tmp_path / "t.csv"))),
                      policies={"fifo": {}, "fitgpp": {"s": [1.0, 4.0], "max_preemptions": [1, 3]},
                                "lrtp": {"max_preemptions": [3]}, "rand": {}},
                      seeds=[0, 1, 2], cluster=CLUSTER)


def sweep(exp, tmp_path, **kw):
    kw.setdefault("cache", tmp_path / "cache")
    kw.setdefault("progress", False)
    return run_sweep(exp, workers=0, **kw)


def test_metrics_match_a_direct_simulation(trace_exp, tmp_path):
    ds = sweep(trace_exp, tmp_path)
    direct = fitgpp.simulate(trace_exp.workload.trace, CLUSTER, "fitgpp", s=1.0,
                             max_preemptions=3)
    got = ds.sel(policy="fitgpp", s=1.0, max_preemptions=3, backfill="none", seed=1)
    for c in ("TE", "BE"):
        sel = direct["cls"] == c
        sd = direct["slowdown"].where(sel, drop=True).values
        assert float(got["slowdown_median"].sel(cls=c)) == np.median(sd)
        assert float(got["slowdown_p95"].sel(cls=c)) == np.percentile(sd, 95)
        assert float(got["slowdown_p99"].sel(cls=c)) == np.percentile(sd, 99)
        assert float(got["wait_mean"].sel(cls=c)) == direct["wait"].where(sel, drop=True).mean()
        pre = direct["preemptions"].where(sel, drop=True)
        assert float(got["preemptions_per_job"].sel(cls=c)) == float(pre.sum() / sel.sum())
    assert float(got["gpu_util"]) == direct.attrs["gpu_util_mean"]
    assert float(ds["preemptions_per_job"].sel(policy="fitgpp", cls="BE").max()) > 0, \
        "the test trace should make FitGpp preempt"


def test_grid_broadcasting_and_missing_combinations(trace_exp, tmp_path):
    ds = sweep(trace_exp, tmp_path)
    assert dict(ds.sizes) == {"policy": 4, "s": 2, "max_preemptions": 2, "backfill": 1,
                              "seed": 3, "cls": 2}
    fifo = ds["slowdown_p95"].sel(policy="fifo")
    assert (fifo == fifo.isel(s=0, max_preemptions=0)).all()  # computed once, repeated
    assert fifo.notnull().all()
    lrtp = ds["slowdown_p95"].sel(policy="lrtp")
    assert lrtp.sel(max_preemptions=1).isnull().all()  # lrtp's grid lists only P=3
    assert (lrtp.sel(max_preemptions=3) == lrtp.sel(max_preemptions=3, s=1.0)).all()
    assert json.loads(ds.attrs["broadcast"]) == {"fifo": ["max_preemptions", "s"],
                                                 "fitgpp": ["backfill"],
                                                 "lrtp": ["backfill", "s"],
                                                 "rand": ["backfill", "s"]}
    # on a fixed trace RAND's seed is the only thing the seed changes
    assert (ds["slowdown_p95"].sel(policy="fitgpp").diff("seed") == 0).all()
    assert Experiment.from_dict(json.loads(ds.attrs["experiment"])) == trace_exp


def test_seed_summaries_and_change_against_fifo(tmp_path):
    from fitgpp.workload import paper_default
    model = tmp_path / "m.json"
    paper_default().save(model)
    exp = Experiment(workload=Workload(model=str(model), n_jobs=150, load=[0.9],
                                       te_fraction=[0.3, 0.6]),
                     policies=["fifo", "fitgpp"], seeds=[0, 1, 2],
                     cluster=fitgpp.Cluster.homogeneous(4, gpu=8))
    ds = sweep(exp, tmp_path)
    assert dict(ds.sizes) == {"policy": 2, "s": 1, "max_preemptions": 1, "backfill": 1,
                              "load": 1, "te_fraction": 2, "seed": 3, "cls": 2}
    assert int(ds["jobs"].sel(te_fraction=0.6, seed=0).sum()) == 150
    x = ds["slowdown_p95"].sel(policy="fitgpp", te_fraction=0.3, cls="BE").squeeze().values
    assert len(set(x)) > 1, "seeds should draw different workloads"
    mean, half = x.mean(), stats.t.ppf(0.975, 2) * x.std(ddof=1) / np.sqrt(3)
    got = ds.sel(policy="fitgpp", te_fraction=0.3, cls="BE").squeeze()
    assert float(got["slowdown_p95_mean"]) == pytest.approx(mean, rel=1e-12)
    assert float(got["slowdown_p95_ci95"]) == pytest.approx(half, rel=1e-12)
    f = ds["slowdown_median"].sel(policy="fifo", te_fraction=0.6, cls="TE", seed=2).squeeze()
    g = ds["slowdown_median"].sel(policy="fitgpp", te_fraction=0.6, cls="TE", seed=2).squeeze()
    vs = ds["slowdown_median_vs_fifo"].sel(policy="fitgpp", te_fraction=0.6, cls="TE", seed=2)
    assert float(vs.squeeze()) == pytest.approx(float((g - f) / f), rel=1e-12)
    assert (ds["slowdown_p95_vs_fifo"].sel(policy="fifo") == 0).all()
    assert "slowdown_p95_vs_fifo_mean" in ds and "slowdown_p95_vs_fifo_ci95" in ds


def test_rerun_calls_no_simulation(trace_exp, tmp_path, monkeypatch):
    stats1, stats2 = {}, {}
    first = sweep(trace_exp, tmp_path, stats=stats1)
    # fifo, lrtp and fitgpp do not depend on the seed on a fixed trace: computed once
    assert stats1["computed"] == 1 + 4 + 1 + 3 and stats1["cached"] == 0

    def no(*a, **k):
        raise AssertionError("simulate was called on a rerun")
    monkeypatch.setattr(cell_mod, "simulate", no)
    again = sweep(trace_exp, tmp_path, stats=stats2)
    assert stats2["computed"] == 0 and stats2["cached"] == stats1["computed"]
    xr.testing.assert_identical(first, again)


def test_interrupted_sweep_keeps_finished_cells_and_resumes(trace_exp, tmp_path):
    whole = sweep(trace_exp, tmp_path, cache=False)

    def stop_after_four(done, total):
        if done == 4:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        sweep(trace_exp, tmp_path, progress=stop_after_four)
    st = {}
    resumed = sweep(trace_exp, tmp_path, stats=st)
    assert st["cached"] == 4 and st["computed"] == st["unique"] - 4
    xr.testing.assert_identical(whole, resumed)


def _damage(files):
    blob = bytearray(files[0].read_bytes())
    blob[len(blob) // 2] ^= 0xFF                    # one flipped byte
    files[0].write_bytes(bytes(blob))
    files[1].write_bytes(files[1].read_bytes()[:100])  # a truncated write
    files[2].write_bytes(files[3].read_bytes())        # another cell's entry


@pytest.mark.parametrize("summaries", [False, True])
def test_corrupt_cache_entry_is_detected_and_recomputed(trace_exp, tmp_path, summaries):
    """Without their summaries (an older cache), the three damaged cells are found at the
    lookup and computed again. With them (fitgpp.sweep.derived), the truncated cell and the
    other cell's entry are found there (size, payload sha256); the flipped byte, in a cell whose
    summary still describes it, when its arrays are first read: computed again then, the same
    numbers (the summary's were computed from it before it was damaged)."""
    first = sweep(trace_exp, tmp_path)
    files = sorted((tmp_path / "cache").rglob("*.cell"))
    assert len(files) == 9 and len(list((tmp_path / "cache").rglob("*.sum"))) == 9
    if not summaries:
        for f in (tmp_path / "cache").rglob("*.sum"):
            f.unlink()
    _damage(files)
    st, runs = {}, {}
    with pytest.warns(CacheWarning, match="corrupt") as rec:
        again = sweep(trace_exp, tmp_path, stats=st, runs=runs)
        xr.testing.assert_identical(first, again)
        assert len(rec) == 3 - summaries and st["computed"] == 3 - summaries
        ds = {c: fitgpp.sweep.run_dataset(r) for c, r in runs.items()}   # every array read
    assert len(rec) == 3
    fresh = sweep(trace_exp, tmp_path / "fresh", runs=(want := {}))
    for c, r in want.items():
        xr.testing.assert_identical(ds[c].drop_attrs(), fitgpp.sweep.run_dataset(r).drop_attrs())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # repaired: no warning now
        xr.testing.assert_identical(fresh, sweep(trace_exp, tmp_path))


def test_cache_location_and_no_leftover_temp_files(trace_exp, tmp_path, monkeypatch):
    monkeypatch.setenv("FITGPP_CACHE", str(tmp_path / "envcache"))
    assert CellCache().root == tmp_path / "envcache"
    run_sweep(trace_exp, workers=0, progress=False)
    assert len(list((tmp_path / "envcache").rglob("*.cell"))) == 9
    assert not list((tmp_path / "envcache").rglob("*.tmp"))
    monkeypatch.delenv("FITGPP_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert CellCache().root == tmp_path / "xdg" / "fitgpp"


def test_cache_key_changes_with_what_determines_a_cell(trace_exp):
    src = cell_mod.resolve_source(trace_exp)
    cells = cell_mod.cells_of(trace_exp)
    keys = {cell_mod.cell_key(trace_exp, src, c) for c in cells}
    assert len(keys) == 9
    other = Experiment(workload=trace_exp.workload, policies=trace_exp.policies,
                       seeds=trace_exp.seeds, cluster=CLUSTER, tick=30)
    assert not keys & {cell_mod.cell_key(other, src, c) for c in cells}


def test_cli_writes_the_dataset(trace_exp, tmp_path, capsys, monkeypatch):
    import fitgpp.cli
    monkeypatch.setattr(fitgpp.cli, "COMMANDS", ("sweep",))  # spare importing the others
    cfg = tmp_path / "exp.toml"
    cfg.write_text(f'seeds = [0, 1]\n[workload]\ntrace = "{trace_exp.workload.trace}"\n'
                   '[cluster]\nnodes = 4\ngpu = 4\n[policies.fifo]\n[policies.prio]\n'
                   '[policies.fitgpp]\n')
    out = tmp_path / "sweep.nc"
    args = [str(cfg), "--out", str(out), "--workers", "0", "--quiet",
            "--cache", str(tmp_path / "c")]
    assert main(["sweep", *args]) == 0
    ds = fitgpp.load(out)
    assert list(ds["policy"].values) == ["fifo", "prio", "fitgpp"]
    assert "3 computed" in capsys.readouterr().out
    assert main(["sweep", *args]) == 2                   # an existing --out is kept
    assert "sweep.nc: exists; pass --overwrite" in capsys.readouterr().err
    args.append("--overwrite")
    assert main(["sweep", *args]) == 0
    assert "0 computed, 3 from cache" in capsys.readouterr().out
    cfg.write_text(cfg.read_text().replace("[policies.fitgpp]", "[policies.fitgpp]\nss = 1"))
    assert main(["sweep", *args]) == 2
    assert "exp.toml: [policies.fitgpp] unknown key 'ss'" in capsys.readouterr().err


def test_workers_and_scheduler_are_exclusive(trace_exp, monkeypatch):
    from fitgpp.sweep import SweepError
    with pytest.raises(SweepError, match="not both"):
        run_sweep(trace_exp, workers=2, scheduler="tcp://127.0.0.1:1", cache=False)
    with pytest.raises(SweepError, match=r"workers must be an integer in \[0, 1024\]"):
        run_sweep(trace_exp, workers=-1, cache=False)
    # in-process runs ignore FITGPP_SCHEDULER (nothing listens at this address)
    monkeypatch.setenv("FITGPP_SCHEDULER", "tcp://127.0.0.1:1")
    st = {}
    run_sweep(trace_exp, workers=0, cache=False, progress=False, stats=st)
    assert st["computed"] == 9


def test_model_object_and_its_file_share_cache_entries(tmp_path):
    from fitgpp.workload import paper_default
    m = paper_default()
    m.save(tmp_path / "m.json")
    kw = dict(policies=["fifo", "fitgpp"], seeds=[0, 1],
              cluster=fitgpp.Cluster.homogeneous(4, gpu=8))
    st1, st2 = {}, {}
    a = sweep(Experiment(workload=Workload(model=str(tmp_path / "m.json"), n_jobs=80), **kw),
              tmp_path, stats=st1)
    b = sweep(Experiment(workload=Workload(model=m, n_jobs=80), **kw), tmp_path, stats=st2)
    assert st1["computed"] == 4 and st2["computed"] == 0  # the key is the model's content
    assert a.attrs["workload_sha256"] == b.attrs["workload_sha256"] == m.sha256()
    xr.testing.assert_identical(a.drop_attrs(), b.drop_attrs())


# ------------------------------------------------------------------ per-run results
def test_cells_keep_what_the_figures_need_and_it_survives_the_cache(trace_exp, tmp_path):
    """run_dataset of a cell (live, then from the cache) equals simulate's own result on
    every variable a figure reads, so no figure needs a second simulation."""
    from fitgpp.sweep import run_dataset
    from fitgpp.sweep.runs import JOB_VARS, TIME_VARS
    live, cached, stats = {}, {}, {}
    sweep(trace_exp, tmp_path, runs=live)
    sweep(trace_exp, tmp_path, runs=cached, stats=stats)
    assert stats["computed"] == 0 and stats["cached"] == stats["unique"]
    cell = next(c for c in live if c.policy == "fitgpp" and dict(c.params)["s"] == 4.0
                and dict(c.params)["max_preemptions"] == 3)
    want = fitgpp.simulate(str(tmp_path / "t.csv"), CLUSTER, "fitgpp", s=4.0, max_preemptions=3,
                           segments=True, tick=trace_exp.tick)
    assert int(want["preemptions"].sum()) > 0, "a run without preemptions would test little"
    assert live[cell]["finish"].dtype == np.int32 and want["finish"].dtype == np.float64
    for got in (run_dataset(live[cell]), run_dataset(cached[cell])):
        for k in ("cls", *JOB_VARS, *TIME_VARS, "segment_job", "segment_node", "segment_kind",
                  "segment_start", "segment_end"):
            np.testing.assert_array_equal(got[k].to_numpy(), want[k].to_numpy(), err_msg=k)
            assert got[k].dtype == want[k].dtype, k   # stored compactly, restored exactly
        np.testing.assert_array_equal(got["job"].to_numpy(), want["job"].to_numpy())
        assert got.attrs["policy_params"] == want.attrs["policy_params"]
        assert got["slowdown"].attrs["units"] == "1"
        assert fitgpp.summarize(got).equals(fitgpp.summarize(want))


def test_a_trace_object_is_a_workload(tmp_path):
    tr = fitgpp.read_trace(small_trace(tmp_path / "t.csv"), cluster=CLUSTER)
    exp = Experiment(workload=Workload(trace=tr), policies=["fifo", "prio"], cluster=CLUSTER)
    by_path = Experiment(workload=Workload(trace=str(tmp_path / "t.csv")),
                         policies=["fifo", "prio"], cluster=CLUSTER)
    a, b = sweep(exp, tmp_path, cache=False), sweep(by_path, tmp_path, cache=False)
    np.testing.assert_array_equal(a["slowdown_p95"].values, b["slowdown_p95"].values)
    # the key follows the jobs: another trace object with one job changed is another workload
    src = cell_mod.resolve_source(exp)
    jobs = tr.jobs.copy()
    jobs.loc[0, "duration"] += 60
    other = cell_mod.resolve_source(Experiment(workload=Workload(
        trace=fitgpp.read_trace(jobs, cluster=CLUSTER)), policies=["fifo"], cluster=CLUSTER))
    assert src.digest != other.digest


def test_the_cache_key_covers_the_code_that_can_change_a_result(tmp_path):
    """code_digest lists what can change a result; each entry names files that exist (a
    rename must not drop one silently), an edit there changes it, an edit elsewhere not."""
    import shutil

    import fitgpp.sweep.cell as cell
    pkg = Path(cell.__file__).resolve().parents[1]
    for entry in cell.RESULT_CODE:
        assert list((pkg / entry).rglob("*.py")) if entry.endswith("/") \
            else (pkg / entry).is_file(), entry
    # every module of the simulator layer is covered (sim/columns.py and sim/heap.py, split
    # out of the engine, were not when RESULT_CODE listed files)
    covered = {f for e in cell.RESULT_CODE for f in ((pkg / e).rglob("*.py") if e.endswith("/")
                                                     else [pkg / e])}
    missing = sorted(str(f.relative_to(pkg)) for f in (pkg / "sim").rglob("*.py")
                     if f not in covered)
    assert not missing, f"simulator modules outside the cache key: {missing}"
    root = tmp_path / "fitgpp"
    shutil.copytree(pkg, root, ignore=shutil.ignore_patterns("__pycache__"))
    base = cell.code_digest(root)
    assert base == cell.code_digest()
    for name, changes in (("figures/plots/base.py", False), ("cli/main.py", False),
                          ("cli/sweep.py", False), ("sim/engine.py", True), ("sim/ledger.py", True),
                          ("sim/heap.py", True), ("sim/columns.py", True),
                          ("sim/policies/fifo.py", True),
                          ("workload/synth.py", True), ("sweep/runs.py", True)):
        f = root / name
        text = f.read_text()
        f.write_text(text + "\n# edited\n")
        assert (cell.code_digest(root) != base) == changes, name
        f.write_text(text)


def test_a_cell_records_what_its_simulation_cost(trace_exp, tmp_path):
    """Each cached cell keeps the wall and CPU seconds of its simulation (a cold run's cost
    can be read from a filled cache); a warm sweep reads them back unchanged."""
    live, cached = {}, {}
    sweep(trace_exp, tmp_path, runs=live)
    sweep(trace_exp, tmp_path, runs=cached)
    for c, res in live.items():
        assert res["compute_wall_s"] > 0 and res["compute_cpu_s"] > 0, c
        assert cached[c]["compute_cpu_s"] == res["compute_cpu_s"]
        assert cached[c]["compute_wall_s"] == res["compute_wall_s"]


@pytest.mark.parametrize("cores, policies, dask", [
    (1, None, False), (2, None, False), (4, None, True), (4, {"fifo": {}}, False)])
def test_workers_left_to_the_sweep_use_dask_only_where_it_can_pay(trace_exp, monkeypatch, cores,
                                                                   policies, dask):
    """On 2 cores, or for fewer than MIN_DASK_CELLS cells (here: FIFO on 3 seeds), the cells
    run in this process; else on a cluster sized to the machine; the results are the same."""
    from fitgpp.sweep import runner
    monkeypatch.delenv("FITGPP_SCHEDULER", raising=False)
    exp = trace_exp if policies is None else dataclasses.replace(trace_exp, policies=policies)
    serial = run_sweep(exp, workers=0, cache=False, progress=False)
    asked = []

    def fake_dask(source, todo, exp, workers, scheduler, done):  # computes here, records the call
        asked.append((workers, len(todo)))
        for k, c in todo.items():
            done(k, runner.compute_cell(source, c, exp.cluster, exp.tick, runner.policy_digest(c)))
    monkeypatch.setattr(runner, "_run_dask", fake_dask)
    monkeypatch.setattr(runner, "machine_workers", lambda: cores)
    auto = run_sweep(exp, cache=False, progress=False)
    assert (asked != []) == dask, asked
    xr.testing.assert_identical(auto, serial)
