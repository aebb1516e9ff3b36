"""RQ8: where the paper's trade-off holds. The declaration and its grid at both sizes, the
verdict of each cell from its interval, the ledger's decomposition (parts add up to the net,
paired per seed against FIFO), the sentences following their numbers, and the map passing the
figure check at both widths."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from fitgpp.figures import check as figcheck, plots
from fitgpp.studies import FULL, QUICK, STUDIES, Size
from fitgpp.studies import rq8

TINY = dataclasses.replace(QUICK, n_jobs=150, seeds=(0, 1, 2))


def test_declared_with_its_grid_at_both_sizes():
    st = STUDIES["rq8"]
    assert st.model == "paper-wide-te" and st.baseline == "fifo"
    full, quick = st.dimensions(FULL), st.dimensions(QUICK)
    assert full["restart_overhead"] == tuple(60.0 * m for m in (0, 5, 10, 15, 20, 30))
    assert full["te_fraction"] == (0.3, 0.5, 0.7) and full["load"] == (0.8, 0.85)
    assert full["n_jobs"] == (10000,) and len(full["seed"]) == 5
    cells = len(full["restart_overhead"]) * len(full["te_fraction"]) * len(full["load"])
    assert cells * len(full["seed"]) == 180
    assert len(quick["restart_overhead"]) * len(quick["te_fraction"]) < cells / 2
    assert set(full["policy"]) == {"fifo", "prio", "fitgpp"} and full["s"] == (4.0,)


@pytest.mark.parametrize("lo, hi, mean, want", [
    (0.01, 0.2, 0.1, "cost"), (-0.3, -0.02, -0.1, "gain"), (-0.1, 0.2, 0.05, "no detectable change"),
    (math.nan, math.nan, 0.4, "cannot tell"), (0.0, 0.3, 0.1, "no detectable change")])
def test_a_cell_has_a_sign_only_when_its_interval_excludes_zero(lo, hi, mean, want):
    assert rq8.sign_of(mean, lo, hi) == want


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("rq8-cache")


@pytest.fixture(scope="module")
def result(cache):
    return STUDIES["rq8"].result(TINY, cache=cache)


def test_the_result_judges_every_cell(result):
    cells = result.datasets["cells"]
    assert len(cells) == 3 * 2 * 2   # restart costs x TE shares x loads at this size
    for _, r in cells.iterrows():
        assert r["v_be_median"] == rq8.sign_of(r["change_be_median"], r["change_be_median_lo"],
                                               r["change_be_median_hi"])
        assert not r["holds"] or (r["v_be_median"] == "cost" and r["v_te"] == "gain")
    assert result.finding.startswith(rq8.finding_text(cells))
    # the table carries each policy's ledger, and FIFO never reloads or holds grace periods
    t = result.table
    fifo = t[t["name"] == "fifo"]
    assert (fifo["ledger_reload"] == 0).all() and (fifo["ledger_grace"] == 0).all()
    fit = t[t["name"] == "fitgpp"]
    assert (fit.loc[fit["overhead_min"] > 0, "ledger_reload"] > 0).any()
    assert (fit.loc[fit["overhead_min"] == 0, "ledger_reload"] == 0).all()


def test_the_decomposition_adds_up_to_the_net(result):
    lost = result.datasets["lost_vs_fifo"]
    wide = lost.pivot_table(index=rq8.KNOBS, columns="part", values="value")
    parts = [rq8.LOST[k] for k in ("reload", "held", "idle")]
    assert np.allclose(wide[parts].sum(axis=1), wide[rq8.LOST["net"]])
    assert wide[rq8.LOST["net"]].notna().all()


def test_ledger_runs_match_the_cells(result, cache):
    """The per-cell ledger RQ8 reads from the cell results (no Dataset rebuilt) equals each
    rebuilt run's ledger variables; a warm run simulates nothing."""
    o = STUDIES["rq8"].run(TINY, cache=cache)
    assert o.stats["computed"] == 0
    runs = rq8.ledger_runs(o)
    row = runs[(runs["name"] == "fitgpp") & (runs["seed"] == 1)].iloc[-1]
    ds = o.run("fitgpp", seed=1, load=row["load"], te_fraction=row["te_fraction"],
               restart_overhead=row["restart_overhead"])
    for part in ("useful_be", "reload", "grace", "idle_fits", "capacity"):
        assert row[part] == float(ds[f"ledger_{part}"])
    assert row["net"] == pytest.approx(float(ds["ledger_capacity"] - ds["ledger_useful_te"]
                                             - ds["ledger_useful_be"] - ds["ledger_idle_empty"]))


