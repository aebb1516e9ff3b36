"""Hard to break, round three (issue 28): a full disk never crashes a command nor leaves a
partial or temporary file, and a damaged figure cache is detected and rebuilt.

The full disk is a file size limit (``RLIMIT_FSIZE``) set in a subprocess, with SIGXFSZ
ignored so that a write past it fails with EFBIG as a full disk fails with ENOSPC; its
output goes to pipes, which the limit does not cover."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import altair as alt
import pandas as pd
import pytest

from fitgpp.figures import export as E
from fitgpp.figures import plots

resource = pytest.importorskip("resource")  # POSIX: every CI runner of this project

LIMITED = """
import resource, runpy, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.argv = ["fitgpp", *sys.argv[2:]]
runpy.run_module("fitgpp", run_name="__main__")
"""


def limited(tmp_path, limit, *argv, script=LIMITED):
    env = {**os.environ, "FITGPP_CACHE": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-c", script, str(limit), *map(str, argv)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)


def leftovers(*folders):
    return sorted(str(p) for d in folders if d.exists() for p in d.rglob("*")
                  if p.name.endswith(".tmp") or p.name.startswith("."))


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("disk")
    from fitgpp.workload import synthesize
    from fitgpp.sim.trace import write_trace
    t = synthesize("paper-default", n_jobs=400, seed=0)
    write_trace(t, d / "t.csv")
    return d / "t.csv"


def test_simulate_on_a_full_disk_exits_2_and_leaves_nothing(tmp_path, trace):
    assert trace.stat().st_size < 60_000
    p = limited(tmp_path, 60_000, "simulate", trace, "--nodes", "4", "--policy", "fifo",
                "--out", tmp_path / "r.nc")
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    err = p.stderr.strip().splitlines()
    assert err == [f"fitgpp simulate: error: cannot write {tmp_path / 'r.nc'} (File too large)"]
    assert not (tmp_path / "r.nc").exists() and leftovers(tmp_path) == []


def test_sweep_on_a_full_disk_exits_2_and_leaves_nothing(tmp_path):
    (tmp_path / "s.toml").write_text(textwrap.dedent("""
        seeds = [0, 1, 2]
        [workload]
        model = "paper-default"
        n_jobs = 300
        [cluster]
        nodes = 4
        [policies.fifo]
        [policies.las]
        mode = ["exact", "tiresias"]
    """))
    p = limited(tmp_path, 4_000, "sweep", "s.toml", "--out", "s.nc", "--workers", "0",
                "--no-cache", "--quiet")
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert p.stderr.strip().splitlines()[-1] == "fitgpp sweep: error: cannot write s.nc " \
                                               "(File too large)"
    assert "Traceback" not in p.stderr and "HDF5" not in p.stderr
    assert not (tmp_path / "s.nc").exists() and leftovers(tmp_path) == []


@pytest.fixture(scope="module")
def chart():
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [1.0, 4.0, 9.0], "k": ["a", "a", "a"]})
    return plots._finish(alt.Chart(df).mark_line(clip=True).encode(
        x=alt.X("x:Q", title="time (h)"), y=alt.Y("y:Q", title="waiting jobs"),
        color=alt.Color("k:N", title="queue")).properties(
            width=plots._panel(plots.preset("column"), 1)),
        plots.preset("column"), "A small test figure")


EXPORT = """
import json, resource, signal, sys
import altair as alt
from fitgpp.figures import export as E
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
spec = json.load(open(sys.argv[2]))
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
try:
    E.export({"f": spec}, sys.argv[3], config={"a": 1}, cache=sys.argv[4])
except E.ExportError as exc:
    print(exc, file=sys.stderr)
    sys.exit(2)
