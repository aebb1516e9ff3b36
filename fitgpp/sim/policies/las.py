"""LAS(thresholds): Tiresias's discretized two-dimensional least-attained-service.

Not in the FitGpp paper; Tiresias's ``dlas-gpu`` (Gu et al., NSDI '19), as SPEC.md fixes
it. Class-neutral: it never looks at TE/BE, except that a running TE job is never
preempted. Attained service = GPUs x seconds of progress (reloads are not service).
A job joins the tail of queue 0 when it arrives and moves to the tail of the next queue
at the tick its service reaches its queue's threshold (the engine wakes the policy
then); it never moves back.
``demotion="tiresias"`` (opt-in) demotes as Tiresias's simulator does instead: only at its
events (an arrival, a finish, or the check it schedules after each event at
``event + ceil((threshold - executed_seconds) / gpus)``), one queue at a time.

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

from fitgpp.sim.engine import RUNNING, WAITING
from fitgpp.sim.policies.base import PolicyError


#: Bounds of LAS's parameters: more queues than this only slows every step (Tiresias uses
#: two or three); a threshold beyond this many GPU-seconds (30,000 GPU-years) is never
#: reached, and floats there are too coarse to count ticks of service.
MAX_QUEUES = 64
MAX_THRESHOLD = 1e15


def _short(v) -> str:
    r = repr(v)
    return r if len(r) <= 80 else f"{r[:80]}... ({len(r)} characters)"


@dataclass(frozen=True)
class Las:
    thresholds: tuple = field(default=(3250.0, 7200.0), metadata={
        "units": "GPU-s", "description": "LAS queue thresholds of attained service"})
    demotion: str = field(default="exact", metadata={
        "description": "when a job is demoted: 'exact' (the tick its service crosses the "
                       "threshold, SPEC) or 'tiresias' (dlas-gpu's late check)"})
    name = "las"
    max_preemptions = None  # no limit: a job may be preempted each time it is outranked

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
        if self.demotion not in ("exact", "tiresias"):
            raise PolicyError("las: demotion must be 'exact' or 'tiresias', "
                              f"got {_short(self.demotion)}")

    def bind(self, eng) -> None:
        k = len(self.thresholds) + 1
        eng.scratch["las"] = {
            "run": [[] for _ in range(k)], "wait": [[] for _ in range(k)],
            "level": [0] * eng.n, "due": [], "due_at": [-1] * eng.n, "arrived": 0,
            "min_gpu": min(eng.dg, default=0), "next_check": None, "done": 0}

    def schedule(self, eng, t: int) -> None:
        s = eng.scratch["las"]
        k = s["arrived"]
        while k < eng.n and eng.submit[k] <= t:
            s["wait"][0].append(k)
            k += 1
        tiresias = self.demotion == "tiresias"
        if tiresias:
            nc = s["next_check"]
            event = (k != s["arrived"] or eng.n_done != s["done"]
                     or (nc is not None and t >= nc))
            s["done"] = eng.n_done
        s["arrived"] = k
        if not tiresias:
            self._demote(eng, s, t)
        elif event:
            self._demote_tiresias(eng, s, t)
        starts, stops = plan(eng, s)
        for i in stops:
            eng.preempt(i, t)
        held = False
        for i, nodes in starts:
            if all(fits(eng, i, n) for n in nodes):  # else its room is still held: it waits
                eng.start(i, nodes[0] if len(nodes) == 1 else nodes, t)
                if not tiresias:
                    self._watch(eng, s, i)
            else:
                held = True
        reorder(eng, s, stops)
        if held:  # the new queue order may plan otherwise next tick: look again then
            eng.wake(t + 1)
        if tiresias and event:
            self._next_check(eng, s, t)

    def _demote_tiresias(self, eng, s, t: int) -> None:
        """At an event (Tiresias's sense): each running job whose service has reached its
        queue's threshold moves one queue down, in (submit, job_id) order."""
        level, last = s["level"], len(self.thresholds)
        for i in sorted(i for q in range(last) for i in s["run"][q] if eng.state[i] == RUNNING):
            q = level[i]
            if eng.attained(i, t) >= self.thresholds[q]:
                s["run"][q].remove(i)
                level[i] = q + 1
                s["wait"][q + 1].append(i)  # the queue's tail: after its waiting jobs

    def _next_check(self, eng, s, t: int) -> None:
        """Tiresias's next demotion check: the earliest, over running jobs not in the last
        queue, of ``event + ceil((threshold - executed_seconds) / gpus)`` (seconds, then ticks
        rounded up); a wake-up then."""
        level, last, tick = s["level"], len(self.thresholds), eng.tick
        best = None
        for q in range(last):
            for i in s["run"][q]:
                if eng.state[i] != RUNNING:
                    continue
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
        need = math.ceil(self.thresholds[q] / rate)  # progress ticks to reach the threshold
        while need > 0 and (need - 1) * rate >= self.thresholds[q]:
            need -= 1
        while need * rate < self.thresholds[q]:
            need += 1
        if need >= eng.work[i]:
            return  # it finishes first
        c = eng.end[i] - eng.work[i] + need
        s["due_at"][i] = c
        heapq.heappush(s["due"], (c, i))
        eng.wake(c)

    def _demote(self, eng, s, t: int) -> None:
        due, due_at, level = s["due"], s["due_at"], s["level"]
        crossing = []
        while due and due[0][0] <= t:
            c, i = heapq.heappop(due)
            if due_at[i] == c and eng.state[i] == RUNNING:
                crossing.append(i)
        for i in sorted(crossing):  # index order is (submit, job_id) order
            due_at[i] = -1
            while level[i] < len(self.thresholds) and \
                    eng.attained(i, t) >= self.thresholds[level[i]]:
                q = level[i]
                (s["run"][q] if i in s["run"][q] else s["wait"][q]).remove(i)
                level[i] += 1
                s["wait"][level[i]].append(i)  # the queue's tail: after its waiting jobs
            self._watch(eng, s, i)


def fits(eng, i: int, n: int) -> bool:
    """avail(n) >= the (per-task) demand of job ``i``."""
    return (eng.free_g[n] - eng.res_g[n] >= eng.dg[i] and eng.free_c[n] - eng.res_c[n] >= eng.dc[i]
            and eng.free_m[n] - eng.res_m[n] >= eng.dm[i])


def plan(eng, s) -> tuple[list[int], list[int]]:
    """Go over the queues against a planned ledger; return (jobs to start with their planned
    nodes, jobs to preempt), both in visiting order."""
    state = eng.state
    # the plan starts from capacity: what stopping jobs hold is theirs only until released,
    # so a job planned there waits for it, and no job behind it takes that room meanwhile
    led = [list(eng.cap_g), list(eng.cap_c), list(eng.cap_m)]
    led.append(sum(led[0]))  # planned free GPUs over the nodes with room (never negative)
    led.append(None)  # the largest planned room of one node (GPU, CPU, memory); None: stale
    starts, stops, min_gpu = [], [], s["min_gpu"]
    for q, running in enumerate(s["run"]):
        for i in running:  # (one that finished since the last step is still listed)
            if state[i] == RUNNING:
                _keep(eng, led, i, stops)
            elif state[i] == WAITING and led[3] >= min_gpu:
                _place(eng, led, i, starts)
        waiting = s["wait"][q]
        k = len(waiting)  # jobs demoted this step are running, at the tail (after reorder)
        while k and state[waiting[k - 1]] == RUNNING:
            k -= 1
        for j in range(k):
            if led[3] < min_gpu:
                break  # no room left for anyone: the rest only wait
            i = waiting[j]
            if state[i] == WAITING:  # (a stopping one waits for its release)
                _place(eng, led, i, starts)
        for j in range(k, len(waiting)):
            _keep(eng, led, waiting[j], stops)
    return starts, stops


def _keep(eng, led, i: int, stops: list) -> None:
    """Running job ``i``: kept if it fits the plan on its nodes (or is TE), else to preempt."""
    pg, pc, pm = led[0], led[1], led[2]
    at, g, c, m = eng.nodes[i], eng.dg[i], eng.dc[i], eng.dm[i]
    te = eng.te[i]
    led[4] = None
    if len(at) == 1:
        n = at[0]
        ok = te or (pg[n] >= g and pc[n] >= c and pm[n] >= m)
    else:
        ok = te or all(pg[n] >= g and pc[n] >= c and pm[n] >= m for n in at)
    if ok:
        for n in at:
            pg[n] -= g
            pc[n] -= c
            pm[n] -= m
        led[3] -= g * len(at)
        if te and min(pg[n] for n in at) < 0:  # a TE job kept beyond the plan
            led[3] = sum(x for x in pg if x > 0)
    else:
        stops.append(i)


def _place(eng, led, i: int, starts: list) -> None:
    """Waiting job ``i``: to start on the lowest-id node(s) of the plan with room, if any."""
    pg, pc, pm = led[0], led[1], led[2]
    g, c, m, k = eng.dg[i], eng.dc[i], eng.dm[i], eng.tasks[i]
    if g * k > led[3]:
        return  # more GPUs than the plan has left anywhere
    if led[4] is None:
        led[4] = (max(pg), max(pc), max(pm))
    big = led[4]
    if g > big[0] or c > big[1] or m > big[2]:
        return  # no node has room for one task
    at = []
    for n in range(len(pg)):
        if pg[n] >= g and pc[n] >= c and pm[n] >= m:
            at.append(n)
            if len(at) == k:
                break
    else:
        return
    for n in at:
        pg[n] -= g
        pc[n] -= c
        pm[n] -= m
    led[3] -= g * k
    led[4] = None
    starts.append((i, at))


def reorder(eng, s, stopped: list[int]) -> None:
    """Each queue becomes: its running jobs as visited, then its other jobs as visited
    (so a job preempted now goes ahead of the jobs that were waiting)."""
    state = eng.state
    from_run = set(stopped)
    for q, running in enumerate(s["run"]):
        waiting = s["wait"][q]
        moved = any(state[i] == RUNNING for i in waiting) or any(i in from_run for i in waiting)
        if not (moved or any(state[i] != RUNNING for i in running)):
            continue
        out = [i for i in running if state[i] != RUNNING and i in from_run]
        running[:] = [i for i in running if state[i] == RUNNING] + \
            [i for i in waiting if state[i] == RUNNING]
        if moved or out:
            waiting[:] = out + [i for i in waiting if state[i] != RUNNING]
