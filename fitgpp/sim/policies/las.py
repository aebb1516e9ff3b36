"""LAS(thresholds): Tiresias's discretized two-dimensional least-attained-service.

Not in the FitGpp paper; Tiresias's ``dlas-gpu`` (Gu et al., NSDI '19), as SPEC.md fixes
it. Class-neutral: it never looks at TE/BE, except that a running TE job is never
preempted. Attained service = GPUs x seconds of progress (reloads are not service).
A job joins the tail of queue 0 when it arrives and moves to the tail of the next queue
at the tick its service reaches its queue's threshold (the engine wakes the policy
then); it never moves back.
``mode="tiresias"`` (opt-in; its old name ``demotion`` is a deprecated alias) demotes as
Tiresias's simulator does instead: only at its events (an arrival, a finish, or the check it
schedules after each event at ``event + ceil((threshold - executed_seconds) / gpus)``), one
queue at a time.

Each step goes over the queues in order, each queue's running jobs (in queue order)
ahead of its waiting ones, against a plan of the cluster that starts from capacity
(what stopping jobs hold counts as free: they are leaving): a job that fits what the jobs kept so far leave is
kept (a waiting one is to start, on the lowest-id node(s) of the plan with room for
it), a running BE job that does not fit is preempted, a running TE job is always kept.
Then the preemptions happen and the jobs to start start on the nodes the plan gave
them; a job whose planned room is still held (by a job in its grace period, or a TE
job kept beyond the plan) waits. So a step's placements are the plan's, and planning
again with nothing changed decides the same: quiet ticks may be jumped over. Our documented reading of "queue order": the step's outcome is the queue's new
order, as in Tiresias: running jobs as visited, then waiting ones as visited, so a job
preempted now goes ahead of the jobs that were already waiting; a job demoted now joins
its new queue's tail and is visited after that queue's waiting jobs, as in Tiresias.
"""

from __future__ import annotations

import heapq
import math
import numbers
from dataclasses import dataclass, field

from fitgpp.sim.engine import DONE, RUNNING, WAITING
from fitgpp.sim.policies.base import PolicyError
from fitgpp.sim.policies.las_plan import add_running, drop_running, new_queues, plan, reorder
from fitgpp.sim.policies.modes import Mode, check_mode, mode_field, renamed


#: Bounds of LAS's parameters: more queues than this only slows every step (Tiresias uses
#: two or three); a threshold beyond this many GPU-seconds (30,000 GPU-years) is never
#: reached, and floats there are too coarse to count ticks of service.
MAX_QUEUES = 64
MAX_THRESHOLD = 1e15


def _short(v) -> str:
    r = repr(v)
    return r if len(r) <= 80 else f"{r[:80]}... ({len(r)} characters)"


