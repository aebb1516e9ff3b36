"""Defer compiling the RFC 3987 grammars that ``import jsonschema`` pays for (~1.5 s CPU).

Altair imports jsonschema, and jsonschema 4.x (``jsonschema/_format.py``), when the GPL
``rfc3987`` package is absent, runs ``from rfc3987_syntax import is_valid_syntax`` at import
to register the ``iri`` and ``iri-reference`` format checkers. ``rfc3987_syntax`` comes with
JupyterLab (through ``jsonschema[format-nongpl]`` of jupyter-events) and builds three Earley
parsers with lark when it is imported. The Vega-Lite schema altair validates against uses no
``iri`` format (only ``uri``, ``uri-reference`` and ``color-hex``), so a ``fitgpp`` command
never calls those checkers; the grammars are only ever compiled for nothing.

:func:`defer` puts a stand-in module under the name ``rfc3987_syntax`` whose
``is_valid_syntax`` (and any other attribute) loads the real package on first use and hands
over to it. jsonschema still registers both checkers and they check exactly as before, the
first one called just pays the compile then. ``import fitgpp`` calls it, so the command
line, notebooks and scripts that import the package before altair all skip the compile; a
process that imported jsonschema first keeps it as it is.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

NAME = "rfc3987_syntax"


def defer() -> bool:
    """Install the stand-in if it can matter: ``rfc3987_syntax`` is installed, neither it
    nor jsonschema is imported yet, and the GPL ``rfc3987`` (which jsonschema prefers) is
    absent. Returns True if it was installed."""
    if NAME in sys.modules or "jsonschema" in sys.modules:
        return False
    try:
        if importlib.util.find_spec("rfc3987") is not None:
            return False  # jsonschema uses rfc3987 and never imports rfc3987_syntax
        spec = importlib.util.find_spec(NAME)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    sys.modules[NAME] = _stand_in(spec)
    return True


def _real() -> types.ModuleType:
    """The real package, imported now in place of the stand-in."""
    mod = sys.modules.get(NAME)
    if isinstance(mod, _StandIn):
        del sys.modules[NAME]
        mod = importlib.import_module(NAME)
    return mod


class _StandIn(types.ModuleType):
    def __getattr__(self, name: str):
        return getattr(_real(), name)


def _stand_in(spec) -> types.ModuleType:
    mod = _StandIn(NAME, "stand-in for rfc3987_syntax, loaded on first use (fitgpp.figures.lazy_iri)")
    mod.__spec__ = spec
    mod.__path__ = list(spec.submodule_search_locations or [])

    def is_valid_syntax(term: str, value: str):
        return _real().is_valid_syntax(term, value)

    mod.is_valid_syntax = is_valid_syntax
    return mod
