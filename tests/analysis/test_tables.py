"""fitgpp.analysis.tables: significant digits, x [lo, hi] cells, the answering columns, the full frame kept."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fitgpp.analysis import tables


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
    assert t.shown.iloc[1]["TE p95 vs FIFO (%)"] == "+104 [+93.6, +114]"   # a fraction in %
    assert t.shown.iloc[1]["TE p95 slowdown"] == "1.04 [1*, 1.14]"   # 0.936: cut at 1, marked
    assert any(n.startswith("* an interval bound cut") for n in t.notes)
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

    from fitgpp.figures.export import export_table
    from fitgpp.analysis.tables import people_table
    df = pd.DataFrame({"policy": ["FitGpp s=4", "FIFO & co_1"], "te_p95": [1.2345678901234, 50.0],
                       "te_p95_lo": [1.1, 40.0], "te_p95_hi": [1.4, 60.0],
                       "change_te_p95": [-0.9753086419753, 0.0], "seeds": [5, 5]})
    t = people_table(df, {"te_p95": "TE p95", "change_te_p95": "TE p95 vs FIFO (%)"},
                     ids={"policy": "policy"}, caption="RQ1: 100 % of jobs_x",
                     percent=["change_te_p95"])
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


# ------------------------------------------------------------------ percent columns hold percent
NUMBER = r"[-+]?\d[\d.]*(?:e[-+]?\d+)?"


def _numbers(text: str) -> list[float]:
    import re
    return [float(x) for x in re.findall(NUMBER, str(text))]


def unit_problems(t: tables.PeopleTable, where: str) -> list[str]:
    """What is wrong with the units of ``t``: a column headed "(%)" or "%" must show 100 x
    the fraction its source column holds (changes are fractions, fitgpp.analysis.metrics.change);
    no interval may reach below the metric's declared floor (1 for a slowdown)."""
    out = []
    sources = t.shown.attrs.get("sources", {})
    for head in t.shown.columns:
        src = sources.get(head)
        if str(head).rstrip().endswith("%") or str(head).rstrip().endswith("(%)"):
            if src is None or src not in tables.in_percent([src]):
                out.append(f"{where}: {head!r} is headed % but its source {src!r} is neither a "
                           "change nor a fraction")
                continue
            for shown, frac in zip(t.shown[head], t.full[src]):
                got = _numbers(shown)
                if got and not np.isnan(frac) and got[0] != float(tables.sig(100 * frac)):
                    out.append(f"{where}: {head!r} shows {shown!r} for the fraction {frac!r}")
                    break
        if src is not None and tables.floor(src) is not None:
            least = tables.floor(src)
            low = [s for s in t.shown[head] if len(_numbers(s)) == 3 and _numbers(s)[1] < least]
            if low:
                out.append(f"{where}: {head!r} has intervals below {least:g}: {low[:2]}")
    return out


def test_the_unit_check_fails_on_a_fraction_under_a_percent_heading():
    frac = tables.people_table(_table(5), {"change_te_p95": "TE p95 vs FIFO (%)"},
                               ids=["policy"])                     # percent= forgotten
    assert any("shows '+19.2" in p for p in unit_problems(frac, "fractions"))
    raw = _table(5).assign(te_p95_lo=0.5)
    shown = tables.people_table(raw, {"te_p95": "TE p95"}, ids=["policy"])
    shown.shown["TE p95"] = [tables.cell(x, 0.5, 2) for x in raw["te_p95"]]   # as before the cut
    assert any("below 1" in p for p in unit_problems(shown, "uncut"))
    assert not unit_problems(tables.rq_table(type("R", (), {"title": "t", "table": raw})), "ok")


@pytest.fixture(scope="module")
def study_results():
    """Every study's result at the quick size (rq7* aside: slow), and RQ1 from 3 seeds (its
    intervals, with PRIO's TE p95 next to 1)."""
    from fitgpp.studies import reproduce
    out = {k: s.result(reproduce.QUICK) for k, s in reproduce.STUDIES.items()
           if not k.startswith("rq7")}
    out["rq1 from 3 seeds"] = reproduce.STUDIES["rq1"].result(
        reproduce.Size(n_jobs=200, seeds=(0, 1, 2), timeline_jobs=50, real_jobs=200))
    return out


def test_every_study_table_shows_percent_as_percent(study_results):
    problems = []
    for key, r in study_results.items():
        problems += unit_problems(tables.rq_table(r), f"{key} rq_table")
        for name, df in {"table": r.table, **{f"datasets[{n}]": d for n, d in
                                              (r.datasets or {}).items()
                                              if isinstance(d, pd.DataFrame)}}.items():
            headed = [c for c in df.columns if str(c).rstrip().endswith("%")]
            problems += [f"{key} {name}: column {c!r} headed % in a table of fractions"
                         for c in headed]
    assert not problems, "\n".join(problems)
    ci = tables.rq_table(study_results["rq1 from 3 seeds"])
    assert any("[" in str(v) for v in ci.shown["TE p95 slowdown"])   # intervals were checked


