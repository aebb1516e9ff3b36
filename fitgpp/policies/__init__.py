"""Scheduling policies, one module each; :data:`POLICIES` is the registry.

Adding a policy: write one module with a frozen dataclass that has ``name``,
``bind``, ``schedule`` (or subclass :class:`TwoQueuePolicy` and write
``choose``), then add one line below.
"""

from __future__ import annotations

from .base import PolicyError, TwoQueuePolicy, params_of
from .fifo import Fifo
from .fitgpp import FitGpp
from .lrtp import Lrtp
from .prio import Prio
from .rand import Rand

POLICIES = {
    "fifo": Fifo,
    "prio": Prio,
    "fitgpp": FitGpp,
    "lrtp": Lrtp,
    "rand": Rand,
}


def make_policy(name: str, **params):
    """Build a policy by registry name; unknown names or parameters raise PolicyError."""
    try:
        cls = POLICIES[name.lower()]
    except (KeyError, AttributeError):
        raise PolicyError(f"unknown policy {name!r}; choose one of {', '.join(POLICIES)}") from None
    allowed = set(params_of(cls()))
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise PolicyError(f"policy {name!r} takes no parameter(s) {', '.join(unknown)}"
                          f" (it takes: {', '.join(sorted(allowed)) or 'none'})")
    return cls(**params)


__all__ = ["POLICIES", "Fifo", "FitGpp", "Lrtp", "PolicyError", "Prio", "Rand",
           "TwoQueuePolicy", "make_policy", "params_of"]
