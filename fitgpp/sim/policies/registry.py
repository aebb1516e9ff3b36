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

import dataclasses
import functools
import hashlib
import importlib
import json
import math
import sys
import typing
from pathlib import Path

from fitgpp.sim.policies.base import PolicyError, params_of

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
    Unknown parameters raise :class:`PolicyError` naming the ones the policy takes.
    """
    cls = policy_class(spec)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(parameters) - set(names))
    if unknown:
        raise PolicyError(f"policy {label(cls)!r} takes no parameter(s) {', '.join(unknown)}"
                          f" (it takes: {', '.join(names) or 'none'})")
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
    float, int, bool or str when the annotation says so (else None); ``default`` is
    ``dataclasses.MISSING`` when the field has none."""
    cls = policy_class(spec)
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # a class whose module is gone (exec, some notebooks): read the strings
        hints = {}
    out = {}
    for f in dataclasses.fields(cls):
        t = hints.get(f.name, f.type)
        if isinstance(t, str):
            t = _SCALARS.get(t.strip())
        out[f.name] = (t if t in (float, int, bool, str) else None, _default(f))
    return out


def metadata(spec, name: str) -> dict:
    """What field ``name`` of a policy class declares in ``field(metadata=...)``: optional
    ``min``, ``max``, ``step`` (control ranges), ``label``, ``description``, ``units``,
    ``short`` (its name in a configuration's label, :mod:`fitgpp.figures.names`)."""
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
    """``text`` (from a command line) as a value of field ``name``, by its declared type."""
    fields = declared(spec)
    if name not in fields:
        raise PolicyError(f"policy {label(policy_class(spec))!r} has no parameter {name!r} "
                          f"(it takes: {', '.join(fields) or 'none'})")
    t = fields[name][0]
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


# ------------------------------------------------------------------ digest
@functools.cache
def _stdlib() -> Path:
    """The standard library's directory: where ``os`` was read from (sysconfig's
    ``get_paths()["stdlib"]`` reads the build's configuration: milliseconds of a first
    ``simulate()``), sysconfig's answer where ``os`` has no file."""
    import os
    f = getattr(os, "__file__", None)
    if f:
        return Path(f).resolve().parent
    import sysconfig
    return Path(sysconfig.get_paths()["stdlib"]).resolve()


#: module file -> whether it is outside the standard library (resolving the path asks the
#: file system for every part of it: 20 us a class, for each run's digest)
_OUTSIDE: dict[str, bool] = {}


def _outside_stdlib(cls) -> bool:
    if cls is object or cls.__module__ == "builtins":
        return False
    mod = sys.modules.get(cls.__module__)
    f = getattr(mod, "__file__", None)
    if not f:
        return True  # __main__ of a notebook, or a module made by exec: user code
    out = _OUTSIDE.get(f)
    if out is None:
        p = Path(f).resolve()
        out = _OUTSIDE[f] = "site-packages" in p.parts or not p.is_relative_to(_stdlib())
    return out


def class_source(cls) -> tuple[str, bytes]:
    """What identifies a class's code, as ``(how, bytes)``.

    ``"source"``: the bytes of the file of the class's module (where its source is, as
    :func:`inspect.getsource` would find it; the whole file is read and hashed, not parsed:
    an edit anywhere in it changes the digest, including to the module's functions the
    class calls), followed by the fingerprint of its compiled code (below). The file alone
    would not do: a module file edited but not reloaded has new text while the old code
    still runs. Where the module has no file to read but :func:`inspect.getsource` finds
    the class's text (a module loaded from a zip), that text. ``"code"``: where there is
    no source (a class defined in a notebook cell, whose module ``__main__`` has no file,
    or made by ``exec``), the fingerprint alone: the bytecode, constants and names of
    every method, and the repr of every plain class attribute; the same for the same code,
    in any process. ``"cloudpickle"``: when a class attribute is no plain value, the class
    pickled by value; those bytes hold its code and attributes but also an id cloudpickle
    draws once per class per process, so they identify the class within one process only
    (a restarted session computes such cells again rather than reuse them).
    """
    try:
        code = _fingerprint(cls)
    except TypeError:
        import cloudpickle
        return "cloudpickle", cloudpickle.dumps(cls, protocol=5)
    text = _module_file_bytes(cls)
    if text is not None:
        return "source", text + b"\0" + code
    import inspect
    try:
        return "source", inspect.getsource(cls).encode() + b"\0" + code
    except (OSError, TypeError):
        return "code", code


