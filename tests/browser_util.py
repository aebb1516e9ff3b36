"""Helpers for the real-browser test: find Chromium and Playwright, run a private
JupyterLab, and keep what a failed run saw (screenshot, browser console, server log).

Nothing here is specific to one notebook; tests/test_browser.py holds the checks.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"

CHROMIUM = os.environ.get("FITGPP_CHROMIUM", "/usr/bin/chromium")
# The flags that work on these machines (../shared/NOTES.md): headless, no sandbox as root,
# and nothing that reaches for the network on its own.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

INSTALL_HELP = ("install them with: apt-get install -y chromium chromium-driver  (Debian/Ubuntu, "
                "as root) and: .venv/bin/python -m pip install playwright  (or pip install -e '.[dev]'); "
                "do not run `playwright install`, the test drives the system Chromium "
                "(set FITGPP_CHROMIUM=/path/to/chromium if it lives elsewhere)")


def require_browser():
    """Return ``playwright.sync_api.sync_playwright``, or skip saying how to install what is
    missing. Under CI (environment variable CI set, and not 0/false/no) fail instead: CI
    installs Chromium (.ci/run), so a missing browser there is a broken setup, not a laptop."""
    missing = []
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        missing.append(f"no Chromium at {CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
        missing.append(f"the Python package playwright is not importable from {sys.executable}")
    if missing:
        msg = f"browser test needs Chromium and Playwright: {'; '.join(missing)}; {INSTALL_HELP}"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(f"CI is set, so the browser test may not be skipped: {msg}", pytrace=False)
        pytest.skip(msg)
    return sync_playwright


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, n: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError as exc:
        return f"(no log: {exc})"


class JupyterLab:
    """A JupyterLab server of our own: loopback only, no token, no password, every
    Jupyter directory (config, data, runtime, settings, workspaces, IPython) under ``home``
    so nothing is read from or left in the user's profile. Stop it with :meth:`stop`."""

    def __init__(self, root_dir: Path, home: Path, *, start_timeout: float = 120.0):
        self.root_dir, self.home = Path(root_dir), Path(home)
        self.home.mkdir(parents=True, exist_ok=True)
        self.log_path = self.home / "jupyterlab.log"
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.start_timeout = start_timeout

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _env(self) -> dict:
        env = dict(os.environ)
        for var, sub in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                         ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython"),
                         ("JUPYTERLAB_SETTINGS_DIR", "lab-settings"),
                         ("JUPYTERLAB_WORKSPACES_DIR", "lab-workspaces")]:
            d = self.home / sub
            d.mkdir(parents=True, exist_ok=True)
            env[var] = str(d)
        # No "Would you like to receive official Jupyter news?" toast over the page, and no
        # reaching for the network to fetch news or update checks.
        news = self.home / "lab-settings" / "@jupyterlab" / "apputils-extension"
        news.mkdir(parents=True, exist_ok=True)
        (news / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        env.pop("JUPYTER_TOKEN", None)
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def _command(self) -> list[str]:
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={self.port}",
               "--ServerApp.ip=127.0.0.1", "--ServerApp.port_retries=0",
               "--IdentityProvider.token=", "--PasswordIdentityProvider.hashed_password=",
               f"--ServerApp.root_dir={self.root_dir}",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
               "--ServerApp.open_browser=False"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")   # JupyterLab refuses root without it; users need no flag
        return cmd

    def start(self) -> "JupyterLab":
        last = ""
        for _attempt in range(3):   # a free port can be taken between probing and binding
            self.port = free_port()
            log = open(self.log_path, "ab")
            try:
                self.proc = subprocess.Popen(self._command(), cwd=self.root_dir, env=self._env(),
                                             stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=subprocess.STDOUT, start_new_session=True)
            finally:
                log.close()
            if self._wait_ready():
                return self
            last = _tail(self.log_path)
            self.stop()
        raise RuntimeError(f"JupyterLab did not start (3 tries); log {self.log_path}:\n{last}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/api/status", timeout=5) as r:
                    if r.status == 200:
                        return True
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        raise RuntimeError(f"JupyterLab did not answer on {self.url} within {self.start_timeout:.0f} s; "
                           f"log {self.log_path}:\n{_tail(self.log_path)}")

    def kernels(self) -> list[dict]:
        """The server's running kernels (GET /api/kernels)."""
        with urllib.request.urlopen(f"{self.url}/api/kernels", timeout=10) as r:
            return json.loads(r.read())

    def wait_kernel_connected(self, timeout: float = 120.0, exclude=()) -> dict:
        """Wait until a kernel is idle with a browser connected to it, and return it. The page's
        status indicator can read 'idle' before the kernel has started, and a Run All sent
        then is lost; the server knows better. ``exclude``: ids of kernels to ignore (those
        of notebooks opened before, on a server that serves several)."""
        deadline = time.monotonic() + timeout
        seen: list = []
        while time.monotonic() < deadline:
            try:
                seen = self.kernels()
            except (urllib.error.URLError, OSError, ValueError) as exc:
                # jupyter_server answers 500 to /api/kernels while a kernel is still starting
                # (its last_activity is None): not ready yet, ask again.
                seen = [repr(exc)]
                time.sleep(0.25)
                continue
            for k in seen:
                if isinstance(k, dict) and k.get("id") in exclude:
                    continue   # an earlier notebook's kernel
                if isinstance(k, dict) and k.get("connections", 0) >= 1 and k.get("execution_state") == "idle":
                    return k
            time.sleep(0.25)
        raise AssertionError(f"no idle kernel with a browser connection after {timeout:.0f} s; "
                             f"kernels: {seen}")

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM our server (it shuts its kernels down), wait, then SIGKILL its process group."""
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        p.terminate()
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        # Our server was started in a session of its own: whatever is left in that group
        # (a kernel it failed to stop, or the server itself) is ours to kill.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


@contextmanager
def artifacts_on_failure(name: str, page_ref: dict, console: list, lab: JupyterLab | None):
    """On an exception inside the block, save a screenshot, the browser console and the
    server log under ``test-artifacts/<name>-<time>/`` and re-raise with that path named."""
    try:
        yield
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, pytest.skip.Exception)):
            raise
        out = ARTIFACTS / f"{name}-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
        out.mkdir(parents=True, exist_ok=True)
        page = page_ref.get("page")
        if page is not None:
            try:
                page.screenshot(path=str(out / "screenshot.png"), full_page=True, timeout=15000)
            except Exception as shot_exc:  # noqa: BLE001 - keep the original failure
                (out / "screenshot-failed.txt").write_text(repr(shot_exc))
            try:
                (out / "page.html").write_text(page.content())
            except Exception:  # noqa: BLE001
                pass
        (out / "console.log").write_text("\n".join(console) + "\n")
        if lab is not None and lab.log_path.exists():
            shutil.copy(lab.log_path, out / "jupyterlab.log")
        raise AssertionError(f"{exc}\n(browser test artifacts: screenshot, console log and "
                             f"JupyterLab log in {out})") from exc


# ------------------------------------------------------------------ drawn marks against data
# For every chart (.vega-embed) inside an element: the rows of the spec the kernel holds now
# (fitgpp.workbook.live keeps it and the drawn view on the element as `fitgpp`) against the scenegraph's
# marks. A row is drawn when some mark item carries it (its datum has the row's fields with the
# row's values, in any dataset with those fields: panels may each have their own); a drawn
# item lies outside its plot when its x or y is off the plot's area.
MARKS_VS_DATA_JS = """root => [...root.querySelectorAll('.vega-embed')].map(embed => {
  let host = embed; while (host && !host.fitgpp) host = host.parentElement;
  const title = (embed.querySelector('.role-title-text') || {}).textContent || '?';
  if (!host) return {title, problem: 'no view exposed (not drawn by fitgpp.workbook.live)'};
  const spec = host.fitgpp.spec();
  const stale = JSON.stringify(spec) !== JSON.stringify(host.fitgpp.drawn);
  const sets = Object.values(spec.datasets || {}).filter(d => d.length);
  const keyOf = (keys, o) => JSON.stringify(keys.map(k => o[k] === undefined ? null : o[k]));
  const want = sets.map(d => { const keys = Object.keys(d[0]);
    return {keys, rows: new Set(d.map(r => keyOf(keys, r)))}; });
  const drawn = want.map(() => new Set());
  let items = 0, extra = 0, outside = 0;
  const walk = m => {
    for (const it of m.items || []) {
      if (m.marktype === 'group') { for (const c of it.items || []) walk(c); continue; }
      if (m.role !== 'mark' || !it.datum) continue;
      items++;
      // several datasets may share their columns (one per panel): the row is drawn if any
      // of those holds it
      const fit = want.map((w, i) => i).filter(i => want[i].keys.every(k => k in it.datum));
      if (!fit.length) continue;   // an aggregate, not a row
      // a row held by several datasets (a panel's and its layer of cut intervals) is drawn
      // in each of them: credited to the first only, the others' rows read as missing
      const hits = fit.filter(i => want[i].rows.has(keyOf(want[i].keys, it.datum)));
      if (!hits.length) extra++;
      for (const i of hits) drawn[i].add(keyOf(want[i].keys, it.datum));
      const g = m.group || {}, w = g.width, h = g.height;
      if (w && h && !(it.x >= -1 && it.x <= w + 1 && it.y >= -1 && it.y <= h + 1)) outside++;
    }
  };
  walk(host.fitgpp.view.scenegraph().root);
  const rows = want.reduce((a, w) => a + w.rows.size, 0);
  const shown = drawn.reduce((a, d) => a + d.size, 0);
  return {title, rows, drawn: shown, missing: rows - shown, extra, outside, items, stale};
})"""


def check_marks_match_data(element, what: str) -> list[dict]:
    """Assert every chart inside ``element`` (a playwright Locator or ElementHandle) draws
    each row of the data in its current spec, draws no row that is not in it, draws nothing
    off its plot area, and shows the spec the kernel holds. Returns the per-chart counts."""
    charts = element.evaluate(MARKS_VS_DATA_JS)
    assert charts, f"{what}: no chart found"
    bad = [c for c in charts if c.get("problem") or c["missing"] or c["extra"] or c["outside"]
           or c["stale"]]
    assert not bad, f"{what}: charts whose marks do not match their data: {bad}"
    return charts
