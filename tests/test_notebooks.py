"""Every notebook runs top to bottom in quick mode (its `parameters` cell defaults), without error."""

from __future__ import annotations

import json
import time
from pathlib import Path

import nbformat
import pytest

from fitgpp.reproduce import ALIBABA
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
ALL = sorted(NOTEBOOKS.glob("*.ipynb"))
EXPECTED = ["00_quickstart", "01_workloads", "02_rq1_te_latency", "03_rq2_threshold_s",
            "04_rq3_long_jobs_and_grace", "05_rq4_mix_and_grace_distribution",
            "06_rq5_real_trace", "07_rq6_restart_cost", "08_write_a_policy"]


def test_the_numbered_notebooks_are_all_there():
    assert [p.stem for p in ALL] == EXPECTED


@pytest.mark.parametrize("path", ALL, ids=[p.stem for p in ALL])
def test_committed_without_outputs_and_with_a_parameters_cell(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), \
        f"{path.name} has outputs: strip them before committing"
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: expected one cell tagged 'parameters'"
    assert "Full size" in "".join(tagged[0]["source"]) or "full size" in "".join(tagged[0]["source"])
    first, last = nb["cells"][0], nb["cells"][-1]
    assert first["cell_type"] == "markdown" and "What this shows" in "".join(first["source"])
    assert last["cell_type"] == "markdown" and "What we found" in "".join(last["source"])


@pytest.mark.parametrize("path", ALL, ids=[p.stem for p in ALL])
def test_notebook_executes_in_quick_mode(path, tmp_path, monkeypatch):
    if path.stem == "06_rq5_real_trace":
        assert ALIBABA.is_file(), f"the shipped real trace {ALIBABA} is missing"
    nb = nbformat.read(path, as_version=4)
    monkeypatch.setenv("FITGPP_CACHE", str(tmp_path / "cache"))   # the kernel inherits it
    t0 = time.perf_counter()
    # run in a scratch copy of the notebooks dir so exports and caches never land in the repo
    NotebookClient(nb, timeout=240, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    print(f"{path.stem}: {time.perf_counter() - t0:.1f} s")
