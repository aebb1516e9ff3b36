"""RAND(P, seed): preempt randomly chosen BE jobs (paper baseline).

Our documented reading (docs/model.md) and draw protocol, so that a run is fixed by
its seed: eligible BE jobs run and were preempted fewer than ``P`` times. A
node is a candidate if its projection plus all its eligible jobs covers the
demand (true whatever the order). If a candidate needs no victim, the lowest
such node wins and nothing is drawn. Otherwise, from
``numpy.random.default_rng(seed)``: ``k = rng.integers(len(candidates))``
picks the node (candidates in ascending id), then
``rng.permutation(len(eligible))`` orders that node's eligible jobs (listed
by ascending job id), and the shortest covering prefix is preempted. Draws
happen only when a preemption happens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fitgpp.sim.policies.base import (MAX_PREEMPTIONS, TwoQueuePolicy, check_int,
                                      check_max_preemptions, projected, shortest_prefix)


@dataclass(frozen=True)
class Rand(TwoQueuePolicy):
    max_preemptions: int = field(default=3, metadata=MAX_PREEMPTIONS)
    seed: int = 0
    name = "rand"
    memo_safe = True  # choose() reads only the ledger, never the tick

    def __post_init__(self):
        check_max_preemptions(self)
        check_int(self, "seed", 0)

    def bind(self, eng):
        eng.rng = np.random.default_rng(self.seed)

    @staticmethod
    def victim_key(eng, i):
        return eng.job_id[i]

    def choose(self, eng, i, t):
        g, c, m = eng.dg[i], eng.dc[i], eng.dm[i]
        cap_p, npre = self.max_preemptions, eng.preemptions
        cands = []
        for n in range(eng.n_nodes):
            pg, pc, pm = projected(eng, n)
            if pg >= g and pc >= c and pm >= m:
                return n, []
            eligible = [v for _, v in eng.running_be[n] if npre[v] < cap_p]
            for v in eligible:
                pg, pc, pm = pg + eng.dg[v], pc + eng.dc[v], pm + eng.dm[v]
            if pg >= g and pc >= c and pm >= m:
                cands.append((n, eligible))
        if not cands:
            return None
        n, eligible = cands[int(eng.rng.integers(len(cands)))]
        order = eng.rng.permutation(len(eligible))
        return n, shortest_prefix(eng, i, n, [eligible[k] for k in order])
