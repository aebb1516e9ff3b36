"""Fuzz layer, third part (issue 28): Tiresias headers and rows through ``fitgpp simulate``
(auto-detected, or with ``--format``), and researchers' policies whose fields are of every
type a dataclass can hold, given every kind of value in a sweep. The rule is the one of
tests/test_fuzz_cli.py (exit 0 with a correct result, or exit 2 with one line; in Python a
FitgppError), plus: a trace read as Tiresias's holds the file's jobs, GPUs from num_gpu; a
sweep that builds runs, with one configuration per combination of its single values."""

from __future__ import annotations

import csv
import dataclasses
import enum
import gzip
import io
import math
import typing

import numpy as np
import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

import fitgpp
from fitgpp.errors import FitgppError
from fitgpp.sim.policies.fifo import Fifo
from test_fuzz_cli import FUZZ, NASTY_JSON, NASTY_TEXT, cli

# ---- Tiresias headers and rows --------------------------------------------------------------

TIRESIAS = ["job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration",
            "interval"]
ROWS = [["0", "1", "0", "10", "resnet50", "120", "30"],
        ["1", "2", "30", "10", "vgg16", "600", "30"],
        ["2", "8", "60", "5", "bert", "300.5", "0"],
        ["3", "16", "61", "5", "bert", "59", "0"]]
OTHER_NAMES = ["cls", "gpu", "cpu_milli", "mem_mib", "grace_period", "tasks", "num_gpu",
               "job_id", "x", "", "NUM_GPU"]


@st.composite
def tiresias_files(draw) -> bytes:
    names = list(TIRESIAS)
    rows = [list(r) for r in ROWS]
    cell = st.one_of(st.sampled_from(NASTY_TEXT), st.text(max_size=5),
                     st.floats().map(repr), st.integers(-2**70, 2**70).map(str))
    for _ in range(draw(st.integers(0, 3)) * draw(st.integers(0, 1))):
        rows[draw(st.integers(0, len(rows) - 1))][draw(st.integers(0, 6))] = draw(cell)
    change = draw(st.sampled_from(["keep"] * 5 + ["drop", "add", "swap", "wider", "narrower"]))
    if change == "drop":
        k = draw(st.integers(0, 6))
        names, rows = names[:k] + names[k + 1:], [r[:k] + r[k + 1:] for r in rows]
    elif change == "add":
        names.append(draw(st.sampled_from(OTHER_NAMES)))
        rows = [r + [draw(cell)] for r in rows]
    elif change == "swap":
        names[draw(st.integers(0, 6))] = draw(st.sampled_from(OTHER_NAMES))
    elif change == "wider":
        rows[draw(st.integers(0, len(rows) - 1))].append(draw(cell))
    elif change == "narrower":
        rows[draw(st.integers(0, len(rows) - 1))].pop()
    style = draw(st.sampled_from(["plain", "quoted", "spaced"]))
    if style == "quoted":
        head = ",".join(f'"{n}"' for n in names)
    else:
        head = (", " if style == "spaced" else ",").join(names)
    text = head + "\n" + "\n".join(",".join(r) for r in rows) + "\n"
    data = text.encode("utf-8", "surrogatepass")
    return gzip.compress(data, mtime=0) if draw(st.booleans()) else data


def _records(data: bytes) -> list[list[str]]:
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    return [[c.strip() for c in r] for r in rows if r and any(c.strip() for c in r)]


GOOD = ("\n".join(",".join(r) for r in [TIRESIAS, *ROWS]) + "\n").encode()


@FUZZ
@example(data=GOOD, fmt="auto")
@example(data=gzip.compress(GOOD, mtime=0), fmt="auto")
@example(data=GOOD.replace(b"interval\n", b"interval,gpu\n").replace(b",30\n", b",30,1\n")
         .replace(b",0\n", b",0,1\n"), fmt="auto")
@given(data=tiresias_files(), fmt=st.sampled_from(["auto", "auto", "tiresias", "spec"]))
def test_simulate_on_random_tiresias_files(tmp_path_factory, capsys, data, fmt):
    d = tmp_path_factory.mktemp("tir")
    (d / "t.csv").write_bytes(data)
    out = d / "r.nc"
    code = cli(["simulate", d / "t.csv", "--format", fmt, "--nodes", "4", "--policy", "fifo",
                "--out", out], capsys)
    if code != 0:
        assert not out.exists()
        return
    ds = fitgpp.load(out)
    src = ds.attrs["workload"]
    if '"kind": "tiresias"' not in src:
        event("read as SPEC")
        return
    event("read as Tiresias")
    rows = _records(data)
    head, body = rows[0], rows[1:]
    assert ds.sizes["job"] == len(body)      # every job of the file, none dropped or made up
    want = {int(float(r[head.index("job_id")])): int(float(r[head.index("num_gpu")]))
            for r in body}
    got = dict(zip(ds["job"].values.tolist(), (ds["gpu"] * ds["tasks"]).values.tolist()))
    assert got == want
    assert fitgpp.rerun(ds)["finish"].values.tolist() == ds["finish"].values.tolist()


