"""What the notebooks' own prose says agrees with the code and with the run shown (issue 35):
07 quotes the rules of RQ6's findings word for word (it said "the first overhead where
`net < 0`" while the code reads intervals); 09 claims that patience trades TE latency for
fewer preemptions only where the paired tests of the run shown find it (its closing text said
so at 2 seeds, where every verdict is "cannot tell"); every notebook caches where the others
and ``fitgpp reproduce`` do, and says so (09 kept a folder of its own beside the notebook)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from fitgpp.studies import restart_cost as rc

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
ALL = sorted(NOTEBOOKS.glob("*.ipynb"))


def _flat(text: str) -> str:
    """``text`` with every run of white space one space (Markdown wraps lines anywhere)."""
    return re.sub(r"\s+", " ", text)


def _cells(path: Path, kind: str) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == kind]


# ---------------------------------------------------------------- 07: the rules, as the code has them
@pytest.mark.parametrize("where", ["notebooks/07_rq6_restart_cost.ipynb", "docs/restart-cost.md"])
def test_rq6_rules_are_quoted_word_for_word(where):
    path = ROOT / where
    text = _flat("\n".join(_cells(path, "markdown")) if path.suffix == ".ipynb"
                 else path.read_text())
    for name, rule in rc.RULES.items():
        assert _flat(f"`{name}`: {rule}") in text, (where, name)
    assert _flat(rc.RULES_NOTE) in text, where
    # no rule of its own beside them: the old one said "the first overhead where `net < 0`"
    assert "net < 0" not in text and "no detectable net loss)" not in text, where


def test_the_rules_say_what_the_findings_table_computes():
    """Each rule, applied by hand to a table, gives the findings table's column."""
    import pandas as pd
    ovh = [0.0, 10.0, 30.0, 60.0]
    rows = [{"workload": "w", "policy": p, "overhead_s": 60 * o, "overhead_min": o, "seeds": 3,
             "te_gain": te, "te_gain_lo": te - 0.1, "te_gain_hi": te + 0.1,
             "net": net, "net_lo": net - 0.2, "net_hi": net + 0.2,
             **{c: 0.0 for c in ("be_p95_cost", "be_median_cost", "preemptions_per_be",
                                 "reload_gpu_h", "reload_share", "be_p95")},
             **{f"{c}_{e}": 0.0 for c in ("be_p95_cost", "be_median_cost",
                                          "preemptions_per_be", "reload_gpu_h", "reload_share")
                for e in ("lo", "hi")}}
            for p, tes, nets in (("A", [0.5, 0.5, 0.05, 0.5], [0.5, 0.1, -0.3, 0.5]),
                                 ("B", [0.5] * 4, [0.5, 0.5, 0.5, 0.5]))
            for o, te, net in zip(ovh, tes, nets)]
    f = rc.findings_table(pd.DataFrame(rows)).set_index("policy")
    a = f.loc["A"]
    assert a["not_paying_min"] == 10.0      # first net interval not above 0: [-0.1, 0.3]
    assert a["stops_paying_min"] == 30.0    # first net interval below 0: [-0.5, -0.1]
    assert a["stops_helping_te_min"] == 30.0 and not a["te_gain_none"]
    b = f.loc["B"]
    assert all(np.isnan(b[c]) for c in ("not_paying_min", "stops_paying_min",
                                        "stops_helping_te_min"))


# ---------------------------------------------------------------- 09: a claim only where the run shows it
NB09 = NOTEBOOKS / "09_write_a_policy.ipynb"


def _findings_function():
    """The functions and constants of 09's findings cell, without running the cell."""
    cell = next(s for s in _cells(NB09, "code") if "def findings(" in s)
    tree = ast.parse(cell)
    keep = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.Import, ast.ImportFrom,
                                                     ast.Assign))]
    ns = {"n_jobs": 600, "model": "paper-wide-te"}
    exec(compile(ast.Module(keep, type_ignores=[]), str(NB09), "exec"), ns)
    return ns["findings"], ns["COMPARED"]


def _values(compared, n_seeds: int, te_step: float, preempt_step: float):
    """Per-seed values: each patience k adds ``te_step * k`` to FitGpp's TE p95 and takes
    ``preempt_step * k`` from its preemptions, seed by seed with a little noise."""
    rng = np.random.default_rng(0)
    base = {"TE p95 slowdown": 1.2, "preemptions per BE job": 0.1, "BE p95 slowdown": 3.0}
    out = {("fitgpp", None, t): base[t] + 0.01 * rng.standard_normal(n_seeds)
           for _, _, t, _ in compared}
    for k in (0, 5, 20):
        out[("patient", k, "TE p95 slowdown")] = out[("fitgpp", None, "TE p95 slowdown")] + \
            te_step * k + (0.01 * rng.standard_normal(n_seeds) if k else 0)
        out[("patient", k, "preemptions per BE job")] = \
            out[("fitgpp", None, "preemptions per BE job")] - preempt_step * k + \
            (0.001 * rng.standard_normal(n_seeds) if k else 0)
        out[("patient", k, "BE p95 slowdown")] = out[("fitgpp", None, "BE p95 slowdown")]
    return out


