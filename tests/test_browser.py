"""The notebooks as a user sees them: JupyterLab in a real Chromium.

In-process widget tests cannot see a chart that does not draw offline, a slider whose
change never reaches the kernel, or an export button that writes nothing. This test
starts a private JupyterLab on a copy of notebooks/00_quickstart.ipynb, runs every cell
from the Run menu, checks the widgets and charts are drawn without error text, moves the
``s`` slider with the keyboard, checks the summary and the chart follow, pins it as the
baseline (the summary then compares against it), clicks "Export figures" and checks real
PNG files appear and the manifest records both configurations.

Needs /usr/bin/chromium (Debian: apt-get install chromium chromium-driver) and the Python
package playwright (never `playwright install`). Without them the test is skipped saying
so, except under CI (environment variable CI set), where it fails instead.

Every research-question notebook (02-06), at the quick size (``size = "quick"`` injected
after its parameters cell, as papermill does): Run All, every chart drawn, no error
text; then one control of its panel moved (a dropdown built from the study's
declaration), and the panel's numbers and its charts must change, with no simulation
(the value is on the computed grid); in 03 a click on a point of the s trade-off must
select that cell (numbers and the s control follow); then the panel's own export ("Export
this view", the notebook's only one) must write the figures at a column's width (PNG
checked: 3.3 in) and the tables, with a manifest naming them. One JupyterLab serves them
all.

A saved notebook (02 and 00, run and saved in JupyterLab) reopened without its kernel, by the
same user and by a colleague, and converted by nbconvert into HTML opened in Chromium, shows
every widget's static copy and no "Error displaying widget". Each widget cell is laid out with
nothing cut at the side at 1,400 and 1,000 px with the file browser open (screenshots in
test-artifacts/layout-*.png). In 02, "add a value" with another seed drawn ends on every seed.

Every wait waits on what it checks (a condition polled in the page or, for the files an
export writes, on disk) with a generous limit; none sleeps for a fixed time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import struct
import time
import uuid
from pathlib import Path

import nbformat
import pytest

from browser_util import (CHROMIUM, CHROMIUM_ARGS, REPO, JupyterLab, artifacts_on_failure,
                          check_marks_match_data, require_browser)
from fitgpp.workbook.static import svgs as static_svgs

pytestmark = pytest.mark.browser

NOTEBOOK = "00_quickstart.ipynb"
# Generous limits (seconds) for a loaded 2-core CI box; every wait polls, none sleeps blindly.
RUN_ALL_TIMEOUT = 150  # every cell of the notebook
STEP_TIMEOUT = 60      # the page, a kernel round trip, an export
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
ERROR_TEXTS = ("Error", "Javascript Error", "No renderer could be found", "Failed to load",
               "Traceback")
# Browser console lines that mean a widget or chart could not be drawn.
CONSOLE_FATAL = ("[pageerror]", "Could not create a view", "Failed to fetch dynamically imported",
                 "Error displaying widget", "Javascript Error", "No renderer could be found")
S_STEPS = 3          # ArrowRight presses on the s slider
# Console lines from vega/vega-lite or anywidget: a chart warned or failed (vega's own warnings
# read "WARN ...", e.g. 'WARN Infinite extent for field "be"').
CHART_CONSOLE = ("WARN ", "[anywidget]", "vega", "Vega")

# JS run in the page. Code-cell prompts read "[n]:" once run, "[*]:" while running.
IDLE = f"{PANEL} .jp-Notebook-ExecutionIndicator[data-status='idle']"
STARTED_JS = """panel => [...document.querySelectorAll(panel + ' .jp-CodeCell .jp-InputArea-prompt')]
  .some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))"""
# "done" once every code cell has a number and the kernel is idle; "stopped" when the kernel
# is idle, nothing is queued ([*]) and some cells never ran: a cell raised and Run All stopped.
ALL_RUN_JS = """panel => {
  const prompts = [...document.querySelectorAll(panel + ' .jp-CodeCell .jp-InputArea-prompt')]
    .map(p => p.textContent || '');
  const ind = document.querySelector(panel + ' .jp-Notebook-ExecutionIndicator');
  if (!prompts.length || !ind || ind.getAttribute('data-status') !== 'idle') return false;
  if (prompts.every(p => /\\[\\d+\\]/.test(p))) return 'done ' + prompts.join(' ');
  if (!prompts.some(p => p.includes('*')) && prompts.some(p => /\\[\\d+\\]/.test(p))) return 'stopped ' + prompts.join(' ');
  return false;
}"""

# Every chart in an element drew into a canvas or an svg of a real size (and there is one).
CHARTS_IN_JS = """el => { const v = [...el.querySelectorAll('.vega-embed')];
  return v.length > 0 && v.every(e => { const g = e.querySelector('canvas, svg');
    if (!g) return false; const r = g.getBoundingClientRect(); return r.width > 50 && r.height > 50; }); }"""
# ... in the notebook shown (a selector).
CHARTS_DRAWN_JS = f"panel => ({CHARTS_IN_JS})(document.querySelector(panel))"

# A fingerprint of what the charts in an element show: canvas pixels or SVG markup.
CHART_PRINT_JS = """el => [...el.querySelectorAll('.vega-embed')].map(v => {
  const c = v.querySelector('canvas');
  if (c) return 'canvas:' + c.width + 'x' + c.height + ':' + c.toDataURL();
  const s = v.querySelector('svg');
  return s ? 'svg:' + s.outerHTML : 'none';
})"""


def _png_info(path: Path) -> tuple[int, int]:
    """(width, height) of a PNG file; AssertionError naming the file if it is not one."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG (starts {head[:8]!r})"
    assert head[12:16] == b"IHDR", f"{path}: first PNG chunk is {head[12:16]!r}, not IHDR"
    return struct.unpack(">II", head[16:24])


def _output_text(page) -> str:
    return "\n".join(page.locator(f"{PANEL} .jp-OutputArea").all_inner_texts())


def _assert_no_error_text(page, when: str):
    text = _output_text(page)
    bad = [e for e in ERROR_TEXTS if e in text]
    assert not bad, f"{when}: notebook outputs show {bad}:\n{text[-3000:]}"


def copy_quick(name: str, nb_dir: Path) -> None:
    """Copy notebook ``name`` into ``nb_dir`` at the quick size (papermill's injection)."""
    from test_notebooks import quick
    nb = quick(nbformat.read(REPO / "notebooks" / name, as_version=4))
    nbformat.write(nb, nb_dir / name)


