"""SRSF: shortest remaining service (GPU-time) first, Tiresias's ``shortest-gpu`` (an oracle).

As :mod:`~fitgpp.sim.policies.shortest`, with each job's remaining time multiplied by its
GPUs (per task x tasks): the remaining GPU-ticks it needs. It reads ``duration``, so it is
an oracle. Ties by ``(submit, job_id)``; ``mode="tiresias"`` as for SRTF (its old name
``ties`` is a deprecated alias).
"""

from __future__ import annotations

from dataclasses import dataclass

from fitgpp.sim.policies.ordered import OrderedPolicy
from fitgpp.sim.engine import RUNNING
from fitgpp.sim.policies.modes import Mode, mode_field, renamed
from fitgpp.sim.policies.shortest import TIES, left


@renamed(ties="mode")
@dataclass(frozen=True)
class ShortestGpu(OrderedPolicy):
    mode: Mode = mode_field(TIES)
    name = "shortest-gpu"
    settles = True  # (see OrderedPolicy._settled)

    def __post_init__(self):
        self._check_mode()

    def wait_key(self, eng, i):
        return eng.dg[i] * eng.tasks[i] * left(eng, i)

    def run_key(self, eng, i, t):
        return eng.dg[i] * eng.tasks[i] * (eng.end[i] - t)

    def list_keys(self, eng, t: int, order: list) -> list:
        """``run_key`` or ``wait_key`` of each job of ``order`` by its state, inlined."""
        state, end, rem, ro, pre = eng.state, eng.end, eng.rem, eng.ro, eng.preemptions
        dg, tasks = eng.dg, eng.tasks
        return [dg[i] * tasks[i] * (end[i] - t if state[i] == RUNNING
                                    else rem[i] + (ro[i] if pre[i] else 0)) for i in order]

    def linear(self, eng, i):
        gpus = eng.dg[i] * eng.tasks[i]
        return gpus * eng.end[i], gpus
