"""PRIO: TE jobs first, never preempts. Ours, not the paper's.

The two-queue skeleton with the preemption step left out: a TE job that
fits nowhere waits. Set against FitGpp it separates what priority alone gains
from what preemption adds.
"""

from __future__ import annotations

from dataclasses import dataclass

from fitgpp.sim.policies.base import TwoQueuePolicy


@dataclass(frozen=True)
class Prio(TwoQueuePolicy):
    name = "prio"
    memo_safe = True  # choose() reads only the ledger, never the tick
    preempts = False
    max_preemptions = 0