def test_interval_text_cuts_a_slowdown_interval_at_its_floor():
    x = np.array([1.0, 1.0, 2.65])                  # t-interval from 3 seeds: -0.82 to 3.92
    assert tables.interval_text(x, "{:.2f}".format) == "1.55 [-0.82, 3.92]"
    assert tables.interval_text(x, "{:.2f}".format, floor=tables.floor("te_p95")) == \
        "1.55 [1.00*, 3.92]"                         # cut, and marked as cut
    assert tables.floor("preemptions_per_be") == 0.0 and tables.floor("be_long_p95") == 1.0
    assert tables.floor("no_such_metric") is None


def test_a_change_interval_below_minus_100_is_cut_and_marked_everywhere(tmp_path):
    """09: "-82.9 % [-105.0 %, -60.8 %]" on screen and "[-105, -60.8]" in the .tex; the CSV
    held -1.05 too."""
    import io

    from fitgpp.analysis.tables import people_table
    from fitgpp.figures.export import export_table
    df = pd.DataFrame({"policy": ["Patient"], "te_p95": [1.08], "te_p95_lo": [0.9],
                       "te_p95_hi": [1.28], "change_te_p95": [-0.829],
                       "change_te_p95_lo": [-1.05], "change_te_p95_hi": [-0.608], "seeds": [5]})
    t = people_table(df, {"te_p95": "TE p95", "change_te_p95": "TE p95 vs FIFO (%)"},
                     ids={"policy": "policy"}, percent=["change_te_p95"])
    assert list(t.shown.iloc[0])[1:] == ["1.08 [1*, 1.28]", "-82.9 [-100*, -60.8]"]
    assert any(n.startswith("* an interval bound cut") for n in t.notes)
    csv, tex = export_table(t, "t", tmp_path, config={})
    assert r"-82.9 [-100*, -60.8]" in tex.read_text() and "-105" not in tex.read_text()
    back = pd.read_csv(io.StringIO(csv.read_text()))
    assert back["change_te_p95_lo"].iloc[0] == -1.0 and bool(back["change_te_p95_lo_cut"].iloc[0])
    assert back["te_p95_lo"].iloc[0] == 1.0 and bool(back["te_p95_lo_cut"].iloc[0])
    assert "te_p95_hi_cut" not in back             # nothing cut there, no column


def test_results_md_cuts_and_marks_every_interval():
    from fitgpp.studies.reproduce import _md_table
    df = pd.DataFrame({"policy": ["FitGpp s=4"], "te_p95": [1.6], "te_p95_lo": [-0.07],
                       "te_p95_hi": [3.27], "change_te_p95": [-0.878],
                       "change_te_p95_lo": [-1.015], "change_te_p95_hi": [-0.742],
                       "preemptions_per_be": [0.2], "preemptions_per_be_lo": [-0.1],
                       "preemptions_per_be_hi": [0.5]})
    md = _md_table(df, ["policy"], ["te_p95", "change_te_p95", "preemptions_per_be"])
    row = md.splitlines()[-1]
    assert "1.6 [1*, 3.27]" in row and "-87.8 % [-100.0 %*, -74.2 %]" in row
    assert "0.2 [0*, 0.5]" in row


def test_a_metric_declared_as_a_fraction_is_shown_in_percent():
    """RQ6's share of BE GPU-hours lost to reloads was written 0.035 in the exported
    tables while results.md said 3.5 %: a metric declared with ``unit="fraction"`` is shown
    in percent, with its interval, under a heading that says so."""
    from types import SimpleNamespace

    from fitgpp.analysis.metrics import METRICS
    from fitgpp.analysis.tables import rq_table
    assert METRICS["reload_share"].unit == "fraction"
    t = pd.DataFrame({"policy": ["FitGpp s=4"], "reload_share": [0.035],
                      "reload_share_lo": [0.03], "reload_share_hi": [0.04], "seeds": [3]})
    shown = rq_table(SimpleNamespace(table=t, title="x", columns=("reload_share",),
                                     baseline="PRIO")).shown
    assert list(shown.columns)[-1] == "reloads, share of BE GPU-hours (%)"
    assert shown.iloc[0, -1] == "3.5 [3, 4]", shown


def test_a_whole_number_setting_is_written_to_csv_as_an_integer():
    """``P`` was 3.0 in every exported CSV (pandas makes a column float when FIFO's row has
    no ``P``); a setting column of whole numbers is written as integers, blank where a row
    has none; a measure (it has an interval) and a fractional setting are left as they are."""
    full = pd.DataFrame({"policy": ["FIFO", "FitGpp s=4"], "P": [np.nan, 3.0],
                         "load": [0.8, 0.8], "te_p95": [2.0, 1.0], "te_p95_lo": [1.5, 1.0],
                         "te_p95_hi": [2.5, 1.0]})
    t = tables.people_table(full, {"te_p95": "TE p95"}, ids={"policy": "policy"}, seeds=None)
    rows = tables.to_csv(t).splitlines()
    head = rows[0].split(",")
    got = dict(zip(head, rows[2].split(",")))
    assert got["P"] == "3" and got["load"] == "0.8" and got["te_p95"] == "1.0", rows
    assert dict(zip(head, rows[1].split(",")))["P"] == "", rows