@pytest.fixture
def lab(tmp_path):
    require_browser()
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    copy_quick(NOTEBOOK, nb_dir)
    server = JupyterLab(nb_dir, tmp_path / "jupyter-home")
    t = time.monotonic()
    try:
        server.start()
        print(f"[browser test] JupyterLab answered on {server.url} after "
              f"{time.monotonic() - t:.1f} s", flush=True)
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def _lab_page(name: str, lab):
    """``(page, console)``: a Chromium page for ``lab`` whose console messages are collected;
    on a failure, the screenshot, console and server log go to test-artifacts/``name``."""
    sync_playwright = require_browser()
    console: list[str] = []
    page_ref: dict = {}
    T0[0] = time.monotonic()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            with artifacts_on_failure(name, page_ref, console, lab):
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page_ref["page"] = page
                page.on("console", lambda m: console.append(f"[{m.type}] {m.text}"))
                page.on("pageerror", lambda e: console.append(f"[pageerror] {e}"))
                page.set_default_timeout(STEP_TIMEOUT * 1000)
                yield page, console
        finally:
            browser.close()


def test_quickstart_workbench_in_chromium(lab, tmp_path):
    with _lab_page("browser-quickstart", lab) as (page, console):
        _drive(page, lab, tmp_path / "exported", console)
    _mark("browser closed")


T0 = [0.0]


def _wait_manifest(export_dir: Path) -> Path:
    """Wait for ``manifest.json`` in ``export_dir``: fitgpp.figures.export writes it after every figure."""
    manifest = export_dir / "manifest.json"
    _until(f"the export to write {manifest}", manifest.is_file,
           lambda: f"found only {sorted(export_dir.glob('*'))}")
    return manifest


def _until(what: str, condition, detail=lambda: "", timeout: float = STEP_TIMEOUT):
    """Poll ``condition()`` (a file the kernel writes: outside the page) until truthy and
    return its value; after ``timeout`` s an AssertionError saying what was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        got = condition()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; {detail()}")
        time.sleep(0.1)


def _mark(what: str) -> None:
    """Phase timings, shown by pytest -s or with a failure's captured output."""
    print(f"[browser test] {time.monotonic() - T0[0]:6.1f} s  {what}", flush=True)


def _chart_console(console: list[str]) -> list[str]:
    """Warnings and errors of the charts in the browser console."""
    return [line for line in console if line.startswith(("[warning]", "[error]", "[pageerror]"))
            and any(w in line for w in CHART_CONSOLE)]


def _check_charts(page, console, element, what: str) -> None:
    """The charts in ``element`` draw their spec's data (once the redraw settled) and the
    console holds no chart warning."""
    _wait(page, console, f"the charts to settle ({what})",
          "el => (" + MARKS_SETTLED_JS + ")(el)", element.element_handle())
    charts = check_marks_match_data(element, what)
    bad = _chart_console(console)
    assert not bad, f"{what}: {len(bad)} chart warnings in the console, e.g. {bad[:3]}"
    _mark(f"{what}: {len(charts)} charts draw all their rows "
          f"({sum(c['rows'] for c in charts)} rows); console clean")


# every chart shows the spec the kernel holds (a redraw may still be under way)
MARKS_SETTLED_JS = """el => [...el.querySelectorAll('.vega-embed')].every(e => {
  let h = e; while (h && !h.fitgpp) h = h.parentElement;
  return !h || JSON.stringify(h.fitgpp.spec()) === JSON.stringify(h.fitgpp.drawn); })"""


def _fatal_console(console: list[str]) -> list[str]:
    return [line for line in console if any(f in line for f in CONSOLE_FATAL)]


def _wait(page, console, what: str, js: str, arg=None, timeout: float = STEP_TIMEOUT):
    """Poll ``js(arg)`` in the page until truthy and return its value. Give up early when the
    console shows a widget or chart failure, else after ``timeout`` seconds; the
    AssertionError says what was awaited."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            return page.wait_for_function(js, arg=arg, timeout=max(1.0, min(2.0, left)) * 1000,
                                          polling=200).json_value()
        except PlaywrightTimeout:
            bad = _fatal_console(console)
            if bad:
                raise AssertionError(f"while waiting for {what}, the browser console reported:\n"
                                     + "\n".join(bad[:10])) from None
            if left <= 2.0:
                raise AssertionError(
                    f"timed out after {timeout:.0f} s waiting for {what}; notebook outputs end:\n"
                    f"{_output_text(page)[-2000:]}") from None


def _open_and_run_all(page, lab, console: list[str], notebook: str):
    """Open ``notebook`` in a fresh workspace, Run All Cells, wait until every cell ran."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    # ---- open the notebook in a fresh workspace (?reset: no tabs from earlier sessions)
    earlier = {k["id"] for k in lab.kernels()}
    page.goto(f"{lab.url}/lab/workspaces/{uuid.uuid4().hex}/tree/{notebook}?reset",
              wait_until="domcontentloaded")
    _wait(page, console, f"{notebook} to open", "sel => !!document.querySelector(sel)",
          f"{PANEL} .jp-Notebook .jp-CodeCell", timeout=90)
    lab.wait_kernel_connected(exclude=earlier)
    _wait(page, console, "the kernel indicator to read idle", "sel => !!document.querySelector(sel)",
          IDLE)
    _mark("notebook open, kernel idle")

    # ---- Run > Run All Cells (again if the click was lost), wait for every execution count
    for attempt in (1, 2):
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        try:
            page.wait_for_function(STARTED_JS, arg=PANEL, timeout=20_000)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise AssertionError("Run > Run All Cells started no cell (twice)") from None
            _mark("Run All Cells started nothing; once more")
    result = _wait(page, console, "Run All Cells to finish", ALL_RUN_JS, PANEL, RUN_ALL_TIMEOUT)
    assert result.startswith("done"), \
        f"Run All Cells stopped early ({result}); outputs:\n{_output_text(page)[-3000:]}"
    _mark(f"all cells run: {result}")


