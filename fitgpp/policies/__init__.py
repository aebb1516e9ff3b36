"""Scheduling policies, one module each; :data:`POLICIES` is the registry.

Adding a policy: write one module with a frozen dataclass that has ``name``,
``bind``, ``schedule`` (or subclass :class:`TwoQueuePolicy` and write
``choose``), then add one line below. A policy need not be registered to be
used: everything that takes a policy also takes the object, its class, or
``"module:Class"`` (see :mod:`fitgpp.policies.registry`).
"""

from __future__ import annotations

from .base import PolicyError, TwoQueuePolicy, params_of
from .fifo import Fifo
from .fitgpp import FitGpp
from .las import Las
from .lrtp import Lrtp
from .prio import Prio
from .rand import Rand

POLICIES = {
    "fifo": Fifo,
    "prio": Prio,
    "fitgpp": FitGpp,
    "lrtp": Lrtp,
    "rand": Rand,
    "las": Las,
}


def make_policy(spec, **params):
    """Build a policy from a registry name, ``"module:Class"``, a class or an object
    (see :func:`fitgpp.policies.registry.resolve`); bad names or parameters raise PolicyError."""
    from .registry import resolve
    return resolve(spec, **params)


__all__ = ["POLICIES", "Fifo", "FitGpp", "Las", "Lrtp", "PolicyError", "Prio", "Rand",
           "TwoQueuePolicy", "make_policy", "params_of"]
