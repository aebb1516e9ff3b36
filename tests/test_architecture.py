"""The package is a stack of layers (issue 25, docs/architecture.md): a module imports only from
its own layer and the layers below it, and no import circle appears, counting every import at any
level -- inside a function too -- and the ``__init__`` of every package an import runs.

Read from the source with ``ast``; nothing of fitgpp is imported. The stack is read from the
block in docs/architecture.md, so the page and the test cannot disagree.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "fitgpp"
PAGE = ROOT / "docs" / "architecture.md"
#: What may sit at the top of fitgpp/ beside the layer packages (issue 25: at most five).
TOP_MODULES = {"__init__", "__main__", "_version", "errors"}


def stack(page: Path = PAGE) -> list[tuple[str, set[str]]]:
    """``[(layer, {module or package it holds})]`` from the page's text block, lowest first."""
    block = re.search(r"<!-- The stack.*?```text\n(.*?)```", page.read_text(), re.S).group(1)
    out = []
    for line in block.splitlines():
        m = re.match(r"\s*(\w+)\s+((?:fitgpp[\w./]*(?:, )?)+)", line)
        if m:
            names = {n.strip().removesuffix(".py").replace("/", ".").removesuffix(".__init__")
                     for n in m.group(2).split(",")}
            out.append((m.group(1), {n for n in names if n}))
    return out[::-1]


