"""Where fitgpp and Tiresias's simulator read the same Tiresias file otherwise (issue 35 item
20; docs/model.md, "Where fitgpp and Tiresias's simulator still part"), pinned on tiny files
worked by hand, since CI has no Tiresias.

Tiresias sorts its jobs stably by ``submit_time``, so jobs submitted in the same second keep
their *line* order, and every later stable sort of its list keeps them so while their keys
tie; fitgpp orders them by ``job_id`` (SPEC). And Tiresias reads a duration as
``int(float(duration))``, whole seconds cut down; fitgpp rounds up to whole ticks. Reading
such a file says so with a :class:`TiresiasWarning`."""

from __future__ import annotations

import warnings

import pytest

import fitgpp
from fitgpp.sim.tiresias import TiresiasWarning, from_tiresias, read_tiresias, to_tiresias

HEAD = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
#: One 1-GPU pool. Job 0 (100 s) at 0; jobs 2 and 1 (50 s each) at 10, job 2 on the line
#: above job 1.
OUT_OF_ORDER = HEAD + "0,1,0,100,resnet50,100,10\n2,1,10,50,resnet50,50,0\n" \
                      "1,1,10,50,resnet50,50,0\n"
POOL = fitgpp.Cluster.homogeneous(1, 1, 1000, 1000)


def jct(ds) -> dict:
    return {int(k): float(v) for k, v in (ds["finish"] - ds["submit_time"]).to_series().items()}


@pytest.mark.parametrize("policy", ["shortest", "shortest-gpu"])
@pytest.mark.parametrize("mode", ["exact", "tiresias"])
def test_same_second_jobs_go_by_job_id_not_by_line(tmp_path, policy, mode):
    """SRTF (and SRSF: one GPU each, the same keys), one 1-GPU pool, tick 1 s. At 10 job 0
    has 90 s left and jobs 1 and 2 arrive with 50 s each, tied.

    fitgpp takes the same-second arrivals in job_id order, 1 then 2, in both modes (in
    Tiresias's mode they are appended to its list in that order and the stable sort keeps
    it): job 1 runs 10-60 (JCT 50), job 2 60-110 (JCT 100), job 0, preempted at 10, 110-200
    (JCT 200). Tiresias appends them in line order, 2 then 1, and its stable sort keeps that:
    job 2 runs 10-60 (JCT 50), job 1 60-110 (JCT 100), job 0 the same (200). So the two
    differ on jobs 1 and 2 exactly, and reading the file says so, naming the lines."""
    path = tmp_path / "t.csv"
    path.write_text(OUT_OF_ORDER)
    with pytest.warns(TiresiasWarning) as rec:
        trace = read_tiresias(path, cluster=POOL)
    said = str(rec[0].message)
    assert f"{path}: jobs submitted in the same second are listed out of job_id order " \
           "(lines 3 and 4: job_id 2 before 1)" in said
    assert "Tiresias's simulator takes them in line order, fitgpp (SPEC) in job_id order" in said
    ds = fitgpp.simulate(trace, POOL, policy, tick=1, mode=mode)
    assert jct(ds) == {0: 200.0, 1: 50.0, 2: 100.0}  # Tiresias: {0: 200, 1: 100, 2: 50}
    assert int(ds["preemptions"].sel(job=0)) == 1


def test_the_file_rewritten_in_job_id_order_reads_the_same_in_both(tmp_path):
    """The remedy the warning names: to_tiresias writes the jobs in (submit_time, job_id)
    order, job 1's line above job 2's, so Tiresias takes them as fitgpp does; reading that
    file warns of nothing, and the run is the same."""
    path, again = tmp_path / "t.csv", tmp_path / "sorted.csv"
    path.write_text(OUT_OF_ORDER)
    with pytest.warns(TiresiasWarning):
        jobs = from_tiresias(path)
    to_tiresias(jobs, again)
    assert again.read_text().splitlines()[1:] == [
        "0,1,0,100,resnet50,100,10", "1,1,10,50,resnet50,50,0", "2,1,10,50,resnet50,50,0"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trace = read_tiresias(again, cluster=POOL)
    assert jct(fitgpp.simulate(trace, POOL, "shortest", tick=1, mode="tiresias")) == \
        {0: 200.0, 1: 50.0, 2: 100.0}


def test_a_fractional_duration_is_cut_by_tiresias_and_rounded_up_here(tmp_path):
    """Job 0 lasts 50.5 s: Tiresias's int(float('50.5')) runs it 50 s (JCT 50); fitgpp at
    tick 1 s needs ceil(50.5) = 51 ticks (JCT 51). Reading says so, naming the line."""
    path = tmp_path / "t.csv"
    path.write_text(HEAD + "0,1,0,50,resnet50,50.5,0\n1,1,0,10,resnet50,10,0\n")
    with pytest.warns(TiresiasWarning, match=r"1 duration\(s\) with a fraction of a second "
                                             r"\(line 2\): Tiresias's simulator cuts them"):
        trace = read_tiresias(path, cluster=fitgpp.Cluster.homogeneous(1, 2, 1000, 1000))
    ds = fitgpp.simulate(trace, fitgpp.Cluster.homogeneous(1, 2, 1000, 1000), "fifo", tick=1)
    assert jct(ds) == {0: 51.0, 1: 10.0}


def test_the_command_line_says_it_on_one_line(tmp_path, capsys):
    from fitgpp.cli import main
    path = tmp_path / "t.csv"
    path.write_text(OUT_OF_ORDER)
    assert main(["simulate", str(path), "--nodes", "1", "--node-gpu", "1", "--tick", "1",
                 "--policy", "shortest", "--param", "mode=tiresias",
                 "--out", str(tmp_path / "o.nc")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"fitgpp simulate: warning: {path}: jobs submitted in the same second are listed out "
        "of job_id order (lines 3 and 4: job_id 2 before 1)")
