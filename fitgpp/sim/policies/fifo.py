"""FIFO: one queue of every waiting job, no priority, no preemption (the paper's baseline).

The queue is every waiting job in ``(submit, job_id)`` order. The head starts on the
lowest-id node with enough free resources (a gang: its ``tasks`` lowest-id such nodes), and
so on until the head fits nowhere. What happens then is the field ``backfill``: the paper
names FIFO without detail, and its BE result depends on the reading (SPEC.md "FIFO (no
preemption)", docs/model.md "FIFO's three readings"):

- ``"none"`` (the default, our reading of the paper's FIFO): everything behind the head
  waits, even jobs that would fit (strict head-of-line blocking). Jobs start in
  ``(submit, job_id)`` order.
- ``"greedy"``: go on down the queue in order and start every job that fits; the head may
  starve.
- ``"easy"`` (EASY backfilling): the head's *shadow tick* is the earliest tick at which it
  fits, with the running jobs ending when they will, and its *shadow nodes* those it would
  take then. The ends are the jobs' true ones (the simulator knows every remaining
  duration; a real scheduler would have users' estimates instead). A later job, in queue
  order, starts now on its usual nodes only if it fits now and either ends by the shadow
  tick or takes, on the shadow nodes among its nodes, only what the head leaves there at
  the shadow tick (the *extra*, which it then uses up). Recomputed at every step, so the
  head starts at its first shadow tick, never later.

Both backfilling readings look at the same queue in the same order. FIFO never preempts,
so no job it runs is ever stopping and no job ever restarts (a trace's restart overhead
never applies): the jobs holding resources are the running ones it started, and each
ends at its ``end`` tick. A decision changes only when a job arrives or finishes (the
shadow tick is a finish tick; a job refused now is refused at every later quiet tick, its
end only later), so quiet ticks may be jumped over: no wake-ups.
"""

from __future__ import annotations

import typing
from bisect import bisect_right, insort
from dataclasses import dataclass, field
from typing import Literal

from fitgpp.sim.engine import WAITING, PolicyError
from fitgpp.sim.policies.base import first_fit, first_fit_nodes

#: FIFO's readings (the field ``backfill``).
Backfill = Literal["none", "easy", "greedy"]
BACKFILL: tuple[str, ...] = typing.get_args(Backfill)


@dataclass(frozen=True)
class StrictFifo:
    """FIFO's strict step alone, no fields: the base of :class:`Fifo` and of LPJF (whose
    exact scan is FIFO's, and which has no backfilling), and of a researcher's policy that
    should not inherit ``backfill`` (a subclass of :class:`Fifo` does)."""

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


@dataclass(frozen=True)
class Fifo(StrictFifo):
    backfill: Backfill = field(default="none", metadata={
        "label": "backfilling", "named": "unless default",
        "description": "FIFO's reading once the head fits nowhere: 'none' (the rest waits; the "
                       "default), 'easy' (a later job starts if it does not delay the head's "
                       "reserved start) or 'greedy' (every later job that fits starts)"})
    name = "fifo"

    def __post_init__(self):
        if not isinstance(self.backfill, str) or self.backfill not in BACKFILL:
            raise PolicyError(f"fifo: backfill must be one of {', '.join(map(repr, BACKFILL))},"
                              f" got {self.backfill!r}"[:300])

    def schedule(self, eng, t: int) -> None:
        if self.backfill == "none":
            return StrictFifo.schedule(self, eng, t)
        return _backfill(eng, t, self.backfill == "easy")


# ---------------------------------------------------------------- the backfilling readings
def _backfill(eng, t: int, easy: bool) -> None:
    """One schedule step of ``"greedy"`` or ``"easy"`` (``easy``). Per run it keeps the
    waiting jobs in queue order, the running jobs' ``(end, index)`` sorted (EASY's shadow),
    and the head's shadow with what is left of its extra."""
    s = eng.scratch.get("fifo_bf")
    if s is None:
        s = eng.scratch["fifo_bf"] = {"queue": [], "arrived": 0, "epoch": None, "ends": [],
                                      "shadow": None}
    k, n, submit = s["arrived"], eng.n, eng.submit
    new = []
    while k < n and submit[k] <= t:
        new.append(k)
        k += 1
    s["arrived"] = k
    ends = s["ends"]
    del ends[:bisect_right(ends, (t, n))]   # done by now
    queue = s["queue"]
    if queue and eng.epoch == s["epoch"]:
        # nothing finished since the last step: the head and every job that waited then
        # are refused again (no more room now, the shadow tick as near), so only arrivals
        _pass(eng, t, s, new, queue, easy)
        return
    queue.extend(new)
    i, kept = 0, []
    if easy:   # heads start while they fit; then the head's shadow
        while i < len(queue) and _try(eng, t, s, queue[i], None):
            i += 1
        if i < len(queue):
            s["shadow"] = _shadow(eng, ends, queue[i])
            kept.append(queue[i])
            i += 1
    _pass(eng, t, s, queue[i:], kept, easy)
    s["queue"], s["epoch"] = kept, eng.epoch


