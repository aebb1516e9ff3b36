"""Every example in docs/*.md runs, so the docs cannot drift from the code.

The executed pages (MyST text notebooks, ``file_format: mystnb``) run their
``{code-cell}`` cells when the docs build (``make docs``); this file runs what
the build does not: every fenced ```` ```python ```` block, and every
```` ```sh ````/```` ```console ```` block of ``fitgpp`` commands, page by page
in document order, in a fresh temporary directory (the page's Python blocks
share one namespace, like a reader typing them in). ``fitgpp`` commands run
in-process through :func:`fitgpp.cli.main` and must exit 0.

A block may opt out only with a reason, written just above it in the page:
``<!-- docs-test: skip (why) -->``. Files a page's examples expect (a trace
named ``TRACE.csv``, ``docs/examples/...``) are provided by FIXTURES below.

Also here: the API reference lists every module of the package, and the
offline check of the built HTML catches a page that loads from a CDN.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import fitgpp
from fitgpp.cli import main as fitgpp_main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
ALIBABA = ROOT / "traces" / "alibaba-gpu-v2023" / "openb_pod_list_default.csv.gz"  # shipped

FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$")
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<why>[^)]+)\)\s*-->")
RUN_LANGS = {"python", "sh", "console", "bash", "shell"}


@dataclass
class Block:
    page: str
    line: int          # 1-based line of the opening fence
    lang: str
    code: str
    skip: str | None   # the reason, if the page marks the block as not run


def blocks(path: Path) -> list[Block]:
    """Fenced code blocks of a Markdown page whose language is one we run."""
    out, lines = [], path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m["fence"], m["info"].strip()
        end = next((j for j in range(i + 1, len(lines))
                    if lines[j].startswith(fence) and not lines[j].strip(fence[0]).strip()), None)
        if end is None:
            raise AssertionError(f"{path.name}:{i + 1}: code fence never closed")
        lang = info.split()[0].lower() if info else ""
        if lang in RUN_LANGS:
            prev = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            skip = SKIP.search(prev)
            out.append(Block(path.name, i + 1, lang, "\n".join(lines[i + 1:end]),
                             skip["why"].strip() if skip else None))
        i = end + 1
    return out


def commands(block: Block) -> list[list[str]]:
    """The commands of a shell block: ``$`` prompts, comments and ``\\`` continuations handled."""
    text = re.sub(r"\\\n\s*", " ", block.code)
    cmds = []
    for raw in text.splitlines():
        line = raw.strip()
        if block.lang == "console":
            if not line.startswith("$ "):
                continue  # output lines of a console transcript
            line = line[2:]
        argv = shlex.split(line, comments=True)
        if argv:
            cmds.append(argv)
    return cmds


PAGES = sorted(p for p in DOCS.glob("*.md") if p.name != "README.md") + [ROOT / "README.md"]


def _link(name: str, src: Path, why: str):
    def provide(tmp: Path) -> None:
        assert src.is_file(), f"{why} needs {src}, which the repository ships"
        (tmp / name).symlink_to(src)
    return provide


def _copy_examples(tmp: Path) -> None:
    shutil.copytree(DOCS / "examples", tmp / "docs" / "examples")


def _my_sweep(tmp: Path) -> None:
    shutil.copy(DOCS / "examples" / "sweep-quick.toml", tmp / "my-sweep.toml")


#: page -> what its examples expect to find in the working directory
FIXTURES = {
    "workloads.md": [_link("TRACE.csv", ALIBABA, "workloads.md's `fitgpp fit TRACE.csv` example")],
    "experiments.md": [_copy_examples, _my_sweep],
    "README.md": [_link("TRACE.csv", ALIBABA, "README.md's `fitgpp fit TRACE.csv` example"),
                  _copy_examples],
}


def test_pages_found():
    names = {p.name for p in PAGES}
    assert {"index.md", "getting-started.md", "model.md", "policies.md", "reproduce.md",
            "workloads.md", "experiments.md", "api.md", "cli.md"} <= names


def test_block_parser_reads_skips_prompts_and_continuations(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("\n".join([
        "text", "```python", "x = 1", "```", "",
        "<!-- docs-test: skip (needs a GPU) -->", "```sh", "make it", "```",
        "```console", "$ fitgpp simulate a.csv \\", "    --out b.nc  # comment", "output line",
        "```", "```toml", "a = 1", "```"]))
    got = blocks(page)
    assert [(b.lang, b.skip) for b in got] == [("python", None), ("sh", "needs a GPU"),
                                               ("console", None)]
    assert commands(got[2]) == [["fitgpp", "simulate", "a.csv", "--out", "b.nc"]]


def test_synopsis_options_are_checked_against_help(capsys):
    good = Block("p.md", 1, "console", "$ fitgpp simulate TRACE.csv [--policy P] --out R.nc", None)
    check_synopsis(good, commands(good), capsys)
    bad = Block("p.md", 1, "console", "$ fitgpp simulate TRACE.csv [--polcy P] --out R.nc", None)
    with pytest.raises(AssertionError, match="--polcy"):
        check_synopsis(bad, commands(bad), capsys)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_examples_run(page, tmp_path, monkeypatch, capsys):
    todo = [b for b in blocks(page) if b.skip is None]
    if not todo:
        # Nothing to run is fine only when the page says why for each block it has,
        # or has no runnable blocks at all (executed pages run their cells in the build).
        assert all(b.skip for b in blocks(page))
        return
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FITGPP_CACHE", str(tmp_path / "cache"))  # sweeps: no shared cache
    monkeypatch.setattr(sys, "argv", ["docs-example"])
    for provide in FIXTURES.get(page.name, []):
        provide(tmp_path)
    namespace = {"__name__": "__main__"}
    for b in todo:
        where = f"{b.page}:{b.line}"
        if b.lang == "python":
            try:
                exec(compile(b.code, where, "exec"), namespace)
            except Exception as exc:  # name the page and line, keep the traceback
                raise AssertionError(f"{where}: python example failed: {exc!r}") from exc
            continue
        cmds = commands(b)
        if any(tok.startswith("[") for argv in cmds for tok in argv):
            check_synopsis(b, cmds, capsys)
            continue
        for argv in cmds:
            assert argv[0] == "fitgpp", (
                f"{where}: only `fitgpp` commands can be run by the docs tests; mark the "
                f"block with <!-- docs-test: skip (reason) --> if it cannot run ({argv})")
            rc = run_fitgpp(argv[1:])
            err = capsys.readouterr().err
            assert rc == 0, f"{where}: `{shlex.join(argv)}` exited {rc}: {err.strip()}"


def run_fitgpp(args: list[str]) -> int:
    """``fitgpp ARGS`` in this process; its exit status (argparse may exit instead of return)."""
    try:
        return fitgpp_main(args)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2


def check_synopsis(b: Block, cmds: list[list[str]], capsys) -> None:
    """A usage synopsis (``fitgpp sweep CONFIG.toml [--workers N] ...``) is not run: every
    ``--option`` it names must be one that ``fitgpp <command> --help`` lists."""
    where = f"{b.page}:{b.line}"
    argv = cmds[0]
    assert argv[0] == "fitgpp" and len(argv) > 1, f"{where}: a synopsis of what? {argv}"
    capsys.readouterr()
    assert run_fitgpp([argv[1], "--help"]) == 0, f"{where}: `fitgpp {argv[1]} --help` failed"
    helptext = capsys.readouterr().out
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", b.code))
    unknown = sorted(o for o in named if not re.search(rf"(?<![\w-]){o}(?![\w-])", helptext))
    assert named and not unknown, (
        f"{where}: the synopsis names options `fitgpp {argv[1]}` does not have: {unknown}")


def test_every_skip_has_a_reason_and_the_build_runs_mystnb_pages():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"docs-test:\s*skip(.*)", text):
            assert SKIP.search("<!-- docs-test: skip" + m[1]), f"{page.name}: skip without (reason)"
        if "{code-cell}" in text:
            assert text.startswith("---\nfile_format: mystnb"), (
                f"{page.name} has code cells but is not a MyST-NB text notebook, "
                "so the docs build would show its cells without running them")


# ------------------------------------------------------------------ API reference
NOT_IN_API = {
    "fitgpp.cli": "the command line, documented by the CLI reference (cli.md)",
    "fitgpp.__main__": "`python -m fitgpp`, the same as the `fitgpp` command",
    "fitgpp._version": "only `__version__`, documented as `fitgpp.__version__`",
}
#: Layers whose package re-exports their API, or whose modules are one per research question:
#: the package (and the modules named) stand for the rest.
WHOLE_LAYERS = {"fitgpp.workload", "fitgpp.sweep", "fitgpp.studies"}


def _documented_modules() -> set[str]:
    """``fitgpp``, its top modules, each layer and each public module directly in a layer."""
    out = {"fitgpp"}
    for m in pkgutil.iter_modules(fitgpp.__path__):
        name = f"fitgpp.{m.name}"
        out.add(name)
        if m.ispkg and name not in WHOLE_LAYERS and name not in NOT_IN_API:
            sub = importlib.import_module(name)
            out |= {f"{name}.{s.name}" for s in pkgutil.iter_modules(sub.__path__)
                    if not s.name.startswith("_")}
    return out


def test_api_reference_lists_every_module():
    listed = re.findall(r"^\.\. automodule:: (\S+)", (DOCS / "api.md").read_text(), re.M)
    here = _documented_modules()
    missing = sorted(here - set(listed) - set(NOT_IN_API))
    gone = sorted(n for n in listed if importlib.util.find_spec(n) is None)
    assert not missing, f"modules missing from docs/api.md: {missing} (add an automodule)"
    assert not gone, f"docs/api.md documents modules that no longer exist: {gone}"
    for name in listed:
        importlib.import_module(name)


# ------------------------------------------------------------------ offline check
def test_check_offline_flags_remote_assets(tmp_path):
    sys.path.insert(0, str(DOCS))
    try:
        import check_offline
    finally:
        sys.path.remove(str(DOCS))
    site = tmp_path / "html"
    site.mkdir()
    (site / "ok.html").write_text('<html><head><script src="_static/a.js"></script>'
                                  '<link rel="stylesheet" href="_static/a.css">'
                                  '<link rel="canonical" href="https://example.org/x.html">'
                                  '</head><body><a href="https://example.org">a link</a>'
                                  '<img src="_images/f.svg"></body></html>')
    (site / "a.css").write_text("body { background: url(img/x.png); }")
    assert check_offline.main([str(site)]) == 0
    (site / "cdn.html").write_text('<script src="https://cdn.jsdelivr.net/npm/vega@5"></script>'
                                   '<img src="//example.org/x.png">')
    (site / "b.css").write_text('@import url("https://fonts.example.org/css");')
    bad = check_offline.remote_loads(site)
    assert sorted(p.name for p in bad) == ["b.css", "cdn.html"]
    assert len(bad[site / "cdn.html"]) == 2
    assert check_offline.main([str(site)]) == 1
    assert check_offline.main([str(tmp_path / "empty")]) == 1
