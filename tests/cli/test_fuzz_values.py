"""Fuzz layer, second part (issue 19): the values that landed after the first layer. Hypothesis
feeds ``--param`` values of a user's policy, the optional trace columns (``tasks``,
``restart_overhead``) and the lists of a sweep TOML through the command line; the rule is the
one of tests/cli/test_fuzz_cli.py (exit 0 with a correct result, or exit 2 with one line), plus:
an accepted value is the value recorded, a NaN never becomes a default, a grid is counted
before it is built."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

import fitgpp
from test_fuzz_cli import BASE, FUZZ, NASTY_TEXT, cli, to_toml

# ---- --param of a user's policy -------------------------------------------------------------

TYPED = '''
from dataclasses import dataclass
from fitgpp.sim.policies import FitGpp


@dataclass(frozen=True)
class Typed(FitGpp):
    patience: int = 0
    weight: float = 1.0
    eager: bool = False
    mode: str = "calm"
    extra: object = None

    def __post_init__(self):
        super().__post_init__()
        if self.patience < 0:
            raise ValueError(f"patience must be >= 0, got {self.patience}")
'''


@pytest.fixture(scope="module")
def typed_policy(tmp_path_factory):
    import sys
    d = tmp_path_factory.mktemp("typed")
    (d / "fuzz_typed_pol.py").write_text(TYPED)
    (d / "t.csv").write_text("\n".join(",".join(r) for r in BASE) + "\n")
    sys.path.insert(0, str(d))
    yield d
    sys.path.remove(str(d))
    sys.modules.pop("fuzz_typed_pol", None)


PARAM_NAMES = ["patience", "weight", "eager", "mode", "extra", "s", "max_preemptions", "nope",
               "", "patience ", "seed"]
PARAM_VALUES = [*NASTY_TEXT, "[1, 2]", '{"a": 1}', "null", "[" * 3000, "yes", "no", "TRUE",
                "1" * 400, "-5", "3.0", "1e-5"]


@FUZZ
@example(params=[("patience", "3"), ("weight", "0.5"), ("eager", "yes"), ("mode", "x y")])
@given(params=st.lists(st.tuples(st.sampled_from(PARAM_NAMES), st.sampled_from(PARAM_VALUES)),
                       max_size=4))
def test_simulate_on_random_params_of_a_user_policy(typed_policy, capsys, params):
    out = typed_policy / "r.nc"
    out.unlink(missing_ok=True)
    argv = ["simulate", typed_policy / "t.csv", "--nodes", "2", "--policy",
            "fuzz_typed_pol:Typed", "--out", out]
    for name, value in params:
        argv += ["--param", f"{name}={value}"]
    if cli(argv, capsys) != 0:
        assert not out.exists()
        return
    recorded = json.loads(fitgpp.load(out).attrs["policy_params"])
    for name, value in dict(params).items():  # what was asked is what ran and is recorded
        got = recorded[name]
        if isinstance(got, float):
            assert math.isfinite(got) and got == float(value)
        elif isinstance(got, bool):
            assert got == (value.strip().lower() in ("true", "1", "yes"))
        elif isinstance(got, int):
            assert got == int(value)
        elif name == "mode":
            assert got == value


# ---- optional trace columns -----------------------------------------------------------------

OPTIONAL_VALUES = ["", "", "1", "2", "3", "0", "-1", "1.5", "nan", "NaN", "NA", "null", "None",
                   "inf", "-inf", "1e300", "30", "0.0", "2e10", " ", "x", "true", "9" * 20]


@FUZZ
@example(cells=[("1", "")] * 5)
@given(cells=st.lists(st.tuples(st.sampled_from(OPTIONAL_VALUES),
                                st.sampled_from(OPTIONAL_VALUES)), min_size=5, max_size=5))
def test_optional_columns_are_checked_like_required_ones(tmp_path, capsys, cells):
    """Only an empty cell takes the default; every other value is a finite number in range
    or the file is refused naming the column."""
    rows = [BASE[0] + ["tasks", "restart_overhead"]] + [r + list(c) for r, c in
                                                        zip(BASE[1:], cells)]
    (tmp_path / "t.csv").write_text("\n".join(",".join(r) for r in rows) + "\n")
    out = tmp_path / "r.nc"
    out.unlink(missing_ok=True)
    if cli(["simulate", tmp_path / "t.csv", "--nodes", "8", "--out", out], capsys) != 0:
        assert not out.exists()
        return
    ds = fitgpp.load(out)
    for i, (tasks, overhead) in enumerate(cells):
        assert ds["tasks"].values[i] == (1 if tasks == "" else float(tasks))
        assert ds["restart_overhead"].values[i] == (0.0 if overhead == "" else float(overhead))
    assert np.isfinite(ds["restart_overhead"].values).all()


# ---- sweep TOML lists -----------------------------------------------------------------------

LIST_ITEMS = st.one_of(st.sampled_from([0, 1, 2, 3, -1, 0.5, 2.0, 4.0, 8.0, 1e300, 2**31, 2**40,
                                        True, "x", "", float("nan"), float("inf")]),
                       st.floats(min_value=-10, max_value=10, allow_nan=False),
                       st.integers(-3, 10))
LISTED = {("workload", "load"): LIST_ITEMS, ("workload", "te_fraction"): LIST_ITEMS,
          ("workload", "n_jobs"): LIST_ITEMS, ("policies", "fitgpp", "s"): LIST_ITEMS,
          ("policies", "fitgpp", "max_preemptions"): LIST_ITEMS,
          ("policies", "lrtp", "max_preemptions"): LIST_ITEMS, ("seeds",): LIST_ITEMS}


def _put(doc, path, value):
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


@FUZZ
@given(data=st.data())
def test_sweep_on_random_toml_lists(tmp_path, capsys, data):
    """Lists of any values and lengths: a grid within the bound runs and has one point per
    listed value; beyond it, the refusal names the count, before any cell runs."""
    from fitgpp.sim.validate import MAX_CELLS
    doc = {"seeds": [0], "workload": {"model": "paper-default", "n_jobs": 8, "load": 0.7},
           "cluster": {"nodes": 2}, "policies": {"fitgpp": {}, "lrtp": {}}}
    huge = data.draw(st.integers(0, 7)) == 0
    for path in data.draw(st.lists(st.sampled_from(sorted(LISTED)), min_size=2 * huge,
                                   max_size=3, unique=True)):
        if huge:  # distinct valid values whose product is beyond the bound
            n = 400
            value = {"load": [0.01 * (i + 1) for i in range(n)],
                     "te_fraction": [i / n for i in range(n)],
                     "n_jobs": list(range(1, n + 1)), "s": [float(i) for i in range(n)],
                     "max_preemptions": list(range(1, n + 1)),
                     "seeds": list(range(n))}[path[-1]]
        else:
            value = data.draw(st.lists(LIST_ITEMS, max_size=2))
        _put(doc, path, value)
    (tmp_path / "exp.toml").write_text(to_toml(doc))
    out = tmp_path / "s.nc"
    out.unlink(missing_ok=True)
    code = cli(["sweep", tmp_path / "exp.toml", "--workers", "0", "--no-cache", "--quiet",
                "--out", out], capsys, timeout=120)
    if code != 0:
        assert not out.exists()
        return
    event("ran")
    ds = fitgpp.load(out)
    for path in LISTED:
        try:
            v = doc
            for k in path:
                v = v[k]
        except KeyError:
            continue
        if isinstance(v, list) and path[-1] in ds.dims:
            assert ds.sizes[path[-1]] >= len(v)
    assert ds.sizes["policy"] == 2 and math.prod(ds["slowdown_median"].shape) <= MAX_CELLS * 2
