"""Scheduling policies, one module each; :data:`POLICIES` is the registry.

Adding a policy: write one module with a frozen dataclass that has ``name``,
``bind``, ``schedule`` (or subclass :class:`TwoQueuePolicy` and write
``choose``), then add one line to :data:`POLICIES` in ``builtin.py``. A policy need not
be registered to be used: everything that takes a policy also takes the object, its class, or
``"module:Class"`` (see :mod:`fitgpp.sim.policies.registry`).
"""

from __future__ import annotations

from fitgpp.sim.policies.base import PolicyError, TwoQueuePolicy, params_of
from fitgpp.sim.policies.builtin import (POLICIES, Dlas, Fifo, FitGpp, Gittins, Las, Lpjf,
                                         Lrtp, Prio, Rand, Shortest, ShortestGpu, Sjf)

def make_policy(spec, **params):
    """Build a policy from a registry name, ``"module:Class"``, a class or an object
    (see :func:`fitgpp.sim.policies.registry.resolve`); bad names or parameters raise PolicyError."""
    from fitgpp.sim.policies.registry import resolve
    return resolve(spec, **params)


__all__ = ["POLICIES", "Dlas", "Fifo", "FitGpp", "Gittins", "Las", "Lpjf", "Lrtp", "PolicyError",
           "Prio", "Rand", "Shortest", "ShortestGpu", "Sjf", "TwoQueuePolicy", "make_policy",
           "params_of"]
