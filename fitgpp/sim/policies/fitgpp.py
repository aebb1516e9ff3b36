"""FitGpp(s, P): preempt the BE jobs that fit the TE job and stop soonest.

From the paper: TE jobs first; when a TE job fits nowhere, preempt BE jobs
whose grace period is short and whose size fits the TE job, each BE job at
most ``P`` times, with a threshold ``s`` (4.0 by default; 8.0 helps when grace
periods are long). Our documented reading (docs/model.md): a BE job ``v`` is
eligible if it runs, was preempted fewer than ``P`` times and
``size(v) <= s * size(te)``; on each node victims are taken in ascending
``(gp, size, job_id)`` until the node's projection covers the demand; the node
with the smallest ``(max gp of victims, number of victims, summed size in
victim order, node id)`` wins. ``gp`` is the grace period in ticks.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

from fitgpp.sim.policies.base import (MAX_PREEMPTIONS, PolicyError, TwoQueuePolicy,
                                      check_max_preemptions)


@dataclass(frozen=True)
class FitGpp(TwoQueuePolicy):
    s: float = field(default=4.0, metadata={
        "min": 0.5, "max": 16.0, "step": 0.5, "units": "1", "label": "threshold s", "short": "s",
        "description": "FitGpp preemption threshold s"})
    max_preemptions: int = field(default=3, metadata=MAX_PREEMPTIONS)
    name = "fitgpp"
    memo_safe = True  # choose() reads only the ledger, never the tick

    def __post_init__(self):
        if isinstance(self.s, bool) or not isinstance(self.s, numbers.Real) \
                or not math.isfinite(self.s) or self.s < 0:
            raise PolicyError(f"fitgpp: s must be a finite number >= 0, got {self.s!r}")
        object.__setattr__(self, "s", float(self.s))
        check_max_preemptions(self)

    @staticmethod
    def victim_key(eng, i):
        return (eng.gp[i], eng.size[i], eng.job_id[i])

    def choose(self, eng, i, t):
        g, c, m = eng.dg[i], eng.dc[i], eng.dm[i]
        limit, cap_p = self.s * eng.size[i], self.max_preemptions
        fg, fc, fm, sg, sc, sm = eng.free_g, eng.free_c, eng.free_m, eng.stop_g, eng.stop_c, eng.stop_m
        rg, rc, rm = eng.res_g, eng.res_c, eng.res_m
        dg, dc, dm, size, npre = eng.dg, eng.dc, eng.dm, eng.size, eng.preemptions
        best = best_key = None
        for n in range(eng.n_nodes):
            pg, pc, pm = fg[n] + sg[n] - rg[n], fc[n] + sc[n] - rc[n], fm[n] + sm[n] - rm[n]
            if pg >= g and pc >= c and pm >= m:
                return n, []  # key (0, 0, 0, n): nothing beats the lowest such node
            victims = []
            for (gp, vsize, _), v in eng.running_be[n]:
                if npre[v] >= cap_p or vsize > limit:
                    continue
                victims.append(v)
                if best_key is not None and (gp, len(victims)) > best_key[:2]:
                    break  # max gp and count only grow along the prefix
                pg, pc, pm = pg + dg[v], pc + dc[v], pm + dm[v]
                if pg >= g and pc >= c and pm >= m:
                    key = (gp, len(victims), sum(size[x] for x in victims), n)
                    if best_key is None or key < best_key:
                        best, best_key = (n, victims), key
                    break
        return best