def modules(pkg: Path = PKG) -> dict[str, Path]:
    """``{dotted name: path}`` of every module (``fitgpp.sim`` for its ``__init__.py``)."""
    out = {}
    for path in sorted(pkg.rglob("*.py")):
        parts = path.relative_to(pkg.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _parents(name: str) -> list[str]:
    out = []
    while "." in name:
        name = name.rpartition(".")[0]
        out.append(name)
    return out


def _imported(node, module: str, is_package: bool, known) -> set[str]:
    """The package's modules that the import ``node`` in ``module`` names (``from .x import y``:
    ``.x.y`` when that is a module, else ``.x``; ``import a.b``: ``a.b``)."""
    if isinstance(node, ast.Import):
        out = set()
        for a in node.names:
            name = a.name
            while name and name not in known:
                name = name.rpartition(".")[0]
            out.add(name)
        return out - {""}
    base = module if is_package else module.rpartition(".")[0]
    for _ in range(node.level - 1 if node.level else 0):
        base = base.rpartition(".")[0]
    src = node.module if not node.level else ".".join(p for p in (base, node.module) if p)
    return {m for a in node.names for m in (f"{src}.{a.name}" if f"{src}.{a.name}" in known
                                            else src,) if m in known}


def graph(mods: dict[str, Path]) -> dict[str, dict[str, int]]:
    """``{module: {module it depends on: line}}`` over every import at any level; an import of
    ``a.b.c`` depends on ``a.b``'s ``__init__`` too, unless the importer is inside ``a.b``."""
    out = {}
    for name, path in mods.items():
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _imported(node, name, path.name == "__init__.py", mods):
                    for t in [target, *_parents(target)]:
                        if t != name and t not in _parents(name):
                            edges.setdefault(t, node.lineno)
        out[name] = edges
    return out


def layer_of(name: str, layers) -> str:
    for layer, members in layers:
        if any(name == m or name.startswith(f"{m}.") for m in members):
            return layer
    raise AssertionError(f"{name} is in no layer of docs/architecture.md")


def upward(g, layers) -> list[str]:
    rank = {layer: i for i, (layer, _) in enumerate(layers)}
    return [f"{a} ({layer_of(a, layers)}) imports {b} ({layer_of(b, layers)}) at line {line}"
            for a, edges in g.items() for b, line in edges.items()
            if rank[layer_of(b, layers)] > rank[layer_of(a, layers)]]


def circles(g) -> list[list[str]]:
    """One circle through each group of modules that depend on each other (Tarjan)."""
    index, low, todo, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        todo.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while (w := todo.pop()) != v:
                on.discard(w)
                group.add(w)
            on.discard(v)
            if group:
                found.append(_circle(g, v, group | {v}))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def _circle(g, start, group) -> list[str]:
    paths, frontier = {start: [start]}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(g[v]):
                if w == start:
                    return paths[v] + [start]
                if w in group and w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no circle through {start}")


# ------------------------------------------------------------------ the package
def test_the_top_of_the_package_holds_the_layers_and_four_small_modules():
    layers = stack()
    assert [name for name, _ in layers] == ["base", "sim", "workload", "analysis", "sweep",
                                             "figures", "studies", "workbook", "cli", "api"]
    top = {p.stem for p in PKG.glob("*.py")}
    assert top == TOP_MODULES, f"modules at the top of fitgpp/: {sorted(top - TOP_MODULES)}"
    packages = {p.parent.name for p in PKG.glob("*/__init__.py")}
    named = {m.removeprefix("fitgpp.") for _, ms in layers for m in ms if m.count(".") == 1}
    assert packages <= named, f"subpackages that are no layer: {sorted(packages - named)}"
    for name in modules():
        layer_of(name, layers)   # every module belongs to one layer


def test_no_module_imports_from_a_layer_above_it():
    bad = upward(graph(modules()), stack())
    assert not bad, "upward imports (docs/architecture.md):\n  " + "\n  ".join(bad)


def test_no_import_circle_at_any_level():
    g = graph(modules())
    found = circles(g)
    said = [" -> ".join(f"{a} (line {g[a][b]})" for a, b in zip(c, c[1:])) + f" -> {c[-1]}"
            for c in found]
    assert not found, "import circles:\n  " + "\n  ".join(said)


# ------------------------------------------------------------------ the checks can fail
def test_the_checks_find_an_upward_import_and_a_circle_inside_functions(tmp_path):
    pkg = tmp_path / "fitgpp"
    for sub in ("low", "high"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("def f():\n    from fitgpp.high import b\n")
    (pkg / "high" / "b.py").write_text("from ..low import a\n")
    (pkg / "high" / "c.py").write_text("def g():\n    import fitgpp.high.b\n")
    page = tmp_path / "architecture.md"
    page.write_text("<!-- The stack -->\n```text\n api  fitgpp/__init__.py\n"
                    " high fitgpp.high\n low  fitgpp.low\n```\n")
    layers = stack(page)
    assert [n for n, _ in layers] == ["low", "high", "api"]
    g = graph(modules(pkg))
    assert g["fitgpp.low.a"] == {"fitgpp.high.b": 2, "fitgpp.high": 2}
    assert upward(g, layers) == ["fitgpp.low.a (low) imports fitgpp.high.b (high) at line 2",
                                 "fitgpp.low.a (low) imports fitgpp.high (high) at line 2"]
    assert circles(g) == [["fitgpp.high.b", "fitgpp.low.a", "fitgpp.high.b"]]
    # a package's __init__ that imports its own module closes a circle through the parent edge
    (pkg / "low" / "a.py").write_text("")
    (pkg / "high" / "__init__.py").write_text("from fitgpp.high import c\n")
    (pkg / "low" / "d.py").write_text("")
    (pkg / "high" / "c.py").write_text("def g():\n    from fitgpp.high.b import x\n")
    g = graph(modules(pkg))
    assert not upward(g, layers) and not circles(g)
    (pkg / "low" / "d.py").write_text("import fitgpp.high.c\n")
    assert upward(graph(modules(pkg)), layers) == [
        "fitgpp.low.d (low) imports fitgpp.high.c (high) at line 1",
        "fitgpp.low.d (low) imports fitgpp.high (high) at line 1"]


# ------------------------------------------------------------------ the public names stay
OLD_NAMES = {  # an old module path -> names it held that code and docs used
    "fitgpp.engine": ("Engine", "WAITING", "PolicyError"),
    "fitgpp.simulate": ("simulate", "save", "load", "rerun", "summarize", "RerunWarning",
                        "SimulationError"),
    "fitgpp.policies": ("POLICIES", "FitGpp", "make_policy", "TwoQueuePolicy"),
    "fitgpp.policies.registry": ("resolve", "digest"),
    "fitgpp.policies.fifo": ("Fifo",),
    "fitgpp.trace": ("read_trace", "Trace"),
    "fitgpp.cluster": ("Cluster", "DEFAULT_CLUSTER"),
    "fitgpp.metrics": ("METRICS", "change"),
    "fitgpp.tables": ("people_table", "export_table"),
    "fitgpp.plots": ("s_tradeoff", "render"),
    "fitgpp.figcheck": ("check", "assert_paper_ready", "Problem", "FigureError", "label_clash"),
    "fitgpp.figrules": ("identical",),
    "fitgpp.export": ("export", "MANIFEST", "file_inches", "ExportError"),
    "fitgpp.reproduce": ("STUDIES", "run_all"),
    "fitgpp.restart_cost": (),
    "fitgpp.panels": ("Panel", "cell_view", "PanelError"),
    "fitgpp.widgets": ("Workbench",),
    "fitgpp.commands.simulate": ("run",),
}


def test_every_public_name_resolves():
    import fitgpp
    for name in fitgpp.__all__:
        assert getattr(fitgpp, name) is not None, name
    assert callable(fitgpp.simulate) and callable(fitgpp.synthesize) and fitgpp.Study.__name__


def test_old_import_paths_still_work_with_a_warning():
    import importlib
    import sys

    import pytest
    for old, names in OLD_NAMES.items():
        sys.modules.pop(old, None)
        with pytest.warns(DeprecationWarning, match=rf"{old} has moved to fitgpp\."):
            module = importlib.import_module(old)
        for name in names:
            assert getattr(module, name) is not None, f"{old}.{name}"
    import fitgpp.engine
    import fitgpp.sim.engine
    assert fitgpp.engine.Engine is fitgpp.sim.engine.Engine
    with pytest.raises(AttributeError, match="now fitgpp.sim.engine"):
        fitgpp.engine.no_such_name
