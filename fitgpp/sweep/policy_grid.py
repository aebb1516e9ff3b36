"""One policy of a sweep and the values of its parameters (:class:`PolicyGrid`), checked by
the policy's own declared fields (see :mod:`fitgpp.sweep.config`)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass

from fitgpp.sim.policies import PolicyError, registry
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
    values of field ``s``.
    """

    name: str
    policy: object
    values: tuple
    seed: int | None

    def __init__(self, name, *, label=None, seed=None, **values):
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
        fields = registry.declared(cls)
        takes = [k for k in fields if k != "seed"]
        for key in values:
            if key not in takes:
                _fail(where, f"unknown key '{key}' (policy {label} takes "
                             f"{', '.join(sorted(fields)) or 'none'})")
        reserved = {*KNOBS, "policy", "seed", "cls"} & set(takes)
        if reserved:
            _fail(where, f"parameter {sorted(reserved)[0]!r} of policy {label} has the name "
                         "of another dimension of a sweep; rename the field")
        grid = []
        for key in takes:
            v = values.get(key)
            if isinstance(v, (list, tuple)) and not v:
                _fail(where, f"key '{key}' is an empty list: nothing to sweep (leave the key "
                             "out for the policy's default)")
            if v is None:
                v = getattr(base, key) if not isinstance(base, type) else fields[key][1]
                if v is dataclasses.MISSING:
                    _fail(where, f"key '{key}' is required (the field has no default)")
            v = _values(where, key, list(v) if isinstance(v, (list, tuple)) else [v],
                        _param_check(base, key, fields[key][0]))
            grid.append((key, tuple(_sorted(v))))
        if seed is not None:
            if "seed" not in fields:
                _fail(where, f"unknown key 'seed' (policy {label} has no seed)")
            _number(where, "seed", seed, lo=0, hi=MAX_SEED, integer=True)
        for k, v in (("name", label), ("policy", keep), ("values", tuple(grid)), ("seed", seed)):
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
        out = [{}]
        for key, vals in self.values:
            out = [{**d, key: v} for d in out for v in vals]
        return out

    def to_dict(self) -> dict:
        out = {k: list(v) for k, v in self.values}
        if self.ref != self.name:
            out["policy"] = self.ref
        if self.seed is not None:
            out["seed"] = self.seed
        return out


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
