"""LRTP(P): preempt the BE jobs with the longest remaining time (paper baseline; an oracle).

It reads remaining work, which no real scheduler knows. Our documented
reading (docs/model.md): eligible BE jobs run and were preempted fewer than ``P``
times; on each node victims are taken by descending remaining work (then
job id) until the node's projection covers the demand; a node needing no
victim wins (lowest id), else the node whose first victim has the most
remaining work (then lowest id).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fitgpp.sim.policies.base import (MAX_PREEMPTIONS, TwoQueuePolicy, check_max_preemptions,
                                      projected, shortest_prefix)


@dataclass(frozen=True)
class Lrtp(TwoQueuePolicy):
    max_preemptions: int = field(default=3, metadata=MAX_PREEMPTIONS)
    name = "lrtp"
    memo_safe = True  # choose() reads only the ledger, never the tick

    def __post_init__(self):
        check_max_preemptions(self)

    @staticmethod
    def victim_key(eng, i):
        # remaining = end - t for every running job, so -end orders them by -remaining
        return (-eng.end[i], eng.job_id[i])

    def choose(self, eng, i, t):
        g, c, m = eng.dg[i], eng.dc[i], eng.dm[i]
        cap_p, npre = self.max_preemptions, eng.preemptions
        best = best_end = None
        for n in range(eng.n_nodes):
            pg, pc, pm = projected(eng, n)
            if pg >= g and pc >= c and pm >= m:
                return n, []
            eligible = [v for _, v in eng.running_be[n] if npre[v] < cap_p]
            if not eligible or (best is not None and eng.end[eligible[0]] <= best_end):
                continue  # ties on remaining work go to the lower node id
            victims = shortest_prefix(eng, i, n, eligible)
            if victims is not None:
                best, best_end = (n, victims), eng.end[eligible[0]]
        return best
