"""One policy of a sweep and the values of its parameters (:class:`PolicyGrid`), checked by
the policy's own declared fields (see :mod:`fitgpp.sweep.config`)."""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass

from fitgpp.sim.policies import PolicyError, registry
from fitgpp.sim.policies.modes import current_names
from fitgpp.sim.validate import MAX_PREEMPTIONS, MAX_SEED
from fitgpp.sweep.checks import KNOBS, _fail, _number, _sorted, _values


@dataclass(frozen=True, init=False)
class PolicyGrid:
    """One policy and the values of its parameters to sweep.

    ``PolicyGrid(policy, *, label=None, seed=None, **values)``: ``policy`` is any policy
    spec (a registered name, ``"module:Class"``, a policy class, or a policy object whose
    field values are the defaults here); ``values`` give any of its dataclass fields a
    value or a list of values to sweep. Every field but ``seed`` spans a dimension of the
    result, named like the field; a field not given keeps its default. A field named
    ``seed`` (RAND's) is not swept: None = the cell's workload seed. ``label`` names the
    policy in the result (default: the registry name, a ``name`` the class declares in its
    own body, else the class name).

    After construction ``name`` is the label, ``policy`` the class (or the object, or
    the ``"module:Class"`` string, imported again when cells are made),
    ``values`` a tuple of ``(field, sorted tuple of values)``; ``grid.s`` reads the
    values of field ``s``. A tuple-valued field (LAS's ``thresholds``) is given one tuple (a
    list of numbers, strings or booleans): it is held at that value in every configuration
    (``fixed``, ``(field, tuple)`` pairs), recorded in the experiment but no dimension of the
    result, since a coordinate holds single values; to compare several tuples, give one
    policy table per tuple. A field whose default is no single value (a tuple, list, dict,
    None or object) and that is not given keeps the policy's own default.
    """

    name: str
    policy: object
    values: tuple
    seed: int | None
    fixed: tuple = ()

    def __init__(self, name, /, *, label=None, seed=None, **values):
        spec = name
        if isinstance(spec, str):
            spec = spec.strip()
        try:
            cls = registry.policy_class(spec)
        except PolicyError as exc:
            where = f"[policies.{label or name}]" if ":" in str(spec) else "[policies]"
            _fail(where, str(exc))
        base = spec if not isinstance(spec, (str, type)) else cls
        # "module:Class" stays a string, imported again when the cells are made, so that a
        # module reloaded after an edit runs its new code
        keep = spec if isinstance(spec, str) and ":" in spec else base
        label = label if label is not None else registry.label(cls)
        if not isinstance(label, str) or not label:
            _fail("[policies]", f"a policy label must be a non-empty string, got {label!r}")
        where = f"[policies.{label}]"
        try:  # a field's old name (LAS's demotion, ...) as the new one, with a warning
            values = current_names(cls, values, f"{where} ")
        except PolicyError as exc:
            _fail(where, str(exc))
        fields = registry.declared(cls)
        takes = [k for k in fields if k != "seed"]
        for key in values:
            if key not in takes:
                _fail(where, f"unknown key '{key}' (policy {label} takes "
                             f"{', '.join(sorted(fields)) or 'none'})")
        reserved = sorted(k for k in takes if reserved_name(k))
        if reserved:
            _fail(where, f"parameter {reserved[0]!r} of policy {label} has the name of another "
                         "dimension or variable of a sweep's result (or of the policy's label); "
                         "rename the field")
        grid, fixed = [], []
        probe = _with_required(base, fields, values)
        for key in takes:
            default = getattr(base, key) if not isinstance(base, type) else fields[key][1]
            one = _field_values(where, probe, key, fields[key][0], default, values.get(key))
            if one is None:
                continue  # a default a result cannot record as a dimension: the policy's own
            if one[0] == "fixed":
                fixed.append((key, one[1]))
            else:
                grid.append((key, one[1]))
        if seed is not None:
            if "seed" not in fields:
                _fail(where, f"unknown key 'seed' (policy {label} has no seed)")
            _number(where, "seed", seed, lo=0, hi=MAX_SEED, integer=True)
        for k, v in (("name", label), ("policy", keep), ("values", tuple(grid)), ("seed", seed),
                     ("fixed", tuple(fixed))):
            object.__setattr__(self, k, v)

    def __getattr__(self, key):
        for k, v in object.__getattribute__(self, "values"):
            if k == key:
                return v
        raise AttributeError(key)

    @property
    def params(self) -> dict[str, tuple]:
        """``{field: values}`` of the swept fields (all fields but ``seed``)."""
        return dict(self.values)

    @property
    def cls(self) -> type:
        """The policy's class (imported now for a ``module:Class`` spec)."""
        return registry.policy_class(self.policy)

    @property
    def has_seed(self) -> bool:
        return "seed" in registry.declared(self.policy)

    @property
    def ref(self) -> str:
        """Registry name or ``module:qualname`` of the policy's class."""
        return registry.ref(self.cls)

    def combos(self) -> list[dict]:
        """Every parameter combination of this grid, as keyword dicts (without seed)."""
        out = [dict(self.fixed)]
        for key, vals in self.values:
            out = [{**d, key: v} for d in out for v in vals]
        return out

    def to_dict(self) -> dict:
        out = {k: list(v) for k, v in (*self.values, *self.fixed)}
        if self.ref != self.name:
            out["policy"] = self.ref
        if self.seed is not None:
            out["seed"] = self.seed
        return out


