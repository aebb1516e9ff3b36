"""LAS's waiting lists, split by GPU demand so a plan passes over a class at once.

Each LAS queue's *other* jobs (waiting or stopping, see :mod:`.las_plan`) in queue order.
A plan visits them in order and, once it knows no node has more than ``b`` GPUs left, passes
over every job asking for more; with thousands waiting it spent most of its time passing
over them one by one (a heavy 100k-job run: 40 % of LAS's time, growing with the queue).
Here each queue keeps one deque per distinct GPU demand, of ``(key, job)`` in queue order,
keys ordering the whole queue: a job preempted now goes in front (keys counting down from
the smallest ever given), any other joins the tail (keys counting up). A plan merges the
deques of the demands it can still place by key (:meth:`WaitQueues.visit`) and drops a
demand's deque whole. A job that leaves (it started) keeps its entry until the deque is
compacted; ``key[job]`` tells the live entry (None: in no list).
"""

from __future__ import annotations

import heapq
from collections import deque

from fitgpp.sim.states import WAITING


class WaitQueues:
    def __init__(self, dg, k: int):
        values = sorted(set(dg))
        #: GPU demand of each class, and each job's class
        self.gpu = values
        index = {g: c for c, g in enumerate(values)}
        self.cls = [index[g] for g in dg]
        self.lists = [[deque() for _ in values] for _ in range(k)]
        self.live = [[0] * len(values) for _ in range(k)]
        self.key = [None] * len(dg)
        self.lo, self.hi = 0, 0

    def push_back(self, q: int, i: int) -> None:
        """Job ``i`` joins the tail of queue ``q``."""
        self.hi += 1
        self._add(q, i, self.hi, deque.append)

    def push_front(self, q: int, jobs: list) -> None:
        """``jobs`` (in this order) go ahead of every job of queue ``q``."""
        self.lo -= len(jobs)
        for k in range(len(jobs) - 1, -1, -1):
            self._add(q, jobs[k], self.lo + k, deque.appendleft)

    def _add(self, q: int, i: int, key: int, put) -> None:
        c = self.cls[i]
        self.key[i] = key
        put(self.lists[q][c], (key, i))
        self.live[q][c] += 1

    def remove(self, q: int, i: int) -> None:
        """Job ``i`` (in queue ``q``) leaves its list. Left entries at the ends go at once
        (jobs mostly start from the front, which every plan reads); the list is compacted
        once a third of it is left entries elsewhere (amortized O(1) a removal)."""
        c, key = self.cls[i], self.key
        key[i] = None
        live = self.live[q][c] = self.live[q][c] - 1
        dq = self.lists[q][c]
        while dq and key[dq[0][1]] != dq[0][0]:
            dq.popleft()
        while dq and key[dq[-1][1]] != dq[-1][0]:
            dq.pop()
        if len(dq) > live + (live >> 1) + 16:
            self.lists[q][c] = deque(e for e in dq if key[e[1]] == e[0])

    def any_waiting(self, q: int, state) -> bool:
        """Whether some job of queue ``q`` waits (is not stopping)."""
        key = self.key
        for dq in self.lists[q]:
            for k, i in dq:
                if key[i] == k and state[i] == WAITING:
                    return True
        return False

    def visit(self, q: int, most: int):
        """The jobs of queue ``q`` asking for at most ``most`` GPUs, in queue order, as a
        heap of ``(key, class, job, rest)`` heads, one per class with a job: the caller pops
        the least, and either drops the class or moves on with :meth:`advance`."""
        heads = []
        key, live = self.key, self.live[q]
        for c, dq in enumerate(self.lists[q]):
            if self.gpu[c] > most:
                break  # (classes by GPUs, ascending)
            if live[c]:
                it = iter(dq)
                for k, i in it:
                    if key[i] == k:
                        heads.append((k, c, i, it))
                        break
        heapq.heapify(heads)
        return heads

    def advance(self, heads: list) -> None:
        """Replace the least head by the next job of its class (or drop the class). The
        plan (``las_plan._place_waiting``) does the same inline, to save a call per job;
        this is the step as tests and readers use it."""
        _, c, _, it = heads[0]
        key = self.key
        for k, i in it:
            if key[i] == k:
                heapq.heapreplace(heads, (k, c, i, it))
                return
        heapq.heappop(heads)