def _pass(eng, t: int, s: dict, jobs, kept: list, easy: bool) -> None:
    """Start each of ``jobs`` (queue order) that may start; append the others to ``kept``."""
    fg, dg, dc, dm, tasks = eng.free_g, eng.dg, eng.dc, eng.dm, eng.tasks
    shadow = s["shadow"] if easy else None
    failed = set()   # demands that fit nowhere now: starts only take room away
    most = max(fg) if jobs else 0
    for j in jobs:
        g = dg[j]
        if g > most:
            kept.append(j)
            continue
        key = (g, dc[j], dm[j], tasks[j])
        if key in failed:
            kept.append(j)
            continue
        started = _try(eng, t, s, j, shadow, failed, key)
        if started:
            most = max(fg)
        else:
            kept.append(j)


def _try(eng, t: int, s: dict, j: int, shadow, failed=None, key=None) -> bool:
    """Start job ``j`` on its usual nodes if it fits there now and, with a ``shadow``, does
    not take the head's room at the shadow tick; whether it started."""
    if eng.tasks[j] == 1:
        nodes = first_fit(eng, j, reserved=False)
        nodes = None if nodes < 0 else nodes
    else:
        nodes = first_fit_nodes(eng, j, reserved=False)
    if nodes is None:
        if failed is not None:
            failed.add(key)
        return False
    if shadow is not None and not _spare(eng, t, j, nodes, shadow):
        return False
    eng.start(j, nodes, t)
    insort(s["ends"], (eng.end[j], j))
    return True


def _spare(eng, t: int, j: int, nodes, shadow) -> bool:
    """EASY's test for job ``j`` starting now on ``nodes``: it ends by the shadow tick, or
    it fits in the extra of the shadow nodes among ``nodes`` (which it then takes)."""
    tick, extra = shadow
    # its end if started now: its work left, after a reload if it was preempted (never, in
    # a FIFO run; stated so that the rule is right whatever the trace)
    if t + eng.rem[j] + (eng.ro[j] if eng.preemptions[j] else 0) <= tick:
        return True
    g, c, m = eng.dg[j], eng.dc[j], eng.dm[j]
    mine = [extra[n] for n in ((nodes,) if type(nodes) is int else nodes) if n in extra]
    if any(e[0] < g or e[1] < c or e[2] < m for e in mine):
        return False
    for e in mine:
        e[0] -= g
        e[1] -= c
        e[2] -= m
    return True


def _shadow(eng, ends: list, head: int) -> tuple[int, dict]:
    """The head's shadow tick and ``{shadow node: [gpu, cpu, mem] extra}``: the running jobs
    (``ends``, sorted) give their room back at their ends until the head fits on ``tasks``
    nodes (lowest ids first) with free >= its demand; extra = that free - its demand."""
    g, c, m, k = eng.dg[head], eng.dc[head], eng.dm[head], eng.tasks[head]
    fg, fc, fm = list(eng.free_g), list(eng.free_c), list(eng.free_m)
    ok = [fg[n] >= g and fc[n] >= c and fm[n] >= m for n in range(eng.n_nodes)]
    count, x, dg, dc, dm, nodes = sum(ok), 0, eng.dg, eng.dc, eng.dm, eng.nodes
    while x < len(ends):
        tick = ends[x][0]
        while x < len(ends) and ends[x][0] == tick:   # every job ending at that tick
            i = ends[x][1]
            for n in nodes[i]:
                fg[n] += dg[i]
                fc[n] += dc[i]
                fm[n] += dm[i]
                if not ok[n] and fg[n] >= g and fc[n] >= c and fm[n] >= m:
                    ok[n] = True
                    count += 1
            x += 1
        if count >= k:
            take = [n for n in range(eng.n_nodes) if ok[n]][:k]
            return tick, {n: [fg[n] - g, fc[n] - c, fm[n] - m] for n in take}
    raise RuntimeError(f"fifo: job {eng.job_id[head]} fits nowhere even once every running "
                       "job has ended")
