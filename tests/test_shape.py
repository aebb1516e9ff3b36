"""The package keeps its shape (issue 16): no module over :data:`MAX_MODULE` lines and no
function over :data:`MAX_FUNCTION`. (Imports, layers and circles: tests/test_architecture.py.)

Read from the source with ``ast``; nothing of fitgpp is imported. A function's length runs from
its ``def`` line to its last line (decorators not counted; a nested function counts within
its parent and on its own).
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "fitgpp"
MAX_MODULE = 500
MAX_FUNCTION = 70
#: Known offenders, each with why it is allowed for now. An entry that is no longer over
#: fails the test too, so the list cannot go stale.
ALLOWED: dict[str, str] = {}


def _modules() -> dict[str, Path]:
    """``{dotted name: path}`` of every module of the package (``fitgpp.figures.plots`` for its
    ``__init__.py``)."""
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = path.relative_to(PKG.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _rel(path: Path) -> str:
    return path.relative_to(PKG.parent).as_posix()


# ------------------------------------------------------------------ sizes
def _functions(tree: ast.AST):
    """``(qualified name, first line, lines)`` of every function, methods and nested ones
    included (``Engine.__init__``, ``s_tradeoff.<locals>.go``)."""
    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield name, child.lineno, child.end_lineno - child.lineno + 1
                yield from walk(child, f"{name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)
    yield from walk(tree, "")


def oversized(modules: dict[str, Path]) -> list[str]:
    """``path:line name (N lines)`` for every module and function over its limit."""
    out = []
    for path in modules.values():
        text = path.read_text(encoding="utf-8")
        n = len(text.splitlines())
        if n > MAX_MODULE:
            out.append(f"{_rel(path)}:1 module ({n} lines)")
        for name, line, length in _functions(ast.parse(text, str(path))):
            if length > MAX_FUNCTION:
                out.append(f"{_rel(path)}:{line} {name} ({length} lines)")
    return out


def _allowed(problem: str) -> bool:
    where, _, what = problem.partition(" ")
    return ALLOWED.get(where.partition(":")[0]) == what.partition(" ")[0]


def test_no_module_over_500_lines_and_no_function_over_70():
    found = oversized(_modules())
    bad = [p for p in found if not _allowed(p)]
    assert not bad, (f"over {MAX_MODULE} lines a module or {MAX_FUNCTION} a function:\n  "
                     + "\n  ".join(bad))
    stale = [f"{path} {what}" for path, what in ALLOWED.items()
             if not any(p.startswith(f"{path}:") and _allowed(p) for p in found)]
    assert not stale, "no longer over the limit, remove from ALLOWED: " + ", ".join(stale)


# ------------------------------------------------------------------ the checks can fail
def test_the_checks_find_a_long_function_and_a_long_module(tmp_path, monkeypatch):
    pkg = tmp_path / "fitgpp"
    (pkg / "sub").mkdir(parents=True)
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION))
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text(f"from .sub import b\n\n\nclass K:\n    def long(self):\n{body}\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    pass\n" + "\n" * MAX_MODULE)
    monkeypatch.setattr(__import__(__name__), "PKG", pkg)
    mods = _modules()
    assert set(mods) == {"fitgpp", "fitgpp.a", "fitgpp.sub", "fitgpp.sub.b"}
    assert oversized(mods) == ["fitgpp/a.py:5 K.long (71 lines)",
                               "fitgpp/sub/b.py:1 module (502 lines)"]