@renamed(demotion="mode")
@dataclass(frozen=True)
class Las:
    thresholds: tuple = field(default=(3250.0, 7200.0), metadata={
        "units": "GPU-s", "description": "LAS queue thresholds of attained service"})
    mode: Mode = mode_field("demoted only at dlas-gpu's events and late check")
    name = "las"
    max_preemptions = None  # no limit: a job may be preempted each time it is outranked
    waiting_any_order = True  # it never reads engine.waiting_be: a dict, O(1) per start

    def __post_init__(self):
        th = self.thresholds
        if isinstance(th, (str, bytes)) or not hasattr(th, "__iter__"):
            raise PolicyError(f"las: thresholds must be a list of numbers, got {_short(th)}")
        th = tuple(th)
        if len(th) > MAX_QUEUES - 1:
            raise PolicyError(f"las: at most {MAX_QUEUES - 1} thresholds ({MAX_QUEUES} queues), "
                              f"got {len(th)}")
        ok = all(isinstance(x, numbers.Real) and not isinstance(x, bool)
                 and 0 < x <= MAX_THRESHOLD for x in th)  # (no float(): a huge int overflows)
        if not ok or any(a >= b for a, b in zip(th, th[1:])):
            raise PolicyError("las: thresholds must be increasing numbers > 0 and <= "
                              f"{MAX_THRESHOLD:g} (GPU-seconds), got {_short(self.thresholds)}")
        object.__setattr__(self, "thresholds", tuple(float(x) for x in th))
        check_mode(self)

    def bind(self, eng) -> None:
        s = eng.scratch["las"] = new_queues(eng, len(self.thresholds) + 1)
        s.update({"level": [0] * eng.n, "due": [], "due_at": [-1] * eng.n, "arrived": 0,
                  "min_gpu": min(eng.dg, default=0), "next_check": None, "done": 0,
                  "ends": [], "epoch": eng.epoch, "settled": True})

    def schedule(self, eng, t: int) -> None:
        s = eng.scratch["las"]
        k = s["arrived"]
        while k < eng.n and eng.submit[k] <= t:
            s["waitq"].push_back(0, k)
            k += 1
        arrived = k != s["arrived"]
        s["arrived"] = k
        _finished(eng, s, t)
        tiresias = self.mode == "tiresias"
        if tiresias:
            nc = s["next_check"]
            event = arrived or eng.n_done != s["done"] or (nc is not None and t >= nc)
            s["done"] = eng.n_done
            demoted = event and self._demote_tiresias(eng, s, t)
        else:
            demoted = self._demote(eng, s, t)
        # the plan depends only on the queues and the ledger: with neither changed since a
        # settled step it decides nothing new (see _step)
        if arrived or eng.epoch != s["epoch"] or not s["settled"]:
            self._step(eng, s, t, tiresias)
        elif demoted and not _demoted_only(eng, s):
            self._step(eng, s, t, tiresias)
        if tiresias and event:
            self._next_check(eng, s, t)

    def _step(self, eng, s, t: int, tiresias: bool) -> None:
        """Plan, preempt, start what the plan placed where its room is free, reorder.

        Settled: planning again with nothing changed would decide nothing. It would not if a
        start waits for its room (held) while a job visited after it in its queue started or
        was kept (the new order visits those first), or if a preempted job was released at
        once (no grace period): then look again at the next tick."""
        starts, stops, kept = plan(eng, s)
        level = s["level"]
        for i in stops:
            eng.preempt(i, t)
        started, held, settled = [], set(), True
        fg, fc, fm, rg, rc, rm = eng.free_g, eng.free_c, eng.free_m, eng.res_g, eng.res_c, eng.res_m
        demand = s["demand"]
        for i, nodes in starts:
            g, c, m = demand[i]
            # avail(n) >= demand on each planned node, else its room is still held: it waits
            if len(nodes) == 1:
                n = nodes[0]
                free = fg[n] - rg[n] >= g and fc[n] - rc[n] >= c and fm[n] - rm[n] >= m
            else:
                n = nodes
                free = all(fg[k] - rg[k] >= g and fc[k] - rc[k] >= c and fm[k] - rm[k] >= m
                           for k in nodes)
            if free:
                eng.start(i, n, t)
                heapq.heappush(s["ends"], (eng.end[i], i))
                started.append(i)
                settled = settled and level[i] not in held
                if not tiresias:
                    self._watch(eng, s, i)
            else:
                held.add(level[i])
        settled = settled and not any(kept[q] for q in held) \
            and all(eng.state[i] != WAITING for i in stops)
        reorder(eng, s, started, stops, kept)
        s["epoch"], s["settled"] = eng.epoch, settled
        if not settled:
            eng.wake(t + 1)

    def _demote_tiresias(self, eng, s, t: int) -> bool:
        """At an event (Tiresias's sense): each running job whose service has reached its
        queue's threshold moves one queue down, in (submit, job_id) order."""
        level, last, run = s["level"], len(self.thresholds), s["run"]
        moved = False
        for i in sorted(i for q in range(last) for i in run[q]):
            q = level[i]
            if eng.attained(i, t) >= self.thresholds[q]:
                drop_running(eng, s, q, i)
                level[i] = q + 1
                s["dem"][q + 1].append(i)  # the queue's tail: after its waiting jobs
                moved = True
        return moved

    def _next_check(self, eng, s, t: int) -> None:
        """Tiresias's next demotion check: the earliest, over running jobs not in the last
        queue, of ``event + ceil((threshold - executed_seconds) / gpus)`` (seconds, then ticks
        rounded up); a wake-up then."""
        level, last, tick = s["level"], len(self.thresholds), eng.tick
        best = None
        for q in range(last):
            for i in s["run"][q]:
                gpus = eng.dg[i] * eng.tasks[i]
                if gpus <= 0:
                    continue  # no service: never demoted
                executed = eng.progress(i, t) * tick  # seconds, as Tiresias's executed_time
                sec = t * tick + math.ceil((self.thresholds[level[i]] - executed) / gpus)
                c = max(math.ceil(sec / tick), t + 1)
                if best is None or c < best:
                    best = c
        s["next_check"] = best
        if best is not None:
            eng.wake(best)

    def _watch(self, eng, s, i: int) -> None:
        """Ask for a wake-up at the tick running job ``i`` reaches its queue's threshold."""
        q = s["level"][i]
        rate = eng.dg[i] * eng.tasks[i] * eng.tick  # GPU-seconds per tick of progress
        if q >= len(self.thresholds) or rate <= 0:
            return
        th = self.thresholds[q]
        # progress ticks to reach the threshold
        wake_when_served(eng, s, i, ticks_to_serve(th, lambda n: n * rate, math.ceil(th / rate), 0))

    def _demote(self, eng, s, t: int) -> bool:
        due, due_at, level = s["due"], s["due_at"], s["level"]
        crossing = []
        while due and due[0][0] <= t:
            c, i = heapq.heappop(due)
            if due_at[i] == c and eng.state[i] == RUNNING:
                crossing.append(i)
        moved = False
        for i in sorted(crossing):  # index order is (submit, job_id) order
            due_at[i] = -1
            while level[i] < len(self.thresholds) and \
                    eng.attained(i, t) >= self.thresholds[level[i]]:
                q = level[i]
                if i in s["run"][q]:
                    drop_running(eng, s, q, i)
                else:  # demoted already at this tick
                    s["dem"][q].remove(i)
                level[i] += 1
                s["dem"][level[i]].append(i)  # the queue's tail: after its waiting jobs
                moved = True
            self._watch(eng, s, i)
        return moved


