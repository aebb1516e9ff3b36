"""FIFO: one queue of every waiting job, no priority, no preemption (the paper's baseline).

Jobs start strictly in ``(submit, job_id)`` order, each on the lowest-id node
with enough free resources; the first job that fits nowhere blocks all behind
it (no backfilling). The lowest-id placement and strict blocking are our
documented reading; the paper names FIFO without further detail.
"""

from __future__ import annotations

from dataclasses import dataclass

from fitgpp.sim.engine import WAITING
from fitgpp.sim.policies.base import first_fit, first_fit_nodes


@dataclass(frozen=True)
class Fifo:
    name = "fifo"
    preempts = False
    max_preemptions = 0

    def bind(self, eng) -> None:
        pass

    def schedule(self, eng, t: int) -> None:
        # Jobs start strictly in index order, which is (submit, job_id) order, so the head
        # of the queue is the first index not yet started (if it has arrived).
        memo = eng.scratch
        i = memo.get("fifo_head", 0)
        state, tasks = eng.state, eng.tasks
        while i < eng.n and state[i] == WAITING:
            if memo.get("fifo_blocked") == (i, eng.epoch):
                break  # same head, nothing finished since it last failed
            if tasks[i] == 1:
                n = first_fit(eng, i, reserved=False)
                n = None if n < 0 else n
            else:
                n = first_fit_nodes(eng, i, reserved=False)
            if n is None:
                memo["fifo_blocked"] = (i, eng.epoch)
                break
            eng.start(i, n, t)
            i += 1
        memo["fifo_head"] = i
