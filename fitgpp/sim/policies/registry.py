"""Policy specs: what every entry point (simulate, rerun, the CLI, the widgets, the sweep)
accepts as "a policy", and what it records about the policy that ran.

A *policy spec* is one of

- a policy object (an instance of a frozen dataclass with ``bind`` and ``schedule``);
- a policy class (built with its defaults, or with the parameters given);
- a registered name, ``"fitgpp"`` (see :data:`fitgpp.sim.policies.POLICIES`);
- ``"module:QualName"``, a class importable from ``module``.

:func:`resolve` turns a spec plus parameters into an object; :func:`ref` names it so
that :func:`resolve` can build it again (the registry name for a registered class,
else ``module:qualname``); :func:`params` are its dataclass fields;
:func:`declared` lists those fields with their types and defaults, for controls
built from the declaration; :func:`digest` identifies the code that will run.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import math
import sys
import typing
from pathlib import Path

from fitgpp.sim.policies.base import PolicyError, params_of
from fitgpp.sim.policies.digest import (  # noqa: F401  (their old home)
    _outside_stdlib, class_source, digest, ship_by_value)
from fitgpp.sim.policies.modes import current_name, current_names

_SCALARS = {"float": float, "int": int, "bool": bool, "str": str}


def _registry() -> dict:
    from fitgpp.sim.policies.builtin import POLICIES
    return POLICIES


# ------------------------------------------------------------------ spec -> class / object
def policy_class(spec) -> type:
    """The class a spec names: a class, the class of an object, a registered name, or
    ``module:QualName`` (imported; a clear :class:`PolicyError` if it cannot be)."""
    if isinstance(spec, type):
        return _checked(spec, spec.__qualname__)
    if isinstance(spec, str):
        if ":" in spec:
            return _checked(_import(spec), spec)
        try:
            return _registry()[spec.lower()]
        except KeyError:
            raise PolicyError(f"unknown policy {spec!r}; choose one of "
                              f"{', '.join(_registry())} or give module:Class") from None
    return _checked(type(spec), type(spec).__qualname__)


def allowed_class(spec, policy=None, allow_modules=(), where: str = "policy") -> type:
    """The class a ``spec`` read from data (a result's attrs) names, importing nothing the
    caller did not allow: a registered name is looked up; ``module:Class`` must be the
    class of ``policy`` (a class or an object), or its module must be one of the exact
    names in ``allow_modules``. Anything else is a :class:`PolicyError` saying how to allow it."""
    if not isinstance(spec, str) or not spec.strip():
        raise PolicyError(f"{where}: expected a policy name or module:Class, got {spec!r}"[:300])
    if isinstance(allow_modules, str):
        allow_modules = (allow_modules,)
    if policy is not None:
        cls = policy_class(policy)
        if spec in (ref(cls), f"{cls.__module__}:{cls.__qualname__}"):
            return cls
        if ":" in spec:
            raise PolicyError(f"{where} names {spec!r}, but the policy given is {ref(cls)!r}"[:300])
    if ":" not in spec:
        return policy_class(spec)
    cls = builtin_by_path(spec)   # a built-in class by its full name: already imported
    if cls is not None:
        return cls
    module = spec.partition(":")[0]
    if module not in tuple(allow_modules):
        raise PolicyError(f"{where} names {spec!r}, which is not a built-in policy; reading "
                          f"data imports no module it names: pass the class (policy=...) or "
                          f"allow its module (allow_modules=({module!r},))"[:300])
    return policy_class(spec)


def builtin_by_path(spec: str) -> type | None:
    """The built-in class ``module:Class`` names, or None: under its module's path now
    (``fitgpp.sim.policies.las:Las``) or before the layers (``fitgpp.policies.las:Las``, as a
    result written by an earlier version records it; docs/architecture.md, "Old import
    paths"), or a package above that module that exports it (``fitgpp.policies:Las``).
    Nothing is imported: a built-in's modules are."""
    module, _, qual = spec.partition(":")
    for cls in _registry().values():
        now = cls.__module__
        rest = now.removeprefix("fitgpp.").partition(".")[2]
        for path in (now, f"fitgpp.{rest}" if now.startswith("fitgpp.") and rest else now):
            if not (path + ".").startswith(module + "."):
                continue
            home = now[:len(now) - (len(path) - len(module))]   # that package, now
            if cls.__qualname__ == qual and getattr(sys.modules.get(home), qual, None) is cls:
                return cls
    return None


def _import(spec: str) -> type:
    mod_name, _, qual = spec.partition(":")
    if not mod_name or not qual:
        raise PolicyError(f"policy {spec!r}: expected module:Class")
    if not all(p.isidentifier() for p in mod_name.split(".")):
        raise PolicyError(f"policy {spec!r}: cannot import {mod_name!r}: not a module name "
                          "(dotted Python identifiers, e.g. mypolicies or lab.policies)"[:300])
    try:
        obj = importlib.import_module(mod_name)
    except ImportError as exc:
        raise PolicyError(f"policy {spec!r}: cannot import module {mod_name!r} ({exc}); "
                          "is it on sys.path (PYTHONPATH) here?") from None
    except Exception as exc:  # a bad name ("..", "a\0b") or a module that fails as it loads
        raise PolicyError(f"policy {spec!r}: importing module {mod_name!r} failed "
                          f"({type(exc).__name__}: {' '.join(str(exc).split())})"[:300]) from None
    except SystemExit as exc:  # sys.exit() while loading must not end the caller silently
        sys.modules.pop(mod_name, None)
        raise PolicyError(f"policy {spec!r}: module {mod_name!r} exited while loading "
                          f"(sys.exit({exc.code!r}))"[:300]) from None
    for part in qual.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PolicyError(f"policy {spec!r}: module {mod_name!r} has no {qual!r} "
                              "(was it renamed, or defined in a notebook that is not running?)"
                              ) from None
    return obj


def _checked(cls, what: str) -> type:
    if not isinstance(cls, type) or not dataclasses.is_dataclass(cls) or \
            not callable(getattr(cls, "schedule", None)) or not callable(getattr(cls, "bind", None)):
        raise PolicyError(f"policy {what}: not a policy class (a policy is a dataclass with "
                          "bind(engine) and schedule(engine, t); see docs/write-a-policy.md)")
    from fitgpp.sim.policies.base import TwoQueuePolicy
    if issubclass(cls, TwoQueuePolicy) and cls.preempts and cls.choose is TwoQueuePolicy.choose:
        raise PolicyError(f"policy {what}: an abstract two-queue policy (it preempts but "
                          "writes no choose(); subclass it and write choose, or set "
                          "preempts = False)")
    return cls


def resolve(spec, **parameters):
    """A policy object from ``spec`` and ``parameters`` (keyword values of its fields).

    Given an object, parameters replace its field values (``dataclasses.replace``).
    Unknown parameters raise :class:`PolicyError` naming the ones the policy takes; a
    field's old name (:mod:`.modes`, e.g. LAS's ``demotion`` for ``mode``) is taken as the
    new one, with a :class:`~.modes.FieldRenamed` warning.
    """
    cls = policy_class(spec)
    parameters = current_names(cls, parameters)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(parameters) - set(names))
    if unknown:
        raise PolicyError(f"policy {label(cls)!r} takes no parameter(s) {', '.join(unknown)}"
                          f" (it takes: {', '.join(names) or 'none'})")
    for k, v in parameters.items():   # a Literal field takes its values only
        allowed = choices(cls, k)
        if allowed and not any(v == a and type(v) is type(a) for a in allowed):
            raise PolicyError(f"policy {label(cls)!r}: {k} must be one of "
                              f"{', '.join(map(repr, allowed))}, got {_short(v)}"[:300])
    if not isinstance(spec, (str, type)):
        return dataclasses.replace(spec, **parameters) if parameters else spec
    try:
        return cls(**parameters)
    except PolicyError:
        raise
    except (TypeError, ValueError) as exc:
        raise PolicyError(f"policy {label(cls)!r}: {exc}") from None


def recordable(policy):
    """``policy`` itself if a result can record its parameters (JSON: finite numbers,
    strings, booleans, None, and lists or tables of them, as ``policy_params``), else a
    :class:`PolicyError` naming the field: a rerun builds the policy from that record."""
    for k, v in params_of(policy).items():
        try:
            json.dumps(v, allow_nan=False)
        except (TypeError, ValueError):
            raise PolicyError(
                f"policy {label(policy)!r}: parameter {k} = {_short(v)} is not a value a result "
                "can record (a finite number, string, boolean, None, or a list or table of "
                "them); give the field such a value (an enum's .value, say), or make it a "
                "ClassVar if it is no parameter") from None
    return policy


def _short(v) -> str:
    r = repr(v)
    return r if len(r) <= 80 else f"{r[:80]}... ({len(r)} characters)"


# ------------------------------------------------------------------ naming
def ref(policy) -> str:
    """What :func:`resolve` needs to build this policy's class again: its registry name
    when the registry holds exactly this class, else ``module:qualname``."""
    cls = policy if isinstance(policy, type) else type(policy)
    for name, c in _registry().items():
        if c is cls:
            return name
    return f"{cls.__module__}:{cls.__qualname__}"


def label(policy) -> str:
    """A short display name: the registry name, else a ``name`` the class declares in its
    own body, else its qualified name."""
    cls = policy if isinstance(policy, type) else type(policy)
    r = ref(cls)
    if ":" not in r:
        return r
    own = cls.__dict__.get("name")
    return own if isinstance(own, str) and own and own.lower() not in _registry() \
        else cls.__qualname__


def params(policy) -> dict:
    """The policy's parameters: its dataclass fields and their values."""
    return params_of(policy)


def declared(spec) -> dict[str, tuple[type | None, object]]:
    """``{field: (type, default)}`` of a policy class, in declaration order. ``type`` is
    float, int, bool or str when the annotation says so, or is a ``Literal`` of values of
    one of them (see :func:`choices`; else None); ``default`` is
    ``dataclasses.MISSING`` when the field has none."""
    cls = policy_class(spec)
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # a class whose module is gone (exec, some notebooks): read the strings
        hints = {}
    out = {}
    for f in dataclasses.fields(cls):
        t = hints.get(f.name, f.type)
        kinds = {type(a) for a in choices_of(t)}
        if isinstance(t, str):
            t = _SCALARS.get(t.strip())
        t = kinds.pop() if len(kinds) == 1 else t   # Literal["a", "b"]: str
        out[f.name] = (t if t in (float, int, bool, str) else None, _default(f))
    return out


def choices_of(annotation) -> tuple:
    """The values a ``Literal[...]`` annotation allows (``()`` for any other); also from its
    text, ``"Literal['a', 'b']"``, when it could not be resolved (a class defined where
    ``Literal`` is not a global name)."""
    if isinstance(annotation, str):
        head, _, rest = annotation.strip().partition("[")
        if head not in ("Literal", "typing.Literal") or not rest.endswith("]"):
            return ()
        try:
            got = ast.literal_eval(f"({rest[:-1]},)")
        except (ValueError, SyntaxError):
            return ()
        return tuple(got) if all(isinstance(x, (str, int, float, bool)) for x in got) else ()
    return typing.get_args(annotation) if typing.get_origin(annotation) is typing.Literal else ()


def choices(spec, name: str) -> tuple:
    """The values field ``name`` of a policy class may take when its annotation is a
    ``Literal`` (FIFO's ``backfill``: none, easy, greedy), for a control offering them;
    ``()`` when any value of its type goes."""
    cls = policy_class(spec)
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # a class whose module is gone: read the annotation's text
        hints = {}
    f = {f.name: f for f in dataclasses.fields(cls)}.get(name)
    return choices_of(hints.get(name, f.type if f is not None else None))


def metadata(spec, name: str) -> dict:
    """What field ``name`` of a policy class declares in ``field(metadata=...)``: optional
    ``min``, ``max``, ``step`` (control ranges), ``label``, ``description``, ``units``,
    ``short`` (its name in a configuration's label, :mod:`fitgpp.figures.names`), ``named``
    (``"unless default"``: a label names the field exactly when it is not at its default,
    as FIFO's ``backfill``; :func:`fitgpp.figures.plots.config_label`)."""
    for f in dataclasses.fields(policy_class(spec)):
        if f.name == name:
            return dict(f.metadata)
    raise PolicyError(f"policy {label(policy_class(spec))!r} has no parameter {name!r}")


def _default(f):
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def parse_value(spec, name: str, text: str):
    """``text`` (from a command line) as a value of field ``name``, by its declared type (an
    old name of a field, with a :class:`~.modes.FieldRenamed` warning, as the new one)."""
    fields = declared(spec)
    name = current_name(policy_class(spec), name)
    if name not in fields:
        raise PolicyError(f"policy {label(policy_class(spec))!r} has no parameter {name!r} "
                          f"(it takes: {', '.join(fields) or 'none'})")
    t = fields[name][0]
    allowed = choices(spec, name)
    if allowed and text not in map(str, allowed):
        raise PolicyError(f"parameter {name}={text!r}: expected one of "
                          f"{', '.join(map(str, allowed))}"[:300])
    try:
        if t is bool:
            low = text.strip().lower()
            if low not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError
            return low in ("true", "1", "yes")
        if t is int:
            return int(text)
        if t is float:
            v = float(text)
            if not math.isfinite(v):
                raise ValueError
            return v
        if t is str:
            return text
        return json.loads(text, parse_constant=_no_constant)  # no declared scalar type: JSON
    except ValueError:
        kind = {bool: "true or false", int: "an integer", float: "a finite number"}.get(
            t, "a JSON value with finite numbers only")
        raise PolicyError(f"parameter {name}={text!r}: expected {kind}") from None


def _no_constant(name: str):
    """JSON's NaN and Infinity (which json.loads takes) are no values a result may hold."""
    raise ValueError(f"{name} is not a finite number")
