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