# ------------------------------------------------------------------ nothing cut at the side
# What is cut in the outputs of a cell: an element that scrolls sideways or hides what it
# holds (a control grid wider than the notebook, a label cut to "thr…"), or that reaches
# past the right edge of its output area (a chart cut at the side), with its text.
CUT_JS = """cell => { const out = [];
  for (const area of cell.querySelectorAll('.jp-OutputArea-output')) {
    if (!area.checkVisibility()) continue;
    const right = area.getBoundingClientRect().right;
    for (const e of area.querySelectorAll('*')) {
      if (!e.checkVisibility()) continue;
      const r = e.getBoundingClientRect();
      if (!r.width) continue;
      const what = (e.getAttribute('class') || e.tagName).slice(0, 50) + ': ' +
                   (e.innerText || e.getAttribute('aria-label') || '').slice(0, 30);
      if (e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0 &&
          getComputedStyle(e).overflowX !== 'visible')
        out.push(`scrolls or cuts (${e.clientWidth} of ${e.scrollWidth} px) ${what}`);
      else if (r.right > right + 1)
        out.push(`past the right edge (${Math.round(r.right)} > ${Math.round(right)}) ${what}`);
    } }
  return out.slice(0, 12); }"""
#: The widths a page must be laid out at: a laptop with the file browser open, and a narrow
#: window (also with it open, JupyterLab's default).
WIDTHS = (1400, 1000)


