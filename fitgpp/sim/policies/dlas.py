"""DLAS(thresholds): LAS on attained *time*, Tiresias's ``dlas`` (``dlas-gpu`` is :mod:`las`).

Not in the FitGpp paper. As LAS (docs/model.md, "LAS, exactly"), with a job's service
measured in seconds of progress (ticks of progress x tick), whatever its GPUs, and
thresholds in seconds (default ``(3250, 7200)``, Tiresias's queue limits). It knows what
each job has run, never its duration. Class-neutral, except that a running TE job is never
preempted.

It runs the single-list step (:mod:`fitgpp.sim.policies.ordered`) with LAS's queue order as the
key: ``(queue, section, place)``, section 0 for a queue's running jobs, 1 for its waiting
ones, 2 for a job demoted at this tick (visited after the queue's waiting jobs); ``place``
is a counter that reproduces LAS's queue order: an arrival, a demoted job and a started
job go to the tail of their section, a job preempted now to the head of its queue's
waiting jobs (after the step a demoted job that still runs joins the running ones after
those started). The key is kept as one number (:data:`SPAN`), which compares faster than a
tuple. Tiresias checks demotion at the exact crossing for attained time (its
``queue_limit - executed_time``), so the crossing tick is its rule too: no separate mode.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from fitgpp.sim.engine import RUNNING
from fitgpp.sim.policies.las import Las
from fitgpp.sim.policies.ordered import OrderedPolicy

#: The key ``(queue, section, place)`` as one number, ``(queue * 3 + section) * SPAN +
#: place``: a place (a counter moved by one per arrival, start, demotion or preemption,
#: below 0 for the heads of waiting jobs) stays far inside ``(-SPAN / 2, SPAN / 2)``.
SPAN = 1 << 42


@dataclass(frozen=True)
class Dlas(OrderedPolicy):
    thresholds: tuple = field(default=(3250.0, 7200.0), metadata={
        "units": "s", "description": "DLAS queue thresholds of attained time (seconds)"})
    name = "dlas"
    settles = True  # (see OrderedPolicy._settled)

    def __post_init__(self):
        try:
            th = Las(thresholds=self.thresholds).thresholds  # the same checks as LAS's
        except Exception as exc:
            raise type(exc)(str(exc).replace("las:", "dlas:").replace("GPU-seconds",
                                                                      "seconds")) from None
        object.__setattr__(self, "thresholds", th)

    def bind(self, eng) -> None:
        super().bind(eng)
        eng.scratch["dlas"] = {"level": [0] * eng.n, "sec": [1] * eng.n, "place": [0] * eng.n,
                               "next": 0, "front": 0, "due": [], "due_at": [-1] * eng.n,
                               "demoted": [],
                               # per queue, the ticks of progress that reach its threshold
                               "need": [need(th, eng.tick) for th in self.thresholds]}

    def wait_key(self, eng, i):
        d = eng.scratch["dlas"]
        return (d["level"][i] * 3 + 1) * SPAN + d["place"][i]

    def run_key(self, eng, i, t):
        return self.static(eng, i)

    def static(self, eng, i):
        d = eng.scratch["dlas"]
        return (d["level"][i] * 3 + d["sec"][i]) * SPAN + d["place"][i]

    def _tail(self, d, i: int, sec: int) -> None:
        d["sec"][i], d["place"][i] = sec, d["next"]
        d["next"] += 1

    def prepare(self, eng, s, t, arrivals) -> None:
        d = eng.scratch["dlas"]
        if arrivals:  # to the tail of the first queue's waiting jobs (_tail, inlined)
            nxt, place = d["next"], d["place"]
            for i in arrivals:  # (their section is 1 already)
                place[i] = nxt
                nxt += 1
            d["next"] = nxt
        due = d["due"]
        if not due or due[0][0] > t:
            return  # nothing crosses a threshold now
        due_at, crossing = d["due_at"], []
        while due and due[0][0] <= t:
            c, i = heapq.heappop(due)
            if due_at[i] == c and eng.state[i] == RUNNING:
                crossing.append(i)
        for i in sorted(crossing):  # index order is (submit, job_id) order
            s["later"] = True  # it moves to a later queue: the step may start a job
            due_at[i] = -1
            self._run_remove(s, i)
            while d["level"][i] < len(self.thresholds) and \
                    eng.progress(i, t) * eng.tick >= self.thresholds[d["level"][i]]:
                d["level"][i] += 1
            self._tail(d, i, 2)  # its new queue's tail, after that queue's waiting jobs
            d["demoted"].append(i)
            self._run_add(eng, s, i)
            self._watch(eng, d, i)

    def stopping(self, eng, s, stops) -> None:
        d = eng.scratch["dlas"]
        front = [i for i in stops if d["sec"][i] != 2]  # ahead of the queue's waiting jobs
        d["front"] -= len(front)
        for k, i in enumerate(front):
            d["sec"][i], d["place"][i] = 1, d["front"] + k
        for i in stops:
            if d["sec"][i] == 2:  # demoted now: it stays at the tail
                self._tail(d, i, 1)

    def starting(self, eng, s, i) -> None:
        d = eng.scratch["dlas"]
        self._tail(d, i, 0)
        self._watch(eng, d, i)

    def settle(self, eng, s, t) -> None:
        d = eng.scratch["dlas"]
        if not d["demoted"]:
            return
        for i in d["demoted"]:  # still running: behind the running jobs of its queue
            if eng.state[i] == RUNNING:
                self._run_remove(s, i)
                self._tail(d, i, 0)
                self._run_add(eng, s, i)
        d["demoted"].clear()

    def _watch(self, eng, d, i: int) -> None:
        """Ask for a wake-up at the tick running job ``i`` reaches its queue's threshold."""
        q, needs = d["level"][i], d["need"]
        if q >= len(needs):
            return
        work = eng.work[i]
        if needs[q] >= work:
            return  # it finishes first
        c = eng.end[i] - work + needs[q]
        if c <= eng.now:
            c = eng.now + 1  # (cannot happen: it would have been demoted at this step)
        d["due_at"][i] = c
        heapq.heappush(d["due"], (c, i))
        eng.wake(c)


def need(th: float, tick: float) -> int:
    """Ticks of progress (at least 1) whose seconds reach the threshold ``th``."""
    n = max(1, math.ceil(th / tick))
    while n > 1 and (n - 1) * tick >= th:
        n -= 1
    while n * tick < th:
        n += 1
    return n