def _cells(verdicts, nets, overheads, holds=None):
    n = len(verdicts)
    return pd.DataFrame({
        "load": [0.8] * n, "te_fraction": [0.5] * n, "overhead_min": overheads,
        "restart_overhead": [60.0 * m for m in overheads], "v_be_median": verdicts,
        "change_be_median": [0.2 if v == "cost" else -0.1 for v in verdicts],
        "change_be_median_lo": [0.1 if v == "cost" else -0.2 for v in verdicts],
        "change_be_median_hi": [0.3 if v == "cost" else -0.05 for v in verdicts],
        "net": nets, "holds": holds or [False] * n, "means_match": holds or [False] * n,
        "v_be_p95": verdicts, "steady": [True] * n})


def test_the_finding_counts_what_the_cells_say():
    cells = _cells(["gain", "cost", "cost"], [-50.0, 40.0, -10.0], [0, 15, 30])
    text = rq8.finding_text(cells)
    assert "holds in 0 of 3 cells." in text and "The three numbers match" not in text
    assert "cost in 2, gain in 1, no detectable change in 0, cannot tell in 0 of 3" in text
    assert "a cost by its interval in 0 of 1." in text
    assert "in 2 of 3 cells with a sign" in text   # the net's sign agrees twice
    assert "where it is a cost, -10 to +40 GPU-h" in text and "a gain, -50 to -50 GPU-h" in text


def test_a_cell_whose_means_match_but_whose_signs_do_not_is_named():
    cells = _cells(["no detectable change", "cost"], [5.0, 9.0], [10, 15])
    cells["means_match"] = [True, False]
    cells.loc[0, "steady"] = False
    text = rq8.finding_text(cells)
    assert "holds in 0 of 2 cells." in text
    assert ("The three numbers match the paper's, but not every sign holds by its interval, in "
            "load 0.8, TE share 0.5, 10 min (BE median -10.0 % [-20.0 %, -5.0 %], BE p95 no "
            "detectable change; a run not steady).") in text


def test_the_headline_context_says_only_what_was_measured():
    r = type("R", (), {})()
    r.config = {"n_jobs": 10000, "seeds": [0, 1, 2, 3, 4]}
    r.datasets = {"cells": _cells(["gain", "cost", "cost"], [-5.0, 5.0, 9.0], [0, 15, 30])}
    text = rq8.headline_context(r)
    assert text.startswith("On RQ8's grid the paper's BE cost appears only with a restart cost.")
    assert "in 0 of 1 cells without a restart cost and in 2 of 2 with one" in text
    assert "load 0.8, TE share 0.5: 15, 30 min" in text
    r.datasets = {"cells": _cells(["cost", "cost"], [5.0, 9.0], [0, 15])}
    assert "appears only" not in rq8.headline_context(r)
    r.datasets = {"cells": _cells(["cannot tell"] * 2, [5.0, 9.0], [0, 15])}
    assert "cannot tell in any cell" in rq8.headline_context(r)


@pytest.mark.parametrize("width", ["full", "column"])
def test_the_figures_pass_the_figure_check(result, width):
    with plots.printed_at(width):
        cells, lost = result.datasets["cells"], result.datasets["lost_vs_fifo"]
        fake = type("O", (), {"study": STUDIES["rq8"], "size": TINY, "jobs": lambda self: 150})()
        charts = {**rq8.map_charts(cells, fake), "ledger": rq8.ledger_chart(lost)}
        assert sorted(charts) == ["ledger", "rq8_map_load80", "rq8_map_load85"]
        for name, chart in charts.items():
            spec = plots.fit_width(chart)
            svg = plots.render(spec, ".svg")
            assert figcheck.check(spec, svg=svg) == [], name