# ---- policy fields of every type ------------------------------------------------------------

class Color(enum.Enum):
    RED = 1


@dataclasses.dataclass(frozen=True)
class Inner:
    a: int = 1


#: (annotation, default) of every kind of field a dataclass can hold
FIELD_KINDS = {
    "int": (int, 3), "float": (float, 0.5), "bool": (bool, False), "str": (str, "calm"),
    "tuple": (tuple, (1.0, 2.0)), "tuple_of": (tuple[float, ...], (60.0, 600.0)),
    "empty_tuple": (tuple, ()), "nested_tuple": (tuple, ((1, 2), (3, 4))),
    "list": (list, dataclasses.field(default_factory=lambda: [1, 2])),
    "dict": (dict, dataclasses.field(default_factory=dict)),
    "optional": (typing.Optional[int], None), "union": (int | str, 1),
    "frozenset": (frozenset, frozenset({1})), "bytes": (bytes, b"x"),
    "complex": (complex, 1j), "enum": (Color, Color.RED), "inner": (Inner, Inner()),
    "any": (typing.Any, None), "object": (object, None), "nan": (float, math.nan),
    "big": (int, 10 ** 30), "required": (int, dataclasses.MISSING),
    "string_annotation": ("float", 2.0), "classvar": (typing.ClassVar[int], 5),
}
PLAIN_NAMES = ["alpha", "beta", "gamma", "delta", "epsilon", "s", "demotion", "seed"]
TAKEN_NAMES = ["model", "gpu_util", "load", "variant", "jobs", "policy", "cls", "name", "label"]
VALUES = [*NASTY_JSON, math.nan, math.inf, [1.0, 2.0], [[1, 2], [3, 4]], [[1, 2]],
          ["a", "b"], [True, False], "calm", (1.0, 2.0), [1, "a"], 2**63, [2**63]]


@st.composite
def policy_classes(draw):
    n = draw(st.integers(1, 3))
    names = draw(st.lists(st.sampled_from(PLAIN_NAMES), min_size=n, max_size=n, unique=True))
    if draw(st.integers(0, 4)) == 0:  # now and then a name a sweep keeps for itself
        names[0] = draw(st.sampled_from(TAKEN_NAMES))
    kinds = [draw(st.sampled_from(sorted(FIELD_KINDS))) for _ in names]
    fields = []
    for name, kind in sorted(zip(names, kinds), key=lambda nk: nk[1] != "required"):
        ann, default = FIELD_KINDS[kind]
        if default is dataclasses.MISSING:
            fields.append((name, ann))
        elif isinstance(default, dataclasses.Field):
            fields.append((name, ann, dataclasses.field(default_factory=default.default_factory)))
        else:
            fields.append((name, ann, dataclasses.field(default=default)))
    cls = dataclasses.make_dataclass("Fuzzed", fields, bases=(Fifo,), frozen=True,
                                     namespace={"name": "fuzzed"})
    given_values = {name: draw(st.sampled_from(VALUES)) for name in names
                    if draw(st.integers(0, 2)) == 0}
    return cls, dict(zip(names, kinds)), given_values


@FUZZ
@example(spec=(dataclasses.make_dataclass("Fuzzed", [("pair", tuple, dataclasses.field(
    default=(1.0, 2.0)))], bases=(Fifo,), frozen=True, namespace={"name": "fuzzed"}),
    {"pair": "tuple"}, {}))
@given(spec=policy_classes())
def test_a_sweep_over_policy_fields_of_every_type(spec):
    from fitgpp.sweep import Experiment, run_sweep
    from fitgpp.sweep.cell import cells_of
    cls, kinds, values = spec
    try:
        exp = Experiment(workload={"model": "paper-default", "n_jobs": 20},
                         policies={"p": {"policy": cls, **values}}, cluster={"nodes": 2})
    except FitgppError as exc:
        event(f"refused: {type(exc).__name__}")
        assert len(str(exc)) < 2100 and "\n" not in str(exc).strip()
        return
    event("built")
    grid = exp.policies[0]
    # one configuration per combination of the values given as lists; a value held fixed
    # (a tuple) or a default left to the policy adds none
    n = math.prod(len(v) for _, v in grid.values)
    assert len(cells_of(exp)) == n
    for k, v in grid.values:
        assert all(isinstance(x, (bool, int, float, str)) for x in v), (k, v)
    ds = run_sweep(exp, workers=0, cache=False, progress=False)
    assert int(ds["jobs"].sum()) == 20
    assert int(np.isfinite(ds["slowdown_p95"].values).sum()) > 0
    for c in cells_of(exp):
        assert isinstance(c.make_policy(), cls)