def _check_layout(page, console, name: str) -> None:
    """At each of :data:`WIDTHS` with the file browser open, nothing in any widget cell's
    outputs is cut at the side; a screenshot of each such cell's top goes to
    test-artifacts/layout-NAME-CELL-WIDTH.png."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    from browser_util import ARTIFACTS
    ARTIFACTS.mkdir(exist_ok=True)
    assert page.locator("#jp-left-stack").is_visible(), "the file browser is not open"
    cells = page.locator(f"{PANEL} .jp-CodeCell").filter(has=page.locator(".jupyter-widgets"))
    try:
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 1400})
            for i in range(cells.count()):
                cell = cells.nth(i)
                cell.evaluate("el => el.scrollIntoView({block: 'start'})")
                try:     # the page reflows after the resize: give it a moment to settle
                    page.wait_for_function(f"el => ({CUT_JS})(el).length === 0",
                                           arg=cell.element_handle(), timeout=10_000)
                except PlaywrightTimeout:
                    pass  # still cut: said below
                cut = cell.evaluate(CUT_JS)
                page.screenshot(path=str(ARTIFACTS / f"layout-{name}-cell{i}-{width}.png"))
                assert not cut, f"{name} at {width} px with the file browser open: {cut}"
            _mark(f"{name}: {cells.count()} widget cells, nothing cut at {width} px")
    finally:
        page.set_viewport_size({"width": 1400, "height": 1000})


def _drive(page, lab, export_dir: Path, console: list[str]):
    _mark("browser up")
    _open_and_run_all(page, lab, console, NOTEBOOK)

    # ---- widgets and charts drawn, no renderer errors
    nb = page.locator(PANEL)
    wb = nb.locator(".jp-CodeCell").filter(has=page.locator("button", has_text="Export figures"))
    wb.first.wait_for()
    assert wb.count() == 1, f"expected one cell with an 'Export figures' button, found {wb.count()}"
    # the widgets and charts appear a moment after the cell ran: wait for the workbench's
    _wait(page, console, "the workbench's slider and charts (.vega-embed) to draw",
          f"el => el.querySelectorAll('.widget-slider').length > 0 && ({CHARTS_IN_JS})(el)",
          wb.element_handle())
    _wait(page, console, "every chart (.vega-embed) to draw a canvas or svg", CHARTS_DRAWN_JS, PANEL)
    _assert_no_error_text(page, "after Run All")
    _mark(f"widgets and {nb.locator('.vega-embed').count()} charts drawn")

    _wait(page, console, "the workbench's printed summary (GPU utilization) to show",
          """el => [...el.querySelectorAll('.widget-html')]
                     .some(o => o.innerText.includes('GPU utilization'))""", wb.element_handle())
    summary = wb.locator(".widget-html").filter(has_text="GPU utilization")
    assert summary.count() == 1, f"expected one summary output, found {summary.count()}"
    before_text = summary.inner_text()
    before_chart = wb.evaluate(CHART_PRINT_JS)
    assert before_chart and "none" not in before_chart, f"chart not drawn: {before_chart!r:.200}"
    _check_charts(page, console, wb, "workbench at open")
    # only FitGpp's fields (issue 35: LAS's and Gittins' thresholds, demotion, scan, delta,
    # distribution and mode were shown, disabled, beside them)
    labels = wb.locator(".widget-gridbox .widget-label").evaluate_all(
        "els => els.filter(e => e.checkVisibility()).map(e => e.innerText.trim())")
    assert {"threshold s", "P (max preemptions)", "load"} <= set(labels), labels
    others = {"thresholds (GPU-s)", "demotion", "scan", "ties", "delta (GPU-s)", "distribution",
              "mode"} & set(labels)
    assert not others, f"controls of other policies shown while FitGpp is chosen: {others}"
    _check_layout(page, console, "00")

    # ---- move s with the keyboard: focus the handle, ArrowRight a few times
    s_slider = wb.locator(".widget-slider").filter(
        has=page.locator(".widget-label", has_text=re.compile(r"^\s*threshold s\s*$")))
    assert s_slider.count() == 1, f"expected one slider labelled 's', found {s_slider.count()}"
    readout = s_slider.locator(".widget-readout")
    s0 = float(readout.inner_text())
    s_slider.locator(".noUi-handle").focus()
    for _ in range(S_STEPS):
        page.keyboard.press("ArrowRight")
    _wait(page, console, f"the s readout to move past {s0:g}",
          "([el, s0]) => parseFloat(el.textContent) > s0", [readout.element_handle(), s0])
    s1 = float(readout.inner_text())
    # the kernel reran: the summary names the new s ("FitGpp s=<value>") and the chart changed
    _wait(page, console, f"the printed summary to show s={s1:g}",
          "([el, want]) => el.innerText.includes(want)", [summary.element_handle(), f"s={s1:g}"])
    _wait(page, console, "the kernel to go idle after moving s", "sel => !!document.querySelector(sel)",
          IDLE)
    after_text = summary.inner_text()
    assert after_text != before_text, "the printed summary did not change when s moved"
    _wait(page, console, f"the workbench chart to change after s {s0:g} -> {s1:g}",
          f"([el, before]) => {{ const now = ({CHART_PRINT_JS})(el);"
          " return now.length === before.length && now.some((x, i) => x !== before[i]); }",
          [wb.element_handle(), before_chart])
    _mark(f"s moved {s0:g} -> {s1:g}; summary and chart changed")
    _check_charts(page, console, wb, f"workbench after s {s0:g} -> {s1:g}")
    # the pinned configuration (FIFO until now) becomes the current one: the summary compares
    # against it and its utilization chart (beside the current one's) is redrawn
    pinned_before = wb.evaluate(CHART_PRINT_JS)
    wb.locator("button", has_text="Pin as baseline").click()
    _wait(page, console, f"the summary to compare against the pinned s={s1:g}",
          "([el, want]) => el.innerText.includes(want)",
          [summary.element_handle(), f"change vs FitGpp s={s1:g}"])
    _wait(page, console, "the pinned charts to be redrawn",
          f"([el, before]) => {{ const now = ({CHART_PRINT_JS})(el);"
          " return now.length === before.length && now.some((x, i) => x !== before[i]); }",
          [wb.element_handle(), pinned_before])
    _check_charts(page, console, wb, "workbench after Pin")
    _assert_no_error_text(page, f"after moving s from {s0:g} to {s1:g}")

    # ---- export: point "export to" at a fresh directory, click, check the PNGs
    box = wb.locator(".widget-text").filter(has=page.locator(".widget-label", has_text="export to"))
    box.locator("input").fill(str(export_dir))
    box.locator("input").press("Enter")
    t_click = time.time()
    wb.locator("button", has_text="Export figures").click()
    # every figure is written (and printed by the kernel; the page may show it a moment later)
    _wait_manifest(export_dir)
    pngs = sorted(export_dir.glob("*.png"))
    assert pngs, f"Export figures wrote no PNG into {export_dir}"
    printed_js = """([el, n]) => { const m = [...el.innerText.matchAll(/wrote (\\S+\\.png)/g)]
                                      .map(x => x[1]);
                                  return m.length >= n ? m : false; }"""
    printed = _wait(page, console, f"Export figures to print the {len(pngs)} PNG paths it wrote",
                    printed_js, [wb.element_handle(), len(pngs)])
    assert sorted(map(str, pngs)) == sorted(printed), \
        f"printed paths {printed} differ from the PNGs found in {export_dir}: {pngs}"
    for p in pngs:
        st = p.stat()
        assert st.st_size > 1000, f"{p} has only {st.st_size} bytes"
        assert st.st_mtime >= t_click - 2, f"{p} is older than the click"
        w, h = _png_info(p)
        assert w > 100 and h > 100, f"{p} is {w}x{h} pixels"
    assert f"s={s1:g}" in " ".join(p.name for p in pngs), \
        f"exported files do not carry the current s={s1:g}: {[p.name for p in pngs]}"
    # the manifest records both configurations (the pinned one is the current one) and labels
    figures = json.loads((export_dir / "manifest.json").read_text())["figures"]
    for name, rec in figures.items():
        cfg = rec["config"]
        assert cfg["s"] == s1 and cfg["pinned"]["s"] == s1, f"{name}: {cfg}"
        assert cfg["labels"]["current"] == f"FitGpp s={s1:g}", f"{name}: {cfg['labels']}"
    _assert_no_error_text(page, "after Export figures")
    _mark(f"exported {len(pngs)} PNG files; {len(console)} console lines, "
          f"{sum('[error]' in c for c in console)} errors")


# ------------------------------------------------------------------ research questions
#: notebook -> (label of the panel control to move, the option to choose): one per notebook,
#: each a dimension its study declares, each on the computed grid.
RQ_MOVES = {
    "02_rq1_te_latency.ipynb": ("policy", "LRTP"),
    "03_rq2_threshold_s.ipynb": ("threshold s", "8"),
    "04_rq3_long_jobs_and_grace.ipynb": ("grace scale", "16"),
    "05_rq4_mix_and_grace_distribution.ipynb": ("TE share", "0.8"),
    "06_rq5_real_trace.ipynb": ("policy", "RAND"),
}
STATUS_JS = """el => { const h = [...el.querySelectorAll('.widget-html')]
  .find(x => x.innerText.includes('read from the cache')); return h ? h.innerText : ''; }"""
NUMBERS_JS = """el => { const h = [...el.querySelectorAll('.widget-html')]
  .find(x => x.innerText.includes('against FIFO')); return h ? h.innerText : ''; }"""


@pytest.fixture(scope="module")
def rq_lab(tmp_path_factory):
    require_browser()
    tmp = tmp_path_factory.mktemp("rq-lab")
    nb_dir = tmp / "notebooks"
    nb_dir.mkdir()
    for name in RQ_MOVES:
        copy_quick(name, nb_dir)
    old = os.environ.get("FITGPP_CACHE")
    os.environ["FITGPP_CACHE"] = str(tmp / "cache")   # the kernels inherit it
    server = JupyterLab(nb_dir, tmp / "jupyter-home")
    try:
        server.start()
        yield server
    finally:
        server.stop()
        if old is None:
            os.environ.pop("FITGPP_CACHE", None)
        else:
            os.environ["FITGPP_CACHE"] = old


@pytest.mark.parametrize("notebook", list(RQ_MOVES), ids=[n[:-6] for n in RQ_MOVES])
def test_research_question_panel_in_chromium(rq_lab, notebook, tmp_path):
    with _lab_page(f"browser-{notebook[:-6]}", rq_lab) as (page, console):
        _drive_panel(page, rq_lab, console, notebook, tmp_path / "exported")


def _drive_panel(page, lab, console: list[str], notebook: str, export_dir: Path) -> None:
    label, option = RQ_MOVES[notebook]
    _open_and_run_all(page, lab, console, notebook)
    nb = page.locator(PANEL)
    _wait(page, console, "every chart (.vega-embed) to draw a canvas or svg", CHARTS_DRAWN_JS, PANEL)
    _assert_no_error_text(page, "after Run All")
    panel = nb.locator(".jp-CodeCell").filter(
        has=page.locator(".widget-dropdown", has_text="add a value to")).first
    panel.wait_for()
    panel.scroll_into_view_if_needed()   # JupyterLab does not lay out cells far off screen
    _wait(page, console, "the panel's numbers to show", f"el => ({NUMBERS_JS})(el)",
          panel.element_handle())
    _wait(page, console, "the panel's trade-off and CDFs (2 or more charts) to draw",
          f"el => ({CHARTS_IN_JS})(el) && el.querySelectorAll('.vega-embed').length >= 2",
          panel.element_handle())
    numbers = panel.evaluate(NUMBERS_JS)
    assert "against FIFO" in numbers and "nan" not in numbers.lower(), numbers
    assert "[" not in numbers, f"an interval from 2 seeds: {numbers}"
    chart_before = panel.evaluate(CHART_PRINT_JS)
    # the static copy kept for a saved notebook is in the cell's outputs, hidden while live
    copies = panel.evaluate("""el => [...el.querySelectorAll('.fitgpp-static')].map(c =>
        [getComputedStyle(c).display, c.querySelectorAll('img').length])""")
    assert copies and all(d == "none" and n >= 2 for d, n in copies), copies
    _check_charts(page, console, panel, f"{notebook} panel at open")
    _check_layout(page, console, notebook[:2])
    panel.scroll_into_view_if_needed()
    cells = panel.evaluate(STATUS_JS)
    assert "read from the cache" in cells, f"no cell count shown: {cells!r}"
    control = panel.locator(".widget-dropdown").filter(
        has=page.locator(".widget-label", has_text=re.compile(rf"^\s*{re.escape(label)}\s*$")))
    assert control.count() == 1, f"expected one control labelled {label!r}, found {control.count()}"
    t = time.monotonic()
    control.locator("select").select_option(label=option)
    _wait(page, console, f"the panel's numbers to change after {label} -> {option}",
          f"([el, before]) => {{ const now = ({NUMBERS_JS})(el); return now && now !== before; }}",
          [panel.element_handle(), numbers])
    _wait(page, console, f"a panel chart to change after {label} -> {option}",
          f"([el, before]) => {{ const now = ({CHART_PRINT_JS})(el);"
          " return now.length === before.length && now.some((x, i) => x !== before[i]); }",
          [panel.element_handle(), chart_before])
    _mark(f"{notebook}: {label} -> {option}: numbers and chart changed in "
          f"{time.monotonic() - t:.2f} s (browser round trip)")
    _check_charts(page, console, panel, f"{notebook} after {label} -> {option}")
    _flick(page, console, panel, control, option)
    status = STATUS_JS
    assert panel.evaluate(status) == cells, "a value on the grid ran cells again"
    if notebook.startswith("03_"):
        _click_tradeoff(page, console, panel)
        _check_charts(page, console, panel, f"{notebook} after a click on the trade-off")
        _move_p_then_click(page, console, panel)
    _export_rq(page, console, nb, panel, export_dir)
    _assert_no_error_text(page, f"after moving {label} to {option}")
    if notebook.startswith("02_"):
        _add_with_another_seed_drawn(page, console, panel)


def _control(page, panel, label: str):
    return panel.locator(".widget-dropdown, .widget-text").filter(
        has=page.locator(".widget-label", has_text=re.compile(rf"^\s*{re.escape(label)}\s*$")))


def _add_with_another_seed_drawn(page, console, panel, seed: str = "1", s: str = "8"):
    """Issue 35, item 2: with "seed drawn" other than 0, "add a value" (s=8, cells not yet
    computed) said "0 cells match ... seed=1" and the panel stayed on a one-seed draw for
    good. Now it ends on every seed: the numbers name s=8 over all the seeds, the note is
    gone, no error, the seed drawn kept, the charts draw their data, and the static copy
    says the same."""
    for label, option in (("policy", "FitGpp"), ("seed drawn", seed)):
        _control(page, panel, label).locator("select").select_option(label=option)
        _wait(page, console, f"the kernel to go idle after choosing {label} {option}",
              "sel => !!document.querySelector(sel)", IDLE)
    _control(page, panel, "add a value to").locator("select").select_option(label="threshold s")
    box = _control(page, panel, "value").locator("input")
    box.fill(s)
    box.press("Enter")
    panel.locator("button", has_text="add and run").click()
    want = f"FitGpp s={s}"
    now = _wait(page, console, f"the numbers to show {want} over every seed",
                f"""([el, want]) => {{ const now = ({NUMBERS_JS})(el);
                     return now.startsWith(want + ' ') && /mean over \\d+ seeds/.test(now)
                            ? now : false; }}""", [panel.element_handle(), want],
                timeout=2 * STEP_TIMEOUT)
    # the note is cleared just after the numbers are drawn (the same handler, a message
    # later): wait for it rather than read the page at once
    _wait(page, console, "the note of the one-seed draw to go",
          "el => !el.innerText.includes('Drawn from')", panel.element_handle())
    _wait(page, console, "the kernel to go idle after adding the value",
          "sel => !!document.querySelector(sel)", IDLE)
    text = panel.inner_text()
    assert "error:" not in text and "0 cells match" not in text, text[-2000:]
    assert "one run" not in now, now
    shown = _control(page, panel, "seed drawn").locator("select").evaluate(
        "el => el.options[el.selectedIndex].text")
    assert shown == seed, f"the seed drawn moved from {seed} to {shown}"
    _check_charts(page, console, panel, f"02 after adding s={s} with seed {seed} drawn")
    _wait(page, console, "the static copy to show the whole declaration",
          f"""el => {{ const c = el.querySelector('.fitgpp-static');
                 return !!c && c.innerHTML.includes({json.dumps(want)}) &&
                        !c.innerHTML.includes('Drawn from'); }}""", panel.element_handle())
    _mark(f"added s={s} with seed {seed} drawn: {now[:60]!r}")


# The FitGpp points of the trade-off that a click reaches (no other mark drawn over their
# centre), with the s of the point on top there (vega's SVG renderer keeps each mark's item,
# and its datum, on the element as __data__).
FREE_POINTS_JS = """el => [...el.querySelectorAll("g.mark-symbol path[aria-label*='FitGpp']")]
  .map((p, i) => { const r = p.getBoundingClientRect();
    const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    const d = top === p && p.__data__ && p.__data__.datum;
    return d && d.family === 'FitGpp' ? [i, d.s] : null; }).filter(x => x)"""


def _click_tradeoff(page, console, panel):
    """Linked selection: a click on a FitGpp point of the trade-off (one whose s is not the
    one selected) selects that cell: the numbers name its s and the s control shows it."""
    s_control = panel.locator(".widget-dropdown").filter(
        has=page.locator(".widget-label", has_text=re.compile(r"^\s*threshold s\s*$")))
    assert s_control.count() == 1, f"expected one 'threshold s' control, found {s_control.count()}"
    select = s_control.locator("select")
    chart = panel.locator(".vega-embed").first
    # the charts drawn from the specs the kernel holds: no node is swapped under the click
    _wait(page, console, "the panel's charts to settle", "el => (" + MARKS_SETTLED_JS + ")(el)",
          panel.element_handle())
    chart.scroll_into_view_if_needed()
    s_now = float(select.evaluate("el => el.options[el.selectedIndex].text"))
    free = chart.evaluate(FREE_POINTS_JS)
    other = [(i, s) for i, s in free if float(s) != s_now]
    assert other, (f"no FitGpp point of the trade-off with s other than {s_now:g} can be "
                   f"clicked (free points and their s: {free})")
    i, s = other[-1]
    chart.locator("g.mark-symbol path[aria-label*='FitGpp']").nth(i).click()
    want = f"FitGpp s={float(s):g}"
    now = _wait(page, console, f"the numbers to show {want!r} after a click on its point",
                f"([el, want]) => {{ const now = ({NUMBERS_JS})(el);"
                " return now.startsWith(want) && !/[\\d.]/.test(now.charAt(want.length))"
                " ? now : false; }",
                [panel.element_handle(), want])
    _wait(page, console, f"the s control to show {float(s):g} after the click",
          "([el, s]) => parseFloat(el.options[el.selectedIndex].text) === s",
          [select.element_handle(), float(s)])
    _mark(f"clicked the trade-off at s={float(s):g} (was {s_now:g}): now {now[:30]!r}")


def _export_rq(page, console, nb, panel, export_dir: Path, width: str = "column (3.3 in)"):
    """One export control per panel (its "Export this view") and no other in the notebook;
    the panel's, at a column's width, writes every figure 3.3 in wide (PNG: 990 px at 300
    dpi) and the tables (CSV, LaTeX), with a manifest naming them and the width."""
    n_panels = nb.locator(".jp-CodeCell").filter(
        has=page.locator(".widget-dropdown", has_text="add a value to")).count()
    buttons = nb.locator("button", has_text="Export this view").count()
    assert buttons == n_panels, f"{buttons} 'Export this view' buttons for {n_panels} panels"
    assert nb.locator("button", has_text="Export figures").count() == 0, "a second export control"
    area = panel.locator(".widget-vbox").filter(
        has=page.locator("button", has_text="Export this view")).last
    area.scroll_into_view_if_needed()
    box = area.locator(".widget-text").filter(has=page.locator(".widget-label", has_text="export to"))
    box.locator("input").fill(str(export_dir))
    box.locator("input").press("Enter")
    area.locator(".widget-dropdown").filter(has=page.locator(".widget-label", has_text="width")) \
        .locator("select").select_option(label=width)
    assert not export_dir.exists()
    t = time.monotonic()
    area.locator("button", has_text="Export this view").click()
    manifest = _wait_manifest(export_dir)
    def with_tables():
        m = json.loads(manifest.read_text())
        return m if len(m.get("tables", {})) >= 4 else None
    man = _until(f"the tables in {manifest} (they come last)", with_tables,
                 lambda: manifest.read_text()[:500], timeout=2 * STEP_TIMEOUT)
    pngs = sorted(export_dir.glob("*.png"))
    assert pngs, f"Export this view wrote no PNG into {export_dir}"
    for p in pngs:
        w, h = _png_info(p)
        assert abs(w - 990) <= 5 and h > 100, f"{p} is {w}x{h} pixels, not 3.3 in at 300 dpi"
        assert man["figures"][p.name]["preset"] == "column", man["figures"][p.name]
    assert sorted(f for f in man["figures"] if f.endswith(".png")) == [p.name for p in pngs]
    assert {f.rsplit(".", 1)[1] for f in man["tables"]} == {"csv", "tex"}, man["tables"]
    _mark(f"exported {len(pngs)} PNG files at 3.3 in and {len(man['tables'])} table files "
          f"in {time.monotonic() - t:.1f} s")


def _move_p_then_click(page, console, panel):
    """After P changes the trade-off is redrawn with a new spec; a click on it must still
    select a cell (it did nothing once altair's JupyterChart had its chart replaced)."""
    control = panel.locator(".widget-dropdown").filter(
        has=page.locator(".widget-label", has_text=re.compile(r"^\s*P \(max preemptions\)\s*$")))
    assert control.count() == 1, "03 shows no P control"
    select = control.locator("select")
    now = select.evaluate("el => el.options[el.selectedIndex].text")
    other = next(o for o in select.evaluate("el => [...el.options].map(o => o.text)") if o != now)
    before = panel.evaluate(NUMBERS_JS)
    select.select_option(label=other)
    _wait(page, console, f"the numbers to change after P {now} -> {other}",
          f"([el, before]) => {{ const now = ({NUMBERS_JS})(el); return now && now !== before; }}",
          [panel.element_handle(), before])
    # the panel writes its numbers before it redraws the trade-off: wait for the trade-off
    # of the new P on screen (its title names P), or the click lands on the old one
    _wait(page, console, f"the trade-off at P={other} to be drawn",
          """([el, want]) => { let h = el.querySelector('.vega-embed');
               while (h && !h.fitgpp) h = h.parentElement;
               return !!h && h.fitgpp.drawn === h.fitgpp.spec() &&
                      new RegExp('at P=' + want + '[ ,]').test(JSON.stringify(h.fitgpp.drawn.title)); }""",
          [panel.element_handle(), other])
    _check_charts(page, console, panel, f"03 after P {now} -> {other}")
    _click_tradeoff(page, console, panel)
    _check_charts(page, console, panel, f"03 after P {now} -> {other} and a click")


# Every text the panel's numbers show, in order, from now on (a MutationObserver: no state is
# missed however briefly it shows), kept in the page as window.fitgppNumbers.
WATCH_NUMBERS_JS = f"""el => {{ const read = () => ({NUMBERS_JS})(el);
  const log = window.fitgppNumbers = [read()];
  if (window.fitgppWatch) window.fitgppWatch.disconnect();
  window.fitgppWatch = new MutationObserver(() => {{
    const now = read(); if (log[log.length - 1] !== now) log.push(now); }});
  window.fitgppWatch.observe(el, {{subtree: true, childList: true, characterData: true}}); }}"""


def _flick(page, console, panel, control, option: str, times: int = 4):
    """Change the control back and forth among two other values without waiting, then to
    ``option`` (its value before): the charts must end showing the last spec with all their
    rows (renders that finish out of order must not leave an older chart on screen).

    Waits on what says the last change was handled: ``option`` is chosen only at the end, so
    once the numbers have shown another value and show ``option``'s again, the kernel has
    handled the last change (the widget's messages reach it in order)."""
    select = control.locator("select")
    others = [o for o in select.evaluate("el => [...el.options].map(o => o.text)") if o != option]
    target = panel.evaluate(NUMBERS_JS)
    panel.evaluate(WATCH_NUMBERS_JS)
    for k in range(times):
        select.select_option(label=others[k % min(2, len(others))])
    select.select_option(label=option)
    _wait(page, console, f"the numbers to show {option} again after flicking the control",
          """([el, target]) => { const log = window.fitgppNumbers;
               return log.some(n => n && n !== target) && log[log.length - 1] === target; }""",
          [panel.element_handle(), target])
    panel.evaluate("() => window.fitgppWatch.disconnect()")
    _wait(page, console, "the kernel to go idle after flicking the control",
          "sel => !!document.querySelector(sel)", IDLE)
    _check_charts(page, console, panel,
                  f"after flicking {option} <-> {', '.join(others[:2])} {times} times")


# ------------------------------------------------------------------ a saved notebook reopened
# For each panel's static copy in the page: whether it shows, its size, and per chart image
# whether the browser decoded it and how many paths (marks, axes) its SVG holds.
STATIC_COPIES_JS = """panel => [...document.querySelectorAll(panel + ' .fitgpp-static')].map(c => {
  const r = c.getBoundingClientRect();
  return {display: getComputedStyle(c).display, width: r.width, height: r.height,
          tables: c.querySelectorAll('table').length,
          rows: c.querySelectorAll('table tr').length,
          charts: [...c.querySelectorAll('img')].map(i => {
            const src = i.getAttribute('src') || '';
            const svg = src.startsWith('data:image/svg+xml;base64,') ? atob(src.split(',')[1]) : '';
            return {decoded: i.complete && i.naturalWidth > 0, width: i.naturalWidth,
                    paths: (svg.match(/<path/g) || []).length, alt: i.alt}; })}; })"""


# The output of each panel (the one just above its static copy): "loading" while the widget
# manager has not answered (it shows "Loading widget..."), else its mime type and classes,
# whether it holds a live widget, the text a reader sees (none when it is not displayed:
# innerText alone would give the text of a hidden element) and all its text.
WIDGET_OUTPUTS_JS = """panel => [...document.querySelectorAll(panel + ' .fitgpp-static')].map(c => {
  const child = c.closest('.jp-OutputArea-child');
  const prev = child && child.previousElementSibling;
  const o = prev && prev.querySelector('.jp-OutputArea-output');
  if (!o) return 'missing';
  if (o.textContent.includes('Loading widget')) return 'loading';
  return {mime: o.getAttribute('data-mime-type') || '', cls: o.className,
          live: !!o.querySelector('.jupyter-widgets'),
          seen: o.checkVisibility() ? o.innerText.trim() : '',
          all: o.textContent.trim().slice(0, 200)}; })"""
#: notebook -> what each static copy in it holds, in order: (charts, tables); 02 has its
#: panel (the trade-off, the CDFs, the study's figures: 3 or more charts), 00 its one chart
#: and the workbench (the CDFs and both utilizations, and the numbers).
SAVED = {"02_rq1_te_latency.ipynb": [(3, 1)], "00_quickstart.ipynb": [(1, 0), (3, 1)]}
#: What a saved notebook must never show where a widget was (nbconvert wrote the objects'
#: reprs: "<altair.jupyter.jupyter_chart.JupyterChart object at 0x...>", "Workbench(...").
DEAD = ("model not found", "object at 0x", "Workbench(children", "GridBox(")


@pytest.mark.parametrize("notebook", list(SAVED), ids=[n[:2] for n in SAVED])
def test_a_saved_notebook_reopened_shows_its_figures_and_no_error(tmp_path, notebook):
    """A notebook run at the quick size in JupyterLab and saved there (which signs it:
    trusted by whoever saved it; no widget state, JupyterLab's default), JupyterLab stopped,
    then reopened: by the same user in the same JupyterLab, and by a colleague (another
    JupyterLab: untrusted). Each sees every widget's static copy (numbers tables, SVG charts
    that draw marks) and no "Error displaying widget" (the widget manager has answered: the
    widget output is settled), and no cell runs. nbconvert's HTML of the saved file
    (nbviewer, a PDF), opened in Chromium, shows the copies and no error either. Screenshots
    of each reopened copy and of the HTML go to test-artifacts/saved-notebook-NN-*.png."""
    require_browser()
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    copy_quick(notebook, nb_dir)
    path = nb_dir / notebook
    lab = JupyterLab(nb_dir, tmp_path / "jupyter-home")
    lab.start()
    try:
        with _lab_page(f"browser-saved-notebook-{notebook[:2]}", lab) as (page, console):
            _open_and_run_all(page, lab, console, notebook)
            _wait(page, console, "every chart (.vega-embed) to draw", CHARTS_DRAWN_JS, PANEL)
            page.locator(f"{PANEL} .jp-Cell").first.click()
            page.keyboard.press("Control+s")
            _until(f"JupyterLab to save {notebook} with its outputs",
                   lambda: path.read_text().count("fitgpp-static") >= len(SAVED[notebook]))
            _mark("run and saved in JupyterLab")
        # later: the server (and the kernel with the panel's widgets) stopped, started again
        # with the same Jupyter directories (the same record of trusted notebooks)
        lab.stop()
        lab.start()
        results = {"same user": _reopen(lab, "same-user", notebook)}
    finally:
        lab.stop()
    colleague = JupyterLab(nb_dir, tmp_path / "colleague-home")
    colleague.start()
    try:
        results["colleague"] = _reopen(colleague, "colleague", notebook)
    finally:
        colleague.stop()
    saved = nbformat.read(path, as_version=4)
    live = sum("its static copy follows" in o.get("data", {}).get("text/plain", "")
               for c in saved.cells if c.cell_type == "code" for o in c.outputs)
    want = SAVED[notebook]
    assert live == len(want), f"the saved {notebook} holds {live} live widgets, expected {want}"
    for who, (copies, widgets, prompts, text) in results.items():
        _check_copies(who, copies, want)
        assert len(widgets) == live and "missing" not in widgets, (who, widgets)
        if who == "same user":   # trusted: the widget manager's renderer drew the output
            assert all("jupyter-widgets" in w["cls"] for w in widgets), (
                f"the notebook saved in JupyterLab was not drawn as trusted: {widgets}")
        # an untrusted notebook shows the output's text/plain (it says the copy follows)
        shown = [w["seen"] for w in widgets if w["seen"] and (
            any(d in w["seen"] for d in DEAD) or any(e in w["seen"] for e in ERROR_TEXTS))]
        assert not shown, (f"{who}: the saved notebook shows {shown} where the live widget "
                           f"was: {widgets}")
        bad = [e for e in (*ERROR_TEXTS, *DEAD) if e in text]
        assert not bad, f"{who}: the reopened notebook shows {bad}:\n{text[-3000:]}"
        assert not any(re.search(r"\[\*\]", p) for p in prompts), f"{who}: a cell ran on opening"
    from nbconvert import HTMLExporter
    page_html, _ = HTMLExporter().from_notebook_node(saved)
    assert not [d for d in ("Error displaying widget", *DEAD) if d in page_html]
    assert page_html.count('class="fitgpp-static"') == live
    assert len(static_svgs(page_html)) >= sum(n for n, _ in want), "the HTML lost charts"
    html_file = tmp_path / f"{notebook[:-6]}.html"
    html_file.write_text(page_html)
    _check_copies("nbconvert's HTML", _open_html(html_file, notebook), want)
    _mark(f"saved {notebook} reopened: {results['same user'][1]} / "
          f"{results['colleague'][1]} widget outputs; no error seen; its HTML shows the copies")


def _check_copies(who: str, copies: list[dict], want: list[tuple[int, int]]) -> None:
    """Each static copy is shown, holds at least the charts and tables of ``want`` (in
    order), and every chart image is decoded and draws marks."""
    assert len(copies) == len(want), f"{who}: {len(copies)} static copies, expected {len(want)}"
    for c, (charts, tables) in zip(copies, want):
        assert c["display"] != "none" and c["width"] > 300 and c["height"] > 200, (who, c)
        assert c["tables"] >= tables and (not tables or c["rows"] >= 3), f"{who}: tables: {c}"
        assert len(c["charts"]) >= charts, f"{who}: expected {charts} charts or more: {c}"
        for chart in c["charts"]:
            assert chart["decoded"] and chart["width"] > 200, (who, chart)
            assert chart["paths"] > 5, f"{who}: a chart with {chart['paths']} paths: {chart}"


def _open_html(html_file: Path, notebook: str) -> list[dict]:
    """Open nbconvert's HTML of the saved notebook in Chromium (no server: a file), wait for
    its copies' images, screenshot it (test-artifacts/saved-notebook-NN-nbconvert.png) and
    return the copies as :data:`STATIC_COPIES_JS` reads them."""
    from browser_util import ARTIFACTS
    sync_playwright = require_browser()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(html_file.as_uri(), wait_until="load")
            page.wait_for_function("""() => [...document.querySelectorAll('.fitgpp-static img')]
                .every(i => i.complete && i.naturalWidth > 0)""", timeout=STEP_TIMEOUT * 1000)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"saved-notebook-{notebook[:2]}-nbconvert.png"),
                            full_page=True)
            text = page.locator("body").inner_text()
            bad = [d for d in ("Error displaying widget", *DEAD) if d in text]
            assert not bad, f"nbconvert's HTML shows {bad}"
            return page.evaluate(STATIC_COPIES_JS.replace("panel + ' .fitgpp-static'",
                                                          "'.fitgpp-static'"), "")
        finally:
            browser.close()