def _lost_like_the_quick_size(shares) -> pd.DataFrame:
    """A ledger decomposition shaped as the quick size's (2 seeds: no intervals), with its
    magnitudes: reloads growing to about 190 GPU-h, idle GPUs about -130, every part drawn."""
    rows = []
    for load in rq8.LOADS:
        for share in shares:
            for k, ro in enumerate((0.0, 900.0, 1800.0)):
                parts = {"reload": 95.0 * k, "held": 3.5 + 0.1 * k, "idle": -132.0 + 13.0 * k}
                parts["net"] = sum(parts.values())
                rows += [{"load": load, "te_fraction": share, "restart_overhead": ro,
                          "part": rq8.LOST[p], "value": v, "lo": np.nan, "hi": np.nan}
                         for p, v in parts.items()]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("width", ["full", "column"])
@pytest.mark.parametrize("shares", [rq8.QUICK_TE_SHARES, rq8.FULL_TE_SHARES])
def test_the_ledger_figure_passes_the_figure_check_at_the_sizes_users_run(width, shares):
    """At column width the ledger figure failed the check at the quick size (its plots 14 %
    of the figure, 25 % needed: a one-column legend of long labels, a three-line y title), so
    `fitgpp reproduce --quick --width column` stopped at RQ8; the full grid has six panels."""
    with plots.printed_at(width):
        spec = plots.fit_width(rq8.ledger_chart(_lost_like_the_quick_size(shares)))
        assert figcheck.check(spec, svg=plots.render(spec, ".svg")) == []


def test_the_map_marks_unsigned_unsteady_and_paper_cells():
    df = pd.DataFrame({"x": [0, 15, 0, 15], "y": [0.3, 0.3, 0.7, 0.7], "panel": ["a"] * 4,
                       "change": [0.2, -0.1, 0.05, 0.3],
                       "verdict": ["cost", "gain", "no detectable change", "cost"],
                       "mark": ["", "!", "?", ""], "outline": [False, False, False, True]})
    spec = plots.change_map(df, x="x", y="y", panel="panel", x_title="restart cost (min)",
                            y_title="TE share", title="A map").to_dict()
    data = next(iter(spec["datasets"].values()))
    got = {(r["x_label"], r["y_label"]): r for r in data}
    assert got[("0", "0.7")]["signed"] is None            # no sign: grey, not coloured
    assert got[("15", "0.3")]["text"] == "-10!" and got[("0", "0.7")]["text"] == "+5?"
    assert [r["outline"] for r in data] == [False, False, False, True]
    with pytest.raises(plots.PlotError, match="needs columns"):
        plots.change_map(df.drop(columns="mark"), x="x", y="y", panel="panel", x_title="a",
                         y_title="b", title="c")


def test_a_size_below_the_full_grid_runs_the_quick_grid():
    assert rq8.overheads(Size(n_jobs=4999, seeds=(0,))) == (0.0, 900.0, 1800.0)
    assert rq8.overheads(Size(n_jobs=5000, seeds=(0,)))[-1] == 1800.0
    assert len(rq8.overheads(Size(n_jobs=5000, seeds=(0,)))) == 6


def test_its_report_table_has_every_column_with_intervals(result):
    """results.md's RQ8 table (the ledger parts with their intervals over seeds) builds."""
    from fitgpp.studies.reproduce import _md_table
    text = _md_table(result.table, *result.report_columns)
    assert "GPU-hours reloading" in text and "GPU-hours idle, a waiting job fits" in text
    assert len(text.splitlines()) == 2 + len(result.table)
    assert {f"ledger_reload{x}" for x in ("", "_lo", "_hi")} <= set(result.table.columns)
