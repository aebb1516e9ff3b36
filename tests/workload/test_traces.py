"""The real traces shipped in traces/: their checksums, licences and citations on record, and
the adapters reading them plain or compressed with one provenance."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import re

import pytest

from fitgpp.studies import reproduce
from fitgpp.workload import from_alibaba_v2023, from_philly_chronus, models_dir
from fitgpp.workload.adapters import PHILLY_RUNTIME, AdapterError, philly_runtime_path

SHIPPED = models_dir()
FOLDERS = ("alibaba-gpu-v2023", "philly-chronus-derived", "philly-runtime")
ROW = re.compile(r"^\| `(?P<file>[^`]+\.csv\.gz)` \| (?P<rows>\d+) [^|]*\| `(?P<sha>[0-9a-f]{64})` \|$",
                 re.M)


def _listed(folder: str) -> dict:
    text = (SHIPPED / folder / "SOURCE.md").read_text()
    return {m["file"]: (int(m["rows"]), m["sha"]) for m in ROW.finditer(text)}


@pytest.mark.parametrize("folder", FOLDERS)
def test_each_shipped_file_matches_its_source_page(folder):
    listed = _listed(folder)
    assert listed, f"{folder}/SOURCE.md lists no file"
    text = (SHIPPED / folder / "SOURCE.md").read_text()
    for word in ("Where from.", "Licence.", "Cite."):
        assert f"**{word}**" in text, f"{folder}/SOURCE.md has no {word!r} paragraph"
    on_disk = {p.name for p in (SHIPPED / folder).glob("*.csv.gz")}
    assert on_disk == set(listed), f"{folder}: files and SOURCE.md disagree"
    for name, (rows, sha) in listed.items():
        data = gzip.decompress((SHIPPED / folder / name).read_bytes())
        assert hashlib.sha256(data).hexdigest() == sha, f"{folder}/{name}: sha256 differs"
        assert data.count(b"\n") == rows + 1, f"{folder}/{name}: row count differs"


def test_models_were_fitted_from_the_shipped_content():
    shas = {sha for f in FOLDERS for _, sha in _listed(f).values()}
    for name in ("alibaba-gpu-v2023", "alibaba-gpu-v2023-observed", "philly-chronus-mix1"):
        src = json.loads((SHIPPED / f"{name}.json").read_text())["provenance"]["source"]
        assert src["sha256"] in shas, name
        if name == "alibaba-gpu-v2023":  # its run times were re-drawn from Philly's
            assert src["philly_runtime"]["sha256"] in shas


def test_rq5_reads_the_shipped_trace():
    assert reproduce.ALIBABA.is_file() and reproduce.ALIBABA.parent.parent == SHIPPED


@pytest.mark.parametrize("pack", [None, gzip.compress, lzma.compress, bz2.compress],
                         ids=["plain", "gzip", "xz", "bzip2"])
def test_plain_and_compressed_give_one_trace_and_one_provenance(tmp_path, pack):
    raw = gzip.decompress((SHIPPED / "philly-chronus-derived" / "trace_job_Philly_MIX1.csv.gz")
                          .read_bytes())
    # named .csv whatever it holds: the content, not the name, says how to read it
    path = tmp_path / "trace_job_Philly_MIX1.csv"
    path.write_bytes(pack(raw) if pack else raw)
    tr, rep = from_philly_chronus(path)
    ref, ref_rep = from_philly_chronus(SHIPPED / "philly-chronus-derived"
                                       / "trace_job_Philly_MIX1.csv.gz")
    assert rep.sha256 == ref_rep.sha256 == hashlib.sha256(raw).hexdigest()
    assert tr.jobs.equals(ref.jobs) and rep.dropped == ref_rep.dropped
    assert tr.source["name"] == ref.source["name"] == "philly-chronus-mix1"


@pytest.mark.parametrize("damage", [lambda b: b[: len(b) // 2], lambda b: b[:20] + b"x" * 50])
def test_a_damaged_compressed_file_is_refused_by_name(tmp_path, damage):
    p = tmp_path / "pods.csv.gz"
    p.write_bytes(damage((SHIPPED / "alibaba-gpu-v2023" / "openb_pod_list_default.csv.gz")
                         .read_bytes()))
    with pytest.raises(AdapterError, match=r"pods\.csv\.gz: not a readable gzip file"):
        from_alibaba_v2023(p)


def test_philly_run_times_beside_the_trace_else_the_shipped_copy(tmp_path):
    trace = tmp_path / "mine" / "pods.csv"
    trace.parent.mkdir()
    trace.touch()
    assert philly_runtime_path(trace) == SHIPPED / PHILLY_RUNTIME
    assert philly_runtime_path(SHIPPED / "alibaba-gpu-v2023" / "x.csv") == SHIPPED / PHILLY_RUNTIME
    beside = tmp_path / "philly-runtime"
    beside.mkdir()
    (beside / "philly_runtime.csv.xz").write_bytes(lzma.compress(b"runtime\n5\n7200\n"))
    assert philly_runtime_path(trace) == beside / "philly_runtime.csv.xz"
    (beside / "philly_runtime.csv").write_text("runtime\n5\n7200\n")
    assert philly_runtime_path(trace) == beside / "philly_runtime.csv"