def _demoted_only(eng, s) -> bool:
    """After a settled step, with nothing arrived and nothing freed, jobs were demoted: if
    no job waits in their new queues or ahead of them, the plan keeps them (nothing is
    planned to start before them) and decides what it decided before after them (the
    ledger there is the same): they join the running jobs of their new queues, no plan
    needed. False (nothing done) otherwise."""
    dem, state = s["dem"], eng.state
    last = max(q for q in range(len(dem)) if dem[q])
    for q in range(last + 1):
        if s["waitq"].any_waiting(q, state):
            return False
    for q in range(last + 1):
        for i in dem[q]:
            add_running(eng, s, q, i)
        dem[q].clear()
    return True


def _finished(eng, s, t: int) -> None:
    """Jobs that finished since the last step leave their queue."""
    ends, state, finish, level, run = s["ends"], eng.state, eng.finish, s["level"], s["run"]
    while ends and ends[0][0] <= t:
        e, i = heapq.heappop(ends)
        if state[i] == DONE and finish[i] == e and i in run[level[i]]:
            drop_running(eng, s, level[i], i)


def fits(eng, i: int, n: int) -> bool:
    """avail(n) >= the (per-task) demand of job ``i``."""
    return (eng.free_g[n] - eng.res_g[n] >= eng.dg[i] and eng.free_c[n] - eng.res_c[n] >= eng.dc[i]
            and eng.free_m[n] - eng.res_m[n] >= eng.dm[i])


def ticks_to_serve(amount: float, served, guess: int, least: int) -> int:
    """The fewest ticks ``n >= least`` of progress with ``served(n) >= amount``, found from
    ``guess`` by exact comparison (the float guess can be off by one either way). ``served``
    is how the caller computes service, so the comparison is the caller's to the last bit."""
    need = guess
    while need > least and served(need - 1) >= amount:
        need -= 1
    while served(need) < amount:
        need += 1
    return need


def wake_when_served(eng, s, i: int, need: int) -> None:
    """Ask for a wake-up at the tick running job ``i`` has made ``need`` ticks of progress
    in its run (none if it finishes first), and keep it in ``s["due"]``/``s["due_at"]``."""
    if need >= eng.work[i]:
        return  # it finishes first
    c = eng.end[i] - eng.work[i] + need
    s["due_at"][i] = c
    heapq.heappush(s["due"], (c, i))
    eng.wake(c)