def test_09_says_patience_trades_only_where_its_paired_tests_find_it():
    findings, compared = _findings_function()
    text = findings(_values(compared, 5, 0.1, 0.002), 5)
    assert "Patience trades TE latency for fewer preemptions at patience 5, 20:" in text
    assert "At patience 0 the tests show no such trade." in text
    two = findings(_values(compared, 2, 0.1, 0.002), 2)
    assert "Cannot tell whether patience trades TE latency" in two
    assert "Patience trades" not in two and " is worse than " not in two
    flat = findings(_values(compared, 5, 0.0, 0.002), 5)      # fewer preemptions, same TE
    assert "No patience tried shows a trade" in flat and "Patience trades" not in flat


def test_09_closing_text_states_no_result_of_its_own():
    """The last cell asserted "patience trades TE latency for fewer preemptions" whatever the
    run shown said; the claim is now the findings cell's, from the paired tests."""
    closing = _flat(_cells(NB09, "markdown")[-1])
    assert "What we found" in closing
    # the question may be named ("whether patience trades ..."), never asserted
    assert not re.search(r"(?<!whether )patience trades TE latency", closing, re.I), closing
    assert "only at a patience where the paired tests" in closing


def test_09_default_size_is_one_its_paired_tests_can_decide():
    params = next(c.source for c in nbformat.read(NB09, 4).cells
                  if "parameters" in c.metadata.get("tags", []))
    from fitgpp.analysis.verdicts import MIN_SEEDS
    assert int(re.search(r"^n_seeds = (\d+)", params, re.M).group(1)) >= MIN_SEEDS


# ---------------------------------------------------------------- 18: one cache for every notebook
def _runs_sweeps(code: str) -> bool:
    return any(k in code for k in ("Panel(", "run_sweep(", "Workbench(", ".result(", ".run("))


def _code_tree(path: Path) -> ast.Module:
    body = []
    for src in _cells(path, "code"):
        src = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
        body += ast.parse(src).body
    return ast.Module(body, type_ignores=[])


def _cache_places(tree: ast.Module) -> list[str]:
    """Every place the code names a cache of its own: a ``cache=`` argument that is not None
    (or a name bound only to None), a name with "cache" in it bound to anything but None, and
    any mention of ``FITGPP_CACHE`` (setting it moves the cache)."""
    none_names = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign)
                  for t in n.targets if isinstance(t, ast.Name)
                  if isinstance(n.value, ast.Constant) and n.value.value is None}
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.keyword) and n.arg == "cache":
            v = n.value
            if not ((isinstance(v, ast.Constant) and v.value is None)
                    or (isinstance(v, ast.Name) and v.id in none_names)):
                out.append(f"cache={ast.unparse(v)}")
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name) and "cache" in t.id.lower() and not (
                        isinstance(n.value, ast.Constant) and n.value.value is None):
                    out.append(f"{t.id} = {ast.unparse(n.value)}")
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and \
                "FITGPP_CACHE" in n.value and not n.value.startswith("#"):
            out.append(repr(n.value))
    return out


@pytest.mark.parametrize("path", ALL, ids=[p.stem for p in ALL])
def test_every_notebook_caches_where_the_others_do_and_says_so(path):
    tree = _code_tree(path)
    assert not _cache_places(tree), f"{path.name} names a cache of its own: {_cache_places(tree)}"
    if _runs_sweeps("\n".join(_cells(path, "code"))):
        top = _flat(_cells(path, "markdown")[0])
        assert ("`$FITGPP_CACHE` if set, else `$XDG_CACHE_HOME/fitgpp`, else `~/.cache/fitgpp`"
                in top), f"{path.name} does not say where it caches"
    docs = _flat((ROOT / "docs" / "experiments.md").read_text())
    assert "Every notebook in `notebooks/` uses this one cache" in docs


def test_the_cache_check_finds_a_folder_of_its_own():
    """The check above fails on 09 as it was (``cache_dir = ".cache/fitgpp"``)."""
    old = ast.parse('cache_dir = ".cache/fitgpp"\nrun_sweep(exp, cache=cache_dir)\n'
                    'Panel(s, cache="x")\nos.environ["FITGPP_CACHE"] = "y"')
    assert len(_cache_places(old)) == 4
    assert not _cache_places(ast.parse("cache_dir = None\nrun_sweep(exp, cache=cache_dir)"))