"""


def test_export_on_a_full_disk_with_a_cold_figure_cache_leaves_no_tmp(tmp_path, chart):
    (tmp_path / "spec.json").write_text(json.dumps(chart.to_dict()))
    out, cache = tmp_path / "out", tmp_path / "figcache"
    p = subprocess.run([sys.executable, "-c", EXPORT, "3000", tmp_path / "spec.json", out,
                        cache], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, p.stderr[-2000:]
    assert p.stderr.strip() == f"cannot write in {out} (File too large)"
    assert leftovers(out, cache) == []
    assert not out.exists() or [q.name for q in out.iterdir()] == []


def test_a_figure_cache_that_cannot_be_written_is_not_blamed_on_out(tmp_path, chart,
                                                                    monkeypatch):
    cache = tmp_path / "figcache"
    real = Path.write_bytes

    def full(self, data):
        if cache in self.parents:
            real(self, data[: len(data) // 2])   # half written, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, data)
    monkeypatch.setattr(Path, "write_bytes", full)
    paths = E.export({"f": chart}, tmp_path / "out", config={"a": 1}, cache=cache)
    assert [p.name for p in paths] == ["f.png", "f.svg", "f.pdf"]
    assert leftovers(cache) == [] and not [p for p in cache.rglob("*") if p.is_file()]


def _damage(kind, path: Path):
    data = path.read_bytes()
    if kind == "half":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "directory":
        path.unlink()
        (path / "x").mkdir(parents=True)
    elif kind == "tail":  # cut a few bytes short: the start of the file still looks right
        path.write_bytes(data[:-20])


@pytest.mark.parametrize("ext", [".png", ".svg", ".pdf"])
@pytest.mark.parametrize("kind", ["half", "tail", "empty", "directory"])
def test_a_damaged_cached_figure_is_rendered_again(tmp_path, chart, ext, kind):
    cache = tmp_path / "figcache"
    first = E.export({"f": chart}, tmp_path / "a", config={"a": 1}, cache=cache)
    entries = [p for p in cache.rglob(f"*{ext}") if "layout" not in p.parts]
    assert len(entries) == 1
    _damage(kind, entries[0])
    again = E.export({"f": chart}, tmp_path / "b", config={"a": 1}, cache=cache)
    from fitgpp.figures.plots.render import whole
    for a, b in zip(first, again):   # whole files (SVG ids, PDF dates may differ)
        assert whole(b.read_bytes(), b.suffix) and E.read_config(b)["config"] == {"a": 1}
        assert a.suffix != ".png" or a.read_bytes() == b.read_bytes(), b.name
    assert entries[0].is_file() and whole(entries[0].read_bytes(), ext)  # rebuilt


@pytest.mark.parametrize("kept", ["{}", "[]", '{"$schema": "x"}', '{"mark": "line"', "",
                                  "directory"])
def test_a_damaged_cached_layout_is_laid_out_again(tmp_path, chart, kept):
    cache = tmp_path / "figcache"
    first = E.export({"f": chart}, tmp_path / "a", config={"a": 1}, cache=cache)
    (layout,) = (cache / "layout").rglob("*.json")
    if kept == "directory":
        layout.unlink()
        layout.mkdir()
    else:
        layout.write_text(kept)
    for p in cache.rglob("*"):   # the drawings too, so that the layout is used
        if p.is_file() and "layout" not in p.parts:
            p.unlink()
    again = E.export({"f": chart}, tmp_path / "b", config={"a": 1}, cache=cache)
    assert first[0].read_bytes() == again[0].read_bytes()
    assert json.loads(layout.read_text())["$schema"]


def test_the_cli_turns_a_stray_os_error_into_one_line(tmp_path, capsys, monkeypatch):
    from fitgpp.cli.main import main
    from fitgpp.cli import synth

    def full(args):   # what a write deep in a command does on a full disk
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "results.md"))
    monkeypatch.setattr(synth, "run", full)
    rc = main(["synth", "paper-default", "--out", str(tmp_path / "t.csv")])
    err = capsys.readouterr().err
    assert rc == 2 and err.strip().splitlines() == [
        f"fitgpp synth: error: {tmp_path / 'results.md'}: No space left on device"]


def test_a_trace_name_too_long_is_a_trace_error(tmp_path, capsys):
    from fitgpp.cli.main import main
    import fitgpp
    name = tmp_path / ("x" * 300 + ".csv")
    with pytest.raises(fitgpp.TraceError, match="cannot read.*name too long"):
        fitgpp.read_trace(name)
    rc = main(["simulate", str(name), "--nodes", "1", "--out", str(tmp_path / "r.nc")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_the_interval_cache_on_a_full_disk_leaves_no_tmp(tmp_path, monkeypatch):
    import numpy as np
    from fitgpp.figures.plots.slowdown import _cached_interval
    cache = tmp_path / "intervals"
    real = Path.write_bytes

    def full(self, data):
        if cache in self.parents:
            real(self, data[:3])
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, data)
    monkeypatch.setattr(Path, "write_bytes", full)
    lo, hi = _cached_interval(np.arange(1.0, 50.0), 0.5, cache=cache)
    assert np.isfinite(lo) and lo <= hi
    assert leftovers(cache) == [] and not [p for p in cache.rglob("*") if p.is_file()]