def _reopen(lab, who: str, notebook: str):
    """Open the saved notebook in ``lab`` without running a cell; wait for its static copies
    to show their charts and for the widget manager to settle every widget output; return
    (copies, widget outputs, prompts, the notebook's displayed text)."""
    from browser_util import ARTIFACTS
    with _lab_page(f"browser-saved-notebook-{notebook[:2]}-{who}", lab) as (page, console):
        page.goto(f"{lab.url}/lab/workspaces/{uuid.uuid4().hex}/tree/{notebook}?reset",
                  wait_until="domcontentloaded")
        n = len(SAVED[notebook])
        _wait(page, console, "the saved notebook's static copies to show their charts",
              f"""sel => {{ const c = ({STATIC_COPIES_JS})(sel);
                 return c.length === {n} && c.every(x => x.charts.length > 0 &&
                                                  x.charts.every(i => i.decoded)); }}""",
              PANEL, timeout=90)
        # a trusted notebook's widget output reads "Loading widget..." until JupyterLab's
        # widget manager has restored what the notebook holds; an untrusted one is drawn as
        # text at once (the widget renderer is not safe): either way, settled now
        widgets = _wait(page, console, "the widget manager to settle the widgets' outputs",
                        f"sel => {{ const w = ({WIDGET_OUTPUTS_JS})(sel);"
                        " return w.includes('loading') ? false : JSON.stringify(w); }",
                        PANEL, timeout=90)
        widgets = json.loads(widgets)
        copies = page.evaluate(STATIC_COPIES_JS, PANEL)
        # tall enough for the whole copy: JupyterLab does not draw cells far off screen
        page.set_viewport_size({"width": 1400, "height": 4000})
        ARTIFACTS.mkdir(exist_ok=True)
        for i in range(n):
            copy = page.locator(f"{PANEL} .fitgpp-static").nth(i)
            copy.scroll_into_view_if_needed()
            _wait(page, console, "the copy to be on screen with its images drawn",
                  """el => { const r = el.getBoundingClientRect();
                     return r.top >= 0 && r.bottom <= innerHeight &&
                            [...el.querySelectorAll('img')].every(i => i.complete && i.naturalWidth); }""",
                  copy.element_handle())
            copy.screenshot(path=str(ARTIFACTS / f"saved-notebook-{notebook[:2]}-{who}-{i}.png"))
        prompts = page.locator(f"{PANEL} .jp-CodeCell .jp-InputArea-prompt").all_inner_texts()
        text = page.locator(PANEL).inner_text()   # what is displayed (innerText)
        assert not [line for line in console if "[pageerror]" in line], console
    return copies, widgets, prompts, text
