"""SJF: smallest GPU demand first, preemptive; Tiresias's ``sjf``.

Not in the FitGpp paper. Despite its name Tiresias's ``sjf`` orders by size, not length:
each step visits every job by GPUs (per task x tasks), ties by ``(submit, job_id)``,
against a plan of the cluster (:mod:`fitgpp.sim.policies.ordered`), so a smaller job that
arrives preempts larger running BE jobs whose room it needs (a running TE job is never
preempted). It knows only demands. Keys never change, so Tiresias's stable re-sort at
each event gives the same order: there is no separate Tiresias mode.
"""

from __future__ import annotations

from dataclasses import dataclass

from fitgpp.sim.policies.ordered import OrderedPolicy


@dataclass(frozen=True)
class Sjf(OrderedPolicy):
    name = "sjf"
    settles = True  # (see OrderedPolicy._settled)

    def wait_key(self, eng, i):
        return eng.dg[i] * eng.tasks[i]

    def run_key(self, eng, i, t):
        return eng.dg[i] * eng.tasks[i]

    def static(self, eng, i):
        return eng.dg[i] * eng.tasks[i]

    def offset(self, t):
        return 0
