"""What identifies a policy's code: :func:`digest` (the sha256 of its class's code, every base
class's outside the standard library, and its parameters), which the sweep cache keys on and a
result records; :func:`class_source`, what it hashes of one class; and :func:`ship_by_value`,
which sends a researcher's class to Dask workers by value. Re-exported by
:mod:`fitgpp.sim.policies.registry`, the names' old home.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path

from fitgpp.sim.policies.base import params_of

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
    h.update(json.dumps(params_of(policy), sort_keys=True, default=repr).encode())
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
