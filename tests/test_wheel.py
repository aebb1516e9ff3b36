"""The wheel works anywhere: built from this tree, installed away from it, run from an
unrelated directory, it finds its shipped models and real traces (RQ5 included).

Isolation, and why this way: the wheel is built (``pip wheel --no-deps``) from a temporary
copy of what it is made of, then installed with ``pip install --no-deps --no-index --target``
into a temporary directory T. The commands run with this venv's interpreter as
``python -S -P T/bin/fitgpp ...`` with ``PYTHONPATH=T:<this venv's site-packages>`` and an
unrelated temporary working directory. ``-S`` skips the ``.pth`` files, so the editable
install's import hook, which maps ``fitgpp`` onto this source tree, is never installed; ``-P``
keeps the working directory off ``sys.path``. The dependencies come from this venv (a fresh
venv would download about 0.7 GB on every run); fitgpp itself can only come from the wheel,
and a check asserts that every fitgpp module imported lives under T.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def test_every_package_and_data_file_is_listed_for_the_wheel():
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "fitgpp").rglob("__init__.py")}
    assert set(SETUPTOOLS["packages"]) == found | {"fitgpp.traces"}, \
        "pyproject.toml [tool.setuptools] packages must list every package under fitgpp/"
    assert SETUPTOOLS["package-dir"] == {"fitgpp.traces": "traces"}
    patterns = SETUPTOOLS["package-data"]["fitgpp.traces"]
    data = [p for p in (ROOT / "traces").rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")]
    assert data
    for p in data:
        rel = p.relative_to(ROOT / "traces")
        assert any(rel.match(pat) and len(rel.parts) == len(Path(pat).parts) for pat in patterns), \
            f"traces/{rel} is not shipped: add a pattern to [tool.setuptools.package-data]"
    # files of the package itself that are not Python (live.js, the charts' front end)
    own = {}
    for p in (ROOT / "fitgpp").rglob("*"):
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts:
            pkg = ".".join(p.parent.relative_to(ROOT).parts)
            own.setdefault(pkg, []).append(p.name)
    listed = {k: sorted(v) for k, v in SETUPTOOLS["package-data"].items() if k != "fitgpp.traces"}
    assert own and {k: sorted(v) for k, v in own.items()} == listed, \
        f"fitgpp/ holds {own}: list each in [tool.setuptools.package-data]"


def test_a_checkout_on_sys_path_without_an_install_finds_its_traces(tmp_path):
    """No install at all (PYTHONPATH=<checkout>, no .pth hook): fitgpp.traces is not a
    subpackage then, and models_dir() falls back to <checkout>/traces."""
    probe = ("import importlib.util, fitgpp.studies.reproduce as r\n"
             "from fitgpp.workload import models_dir\n"
             "print(importlib.util.find_spec('fitgpp.traces') is None, models_dir(), r.ALIBABA)\n")
    r = _run(ROOT, tmp_path, "-c", probe)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", str(ROOT / "traces"),
                                str(ROOT / "traces" / "alibaba-gpu-v2023" / "openb_pod_list_default.csv.gz")]


def _build_backend_here() -> bool:
    """Whether this venv can build without fetching setuptools (needs bdist_wheel built in)."""
    try:
        major, minor = (int(x) for x in version("setuptools").split(".")[:2])
    except Exception:
        return False
    return (major, minor) >= (70, 1)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        if (ROOT / name).is_file():
            shutil.copy(ROOT / name, src / name)
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in ("fitgpp", "traces"):
        shutil.copytree(ROOT / name, src / name, ignore=junk)
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"),
           str(src)]
    if _build_backend_here():
        cmd.insert(4, "--no-build-isolation")
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    shutil.rmtree(src)  # nothing may point back into the build copy
    (wheel,) = (work / "dist").glob("fitgpp-*.whl")
    target = work / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                    "--target", str(target), str(wheel)], check=True, capture_output=True,
                   text=True)
    return target


def _run(target: Path, cwd: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    paths = [str(target)] + list(dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib")))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "PYTHONDONTWRITEBYTECODE": "1",
           "FITGPP_CACHE": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-S", "-P", *args], cwd=cwd, env=env, timeout=timeout,
                          capture_output=True, text=True)


def _fitgpp(target, cwd, *args, **kw):
    r = _run(target, cwd, str(target / "bin" / "fitgpp"), *args, **kw)
    assert r.returncode == 0, f"fitgpp {' '.join(args)}: exit {r.returncode}\n{r.stderr[-3000:]}"
    return r


@pytest.mark.slow
def test_installed_wheel_imports_nothing_from_the_source_tree(installed, tmp_path):
    probe = ("import json, sys\n"
             "import fitgpp, fitgpp.cli, fitgpp.workbook.live, fitgpp.studies.reproduce, fitgpp.sweep, fitgpp.workload\n"
             "from fitgpp.workload import models_dir, list_models\n"
             "files = {m.__name__: m.__file__ for m in list(sys.modules.values())\n"
             "         if m.__name__.split('.')[0] == 'fitgpp' and getattr(m, '__file__', None)}\n"
             "print(json.dumps({'files': files, 'models_dir': str(models_dir()),\n"
             "                  'models': list_models(), 'alibaba': str(fitgpp.studies.reproduce.ALIBABA),\n"
             "                  'version': fitgpp.__version__}))\n")
    r = _run(installed, tmp_path, "-c", probe)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    outside = {k: f for k, f in got["files"].items() if not Path(f).is_relative_to(installed)}
    assert not outside, f"fitgpp modules imported from outside the wheel: {outside}"
    assert len(got["files"]) > 20
    assert Path(got["models_dir"]) == installed / "fitgpp" / "traces"
    assert {"paper-default", "alibaba-gpu-v2023", "philly-chronus-mix1"} <= set(got["models"])
    assert Path(got["alibaba"]).is_file() and Path(got["alibaba"]).is_relative_to(installed)
    assert got["version"] == PYPROJECT["project"]["version"]


@pytest.mark.slow
def test_installed_wheel_runs_synth_simulate_fit_and_reproduce(installed, tmp_path):
    _fitgpp(installed, tmp_path, "synth", "paper-default", "--jobs", "200", "--seed", "1",
            "--load", "0.9", "--nodes", "4", "--out", "trace.csv")
    rows = (tmp_path / "trace.csv").read_text().splitlines()
    assert len(rows) == 201 and rows[0].startswith("job_id")
    r = _fitgpp(installed, tmp_path, "simulate", "trace.csv", "--policy", "fitgpp", "--nodes", "4",
                "--out", "result.nc")
    assert "wrote result.nc" in r.stdout and (tmp_path / "result.nc").read_bytes()[:4] == b"\x89HDF"
    import fitgpp
    ds = fitgpp.load(tmp_path / "result.nc")
    assert ds.sizes["job"] == 200 and ds.attrs["policy"] == "fitgpp"
    ds.close()

    pods = installed / "fitgpp" / "traces" / "alibaba-gpu-v2023" / "openb_pod_list_default.csv.gz"
    r = _fitgpp(installed, tmp_path, "fit", str(pods), "--format", "alibaba-v2023",
                "--runtimes", "philly", "--out", "model.json")
    src = json.loads((tmp_path / "model.json").read_text())["provenance"]["source"]
    assert Path(src["philly_runtime"]["path"]).is_relative_to(installed)

    r = _fitgpp(installed, tmp_path, "reproduce", "--quick", "--out", "report")
    md = (tmp_path / "report" / "results.md").read_text()
    assert "RQ5" in md and "NOT RUN" not in md
    assert (tmp_path / "report" / "rq5.csv").is_file()
    assert len(list((tmp_path / "report").glob("rq5_*.png"))) >= 2
