"""Reading a trace: every input rule of SPEC.md, one rejection per test.

Each error must name the file, the CSV line (header = line 1) and the column.
The base trace has three jobs; most tests break line 4 (the third job, a BE
job that asks for CPU only), so a correct line number cannot be a lucky
"first row".
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

import fitgpp
from fitgpp import Cluster, TraceError, read_trace

HEADER = list(fitgpp.COLUMNS)
BASE = [
    ["1", "TE", "0", "60", "1", "1000", "1024", ""],
    ["2", "BE", "30", "600", "2", "2000", "2048", "120"],
    ["3", "BE", "60", "90", "0", "500", "0", "0"],
]
NUMERIC = [c for c in HEADER if c != "cls"]


def write(tmp_path, rows, header=HEADER, name="trace.csv", tail="\n"):
    path = tmp_path / name
    lines = [",".join(header)] + [",".join(r) for r in rows]
    path.write_text("\n".join(lines) + tail)
    return path


def with_value(column, value, line=4):
    rows = [list(r) for r in BASE]
    rows[line - 2][HEADER.index(column)] = value
    return rows


def rejects(path, *, line=None, column=None, problem=None, **kw) -> str:
    with pytest.raises(TraceError) as info:
        read_trace(path, **kw)
    msg = str(info.value)
    assert str(path) in msg, msg
    if line is not None:
        assert re.search(rf"\blines? {line}\b", msg), msg
    if column is not None:
        assert f"column '{column}'" in msg, msg
    if problem is not None:
        assert problem in msg, msg
    return msg


def test_base_trace_reads_typed(tmp_path):
    tr = read_trace(write(tmp_path, BASE))
    assert tr.jobs["job_id"].tolist() == [1, 2, 3]
    assert tr.jobs["cls"].tolist() == ["TE", "BE", "BE"]
    assert tr.jobs["gpu"].dtype == np.int64 and tr.jobs["submit_time"].dtype == np.float64
    assert tr.source["kind"] == "csv" and len(tr.source["sha256"]) == 64
    assert tr.dropped is None


# ------------------------------------------------------------------ one rule per test

@pytest.mark.parametrize("column", HEADER)
def test_missing_column(tmp_path, column):
    k = HEADER.index(column)
    rows = [r[:k] + r[k + 1:] for r in BASE]
    path = write(tmp_path, rows, header=HEADER[:k] + HEADER[k + 1:])
    rejects(path, column=column, problem="missing column")


@pytest.mark.parametrize("column", HEADER)
def test_empty_value(tmp_path, column):
    # line 4 is a BE job, so an empty grace_period is an error there too
    rejects(write(tmp_path, with_value(column, "")), line=4, column=column, problem="empty")


@pytest.mark.parametrize("column", HEADER)
def test_nan_value(tmp_path, column):
    rejects(write(tmp_path, with_value(column, "NaN")), line=4, column=column, problem="empty")


@pytest.mark.parametrize("column", NUMERIC)
def test_not_a_number(tmp_path, column):
    rejects(write(tmp_path, with_value(column, "abc")), line=4, column=column,
            problem="not a number")


@pytest.mark.parametrize("column", NUMERIC)
def test_boolean_is_not_a_number(tmp_path, column):
    rejects(write(tmp_path, with_value(column, "true")), line=4, column=column,
            problem="not a number")


@pytest.mark.parametrize("column", ["submit_time", "gpu", "cpu_milli", "mem_mib",
                                    "grace_period", "job_id"])
def test_negative_value(tmp_path, column):
    rejects(write(tmp_path, with_value(column, "-1")), line=4, column=column,
            problem="negative")


@pytest.mark.parametrize("value", ["0", "-60", "0.0"])
def test_duration_must_be_positive(tmp_path, value):
    rejects(write(tmp_path, with_value("duration", value)), line=4, column="duration",
            problem="> 0")


@pytest.mark.parametrize("column", ["job_id", "gpu", "cpu_milli", "mem_mib"])
def test_non_integer(tmp_path, column):
    rejects(write(tmp_path, with_value(column, "1.5")), line=4, column=column,
            problem="not an integer")


def test_integral_floats_are_integers(tmp_path):
    tr = read_trace(write(tmp_path, with_value("gpu", "2.0")))
    assert tr.jobs["gpu"].tolist() == [1, 2, 2] and tr.jobs["gpu"].dtype == np.int64


@pytest.mark.parametrize("column", ["job_id", "gpu", "cpu_milli", "mem_mib"])
def test_integer_too_large_for_exact_float(tmp_path, column):
    # would otherwise overflow int64 or silently lose its last digits
    rejects(write(tmp_path, with_value(column, "99999999999999999999")), line=4, column=column,
            problem="too large")


@pytest.mark.parametrize("column", NUMERIC)
@pytest.mark.parametrize("value", ["inf", "-inf", "1e400"])
def test_infinite_value(tmp_path, column, value):
    msg = rejects(write(tmp_path, with_value(column, value)), line=4, column=column)
    assert "finite" in msg or (value == "-inf" and "negative" in msg), msg


def test_duplicate_job_id_names_both_lines(tmp_path):
    rows = BASE + [["2", "TE", "90", "60", "1", "0", "0", ""]]
    rejects(write(tmp_path, rows), column="job_id", problem="duplicate")
    msg = rejects(write(tmp_path, rows), column="job_id")
    assert "lines 3, 5" in msg, msg


@pytest.mark.parametrize("value", ["XE", "te", "Best-effort", "1"])
def test_unknown_class(tmp_path, value):
    rejects(write(tmp_path, with_value("cls", value)), line=4, column="cls",
            problem="unknown class")


def test_job_demanding_nothing(tmp_path):
    rows = with_value("cpu_milli", "0")  # line 4 already has gpu 0 and mem 0
    rejects(write(tmp_path, rows), line=4, column="gpu, cpu_milli, mem_mib",
            problem="no resource")


def test_job_that_fits_no_node(tmp_path):
    path = write(tmp_path, with_value("gpu", "9"))
    assert len(read_trace(path)) == 3  # fine without a cluster
    cl = Cluster.homogeneous(2, gpu=8, cpu_milli=96000, mem_mib=786432)
    rejects(path, cluster=cl, line=4, column="gpu, cpu_milli, mem_mib", problem="fits no node")
    # fits one group of a mixed cluster, so it is accepted there
    mixed = Cluster.from_groups([{"count": 1, "gpu": 8, "cpu_milli": 96000, "mem_mib": 786432},
                                 {"count": 1, "gpu": 16, "cpu_milli": 1000, "mem_mib": 4096}])
    assert len(read_trace(path, cluster=mixed)) == 3


def test_fits_per_node_not_summed(tmp_path):
    # 2500 mCPU fits neither node though the two nodes' CPU together would hold it
    cl = Cluster.homogeneous(2, gpu=8, cpu_milli=2000, mem_mib=4096)
    rejects(write(tmp_path, with_value("cpu_milli", "2500")), cluster=cl, line=4,
            problem="fits no node")


def test_te_grace_period_may_be_empty_and_is_zero(tmp_path):
    tr = read_trace(write(tmp_path, BASE))
    assert tr.jobs["grace_period"].tolist() == [0.0, 120.0, 0.0]
    assert not tr.jobs["grace_period"].isna().any()


def test_extra_columns_are_kept(tmp_path):
    header = HEADER[:3] + ["user"] + HEADER[3:] + ["note"]
    rows = [r[:3] + [f"u{k}"] + r[3:] + [f"n{k}"] for k, r in enumerate(BASE)]
    tr = read_trace(write(tmp_path, rows, header=header))
    assert list(tr.jobs.columns) == HEADER + ["user", "note"]
    assert tr.jobs["user"].tolist() == ["u0", "u1", "u2"]
    assert tr.jobs["note"].tolist() == ["n0", "n1", "n2"]


def test_many_bad_lines_are_counted(tmp_path):
    rows = BASE + [[str(10 + k), "BE", "0", "60", "-1", "0", "0", "0"] for k in range(8)]
    msg = rejects(write(tmp_path, rows), column="gpu", problem="negative")
    assert "lines 5, 6, 7, 8, 9 and 3 more" in msg, msg


# ------------------------------------------------------------------ line numbers and CSV shape

def test_line_numbers_count_blank_lines_and_quoted_line_breaks(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(",".join(HEADER) + "\n"
                    + ",".join(BASE[0]) + "\n"
                    + "\n"                                               # line 3: blank
                    + '2,BE,30,600,2,2000,2048,120\n'                    # line 4
                    + "   \n"                                            # line 5: spaces
                    + '4,"B\nE",30,600,2,2000,2048,120\n'                # lines 6-7
                    + "3,BE,60,90,-1,500,0,0\n")                         # line 8
    rejects(path, line=6, column="cls", problem="unknown class")
    rows = path.read_text().replace('"B\nE"', "BE")
    path.write_text(rows)
    rejects(path, line=7, column="gpu", problem="negative")


def test_row_with_extra_fields(tmp_path):
    rows = [list(r) for r in BASE]
    rows[0] = rows[0] + ["9"]
    rejects(write(tmp_path, rows), line=2, problem="9 fields, but the header has 8")
    rows = [list(r) for r in BASE]
    rows[2] = rows[2] + ["9"]
    rejects(write(tmp_path, rows), line=4, problem="9 fields")


def test_missing_file(tmp_path):
    rejects(tmp_path / "nope.csv", problem="no such file")


def test_directory_is_not_a_trace(tmp_path):
    rejects(tmp_path, problem="not a file")


def test_binary_file(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(b"\xff\xfe\x00\x01garbage")
    rejects(path, problem="UTF-8")


def test_empty_file(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("")
    rejects(path, problem="not a readable CSV")


# ------------------------------------------------------------------ drop_invalid and DataFrames

def test_drop_invalid_reports_dropped_rows(tmp_path):
    rows = BASE + [["4", "XE", "0", "60", "1", "0", "0", "0"],      # line 5: class
                   ["5", "BE", "0", "-60", "1", "0", "0", "0"],     # line 6: duration
                   ["6", "BE", "0", "60", "0", "0", "0", "0"],      # line 7: demands nothing
                   ["7", "BE", "0", "60", "9", "0", "0", "0"]]      # line 8: fits no node
    path = write(tmp_path, rows)
    cl = Cluster.homogeneous(1, gpu=8, cpu_milli=96000, mem_mib=786432)
    tr = read_trace(path, cluster=cl, drop_invalid=True)
    assert tr.jobs["job_id"].tolist() == [1, 2, 3]
    d = tr.dropped
    assert d["line"].tolist() == [5, 6, 7, 8]
    assert d["job_id"].astype(int).tolist() == [4, 5, 6, 7]
    assert "column 'cls'" in d["reason"][0] and "unknown class" in d["reason"][0]
    assert "column 'duration'" in d["reason"][1]
    assert "no resource" in d["reason"][2]
    assert "fits no node" in d["reason"][3]
    # nothing dropped: an empty report, and without the flag the first problem raises
    assert read_trace(write(tmp_path, BASE, name="ok.csv"), drop_invalid=True).dropped.empty
    rejects(path, cluster=cl, line=5, column="cls")


def test_drop_invalid_still_raises_on_missing_column(tmp_path):
    path = write(tmp_path, [r[:-1] for r in BASE], header=HEADER[:-1])
    rejects(path, column="grace_period", drop_invalid=True)


def test_drop_invalid_drops_both_duplicates(tmp_path):
    rows = BASE + [["2", "TE", "90", "60", "1", "0", "0", ""]]
    tr = read_trace(write(tmp_path, rows), drop_invalid=True)
    assert tr.jobs["job_id"].tolist() == [1, 3]
    assert tr.dropped["line"].tolist() == [3, 5]


def frame():
    df = pd.DataFrame([[int(r[0]), r[1], float(r[2]), float(r[3]), int(r[4]), int(r[5]),
                        int(r[6]), float(r[7]) if r[7] else math.nan] for r in BASE],
                      columns=HEADER, index=["a", "b", "c"])
    return df


def test_dataframe_errors_name_index_labels():
    df = frame()
    df.loc["c", "gpu"] = -2
    with pytest.raises(TraceError, match=r"<DataFrame>: row c, column 'gpu': negative"):
        read_trace(df)
    df = frame()
    df.loc["b", "cls"] = "XX"
    df.loc["c", "cls"] = "YY"
    with pytest.raises(TraceError, match=r"rows b, c, column 'cls'"):
        read_trace(df)


def test_dataframe_input_is_not_modified():
    df = frame()
    before = df.copy()
    tr = read_trace(df)
    pd.testing.assert_frame_equal(df, before)
    assert tr.jobs["grace_period"].tolist() == [0.0, 120.0, 0.0]
    assert tr.source == {"kind": "dataframe"}


def test_trace_roundtrip_through_csv(tmp_path):
    tr = read_trace(frame())
    fitgpp.write_trace(tr, tmp_path / "w.csv")
    back = read_trace(tmp_path / "w.csv")
    pd.testing.assert_frame_equal(back.jobs, tr.jobs)


def test_windows_line_endings(tmp_path):
    path = tmp_path / "crlf.csv"
    rows = [",".join(HEADER)] + [",".join(r) for r in with_value("mem_mib", "-4")]
    path.write_bytes(("\r\n".join(rows) + "\r\n").encode())
    rejects(path, line=4, column="mem_mib", problem="negative")
    path.write_bytes(("\r\n".join(rows[:3]) + "\r\n").encode())
    assert read_trace(path).jobs["job_id"].tolist() == [1, 2]


def test_unclosed_quote_is_one_line_error(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text(",".join(HEADER) + "\n" + ",".join(BASE[0]) + '\n2,"BE,0,60,1,0,0,1\n')
    msg = rejects(path, problem="not a readable CSV")
    assert "\n" not in msg


# ---- the optional columns: tasks and restart_overhead -------------------------------------

OPT_HEADER = HEADER + ["tasks", "restart_overhead"]
OPT_BASE = [r + t for r, t in zip(BASE, (["1", ""], ["2", "90"], ["", "0"]))]


def with_opt(column, value, line=4):
    rows = [list(r) for r in OPT_BASE]
    rows[line - 2][OPT_HEADER.index(column)] = value
    return rows


def test_optional_columns_read_typed_with_empty_as_default(tmp_path):
    tr = read_trace(write(tmp_path, OPT_BASE, header=OPT_HEADER))
    assert tr.jobs["tasks"].tolist() == [1, 2, 1] and tr.jobs["tasks"].dtype == np.int64
    assert tr.jobs["restart_overhead"].tolist() == [0.0, 90.0, 0.0]
    assert list(tr.jobs.columns[:10]) == OPT_HEADER


def test_absent_optional_columns_are_not_added(tmp_path):
    tr = read_trace(write(tmp_path, BASE))
    assert "tasks" not in tr.jobs and "restart_overhead" not in tr.jobs


@pytest.mark.parametrize("value, problem", [("0", "must be an integer >= 1"),
                                            ("-2", "must be an integer >= 1"),
                                            ("1.5", "not an integer"),
                                            ("two", "not a number"),
                                            ("inf", "not finite")])
def test_bad_tasks(tmp_path, value, problem):
    rejects(write(tmp_path, with_opt("tasks", value), header=OPT_HEADER), line=4,
            column="tasks", problem=problem)


@pytest.mark.parametrize("value, problem", [("-1", "negative value"), ("x", "not a number"),
                                            ("inf", "not finite")])
def test_bad_restart_overhead(tmp_path, value, problem):
    rejects(write(tmp_path, with_opt("restart_overhead", value), header=OPT_HEADER), line=4,
            column="restart_overhead", problem=problem)


def test_gang_needs_as_many_fitting_nodes_as_tasks(tmp_path):
    """Line 3 asks for 2 tasks of 2 GPUs: it needs two nodes with 2 GPUs, not one node with 4."""
    path = write(tmp_path, OPT_BASE, header=OPT_HEADER)
    two = Cluster.homogeneous(2, gpu=2, cpu_milli=96000, mem_mib=786432)
    assert len(read_trace(path, cluster=two)) == 3
    one_big = Cluster.from_groups([{"count": 1, "gpu": 4, "cpu_milli": 96000, "mem_mib": 786432},
                                   {"count": 1, "gpu": 1, "cpu_milli": 96000, "mem_mib": 786432}])
    rejects(path, cluster=one_big, line=3, column="tasks, gpu, cpu_milli, mem_mib",
            problem="fits fewer nodes than it has tasks")


def test_a_frame_and_the_trace_read_from_it_stay_apart():
    """read_trace shares the columns a frame already holds as they must be (no copy: a
    million jobs in less memory); pandas' copy-on-write must keep each from seeing a later
    change to the other, with a custom index too."""
    df = pd.DataFrame({"job_id": [7, 8, 9], "cls": ["TE", "BE", "BE"],
                       "submit_time": [0.0, 30.0, 60.0], "duration": [60.0, 600.0, 90.0],
                       "gpu": [1, 2, 1], "cpu_milli": [1000, 2000, 1000],
                       "mem_mib": [1024, 2048, 1024], "grace_period": [0.0, 60.0, 30.0],
                       "note": ["a", "b", "c"]}, index=[10, 20, 30])
    tr = read_trace(df)
    assert list(tr.jobs.index) == [0, 1, 2]
    assert np.shares_memory(tr.jobs["duration"].to_numpy(), df["duration"].to_numpy())
    df.loc[10, "duration"] = 1.0
    df.loc[20, "gpu"] = 64
    df.loc[30, "note"] = "z"
    assert tr.jobs["duration"].tolist() == [60.0, 600.0, 90.0]
    assert tr.jobs["gpu"].tolist() == [1, 2, 1] and tr.jobs["note"].tolist() == ["a", "b", "c"]
    tr.jobs.loc[0, "submit_time"] = 5.0
    assert df["submit_time"].tolist() == [0.0, 30.0, 60.0]


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint64, np.float64, object])
def test_integer_column_types_read_alike(dtype):
    """Every numeric column type gives the same trace (int64 columns are read without a
    float conversion: its bound of 2**53 must hold the same), and -2**63 is too large."""
    base = {"job_id": [1, 2], "cls": ["TE", "BE"], "submit_time": [0.0, 1.0],
            "duration": [60.0, 60.0], "gpu": [1, 2], "cpu_milli": [0, 0], "mem_mib": [0, 0],
            "grace_period": [0.0, 5.0]}
    df = pd.DataFrame(base).astype({"gpu": dtype, "job_id": dtype})
    jobs = read_trace(df).jobs
    assert jobs["gpu"].dtype == np.int64 and jobs["gpu"].tolist() == [1, 2]
    assert jobs["job_id"].tolist() == [1, 2]
    if dtype in (np.int64, object):
        big = pd.DataFrame(base).astype({"job_id": dtype})
        big.loc[1, "job_id"] = -2**63
        with pytest.raises(TraceError, match="too large"):
            read_trace(big)
