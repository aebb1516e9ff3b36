"""How a parameter is named on screen and in print, read by the panels, the workbench, chart
titles and the sentences of findings. Two declarations, one per kind, never repeated: the
workload knobs and size dimensions in :data:`NAMES` (words, display unit and scale), a policy's
fields in their own ``field(metadata=...)`` (``label``, ``units``, ``short``; FitGpp's ``s`` is
"threshold s", ``max_preemptions`` "P (max preemptions)", short ``P``).

    title("restart_overhead")          # 'restart cost (min)'   (a control, an axis)
    shown("restart_overhead", 600.0)   # '10'                   (a value in the display unit)
    phrase("restart_overhead", 600.0)  # 'restart cost 10 min'  (a title, a sentence)
    phrase("n_jobs", 3000)             # '3,000 jobs'
    stored("restart_overhead", "10")   # 600.0                  (what a user types, stored)

A policy field is looked up in the ``specs`` given (policy classes, names, objects; default:
the registered policies), the first that has it; a dimension found nowhere goes by its own name.
"""

from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass

import numpy as np

from fitgpp.errors import FitgppError

__all__ = ["NAMES", "Name", "phrase", "short", "shown", "stored", "title"]


@dataclass(frozen=True)
class Name:
    """``label``: the words; ``unit``: the display unit ("" for none); ``scale``: stored
    value per display unit (600 s at ``scale`` 60 shows as 10 min); ``short``: the name in
    a configuration's label (``P=3``); ``noun``: the value reads before it ("3,000 jobs")."""

    label: str
    unit: str = ""
    scale: float = 1.0
    short: str | None = None
    noun: bool = False


#: The workload knobs and size dimensions (policy fields declare their own names).
NAMES: dict[str, Name] = {
    "n_jobs": Name("jobs", noun=True),
    "load": Name("load"),
    "te_fraction": Name("TE share"),
    "grace_scale": Name("grace scale"),
    "grace": Name("grace-period distribution"),
    "restart_overhead": Name("restart cost", "min", 60.0),
    "restart_sigma": Name("restart-cost spread"),
    "gang_fraction": Name("gang share"),
    "gang_tasks": Name("largest gang", "tasks"),
    "be_8gpu_share": Name("8-GPU share of BE jobs"),
    "model": Name("workload model"),
    "workload": Name("workload"),
    "policy": Name("policy"),
    "seed": Name("seed"),
    "n_seeds": Name("seeds", noun=True),
}


#: Column names that stand for a policy field in tables (``P`` for ``max_preemptions``).
ALIASES = {"P": "max_preemptions"}


@functools.lru_cache(maxsize=256)
def _registered(dim: str) -> Name | None:
    from fitgpp.sim.policies import POLICIES
    return _declared(dim, tuple(POLICIES.values()))


def _declared(dim: str, specs=()) -> Name | None:
    """The name a policy field declares in its metadata (first of ``specs`` that has it;
    no ``specs``: the registered policies)."""
    from fitgpp.sim.policies import registry
    if not specs:
        return _registered(dim)
    for spec in specs:
        try:
            fields = registry.declared(spec)
        except FitgppError:  # not a policy spec fitgpp can resolve: ask the next one
            continue
        if dim not in fields:
            continue
        meta = registry.metadata(spec, dim)
        unit = str(meta.get("units", ""))
        return Name(str(meta.get("label", dim)), "" if unit in ("", "1") else unit,
                    short=meta.get("short"))
    return None


def name(dim: str, specs=()) -> Name:
    """The :class:`Name` of dimension ``dim`` (a policy field: as ``specs`` declare it)."""
    dim = ALIASES.get(dim, dim)
    return NAMES.get(dim) or _declared(dim, specs) or Name(dim)


def title(dim: str, specs=()) -> str:
    """A control's description or an axis title: ``restart cost (min)``, ``threshold s``."""
    n = name(dim, specs)
    return f"{n.label} ({n.unit})" if n.unit else n.label


def short(dim: str, specs=()) -> str:
    """The name in a configuration's label: ``P`` for ``max_preemptions``, else its own."""
    return name(dim, specs).short or dim


def shown(dim: str, value, specs=()) -> str:
    """``value`` (as stored) in the display unit: numbers by ``:g``, thousands grouped."""
    n = name(dim, specs)
    if isinstance(value, (list, tuple)):     # LAS's thresholds: 3250/7200
        return "/".join(f"{float(x) / n.scale:g}" if isinstance(x, numbers.Real) else str(x)
                        for x in value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return str(value)
    v = float(value) / n.scale
    return f"{v:,.0f}" if abs(v) >= 1000 and float(v).is_integer() else f"{v:g}"


def phrase(dim: str, value, specs=()) -> str:
    """The dimension at ``value`` in words: ``restart cost 10 min``, ``3,000 jobs``,
    ``load 0.9``; a policy field with a short name as in labels: ``s=4``, ``P=3``."""
    n = name(dim, specs)
    v = shown(dim, value, specs)
    if n.short:
        return f"{n.short}={v}" + (f" {n.unit}" if n.unit else "")
    if n.noun:     # "3,000 jobs", "1 seed"
        one = v == "1" and n.label.endswith("s")
        return f"{v} {n.label[:-1] if one else n.label}"
    return f"{n.label} {v}" + (f" {n.unit}" if n.unit else "")


def stored(dim: str, text, specs=()) -> float:
    """What a user typed in the display unit (``"10"`` min), as stored (600.0 s)."""
    n = name(dim, specs)
    try:
        v = float(str(text).replace(",", "").strip())
    except ValueError:
        raise ValueError(f"{title(dim, specs)}: {text!r} is not a number") from None
    return v * n.scale
