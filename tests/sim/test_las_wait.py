"""LAS's waiting lists by GPU demand give back one queue's jobs in queue order, as a plain
list kept the old way would (preempted jobs in front, in their order; others at the tail;
a started job gone), whatever the mix of demands and however many jobs came and went."""

import heapq
import random

import pytest

from fitgpp.sim.policies.las_wait import WaitQueues
from fitgpp.sim.states import STOPPING, WAITING


def _in_order(wq, q):
    heads, out = wq.visit(q, 8), []
    while heads:
        out.append(heads[0][2])
        wq.advance(heads)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_order_matches_a_plain_list(seed):
    rng = random.Random(seed)
    n, k = 400, 3
    dg = [rng.choice([0, 1, 2, 4, 8]) for _ in range(n)]
    wq = WaitQueues(dg, k)
    plain = [[] for _ in range(k)]
    where = {}
    free = list(range(n))
    rng.shuffle(free)
    for _ in range(1500):
        op = rng.random()
        if op < 0.4 and free:  # one joins a tail
            i, q = free.pop(), rng.randrange(k)
            wq.push_back(q, i)
            plain[q].append(i)
            where[i] = q
        elif op < 0.55 and free:  # a few preempted at once go in front, in their order
            q = rng.randrange(k)
            jobs = [free.pop() for _ in range(min(len(free), rng.randint(1, 4)))]
            wq.push_front(q, jobs)
            plain[q][:0] = jobs
            where.update(dict.fromkeys(jobs, q))
        elif where:  # one starts (leaves its queue)
            i = rng.choice(sorted(where))
            q = where.pop(i)
            wq.remove(q, i)
            plain[q].remove(i)
            free.append(i)
        for q in range(k):
            assert _in_order(wq, q) == plain[q]


def test_a_demand_dropped_whole_and_any_waiting():
    wq = WaitQueues([1, 8, 1, 8, 2], 1)
    for i in range(5):
        wq.push_back(0, i)
    heads, seen = wq.visit(0, 8), []
    while heads:
        _, c, i, _ = heads[0]
        if wq.gpu[c] > 2:
            heapq.heappop(heads)  # as a plan does once no node has room for 8 GPUs
            continue
        seen.append(i)
        wq.advance(heads)
    assert seen == [0, 2, 4]
    heads = wq.visit(0, 1)  # a plan with at most one GPU on a node sees only 1-GPU jobs
    assert sorted(h[2] for h in heads) == [0]
    state = [STOPPING] * 5
    assert not wq.any_waiting(0, state)
    state[3] = WAITING
    assert wq.any_waiting(0, state)