#: Names a policy field cannot take: other dimensions of a sweep's or a study's result
#: (workload knobs, the workload, the seed, the class) and its variables.
_RESERVED = {*KNOBS, "policy", "seed", "cls", "model", "trace", "jobs", "gpu_util",
             "name", "label"}
_SUFFIXES = ("", "_mean", "_ci95", "_vs_fifo", "_vs_fifo_mean", "_vs_fifo_ci95")


def reserved_name(name: str) -> bool:
    """Whether a policy field named ``name`` would clash with a dimension or a variable of a
    sweep's Dataset (``load``, ``seed``, ``gpu_util``, ``slowdown_p95_mean``, ...)."""
    from fitgpp.analysis.metrics import CLASS_METRICS
    if name in _RESERVED:
        return True
    return any(name == m + s for m in (*CLASS_METRICS, "gpu_util") for s in _SUFFIXES)


def _plain(v) -> bool:
    return isinstance(v, (bool, int, float, str))


def _with_required(base, fields, values):
    """What each value is checked against (built with it): ``base``, or, for a class with
    fields that have no default, an object of it built with the first value given for each
    of them (so that checking one field does not fail for want of another)."""
    required = [k for k, (_, d) in fields.items() if d is dataclasses.MISSING and k in values]
    if not isinstance(base, type) or not required:
        return base
    first = {k: values[k][0] if isinstance(values[k], list) and values[k] and
             not isinstance(values[k][0], list) and not _tuple_field(base, k, None) else values[k]
             for k in required}
    try:
        return registry.resolve(base, **{k: tuple(v) if isinstance(v, list) else v
                                         for k, v in first.items()})
    except PolicyError:
        return base  # each value is refused on its own below, with its key


def _tuple_field(base, key, default) -> bool:
    """A field whose default is a tuple or whose annotation says tuple (``tuple``,
    ``tuple[float, ...]``, or the same as a string)."""
    if isinstance(default, tuple):
        return True
    cls = base if isinstance(base, type) else type(base)
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # a class whose module is gone: only the annotation's text is left
        hints = {}
    f = {f.name: f for f in dataclasses.fields(cls)}.get(key)
    t = hints.get(key, f.type if f is not None else None)
    if isinstance(t, str):
        return t.strip().split("[")[0] in ("tuple", "Tuple", "typing.Tuple")
    return t is tuple or typing.get_origin(t) is tuple


def _field_values(where, base, key, kind, default, given):
    """``("grid", sorted values)`` of a field that spans a dimension, ``("fixed", tuple)``
    of a tuple-valued field, or None for a default left to the policy."""
    if isinstance(given, (list, tuple)) and not given:
        _fail(where, f"key '{key}' is an empty list: nothing to sweep (leave the key "
                     "out for the policy's default)")
    if given is None:
        if default is dataclasses.MISSING:
            _fail(where, f"key '{key}' is required (the field has no default)")
        if not _plain(default):
            try:  # the policy's own default, recorded with each cell's result
                json.dumps(default, allow_nan=False)
            except (TypeError, ValueError):
                _fail(where, f"field '{key}': its default {short(default)} is not a value a "
                             "result can record (a finite number, string, boolean, None, or a "
                             "list or table of them); give the field such a default, or make it "
                             "a ClassVar if it is no parameter")
            return None
        given = default
    if _tuple_field(base, key, default):
        return "fixed", _one_tuple(where, base, key, given)
    if not (_plain(given) or isinstance(given, (list, tuple))):
        _fail(where, f"key '{key}': value {short(given)} is not a plain value (finite number, "
                     "string, boolean) a result can record")
    v = _values(where, key, list(given) if isinstance(given, (list, tuple)) else [given],
                _param_check(base, key, kind))
    return "grid", tuple(_sorted(v))


