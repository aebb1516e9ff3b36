"""LPJF: longest pending first, without preemption; Tiresias's ``lpjf``.

Not in the FitGpp paper. Waiting jobs go by pending time, longest first, each on the
lowest-id node(s) with enough free resources; the first that fits nowhere blocks the ones
behind it (Tiresias stops there), and no job is preempted. A job waits only once (nothing
preempts it), so its pending time at tick ``t`` is ``t - submit``, and "longest pending
first" is ``(submit, job_id)`` order: with ``mode="exact"`` (the default) LPJF is FIFO
and runs FIFO's step. It knows only what has arrived.

``mode="tiresias"`` (opt-in; its old name ``scan`` is a deprecated alias) does what
Tiresias's simulator does: it removes a started job from the list it is walking, so the job right behind each started one is passed over
at that event, and it schedules only at its events (a tick where a job arrives or
finishes). (Its ``pending_time`` is never updated, a misspelt key, so its stable sort
keeps arrival order, which is ``(submit, job_id)`` order as here.)
"""

from __future__ import annotations

from dataclasses import dataclass

from fitgpp.sim.policies.base import first_fit, first_fit_nodes
from fitgpp.sim.policies.fifo import StrictFifo
from fitgpp.sim.policies.modes import Mode, check_mode, mode_field, renamed


@renamed(scan="mode")
@dataclass(frozen=True)
class Lpjf(StrictFifo):
    mode: Mode = mode_field("the job behind each started one is passed over at that event, "
                            "as in Tiresias")
    name = "lpjf"

    def __post_init__(self):
        check_mode(self)

    def bind(self, eng) -> None:
        eng.scratch["lpjf"] = {"pending": [], "arrived": 0, "done": 0}

    def schedule(self, eng, t: int) -> None:
        if self.mode == "exact":
            return super().schedule(eng, t)
        s = eng.scratch["lpjf"]
        k0 = k = s["arrived"]
        while k < eng.n and eng.submit[k] <= t:
            k += 1
        event = k != k0 or eng.n_done != s["done"]
        s["arrived"], s["done"] = k, eng.n_done
        pending = s["pending"]
        pending.extend(range(k0, k))
        if not event:
            return  # Tiresias schedules at its events only
        p = 0
        while p < len(pending):
            i = pending[p]
            n = first_fit(eng, i, reserved=False) if eng.tasks[i] == 1 else \
                first_fit_nodes(eng, i, reserved=False)
            if n is None or n == -1:
                break
            eng.start(i, n, t)
            del pending[p]
            p += 1  # the job now at p, right behind the started one, is passed over
