"""`fitgpp reproduce --quick` end to end, and the statistics behind results.md."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import time
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import xarray as xr

import fitgpp
from fitgpp.analysis import metrics
from fitgpp.studies import reproduce
from fitgpp import simulate, summarize
from fitgpp.cli import main
from fitgpp.sweep import runner


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    """Each test gets its own sweep cache (never the user's ~/.cache/fitgpp)."""
    monkeypatch.setenv("FITGPP_CACHE", str(tmp_path / "cache"))


SMALL = reproduce.Size(n_jobs=150, seeds=(0, 1, 2), timeline_jobs=50, real_jobs=300)


def test_changes_are_paired_per_seed_against_fifo():
    study = reproduce.RQ1.replace(policies={"fifo": {}, "prio": {}})
    o = study.run(SMALL)
    table = o.table().set_index("policy")
    per_seed = []
    for seed in SMALL.seeds:
        f, p = (summarize(o.run(n, seed=seed)) for n in ("fifo", "prio"))
        per_seed.append(metrics.change(p.loc["BE", "slowdown_p95"], f.loc["BE", "slowdown_p95"]))
    assert table.loc["FIFO", "change_te_p95"] == 0
    assert table.loc["PRIO", "change_be_p95"] == pytest.approx(np.mean(per_seed))
    m, lo, hi = metrics.t_interval(per_seed)
    assert (table.loc["PRIO", "change_be_p95_lo"], table.loc["PRIO", "change_be_p95_hi"]) == \
        pytest.approx((lo, hi))


def test_study_numbers_are_those_of_a_direct_simulation():
    """What a study reports for a cell is what simulate gives on that seed's workload."""
    from fitgpp.workload import load_model, synthesize
    o = reproduce.RQ3.run(SMALL)
    seed, g = 1, 4.0
    tr = synthesize(load_model(SMALL.model), n_jobs=SMALL.n_jobs, seed=seed, load=SMALL.load,
                    grace_scale=g, cluster=SMALL.cluster)
    want = simulate(tr, SMALL.cluster, "fitgpp", s=8.0)
    got = o.run("fitgpp", seed=seed, s=8.0, grace_scale=g)
    assert summarize(got).equals(summarize(want))
    xr.testing.assert_equal(got["slowdown"], want["slowdown"])
    conf = next(c for c in o.configurations()
                if c["label"] == "FitGpp s=8" and c["knobs"] == {"grace_scale": g})
    assert o.values(conf, "slowdown_p95", "TE")[seed] == summarize(want).loc["TE", "slowdown_p95"]
    with pytest.raises(reproduce.ReproduceError, match="cells match"):
        o.run("fitgpp", seed=seed, grace_scale=g)      # s=4 or s=8?


def test_every_study_declares_its_dimensions():
    dims = reproduce.STUDIES["rq4"].dimensions(reproduce.FULL)
    assert dims["grace"] == tuple(reproduce.GRACE_SHAPES)
    assert dims["te_fraction"] == reproduce.TE_FRACTIONS and dims["seed"] == (0, 1, 2, 3, 4)
    assert dims["policy"] == ("fifo", "fitgpp") and dims["s"] == (4.0,)
    rq2 = reproduce.STUDIES["rq2"].dimensions(reproduce.QUICK)
    assert rq2["s"] == reproduce.S_VALUES and rq2["max_preemptions"] == reproduce.P_VALUES
    assert reproduce.STUDIES["rq5"].dimensions(reproduce.FULL)["seed"] == (0,)
    assert reproduce.FULL.workers is None and reproduce.QUICK.workers == 0   # full: every core


def test_a_warm_cache_runs_no_simulation(tmp_path, monkeypatch):
    """Cold on Dask (2 workers), then warm: no cell computed, no cluster started, and the
    same tables and findings."""
    size = dataclasses.replace(SMALL, workers=2)
    which = ["rq1", "rq3"] + (["rq5"] if reproduce.ALIBABA.is_file() else [])
    cold = reproduce.run_all(tmp_path / "a", size=size, which=which,
                             formats=(".svg",), log=lambda s: None)
    assert all(r.stats["computed"] == r.stats["unique"] > 0 for r in cold.values())

    def boom(*a, **k):
        raise AssertionError("simulated although every cell is cached")
    monkeypatch.setattr(runner, "compute_cell", boom)
    from fitgpp.studies import _lazy
    monkeypatch.setattr(_lazy._LazyCluster, "__call__", boom)
    warm = reproduce.run_all(tmp_path / "b", size=size, which=which,
                             formats=(".svg",), log=lambda s: None)
    for k, r in warm.items():
        assert r.stats["computed"] == 0 and r.stats["cached"] == r.stats["unique"]
        pd.testing.assert_frame_equal(r.table, cold[k].table)
        assert r.finding == cold[k].finding


def test_missing_real_trace_is_a_clear_error(tmp_path):
    with pytest.raises(reproduce.ReproduceError, match="not found"):
        reproduce.alibaba_trace(tmp_path / "nope.csv")


def test_reproduce_quick_writes_every_figure_and_results_md(tmp_path, capsys):
    t0 = time.perf_counter()
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    elapsed = time.perf_counter() - t0
    md = (tmp_path / "results.md").read_text()
    for needle in ("-96.6 %", "+18.0 %", "+23.9 %", "FitGpp s=4", "RQ1", "RQ2", "RQ3", "RQ4", "RQ5",
                   "RQ6", "paper-default"):
        assert needle in md, needle
    assert (tmp_path / "rq6.csv").is_file() and (tmp_path / "rq6_net.png").is_file()
    # every number carries its run length and steadiness: under the headline, in every
    # study's section, and in the run-length study's own section
    head = md.split("## Headline")[1].split("## One line")[0]
    assert "Run length: 600 jobs per run; FIFO " in head and "runs steady" in head
    assert md.count("Steady state per configuration") == len(reproduce.STUDIES)
    assert "## Run length: is the headline a steady-state figure?" in md
    assert "Usable capacity:" in md and (tmp_path / "runlen.csv").is_file()
    assert "matches or beats" not in md and "misses" not in head
    # RQ5 runs on the real trace shipped in traces/: nothing may be left out
    assert "NOT RUN" not in md and (tmp_path / "rq5.csv").is_file()
    pngs = sorted(tmp_path.glob("*.png"))
    assert len(pngs) >= 10
    for png in pngs:
        svg, pdf = png.with_suffix(".svg"), png.with_suffix(".pdf")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert pdf.read_bytes()[:5] == b"%PDF-"
        assert ET.parse(svg).getroot().tag.endswith("svg")
        assert f"`{png.name}`" in md or png.stem in md
    print(f"fitgpp reproduce --quick: {elapsed:.1f} s")


def test_cli_names_every_research_question_without_importing_altair():
    import subprocess
    import sys

    from fitgpp.studies.reproduce import RQS, STUDIES
    assert set(STUDIES) <= set(RQS)
    assert main(["reproduce", "--quick", "--only", "rq9", "--out", "x"]) == 2   # named, refused
    code = ("import sys; from fitgpp.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('altair', 'fitgpp.figures.plots', 'distributed') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_rq2_on_wide_te_jobs_shows_the_trade_off_the_default_workload_lacks():
    """With TE jobs of 4-8 GPUs, larger s lowers TE p95 and raises BE p95 (the paper's
    direction); on paper-default TE p95 stays at its floor whatever s. At load 0.9: in 600
    jobs at the default 0.8 too few wide TE jobs meet a full cluster for s to matter."""
    size = reproduce.Size(n_jobs=600, seeds=(0, 1), load=0.9)
    wide = reproduce.rq2(size, s_values=(0.5, 4.0), p_values=(3,), model="paper-wide-te")
    fit = wide.table[wide.table["family"] == "FitGpp"].set_index("s")
    assert fit.loc[4.0, "te_p95"] < fit.loc[0.5, "te_p95"]
    assert fit.loc[4.0, "be_p95"] > fit.loc[0.5, "be_p95"]
    # two seeds: the trend is shown, but the paired test cannot say "agrees"
    assert wide.key == "rq2w" and "Cannot tell whether larger s trades TE latency" in wide.finding
    assert "Agrees" not in wide.finding
    base = reproduce.rq2(size, s_values=(0.5, 4.0), p_values=(3,))
    # "flat" is a claim the paired test must make; from 2 seeds it cannot tell
    assert base.key == "rq2" and "flat" not in base.finding and "Cannot tell" in base.finding


def test_every_default_load_is_the_declared_one():
    """Studies, the workbench and RQ5's real trace all default to fitgpp.DEFAULT_LOAD."""
    import inspect

    from fitgpp.studies.rq5 import alibaba_trace
    from fitgpp.workbook.workbench import Values
    assert fitgpp.DEFAULT_LOAD == 0.8    # docs/run-length.md, "Why the default load is 0.8"
    assert reproduce.QUICK.load == reproduce.FULL.load == Values().load == fitgpp.DEFAULT_LOAD
    assert inspect.signature(alibaba_trace).parameters["load"].default == fitgpp.DEFAULT_LOAD


def _without_duration(md: str) -> str:
    """results.md without its one run-dependent field: the seconds the run took, in the
    line under the title (``fitgpp 0.1.0; 12 s; seeds ...``)."""
    head, n = re.subn(r"^(fitgpp \S+; )\d+ s; ", r"\1<seconds>; ", md, count=1, flags=re.M)
    assert n == 1, "results.md no longer states its duration where this test expects it"
    return head


def test_a_warm_run_writes_the_same_report_and_figures_without_drawing_to_lay_out(
        tmp_path, monkeypatch):
    """Warm against cold: results.md is byte-identical but for its duration, every figure
    file is byte-identical, the manifests differ only in their ``written`` times; the warm
    run simulates nothing and neither lays a chart out nor measures one."""
    which, fmts = ["rq1", "rq3"], (".png", ".svg", ".pdf")
    reproduce.run_all(tmp_path / "cold", size=SMALL, which=which, formats=fmts,
                      log=lambda s: None)

    def boom(*a, **k):
        raise AssertionError("simulated, laid out or measured on a warm run")
    monkeypatch.setattr(runner, "compute_cell", boom)
    monkeypatch.setattr(sys.modules["fitgpp.figures.plots.render"], "_measure", boom)
    warm = reproduce.run_all(tmp_path / "warm", size=SMALL, which=which, formats=fmts,
                             log=lambda s: None)
    assert all(r.stats["computed"] == 0 for r in warm.values())
    cold_md, warm_md = ((tmp_path / d / "results.md").read_text() for d in ("cold", "warm"))
    assert _without_duration(warm_md) == _without_duration(cold_md)
    files = sorted(p.name for p in (tmp_path / "cold").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "warm").iterdir()) and len(files) > 10
    for name in files:
        if name not in ("results.md", "manifest.json"):
            a, b = ((tmp_path / d / name).read_bytes() for d in ("cold", "warm"))
            assert a == b, name
    man = [json.loads((tmp_path / d / "manifest.json").read_text())["figures"]
           for d in ("cold", "warm")]
    for name, rec in man[0].items():
        assert {k: v for k, v in rec.items() if k != "written"} == \
            {k: v for k, v in man[1][name].items() if k != "written"}, name


def test_a_steady_headline_is_not_said_to_be_free_of_run_length():
    """At load 0.8 both 600-job runs are judged steady, yet FIFO's TE p95 is 4.24 there and
    56.8 at 10,000 jobs: "steady" means no detectable growth, not convergence, and the
    headline's note must not say the changes are independent of the run length."""
    st = pd.DataFrame({"policy": ["FIFO", "FitGpp s=4"], "steady": [2, 2], "seeds": [2, 2],
                       "jobs": [600, 600]})
    r = reproduce.RQResult(key="rq1", title="t", question="q", table=pd.DataFrame(), charts={},
                           steadiness=st)
    note = reproduce.run_length_note(r)
    assert "artefact" not in note and "not convergence" in note and "run-length study" in note
    grows = reproduce.run_length_note(dataclasses.replace(r, steadiness=st.assign(steady=[1, 2])))
    assert "move with the number of jobs" in grows


def test_a_refused_figure_leaves_everything_else_written_and_is_named(tmp_path, monkeypatch):
    """Issue 35: one figure the check refuses stopped the export. ``fitgpp reproduce`` writes
    every other figure, the tables and results.md (which lists the figure without a PNG),
    then raises naming it and why (the command exits with status 2); every figure written
    carries its study's caption."""
    from fitgpp.figures.export import FiguresRefused
    from fitgpp.studies import rq3
    study = reproduce.STUDIES["rq3"]

    def analyze(o):
        r = rq3._rq3(o)
        spec = next(iter(r.charts.values())).to_dict()
        r.charts["rq3_untitled"] = {k: v for k, v in spec.items() if k != "title"}
        return r
    monkeypatch.setitem(reproduce.STUDIES, "rq3", study.replace(
        analyze=analyze, knobs={"grace_scale": (1.0, 4.0)}))
    with pytest.raises(FiguresRefused, match=r"(?s)rq3_untitled is not paper-ready.*caption"):
        reproduce.run_all(tmp_path, size=SMALL, which=["rq3"], formats=(".png",),
                          log=lambda *_: None)
    md = (tmp_path / "results.md").read_text()
    assert "Figure `rq3_untitled` (no PNG exported)" in md and (tmp_path / "rq3.csv").is_file()
    man = json.loads((tmp_path / "manifest.json").read_text())["figures"]
    assert set(man) == {"rq3_change_vs_grace.png", "rq3_long_be_jobs.png"}
    assert man["rq3_long_be_jobs.png"]["caption"] == study.captions["long_be_jobs"]
    # every key of the rows in results.md's table: the grace scale beside the policy
    assert "| grace scale | policy |" in md
