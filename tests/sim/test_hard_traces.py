"""Hard to break, round three (issue 28): a Tiresias trace is never misread. Rows wider than
the header, a name given twice, a header of both formats, quoted or spaced or gzipped
headers, messages that name the file and line, special files, and a rerun."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import warnings

import pytest

import fitgpp
from fitgpp.cli.main import main
from fitgpp.sim.tiresias import TiresiasError, detect_format, from_tiresias, read_tiresias

HEAD = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval"
ROWS = "1,2,0,10,resnet50,100,0\n2,4,30,10,vgg16,200,0\n"
POOL4 = fitgpp.Cluster.from_groups([{"count": 1, "gpu": 4, "cpu_milli": 1000, "mem_mib": 1000}])
TWO8 = fitgpp.Cluster.from_groups([{"count": 2, "gpu": 8, "cpu_milli": 1000, "mem_mib": 1000}])


def sim(tmp_path, capsys, *args):
    out = tmp_path / "x.nc"
    try:
        rc = main(["simulate", *map(str, args), "--nodes", "2", "--policy", "fifo",
                   "--out", str(out)])
    except SystemExit as exc:
        rc = exc.code
    o, err = capsys.readouterr()
    return rc, err, out


def write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_a_row_with_a_field_more_than_the_header_is_refused_with_its_line(tmp_path, capsys):
    p = write(tmp_path, f"{HEAD}\n1,2,0,10,resnet50,100,0\n2,4,30,10,vgg16,200,0,7\n")
    rc, err, out = sim(tmp_path, capsys, p)
    assert rc == 2 and "t.csv: line 3: 8 fields, but the header has 7" in err
    assert not out.exists()
    with pytest.raises(fitgpp.TraceError, match="line 3: 8 fields"):
        from_tiresias(p)


def test_a_name_given_twice_in_the_header_is_refused(tmp_path, capsys):
    p = write(tmp_path, "job_id,num_gpu,num_gpu,submit_time,duration\n1,2,2,0,100\n")
    rc, err, _ = sim(tmp_path, capsys, p)
    assert rc == 2 and "column 'num_gpu': column given twice in the header" in err
    import pandas as pd
    df = pd.DataFrame([[1, 2, 2, 0, 100]], columns=["job_id", "num_gpu", "num_gpu",
                                                    "submit_time", "duration"])
    with pytest.raises(TiresiasError, match="num_gpu given twice"):
        from_tiresias(df)


def test_a_header_of_both_formats_without_cls_is_refused_saying_how_to_choose(tmp_path,
                                                                              capsys):
    p = write(tmp_path, "job_id,num_gpu,submit_time,duration,gpu,cpu_milli,mem_mib\n"
                        "1,2,0,100,1,10,10\n")
    rc, err, out = sim(tmp_path, capsys, p)
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "could be either format" in err and "--format spec" in err \
        and "--format tiresias" in err
    rc, err, out = sim(tmp_path, capsys, "--format", "tiresias", p)
    assert rc == 2 and "gpu, cpu_milli, mem_mib of the SPEC schema" in err \
        and "would be replaced" in err and not out.exists()


@pytest.mark.parametrize("text", [
    '"job_id","num_gpu","submit_time","iterations","model_name","duration","interval"\n' + ROWS,
    "job_id , num_gpu , submit_time , iterations , model_name , duration , interval\n" + ROWS,
    "\n" + HEAD + "\n" + ROWS])
def test_quoted_and_spaced_headers_are_detected(tmp_path, capsys, text):
    p = write(tmp_path, text)
    assert detect_format(p) == "tiresias"
    rc, err, out = sim(tmp_path, capsys, p)
    assert rc == 0, err
    assert fitgpp.load(out)["gpu"].values.tolist() == [2, 4]


def test_a_gzipped_tiresias_trace_is_detected_and_rerun(tmp_path, capsys):
    p = tmp_path / "t.csv.gz"
    p.write_bytes(gzip.compress(f"{HEAD}\n{ROWS}".encode()))
    assert detect_format(p) == "tiresias"
    rc, err, out = sim(tmp_path, capsys, p)
    assert rc == 0, err
    ds = fitgpp.load(out)
    import json
    src = json.loads(ds.attrs["workload"])
    assert src["kind"] == "tiresias" and len(src["sha256"]) == 64 and src["node_gpu"] == 8
    again = fitgpp.rerun(ds)
    assert again["finish"].values.tolist() == ds["finish"].values.tolist()
    p.write_bytes(gzip.compress(f"{HEAD}\n1,2,0,10,resnet50,101,0\n".encode()))
    with pytest.raises(fitgpp.SimulationError, match="changed since this result was made"):
        fitgpp.rerun(ds)


def test_a_result_from_a_plain_tiresias_csv_reruns(tmp_path):
    p = write(tmp_path, f"{HEAD}\n{ROWS}")
    t = read_tiresias(p, cluster=POOL4)
    ds = fitgpp.simulate(t, POOL4, "las", tick=1)
    assert fitgpp.rerun(ds)["finish"].values.tolist() == ds["finish"].values.tolist()


@pytest.mark.parametrize("rows, want", [
    ("1,2,0,10,r,100,0\n1,2,5,10,r,100,0\n", r"t.csv: lines 2, 3, column 'job_id': duplicate id"),
    ("1,1e300,0,10,r,100,0\n", r"t.csv: column num_gpu: too large.*\(line 2\)"),
    ("1,64,0,10,r,100,0\n", r"t.csv: line 2, column 'tasks, num_gpu': a gang needs one node per task"),
    ("1,2,1e300,10,r,100,0\n", r"t.csv: column submit_time: .*\(line 2\)"),
])
def test_messages_name_the_file_and_line_without_numpy_warnings(tmp_path, capsys, rows, want):
    p = write(tmp_path, f"{HEAD}\n{rows}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(fitgpp.FitgppError, match=want) as e:
            read_tiresias(p, cluster=TWO8)
    assert "<DataFrame>" not in str(e.value) and "row 0" not in str(e.value)
    rc, err, _ = sim(tmp_path, capsys, p)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Warning" not in err


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_format_tiresias_refuses_a_special_file_at_once(tmp_path, special):
    path = special
    if special == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)
    p = subprocess.run([sys.executable, "-m", "fitgpp", "simulate", "--format", "tiresias",
                        str(path), "--nodes", "1", "--out", str(tmp_path / "x.nc")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "not a regular file" in p.stderr, p.stderr
