"""Policy objects: parameters validated once, registry, and small edges of simulate/CLI."""

import numpy as np
import pandas as pd
import pytest

import fitgpp
from fitgpp.cli import main


@pytest.mark.parametrize("kwargs,match", [
    ({"max_preemptions": 0}, "max_preemptions must be an integer >= 1, got 0"),
    ({"max_preemptions": 2.5}, "max_preemptions must be an integer >= 1"),
    ({"max_preemptions": True}, "max_preemptions must be an integer"),
    ({"s": -0.5}, "s must be a finite number >= 0"),
    ({"s": float("inf")}, "s must be a finite number >= 0"),
    ({"s": "4"}, "s must be a finite number >= 0"),
])
def test_fitgpp_rejects_bad_parameters(kwargs, match):
    with pytest.raises(fitgpp.PolicyError, match=match):
        fitgpp.FitGpp(**kwargs)


def test_numpy_numbers_accepted_and_stored_as_python():
    p = fitgpp.FitGpp(s=np.float32(2.0), max_preemptions=np.int64(3))
    assert (type(p.s), type(p.max_preemptions)) == (float, int)
    r = fitgpp.Rand(max_preemptions=np.int32(1), seed=np.uint8(7))
    assert (r.max_preemptions, r.seed) == (1, 7) and type(r.seed) is int
    with pytest.raises(fitgpp.PolicyError, match="seed must be an integer >= 0"):
        fitgpp.Rand(seed=-1)


def test_registry_names_and_unknown_parameters():
    assert set(fitgpp.POLICIES) == {"fifo", "prio", "fitgpp", "lrtp", "rand", "las", "sjf",
                                    "lpjf", "shortest", "shortest-gpu", "dlas",
                                    "gittins"}
    assert fitgpp.make_policy("FitGpp", s=8.0) == fitgpp.FitGpp(s=8.0)
    with pytest.raises(fitgpp.PolicyError, match="unknown policy 'srpt'"):
        fitgpp.make_policy("srpt")
    with pytest.raises(fitgpp.PolicyError, match=r"'lrtp' takes no parameter\(s\) s"):
        fitgpp.make_policy("lrtp", s=4.0)
    with pytest.raises(fitgpp.PolicyError, match="'fifo' takes no parameter"):
        fitgpp.make_policy("fifo", max_preemptions=3)


def _one_job():
    return pd.DataFrame({"job_id": [1], "cls": ["TE"], "submit_time": [0.0], "duration": [60.0],
                         "gpu": [1], "cpu_milli": [0], "mem_mib": [0], "grace_period": [None]})


def test_simulate_refuses_empty_trace_and_bad_arguments():
    cl = fitgpp.Cluster.homogeneous(1)
    with pytest.raises(fitgpp.SimulationError, match="no jobs"):
        fitgpp.simulate(_one_job().iloc[:0], cl, "fifo")
    with pytest.raises(fitgpp.SimulationError, match="sample_every must be a number"):
        fitgpp.simulate(_one_job(), cl, "fifo", sample_every="60")
    with pytest.raises(fitgpp.SimulationError, match=r"tick \(seconds\) must be a number in \[0.001"):
        fitgpp.simulate(_one_job(), cl, "fifo", tick=0)
    with pytest.raises(fitgpp.SimulationError, match="cluster must be"):
        fitgpp.simulate(_one_job(), {"nodes": 1}, "fifo")
    with pytest.raises(fitgpp.SimulationError, match="go into the policy object"):
        fitgpp.simulate(_one_job(), cl, fitgpp.FitGpp(), s=2.0)


@pytest.mark.parametrize("argv", [["simulat"], ["simulate", "t.csv", "--nodes", "1", "--out",
                                                "r.nc", "--bogus"], []])
def test_cli_usage_errors_are_one_line(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err and "Traceback" not in err
