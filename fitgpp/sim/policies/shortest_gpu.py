"""SRSF: shortest remaining service (GPU-time) first, Tiresias's ``shortest-gpu`` (an oracle).

As :mod:`~fitgpp.sim.policies.shortest`, with each job's remaining time multiplied by its
GPUs (per task x tasks): the remaining GPU-ticks it needs. It reads ``duration``, so it is
an oracle. Ties by ``(submit, job_id)``; ``ties="tiresias"`` as for SRTF.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fitgpp.sim.policies.ordered import OrderedPolicy
from fitgpp.sim.policies.shortest import TIES, left, remaining


@dataclass(frozen=True)
class ShortestGpu(OrderedPolicy):
    ties: str = field(default="exact", metadata=TIES)
    name = "shortest-gpu"

    def __post_init__(self):
        self._check_ties()

    def wait_key(self, eng, i):
        return eng.dg[i] * eng.tasks[i] * left(eng, i)

    def run_key(self, eng, i, t):
        return eng.dg[i] * eng.tasks[i] * (eng.end[i] - t)

    def list_key(self, eng, t: int):
        """``run_key`` or ``wait_key`` by state, inlined (``ties="tiresias"`` sorts by it)."""
        gpus = eng.scratch.get("shortest-gpu")
        if gpus is None:  # GPUs per task x tasks of each job, once per run
            gpus = eng.scratch["shortest-gpu"] = [g * k for g, k in zip(eng.dg, eng.tasks)]
        return remaining(eng, t, gpus)

    def linear(self, eng, i):
        gpus = eng.dg[i] * eng.tasks[i]
        return gpus * eng.end[i], gpus
