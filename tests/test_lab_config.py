"""`make lab`: the URL JupyterLab prints opens notebooks/00_quickstart.ipynb, and the news
pop-up's plugin is disabled (checked against the installed JupyterLab, and on a live server)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "lab-config"
NEWS_PLUGIN = "@jupyterlab/apputils-extension:announcements"


def test_config_names_the_quickstart_and_a_plugin_this_jupyterlab_has():
    lab = json.loads((CONF / "jupyter_server_config.json").read_text())["LabApp"]
    page = json.loads((CONF / "labconfig" / "page_config.json").read_text())
    target = lab["default_url"].removeprefix("/lab/tree/")
    assert (ROOT / "notebooks" / target).is_file()
    assert target == "00_quickstart.ipynb" and lab["news_url"] is None
    assert page["disabledExtensions"] == {NEWS_PLUGIN: True}
    # the plugin id must exist in the JupyterLab installed here, or disabling it does nothing
    import jupyterlab
    from jupyterlab.labapp import LabApp
    static = Path(sys.prefix) / "share" / "jupyter" / "lab" / "static"
    assert any(NEWS_PLUGIN.encode() in p.read_bytes() for p in static.glob("*.js")), \
        f"{NEWS_PLUGIN} not found in JupyterLab {jupyterlab.__version__}"
    for trait in ("default_url", "news_url", "check_for_updates_class"):
        assert LabApp.class_traits()[trait].metadata.get("config"), trait


def test_make_lab_puts_the_config_on_the_path():
    text = (ROOT / "Makefile").read_text()
    recipe = text[text.index("\nlab:"):].split("\n\n")[0]
    assert 'JUPYTER_CONFIG_PATH="$(CURDIR)/lab-config' in recipe and "jupyter lab" in recipe


def _get_when_listening(url, proc, log, seconds=60):
    """The page at url, once the server accepts connections.

    Jupyter may print its URL a moment before its socket accepts (seen on a loaded CI machine as
    "connection refused"), so a refused connection is retried while the server lives; a server
    that exits, or never accepts, fails with the end of its log.
    """
    deadline = time.monotonic() + seconds
    while True:
        try:
            return urllib.request.urlopen(url, timeout=20).read().decode()
        except urllib.error.URLError as err:
            if not isinstance(err.reason, ConnectionRefusedError):
                raise
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"the server printed {url} but never accepted a connection "
                    f"(exit code {proc.poll()}):\n{log.read_text(errors='replace')[-2000:]}"
                ) from err
            time.sleep(0.5)


@pytest.mark.slow
def test_a_live_server_prints_the_notebook_url_and_disables_the_news(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "JUPYTER_CONFIG_PATH": str(CONF)}
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR",
                "JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR"):
        env[var] = str(tmp_path / var.lower())
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", "--ServerApp.port_retries=0", "00_quickstart.ipynb"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = tmp_path / "lab.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT / "notebooks", env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = None
        for _ in range(120):
            m = re.search(r"(http://127\.0\.0\.1:\d+/\S+)", log.read_text(errors="replace"))
            if m:
                url = m.group(1)
                break
            time.sleep(0.25)
        assert url, f"no URL printed:\n{log.read_text()[-2000:]}"
        assert re.match(rf"http://127\.0\.0\.1:{port}/lab/tree/00_quickstart\.ipynb\?token=\w+$",
                        url), url
        html = _get_when_listening(url, proc, log)
        cfg = json.loads(re.search(r'id="jupyter-config-data"[^>]*>\s*(\{.*?\})\s*</script>',
                                   html, re.S).group(1))
        assert NEWS_PLUGIN in cfg["disabledExtensions"] and cfg["news"]["disabled"] is True
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_make_installs_without_setuptools_editable_notice():
    """`make lab`/`make test` install fitgpp editable; setuptools prints an "Editable
    installation" notice block on each install (issue 35). The Makefile silences that warning
    by its message: the filter must reach pip, match what this setuptools emits, and leave
    every other warning alone."""
    plan = subprocess.run(["make", "-n", "-W", "pyproject.toml", ".venv/.fitgpp-installed"],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout
    line = next(ln for ln in plan.splitlines() if "pip install" in ln and " -e " in ln)
    m = re.match(r'PYTHONWARNINGS="([^"$]+)', line)
    assert m, f"the editable install does not set PYTHONWARNINGS: {line}"
    import setuptools.command.editable_wheel as ew
    assert 'emit("Editable installation."' in Path(ew.__file__).read_text(), \
        "setuptools no longer emits this notice: drop the filter from the Makefile"
    probe = ("import warnings\n"
             "from setuptools.warnings import InformationOnly\n"
             "InformationOnly.emit('Editable installation.', 'folders named like the package')\n"
             "warnings.warn('another warning', UserWarning)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env={**os.environ, "PYTHONWARNINGS": m.group(1)}).stderr
    assert "Editable installation" not in out
    assert "another warning" in out
