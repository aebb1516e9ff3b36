"""fitgpp.tables: significant digits, x [lo, hi] cells, the answering columns, the full frame kept."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fitgpp import tables


@pytest.mark.parametrize("x, digits, want", [
    (1.3000000000000003, 3, "1.3"), (-36.4123, 3, "-36.4"), (12345.0, 3, "12300"),
    (0.000123456, 2, "0.00012"), (0.606, 3, "0.606"), (2.0, 3, "2"), (0.0, 3, "0"),
    (19.2, 3, "19.2"), (-499.4, 3, "-499"), (1.5e7, 3, "1.50e+07"), (np.nan, 3, "–"),
    (np.int64(42), 3, "42"), ("FIFO", 3, "FIFO")])
def test_significant_digits(x, digits, want):
    assert tables.sig(x, digits) == want


def test_signed_changes_and_intervals():
    assert tables.cell(18.04, 10.0, 26.2, signed=True) == "+18 [+10, +26.2]"
    assert tables.cell(-94.5, -107.2, -81.8, signed=True) == "-94.5 [-107, -81.8]"
    assert tables.cell(3.0, np.nan, np.nan) == "3"


def _table(seeds):
    rows = []
    for p, v in (("FIFO", 19.2), ("FitGpp s=4", 1.04)):
        r = {"policy": p, "seeds": seeds, "extra": 7.123456}
        for c in tables.rq_columns():
            r.update({c: v, f"{c}_lo": v * 0.9, f"{c}_hi": v * 1.1})
        rows.append(r)
    return pd.DataFrame(rows)


def test_rq_table_shows_the_answer_and_keeps_the_rest():
    class R:
        title = "RQ1: TE latency"
        table = _table(5)
    t = tables.rq_table(R)
    assert list(t.shown.columns) == ["policy", *tables.rq_columns().values()]
    assert t.shown.iloc[0]["TE p95 slowdown"] == "19.2 [17.3, 21.1]"
    assert t.shown.iloc[1]["TE p95 vs FIFO (%)"] == "+1.04 [+0.936, +1.14]"
    assert t.full.equals(R.table) and "extra" in t.full      # one attribute away, untouched
    html = t._repr_html_()
    assert "RQ1: TE latency" in html and "19.2 [17.3, 21.1]" in html and "7.123" not in html
    md = t.to_markdown()
    assert md.splitlines()[2].startswith("| policy |") and "|---|---:|" in md


def test_no_interval_from_fewer_than_three_seeds():
    t = tables.people_table(_table(2), {"te_p95": "TE p95"}, ids=["policy"])
    assert list(t.shown["TE p95"]) == ["19.2", "1.04"]
    assert any("fewer than 3 seeds" in n and "here 2" in n for n in t.notes)


def test_missing_columns_are_named():
    with pytest.raises(tables.TableError, match=r"no column\(s\) \['nope'\]"):
        tables.people_table(_table(5), ["nope"])


def test_summary_table_of_one_run():
    from fitgpp import Cluster, simulate
    n = 30
    rng = np.random.default_rng(0)
    te = np.arange(n) % 3 == 0
    trace = pd.DataFrame({"job_id": np.arange(n), "cls": np.where(te, "TE", "BE"),
                          "submit_time": np.sort(rng.uniform(0, 3600, n)),
                          "duration": np.where(te, 300.0, 3600.0), "gpu": 2, "cpu_milli": 1000,
                          "mem_mib": 1024, "grace_period": np.where(te, 0.0, 60.0)})
    ds = simulate(trace, Cluster.homogeneous(1, gpu=4, cpu_milli=32000, mem_mib=65536), "fitgpp")
    t = tables.summary_table(ds)
    assert list(t.shown["class"]) == ["TE", "BE"] and list(t.shown["jobs"]) == ["10", "20"]
    assert t.shown.iloc[1]["p95 slowdown"] == tables.sig(float(t.full.iloc[1]["slowdown_p95"]))


def test_a_table_exports_as_csv_and_booktabs_latex_beside_the_figures(tmp_path):
    import io
    import json

    from fitgpp.tables import export_table, people_table
    df = pd.DataFrame({"policy": ["FitGpp s=4", "FIFO & co_1"], "te_p95": [1.2345678901234, 50.0],
                       "te_p95_lo": [1.1, 40.0], "te_p95_hi": [1.4, 60.0],
                       "change_te_p95": [-97.53086419753, 0.0], "seeds": [5, 5]})
    t = people_table(df, {"te_p95": "TE p95", "change_te_p95": "TE p95 vs FIFO (%)"},
                     ids={"policy": "policy"}, caption="RQ1: 100 % of jobs_x")
    (tmp_path / "manifest.json").write_text('{"figures": {"f.svg": {"chart": "f"}}}')
    csv, tex = export_table(t, "rq1_table", tmp_path, config={"study": "rq1"})
    back = pd.read_csv(io.StringIO(csv.read_text()))
    pd.testing.assert_frame_equal(back, df)                    # full precision, every column
    text = tex.read_text()
    lines = text.splitlines()
    assert lines.index(r"\toprule") < lines.index(r"\midrule") < lines.index(r"\bottomrule")
    assert r"\begin{tabular}{lrr}" in text
    assert r"policy & TE p95 & TE p95 vs FIFO (\%) \\" in lines
    assert r"FIFO \& co\_1 & 50 [40, 60] & 0 \\" in lines
    assert r"FitGpp s=4 & 1.23 [1.1, 1.4] & -97.5 \\" in lines   # as shown on screen
    assert r"\caption{RQ1: 100 \% of jobs\_x}" in lines
    # never overwritten: a second export gets the next free name; the manifest keeps both
    again = export_table(t, "rq1_table", tmp_path, config={"study": "rq1"})
    assert [p.name for p in again] == ["rq1_table-2.csv", "rq1_table-2.tex"]
    assert csv.read_text() == again[0].read_text()
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert set(man["tables"]) == {"rq1_table.csv", "rq1_table.tex", "rq1_table-2.csv",
                                  "rq1_table-2.tex"} and "f.svg" in man["figures"]
    entry = man["tables"]["rq1_table.tex"]
    assert entry["config"] == {"study": "rq1"} and entry["rows"] == 2 and "git_commit" in entry
