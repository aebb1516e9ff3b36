"""One field, ``mode``, for "the exact rule, or Tiresias's simulator's behaviour", and the
deprecated names it replaced.

Every policy that can reproduce Tiresias's simulator job for job (LAS, SRTF, SRSF, LPJF,
Gittins; docs/model.md) has the same field: ``mode="exact"`` (the default, the rule as
docs/model.md states it) or ``mode="tiresias"`` (what Tiresias's simulator does where it
departs from that rule). LAS called it ``demotion``, SRTF and SRSF ``ties``, LPJF ``scan``:
those names are deprecated aliases, accepted with a :class:`FieldRenamed` warning (a
:class:`DeprecationWarning`) naming ``mode``, by the class itself (``Las(demotion=...)``)
and by everything that builds a policy from names (:func:`~.registry.resolve`, the CLI's
``--param``, a sweep's policy table, a result's attrs on rerun). A policy declares the names
it no longer uses with :func:`renamed`; it records only the new one.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from dataclasses import field
from pathlib import Path
from typing import Literal

from fitgpp.sim.engine import PolicyError

#: The values of ``mode``.
MODES = ("exact", "tiresias")
#: Its annotation: a choice of these strings (controls and ``--param`` read it as a string).
Mode = Literal["exact", "tiresias"]

_PACKAGE = str(Path(__file__).resolve().parents[2]) + os.sep  # the fitgpp package's folder


class FieldRenamed(DeprecationWarning):
    """A policy parameter was given under a name it no longer has; the message names the new
    one. The value is used as given."""


def mode_field(tiresias: str):
    """The ``mode`` field of a policy: default ``"exact"``; ``tiresias`` says what
    ``"tiresias"`` does for this policy (its control's tooltip)."""
    return field(default="exact", metadata={
        "choices": MODES,
        "description": f"'exact' (the rule of docs/model.md) or 'tiresias' ({tiresias})"})


def check_mode(policy) -> None:
    """A :class:`PolicyError` unless ``policy.mode`` is one of :data:`MODES`."""
    m = policy.mode
    if not isinstance(m, str) or m not in MODES:
        raise PolicyError(f"{policy.name}: mode must be 'exact' or 'tiresias', got {m!r}"[:200])


def renamed(**old_to_new):
    """Class decorator (outside ``@dataclass``): the constructor also takes each old field
    name, with a :class:`FieldRenamed` warning, as the new one. The names are kept in the
    class's ``renamed_fields`` for :func:`current_names`."""
    def wrap(cls):
        init = cls.__init__

        @functools.wraps(init)
        def __init__(self, *args, **kw):
            init(self, *args, **current_names(type(self), kw))

        cls.__init__ = __init__
        cls.renamed_fields = dict(old_to_new)
        return cls
    return wrap


def current_name(cls, name: str, where: str = "") -> str:
    """``name``, or the field it was renamed to (with a :class:`FieldRenamed` warning that
    says so, prefixed by ``where``)."""
    new = (getattr(cls, "renamed_fields", None) or {}).get(name)
    if new is None:
        return name
    label = getattr(cls, "name", None) or cls.__qualname__
    warnings.warn(f"{where}{label}: parameter {name!r} is deprecated; use {new!r} "
                  f"(the same values: {new}=...)", FieldRenamed, stacklevel=_outside())
    return new


def current_names(cls, params: dict, where: str = "") -> dict:
    """``params`` with every deprecated name of ``cls`` replaced by the current one (a
    :class:`FieldRenamed` warning for each); both names given is a :class:`PolicyError`."""
    if not getattr(cls, "renamed_fields", None) or not any(k in cls.renamed_fields
                                                           for k in params):
        return params
    out = {}
    for k, v in params.items():
        new = current_name(cls, k, where)
        if new in out or (new != k and new in params):
            raise PolicyError(f"{where}{getattr(cls, 'name', cls.__qualname__)}: {k!r} is the "
                              f"old name of {new!r}; give {new!r} only")
        out[new] = v
    return out


def _outside() -> int:
    """The ``stacklevel`` of the first caller outside the package (a notebook cell, a script,
    a test), so that a warning names the line that used the old name."""
    f, level = sys._getframe(1), 1
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE):
        f, level = f.f_back, level + 1
    return level
