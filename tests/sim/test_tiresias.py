"""Tiresias's trace format, both ways, and `fitgpp simulate` on a Tiresias CSV."""

import pandas as pd
import pytest

import fitgpp
from fitgpp.cli import main
from fitgpp.sim.tiresias import TiresiasError, from_tiresias, is_tiresias, to_tiresias

CSV = ("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
       "0,1,0,606,vgg19,164,30\n1,8,30,133,vgg11,147,23\n2,16,53,10,resnet50,90,0\n")


@pytest.fixture
def trace(tmp_path):
    p = tmp_path / "tiresias.csv"
    p.write_text(CSV)
    return p


def test_from_tiresias_makes_gangs_of_whole_nodes(trace):
    df = from_tiresias(trace, node_gpu=8)
    assert df[["job_id", "gpu", "tasks"]].values.tolist() == [[0, 1, 1], [1, 8, 1], [2, 8, 2]]
    assert (df["cls"] == "BE").all() and (df["grace_period"] == 0).all()
    assert (df[["cpu_milli", "mem_mib"]] == 0).all().all()
    assert df["model_name"].tolist() == ["vgg19", "vgg11", "resnet50"]  # kept, ignored
    one = from_tiresias(trace, node_gpu=512, cls="TE")
    assert one["gpu"].tolist() == [1, 8, 16] and (one["cls"] == "TE").all()


def test_round_trip(trace, tmp_path):
    back = to_tiresias(from_tiresias(trace, node_gpu=8), tmp_path / "back.csv")
    assert back.equals(pd.read_csv(trace))
    assert pd.read_csv(tmp_path / "back.csv").equals(pd.read_csv(trace))


@pytest.mark.parametrize("text, match", [
    ("job_id,num_gpu,submit_time\n0,1,0\n", "missing column.*duration"),
    ("job_id,num_gpu,submit_time,duration\n0,0,0,5\n", r"num_gpu.*>= 1 \(line 2\)"),
    ("job_id,num_gpu,submit_time,duration\n0,1,-1,5\n1,1,x,5\n", r"submit_time.*line 2, 3"),
    ("job_id,num_gpu,submit_time,duration\n0,1,0,0\n", "duration.*> 0"),
    ("job_id,num_gpu,submit_time,duration\n0,12,0,5\n", "not a multiple"),
])
def test_bad_tiresias_traces_name_the_line(tmp_path, text, match):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(TiresiasError, match=match):
        from_tiresias(p, node_gpu=8)


def test_detection(trace, tmp_path):
    spec = tmp_path / "spec.csv"
    to_spec = from_tiresias(trace, node_gpu=8)
    to_spec[list(fitgpp.COLUMNS)].to_csv(spec, index=False)
    assert is_tiresias(trace) and not is_tiresias(spec) and not is_tiresias(tmp_path / "no")


def test_simulate_reads_a_tiresias_csv(trace, tmp_path, capsys):
    pool = tmp_path / "pool.toml"
    pool.write_text("[[nodes]]\ncount = 1\ngpu = 512\ncpu_milli = 96000\nmem_mib = 786432\n")
    out = tmp_path / "x.nc"
    rc = main(["simulate", str(trace), "--policy", "las", "--tick", "1", "--cluster", str(pool),
               "--out", str(out)])
    assert rc == 0
    ds = fitgpp.load(out)
    # an empty 512-GPU pool: every job starts on arrival and takes its duration
    assert (ds["finish"] - ds["submit_time"]).values.tolist() == [164, 147, 90]
    assert ds["gpu"].values.tolist() == [1, 8, 16]


def test_simulate_refuses_a_bad_tiresias_csv_in_one_line(tmp_path, capsys):
    p = tmp_path / "bad.csv"
    p.write_text("job_id,num_gpu,submit_time,duration\n0,12,0,5\n")
    rc = main(["simulate", str(p), "--nodes", "2", "--out", str(tmp_path / "x.nc")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "num_gpu" in err


def test_las_on_a_small_tiresias_trace_hand_checked(tmp_path):
    """One 4-GPU pool, tick 1 s, default thresholds (3250, 7200) GPU-s. Worked by hand:
    0: job 0 (4 GPUs) starts; 100: job 1 (2 GPUs) waits behind it in queue 0; 813: job 0
    has 813 x 4 = 3252 GPU-s, moves to queue 1, so job 1 starts and job 0 is preempted;
    900: job 2 (1 GPU) starts in the 2 GPUs left; 950: job 2 ends; 1113: job 1 ends and
    job 0 resumes its last 187 s, ending at 1300. Tiresias's dlas-gpu gives job 1 a JCT of
    1088, not 1013: its next-demotion time after the event at 100 is
    ceil((3250 - 100) / 4) + 100 = 888, it subtracts executed *seconds* from a GPU-second
    threshold, so it demotes job 0 at 888 (the "late demotion" SPEC departs from). With that
    time computed from GPU-seconds it gives 1013, 1300 and 50, the same as here."""
    path = tmp_path / "small.csv"
    path.write_text("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                    "0,4,0,1000,resnet50,1000,100\n1,2,100,300,resnet50,300,800\n"
                    "2,1,900,50,resnet50,50,0\n")
    jobs = from_tiresias(path, node_gpu=4)
    ds = fitgpp.simulate(jobs, fitgpp.Cluster.homogeneous(1, 4, 64_000, 262_144), "las", tick=1)
    jct = (ds["finish"] - ds["submit_time"]).to_series().to_dict()
    assert jct == {0: 1300, 1: 1013, 2: 50}
    assert int(ds["preemptions"].sel(job=0)) == 1


def test_las_tiresias_demotion_on_the_small_trace(tmp_path):
    """The same trace with ``mode="tiresias"``: job 0 (4 GPUs) crosses 3250 GPU-s at 813,
    but Tiresias's next check after the event at 100 (job 1's arrival) is
    100 + ceil((3250 - 100) / 4) = 888, so job 0 is demoted then: job 1 starts at 888 and
    ends at 1188 (JCT 1088), job 2 starts on arrival (50), job 0 resumes its last 112 s at
    1188 and ends at 1300. Jumping over quiet ticks equals stepping every tick."""
    from fitgpp.sim.policies.base import PolicyError
    from fitgpp.sim.policies.las import Las
    path = tmp_path / "small.csv"
    path.write_text("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                    "0,4,0,1000,resnet50,1000,100\n1,2,100,300,resnet50,300,800\n"
                    "2,1,900,50,resnet50,50,0\n")
    jobs = from_tiresias(path, node_gpu=4)
    cluster = fitgpp.Cluster.homogeneous(1, 4, 64_000, 262_144)
    out = {}
    for mode in ("exact", "tiresias"):
        for jump in (True, False):
            ds = fitgpp.simulate(jobs, cluster, Las(mode=mode), tick=1, jump=jump)
            out[mode, jump] = (ds["finish"] - ds["submit_time"]).to_series().to_dict()
    assert out["exact", True] == out["exact", False] == {0: 1300, 1: 1013, 2: 50}
    assert out["tiresias", True] == out["tiresias", False] == {0: 1300, 1: 1088, 2: 50}
    ds = fitgpp.simulate(jobs, cluster, "las", tick=1, mode="tiresias")
    assert ds.attrs["policy"] == "las" and int(ds["preemptions"].sel(job=0)) == 1
    with pytest.raises(PolicyError, match="las: mode must be 'exact' or 'tiresias'"):
        Las(mode="late")