def _module_file_bytes(cls) -> bytes | None:
    """The bytes of the source file that defines ``cls``: its module's ``.py`` file, when
    some method of the class was compiled from it (none of a class made by ``exec`` in a
    module with a file was); None when there is no such file to read."""
    mod = sys.modules.get(cls.__module__)
    f = getattr(mod, "__file__", None)
    if not f or not f.endswith(".py"):
        return None
    made_here = [fn.__code__.co_filename == f for fn in _functions(cls)]
    if made_here and not any(made_here):
        return None  # (dataclasses make __init__ and the like by exec: any, not all)
    try:
        with open(f, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _functions(cls) -> list:
    """The plain functions of ``cls``'s own namespace (methods, static and class methods,
    property getters)."""
    import types
    out = []
    for v in cls.__dict__.values():
        fn = v.__func__ if isinstance(v, (staticmethod, classmethod)) else \
            v.fget if isinstance(v, property) else v
        if isinstance(fn, types.FunctionType):
            out.append(fn)
    return out


def _fingerprint(cls) -> bytes:
    import inspect
    parts = [f"{cls.__qualname__}({', '.join(b.__qualname__ for b in cls.__bases__)})"]
    for k, v in sorted(cls.__dict__.items()):
        fn = v.__func__ if isinstance(v, (staticmethod, classmethod)) else \
            v.fget if isinstance(v, property) else v
        if inspect.isfunction(fn):
            parts.append(f"def {k}{type(v).__name__}:{_code(fn.__code__)}"
                         f"{_const(fn.__defaults__)}{_const(fn.__kwdefaults__)}")
        elif not (k.startswith("__") and k.endswith("__")):
            parts.append(f"{k} = {_const(v)}")
    return "\n".join(parts).encode()


def _code(co) -> str:
    return (f"<{co.co_code.hex()}|{co.co_names}|{co.co_varnames}|{co.co_freevars}|"
            f"{'|'.join(_const(c) for c in co.co_consts)}>")


def _const(v) -> str:
    if hasattr(v, "co_code"):
        return _code(v)
    if isinstance(v, (frozenset, set)):
        return "{" + ",".join(sorted(_const(x) for x in v)) + "}"
    if isinstance(v, (tuple, list)):
        return "(" + ",".join(_const(x) for x in v) + ")"
    if isinstance(v, dict):
        return "{" + ",".join(f"{_const(k)}:{_const(x)}" for k, x in sorted(v.items())) + "}"
    if v is None or v is Ellipsis or isinstance(v, (str, bytes, int, float, complex, bool)):
        return repr(v)
    raise TypeError(f"not a plain value: {type(v).__name__}")


_SOURCES: "weakref.WeakKeyDictionary[type, tuple]" = None  # type: ignore[assignment]


def _class_source_memo(cls) -> tuple[str, bytes]:
    """:func:`class_source`, kept per class until its module file changes (getsource parses
    the whole file: a sweep asks for every cell)."""
    global _SOURCES
    import os
    import weakref
    if _SOURCES is None:
        _SOURCES = weakref.WeakKeyDictionary()
    f = getattr(sys.modules.get(cls.__module__), "__file__", None)
    try:
        st = os.stat(f) if f else None
        stamp = (st.st_mtime_ns, st.st_size) if st else None
    except OSError:
        stamp = None
    hit = _SOURCES.get(cls)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    out = class_source(cls)
    _SOURCES[cls] = (stamp, out)
    return out


def digest(policy) -> str:
    """sha256 of the code and the parameters of ``policy``: the code of its class and of
    every base class outside the standard library (see :func:`class_source`), and its
    parameters, and what ``policy.inputs_digest()`` returns if it has one (the data a policy
    reads from a file, e.g. Gittins's distribution). Editing a policy's class changes it; so
    does any other parameter value, or a changed input file."""
    cls = type(policy)
    h = hashlib.sha256()
    for c in cls.__mro__:
        if _outside_stdlib(c):
            kind, blob = _class_source_memo(c)
            h.update(f"{c.__module__}:{c.__qualname__}:{kind}\0".encode() + blob + b"\0")
    h.update(json.dumps(params(policy), sort_keys=True, default=repr).encode())
    inputs = getattr(policy, "inputs_digest", None)
    if callable(inputs) and not isinstance(policy, type):
        h.update(b"\0inputs\0" + str(inputs()).encode())
    return h.hexdigest()


def ship_by_value(policy) -> None:  # a policy object or class
    """Make cloudpickle (and so Dask) send the policy's class by value, not by reference,
    when its module may not be importable where it runs (a module outside the package that
    is not installed, e.g. a file beside a notebook). ``__main__`` is sent by value anyway."""
    import cloudpickle
    cls = policy if isinstance(policy, type) else type(policy)
    for c in cls.__mro__:
        mod = sys.modules.get(c.__module__)
        if mod is None or c.__module__ == "__main__" or c.__module__.split(".")[0] == "fitgpp" \
                or not _outside_stdlib(c) or "site-packages" in Path(getattr(mod, "__file__", "")
                                                                     or "/").parts:
            continue
        cloudpickle.register_pickle_by_value(mod)
