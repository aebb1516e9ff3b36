"""gittins from the command line: its parameters by --param, a distribution file read and
checked (a bad line named with its file), the result rerunnable."""

from __future__ import annotations

import fitgpp
from fitgpp.cli import main
from fitgpp.sim.policies.gittins_index import fit_trace, write_distribution


def trace(tmp_path):
    import pandas as pd
    path = tmp_path / "t.csv"
    pd.DataFrame({"job_id": range(6), "cls": ["BE", "TE"] * 3,
                  "submit_time": [0, 0, 60, 120, 180, 240], "duration": [600, 120, 300,
                                                                         1800, 60, 240],
                  "gpu": [2, 1, 2, 1, 2, 1], "cpu_milli": 0, "mem_mib": 0,
                  "grace_period": [0, None, 60, None, 0, None]}).to_csv(path, index=False)
    return path


def test_simulate_gittins_with_a_distribution_file(tmp_path, capsys):
    t = trace(tmp_path)
    dist = tmp_path / "sizes.csv"
    import pandas as pd
    write_distribution(fit_trace(pd.read_csv(t), tick=60), dist)
    out = tmp_path / "o.nc"
    assert main(["simulate", str(t), "--nodes", "1", "--node-gpu", "2", "--policy", "gittins",
                 "--param", f"distribution={dist}", "--param", "mode=tiresias",
                 "--param", "delta=600", "--out", str(out)]) == 0
    ds = fitgpp.load(out)
    same = fitgpp.simulate(str(t), fitgpp.Cluster.homogeneous(1, gpu=2), "gittins",
                           mode="tiresias", delta=600)  # fitted from the trace: same sizes
    assert ds["finish"].values.tolist() == same["finish"].values.tolist()
    assert fitgpp.rerun(ds)["finish"].values.tolist() == same["finish"].values.tolist()


def test_a_bad_distribution_file_is_named(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("duration\n12\nx\n")
    assert main(["simulate", str(trace(tmp_path)), "--nodes", "1", "--node-gpu", "2",
                 "--policy", "gittins", "--param", f"distribution={bad}",
                 "--out", str(tmp_path / "o.nc")]) == 2
    assert f"{bad}: line 3: duration 'x' is not a whole number" in capsys.readouterr().err
