"""Adapters on the real trace files shipped in traces/ (gzip-compressed), checked against the
raw CSVs and the counts their SOURCE.md states."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fitgpp
from fitgpp.workload import from_alibaba_v2023, from_philly_chronus, models_dir, read_format
from fitgpp.workload.adapters import AdapterError, split_gpus

TRACES = models_dir()
ALI = TRACES / "alibaba-gpu-v2023" / "openb_pod_list_default.csv.gz"
MIX1 = TRACES / "philly-chronus-derived" / "trace_job_Philly_MIX1.csv.gz"
MIX2 = TRACES / "philly-chronus-derived" / "trace_job_Philly_MIX2.csv.gz"
PHILLY = TRACES / "philly-runtime" / "philly_runtime.csv.gz"


def _consistent(tr, rep):
    assert rep.rows_in == rep.rows_out + sum(rep.dropped.values())
    assert len(tr.jobs) == rep.rows_out
    assert len(tr.dropped) == sum(rep.dropped.values())
    assert tr.dropped["reason"].value_counts().to_dict() == rep.dropped
    assert tr.source["sha256"] == rep.sha256 and tr.source["report"] == rep.to_dict()


def test_alibaba_observed_against_the_raw_file():
    raw = pd.read_csv(ALI)
    tr, rep = from_alibaba_v2023(ALI)
    _consistent(tr, rep)
    ok = (raw["qos"].isin(["LS", "BE"]) & (raw["num_gpu"] > 0) & raw["scheduled_time"].notna()
          & (raw["deletion_time"] > raw["scheduled_time"]))
    assert rep.rows_out == ok.sum()
    kept = raw[ok]
    j = tr.jobs.set_index("job_id")
    np.testing.assert_array_equal(j.index, np.flatnonzero(ok))
    np.testing.assert_array_equal(j["cls"], np.where(kept["qos"] == "LS", "TE", "BE"))
    np.testing.assert_allclose(j["duration"], kept["deletion_time"] - kept["scheduled_time"])
    np.testing.assert_allclose(j["submit_time"], kept["creation_time"])
    np.testing.assert_array_equal(j["mem_mib"], kept["memory_mib"])
    # SOURCE.md: 107 Burstable/Guaranteed rows; num_gpu 0 in 1088 rows (2 of them B/G).
    assert rep.dropped["qos Burstable or Guaranteed (other_qos='drop')"] == 107
    assert rep.dropped["CPU-only pod, num_gpu == 0 (cpu_only='drop')"] == 1088 - 2
    assert "pending pod, never scheduled: no run time" in rep.dropped
    be = j.loc[j["cls"] == "BE", "grace_period"]
    assert (be > 0).all() and j.loc[j["cls"] == "TE", "grace_period"].eq(0).all()


def test_alibaba_philly_runtimes_keep_every_gpu_task_and_follow_the_premise():
    tr, rep = from_alibaba_v2023(ALI, runtimes="philly", seed=3)
    _consistent(tr, rep)
    n = tr.jobs["cls"].value_counts()
    assert (n["TE"], n["BE"]) == (4011, 2948)  # SOURCE.md: GPU tasks, LS and BE
    te = tr.jobs.loc[tr.jobs["cls"] == "TE", "duration"]
    be = tr.jobs.loc[tr.jobs["cls"] == "BE", "duration"]
    assert te.max() < 3600 <= be.min()
    assert tr.source["philly_runtime"]["sha256"] and "re-drawn" in " ".join(rep.notes)
    again, _ = from_alibaba_v2023(ALI, runtimes="philly", seed=3)
    pd.testing.assert_frame_equal(again.jobs, tr.jobs)
    other, _ = from_alibaba_v2023(ALI, runtimes="philly", seed=4)
    assert not other.jobs["duration"].equals(tr.jobs["duration"])


def test_alibaba_options():
    tr, rep = from_alibaba_v2023(ALI, runtimes="philly", sharing="drop", other_qos="TE",
                                 grace_period=30.0)
    _consistent(tr, rep)
    assert rep.dropped["GPU-sharing pod, gpu_milli < 1000 (sharing='drop')"] == 3078
    assert (tr.jobs.loc[tr.jobs["cls"] == "BE", "grace_period"] == 30.0).all()
    raw = pd.read_csv(ALI)
    te_bg = raw["qos"].isin(["Burstable", "Guaranteed"]) & (raw["num_gpu"] > 0) & ~(
        (raw["num_gpu"] == 1) & (raw["gpu_milli"] < 1000))
    assert tr.jobs["job_id"].isin(np.flatnonzero(te_bg)).sum() == te_bg.sum()
    with pytest.raises(AdapterError, match="sharing must be one of"):
        from_alibaba_v2023(ALI, sharing="half")
    tr8, rep8 = from_alibaba_v2023(ALI, max_gpu=4)
    assert rep8.dropped["more than max_gpu=4 GPUs (a job runs on one node)"] > 0
    assert tr8.jobs["gpu"].max() == 4


@pytest.mark.parametrize("path, te_types", [(MIX1, {"strict"}), (MIX2, {"strict", "soft"})])
def test_chronus_against_the_raw_file(path, te_types):
    raw = pd.read_csv(path)
    tr, rep = from_philly_chronus(path)
    _consistent(tr, rep)
    # every job with a GPU fits the default cluster (16 nodes x 8 GPUs; at most 32 GPUs here)
    ok = raw["num_gpu"] >= 1
    assert raw["num_gpu"].max() <= 16 * 8 and (raw["num_gpu"] > 8).sum() > 100
    assert rep.dropped == {"num_gpu == 0: no GPU, and the file records no CPU or memory":
                           (raw["num_gpu"] == 0).sum()}
    assert rep.rows_out == ok.sum()
    kept = raw[ok]
    j = tr.jobs.set_index("job_id").loc[np.flatnonzero(ok)]
    np.testing.assert_allclose(j["submit_time"], kept["submit_time"] * 60.0)
    np.testing.assert_allclose(j["duration"], kept["duration"] * 60.0)
    np.testing.assert_array_equal(j["cls"] == "TE", kept["job_type"].isin(te_types))
    # gangs: the fewest 8-GPU nodes, GPUs spread evenly, never fewer than asked
    want = -(-kept["num_gpu"].to_numpy() // 8)
    np.testing.assert_array_equal(j["tasks"], want)
    total = j["tasks"] * j["gpu"]
    assert (total >= kept["num_gpu"].to_numpy()).all()
    assert (total - kept["num_gpu"].to_numpy() < j["tasks"]).all()
    assert (j["gpu"] <= 8).all()
    np.testing.assert_array_equal(j["cpu_milli"], j["gpu"] * 12000)
    assert sum(rep.gangs.values()) == (raw["num_gpu"] > 8).sum()
    assert tr.source["options"]["time_unit_s"] == 60.0


def test_chronus_drops_only_gangs_that_fit_no_cluster():
    raw = pd.read_csv(MIX1)
    small = fitgpp.Cluster.homogeneous(3)  # 24 GPUs: the 32-GPU jobs (4 tasks) cannot run
    tr, rep = from_philly_chronus(MIX1, cluster=small)
    _consistent(tr, rep)
    why = [r for r in rep.dropped if r.startswith("does not fit the cluster")]
    assert len(why) == 1 and rep.dropped[why[0]] == (raw["num_gpu"] > 24).sum() > 0
    assert rep.rows_out == ((raw["num_gpu"] >= 1) & (raw["num_gpu"] <= 24)).sum()
    # nodes of 4 GPUs split differently: 16 GPUs -> 4 tasks of 4
    tr4, rep4 = from_philly_chronus(MIX1, cluster=fitgpp.Cluster.homogeneous(16, gpu=4))
    assert rep4.gangs["16 GPUs -> 4 tasks x 4 GPUs"] == (raw["num_gpu"] == 16).sum()
    assert tr4.jobs["gpu"].max() == 4
    # the old behaviour, on request
    tr8, rep8 = from_philly_chronus(MIX1, max_gpu=8)
    assert rep8.dropped["more than max_gpu=8 GPUs (max_gpu option)"] == (raw["num_gpu"] > 8).sum()
    assert (tr8.jobs["tasks"] == 1).all() and not rep8.gangs


@pytest.mark.parametrize("gpus, node, tasks, per", [
    (1, 8, 1, 1), (8, 8, 1, 8), (9, 8, 2, 5), (12, 8, 2, 6), (16, 8, 2, 8), (20, 8, 3, 7),
    (32, 8, 4, 8), (33, 8, 5, 7), (7, 4, 2, 4), (5, 1, 5, 1)])
def test_split_rule(gpus, node, tasks, per):
    k, p = split_gpus([gpus], node)
    assert (k[0], p[0]) == (tasks, per)
    assert k[0] * p[0] - gpus < k[0] and p[0] <= node


def test_split_rule_rejects_a_bad_node_size():
    with pytest.raises(AdapterError, match="node_gpus must be an integer >= 1"):
        split_gpus([3], 0)


def test_chronus_philly_runtimes_and_time_unit_option():
    tr, rep = from_philly_chronus(MIX1, runtimes="philly", time_unit=1.0)
    assert tr.jobs["submit_time"].max() == pd.read_csv(MIX1)["submit_time"].max()
    assert tr.jobs.loc[tr.jobs["cls"] == "TE", "duration"].max() < 3600
    with pytest.raises(AdapterError, match="time_unit"):
        from_philly_chronus(MIX1, time_unit=0)


def test_adapter_errors(tmp_path):
    with pytest.raises(AdapterError, match="no such file"):
        from_alibaba_v2023(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,num_gpu\n1,2\n")
    with pytest.raises(AdapterError, match="missing column.*submit_time.*philly-chronus"):
        from_philly_chronus(bad)
    with pytest.raises(AdapterError, match="unknown trace format"):
        read_format(bad, "helios")
    with pytest.raises(AdapterError, match="format spec takes no options"):
        read_format(bad, "spec", seed=1)


def test_chronus_labels_that_disagree_are_dropped(tmp_path):
    p = tmp_path / "mini.csv"
    rows = ["job_id,num_gpu,submit_time,duration,best_effort,job_type"]
    rows += [f"{i},1,{i},{10 + i},{1 if i % 3 == 0 else 0},{'best' if i % 3 == 0 else 'strict'}"
             for i in range(12)]
    rows += ["12,1,5,10,0,best", "13,2,6,10,0,weird", "14,16,7,10,0,strict",
             "15,200,8,10,0,strict"]
    p.write_text("\n".join(rows) + "\n")
    tr, rep = from_philly_chronus(p, philly_runtime=None)
    assert rep.dropped == {"unknown job_type": 1,
                           "best_effort flag disagrees with job_type": 1,
                           "does not fit the cluster (16x(8 GPU, 96000 mCPU, 786432 MiB)): "
                           "its tasks fit on fewer nodes than it has tasks": 1}
    assert rep.rows_out == 13 and (tr.jobs["cls"] == "BE").sum() == 4
    assert rep.gangs == {"16 GPUs -> 2 tasks x 8 GPUs": 1}
    assert tr.jobs.set_index("job_id").loc[14, ["gpu", "tasks"]].tolist() == [8, 2]
    assert "gang" in str(rep) and rep.to_dict()["gangs"] == rep.gangs
