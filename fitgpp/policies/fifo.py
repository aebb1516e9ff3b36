"""FIFO: one queue of every waiting job, no priority, no preemption (the paper's baseline).

Jobs start strictly in ``(submit, job_id)`` order, each on the lowest-id node
with enough free resources; the first job that fits nowhere blocks all behind
it (no backfilling). The lowest-id placement and strict blocking are our
documented reading; the paper names FIFO without further detail.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import first_fit


@dataclass(frozen=True)
class Fifo:
    name = "fifo"
    preempts = False
    max_preemptions = 0

    def bind(self, eng) -> None:
        pass

    def schedule(self, eng, t: int) -> None:
        te, be = eng.waiting_te, eng.waiting_be
        while te or be:
            # TE jobs never requeue, so the first key of waiting_te is the TE head.
            i = min(next(iter(te)), be[0]) if te and be else (next(iter(te)) if te else be[0])
            n = first_fit(eng, i, reserved=False)
            if n < 0:
                return
            eng.start(i, n, t)
