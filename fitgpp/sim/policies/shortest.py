"""SRTF: shortest remaining time first, Tiresias's ``shortest`` (an oracle: it reads ``duration``).

Not in the FitGpp paper; the lower bound on latency every peer ships (Tiresias
``shortest``, Blox and Lucid ``srtf``). Class-neutral, except that a running TE job is
never preempted. A job's remaining time is the ticks it still needs if it runs from now
on: ``end - t`` while it runs (a reload included), its work left (plus its reload if it
was preempted, ``restart_overhead``) while it waits. No real scheduler knows it: the
policy reads each job's ``duration``, which is what makes it an oracle.

Each step visits every job by remaining time, ties by ``(submit, job_id)``, against a
plan of the cluster (:mod:`fitgpp.sim.policies.ordered`): a job that fits what the jobs ahead
of it leave runs, a running BE job that does not is preempted. ``mode="tiresias"``
(opt-in; its old name ``ties`` is a deprecated alias) orders as Tiresias's simulator does:
the list is re-sorted (stably, by remaining time alone) only at an arrival or a finish, so
tied jobs keep their previous order.
"""

from __future__ import annotations

from dataclasses import dataclass

from fitgpp.sim.engine import RUNNING
from fitgpp.sim.policies.modes import Mode, mode_field, renamed
from fitgpp.sim.policies.ordered import OrderedPolicy

#: What ``mode="tiresias"`` does for SRTF and SRSF.
TIES = "ties keep their order: the list is re-sorted stably at arrivals and finishes only"


def left(eng, i: int) -> int:
    """Ticks a job that does not run needs once started: work left (``rem``: it has done
    ``work - rem``), plus a reload if it was preempted."""
    return eng.rem[i] + (eng.ro[i] if eng.preemptions[i] else 0)


@renamed(ties="mode")
@dataclass(frozen=True)
class Shortest(OrderedPolicy):
    mode: Mode = mode_field(TIES)
    name = "shortest"
    settles = True  # (see OrderedPolicy._settled)

    def __post_init__(self):
        self._check_mode()

    def wait_key(self, eng, i):
        return eng.rem[i] + (eng.ro[i] if eng.preemptions[i] else 0)  # left(eng, i), inlined

    def run_key(self, eng, i, t):
        return eng.end[i] - t

    def static(self, eng, i):
        return eng.end[i]

    def offset(self, t):
        return t

    def list_keys(self, eng, t: int, order: list) -> list:
        """``run_key`` or ``wait_key`` of each job of ``order`` by its state, inlined (a job
        that does not run has done ``work - rem``: ``left`` is ``rem`` plus its reload)."""
        state, end, rem, ro, pre = eng.state, eng.end, eng.rem, eng.ro, eng.preemptions
        return [end[i] - t if state[i] == RUNNING else rem[i] + (ro[i] if pre[i] else 0)
                for i in order]
