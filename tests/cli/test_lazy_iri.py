"""import fitgpp (so the command line, notebooks and scripts) defers rfc3987_syntax's grammar compile (fitgpp.figures.lazy_iri)
without changing what jsonschema's iri format checkers answer."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("rfc3987_syntax")

CASES = ["http://example.com/ü", "http://exa mple.com/<>", "a/b?c#d", "://"]
CHECK = """
import json, sys
{setup}
import altair, jsonschema
lark_at_import = "lark" in sys.modules
fc = jsonschema.Draft7Validator.FORMAT_CHECKER
answers = {{f: [jsonschema.Draft7Validator({{"format": f}}, format_checker=fc).is_valid(c)
              for c in {cases!r}] for f in ("iri", "iri-reference")}}
print(json.dumps([lark_at_import, sorted(fc.checkers), answers]))
"""


def _run(setup: str):
    r = subprocess.run([sys.executable, "-c", CHECK.format(setup=setup, cases=CASES)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_deferred_grammar_checks_iris_as_before():
    lark_plain, checkers_plain, plain = _run("")
    # import fitgpp installs the stand-in (for notebooks and scripts as for the command line)
    lark_lazy, checkers_lazy, lazy = _run(
        "import fitgpp\nassert type(sys.modules['rfc3987_syntax']).__name__ == '_StandIn'")
    assert lark_plain and not lark_lazy, "the stand-in must keep lark out of import altair"
    assert checkers_lazy == checkers_plain and "iri" in checkers_lazy
    assert lazy == plain
    assert plain["iri"] != [plain["iri"][0]] * len(CASES), "the cases must tell valid from not"


def test_defer_is_a_no_op_once_jsonschema_is_imported():
    code = ("import jsonschema\nfrom fitgpp.figures import lazy_iri\n"
            "print(lazy_iri.defer())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
