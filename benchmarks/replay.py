"""A policy that replays another policy's decisions, to measure what those decisions cost the
engine alone.

:func:`record` runs a policy once with ``Engine.start`` and ``Engine.preempt`` wrapped, and
keeps, per visited tick, the preemptions and starts (with their nodes) in the order the
policy made them. :class:`Replay` makes exactly those calls at the same ticks and nothing
else (one wake-up per tick with a decision), so a run of it does the engine's work of that
policy, its starts, preemptions, releases, finishes, visits and the result Dataset, without
deciding anything. Its CPU time is a floor under any implementation of the recorded policy
on this engine: a policy that makes those decisions cannot cost less than carrying them out.
Used by ``bench_las.py``; the script checks that the replay's results equal the policy's.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the recorded decisions of the run being replayed, {tick: [(job, nodes or None), ...]}
#: (None: a preemption); kept here, not as a field, so that the result's attributes (which
#: list a policy's fields) do not carry them
DECISIONS: dict = {}


def record(jobs, cluster, policy, tick) -> dict:
    """``policy``'s decisions on this trace, by tick, in the order it made them."""
    import fitgpp
    from fitgpp.sim.engine import Engine
    out: dict = {}
    start, preempt = Engine.start, Engine.preempt

    def start_rec(eng, i, n, t):
        out.setdefault(t, []).append((i, n))
        return start(eng, i, n, t)

    def preempt_rec(eng, i, t):
        out.setdefault(t, []).append((i, None))
        return preempt(eng, i, t)

    Engine.start, Engine.preempt = start_rec, preempt_rec
    try:
        fitgpp.simulate(jobs, cluster, policy, tick=tick)
    finally:
        Engine.start, Engine.preempt = start, preempt
    return out


@dataclass(frozen=True)
class Replay:
    """Carry out :data:`DECISIONS` (set it before a run); it never decides anything."""
    name = "replay"
    max_preemptions = None
    waiting_any_order = True  # as LAS: the engine's waiting list is the same kind

    def bind(self, eng) -> None:
        eng.scratch["replay"] = [sorted(DECISIONS), 0]

    def schedule(self, eng, t: int) -> None:
        ticks, k = eng.scratch["replay"]
        if k >= len(ticks) or ticks[k] != t:
            return
        for i, n in DECISIONS[t]:
            if n is None:
                eng.preempt(i, t)
            else:
                eng.start(i, n, t)
        k += 1
        eng.scratch["replay"][1] = k
        if k < len(ticks):
            eng.wake(ticks[k])