def _one_tuple(where, base, key, given) -> tuple:
    """The one value of a tuple-valued field: a list of plain values (checked by building
    the policy); a list of lists (a sweep of tuples) is refused, saying what to write."""
    if not isinstance(given, (list, tuple)):
        _fail(where, f"key '{key}' holds a tuple: write it as a list, e.g. {key} = [60, 600], "
                     f"got {short(given)}")
    if any(isinstance(x, (list, tuple, dict)) for x in given):
        _fail(where, f"key '{key}' holds one tuple per policy; a sweep cannot sweep tuples (a "
                     "dimension of its result holds single numbers, strings or booleans): give "
                     f"one list, e.g. {key} = [60, 600], and write one [policies.LABEL] table "
                     f"per tuple (each with policy = \"{registry.ref(base)}\") to compare several")
    for x in given:
        if not _plain(x) or (isinstance(x, float) and not math.isfinite(x)):
            _fail(where, f"key '{key}': item {short(x)} is not a finite number, string or "
                         "boolean")
    try:
        made = getattr(registry.resolve(base, **{key: tuple(given)}), key)
    except PolicyError as exc:
        _fail(where, f"key '{key}': {exc}")
    return made if isinstance(made, tuple) else tuple(given)  # as the policy keeps it


def short(v, n: int = 80) -> str:
    """``repr(v)`` cut to about ``n`` characters (a message never repeats a huge value)."""
    r = repr(v)
    return r if len(r) <= n else f"{r[:n]}... ({len(r)} characters)"


def _param_check(base, key, kind):
    """Check one value of field ``key`` by its declared type, then by building the policy
    with it (its own validation, so the checks are declared once, in the policy)."""
    def check(where, k, v):
        if kind is float:
            v = _number(where, k, v)
        elif kind is int:  # stored in results as int32 (seeds have their own key)
            v = _number(where, k, v, lo=-MAX_PREEMPTIONS, hi=MAX_PREEMPTIONS, integer=True)
        elif kind in (bool, str) and not isinstance(v, kind):
            _fail(where, f"key '{k}' must be {'true or false' if kind is bool else 'a string'}"
                         f", got {v!r}")
        try:
            json.dumps(v, allow_nan=False)
            hash(v)
        except (TypeError, ValueError):  # a list or table, or a NaN / infinity inside one
            _fail(where, f"key '{k}': value {v!r} is not a plain value (finite number, "
                         "string, boolean) a result can record"[:300])
        try:
            registry.resolve(base, **{key: v})
        except PolicyError as exc:
            _fail(where, f"key '{key}': {exc}")
        return v
    return check


def _policies(p) -> tuple[PolicyGrid, ...]:
    if isinstance(p, Mapping):
        grids = []
        for name, params in p.items():
            if params is None:
                params = {}
            if not isinstance(params, Mapping):
                _fail(f"[policies.{name}]", f"must be a table of parameters, got {params!r}")
            params = dict(params)
            taken = sorted({"name", "label"} & set(params))
            if taken:
                _fail(f"[policies.{name}]", f"parameter {taken[0]!r} has the name of the "
                                            "policy's label; rename the field")
            spec = params.pop("policy", None)
            if spec is None:
                grids.append(PolicyGrid(str(name), **params))
            else:  # [policies.LABEL] policy = "module:Class" (or a class / object in Python)
                grids.append(PolicyGrid(spec, label=str(name), **params))
    elif isinstance(p, (list, tuple)):
        grids = [q if isinstance(q, PolicyGrid) else PolicyGrid(q) for q in p]
    else:
        _fail("", f"key 'policies' must be a table of policies, got {p!r}")
    if not grids:
        _fail("", "key 'policies' is empty: give at least one policy")
    names = [g.name for g in grids]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        _fail("[policies]", f"policy {dup[0]!r} given twice")
    return tuple(grids)
