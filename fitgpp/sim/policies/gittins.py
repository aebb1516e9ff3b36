"""Gittins(delta, thresholds, distribution): Tiresias's discretized 2D-Gittins index.

Not in the FitGpp paper; Tiresias's ``gittins`` (Gu et al., NSDI '19), its scheduler for
when the distribution of job sizes is known but not each job's size. The rules are in
docs/model.md, "Gittins, exactly". It knows the *distribution* of job sizes (GPU-seconds):
by default fitted from the jobs of the run (:func:`~.gittins_index.fit`), or read from a
file in Tiresias's format (``distribution="path.csv"``); never which job has which size.
Class-neutral, except that a running TE job is never preempted.

Each job is in a LAS queue by its attained GPU-service (``thresholds``, as :mod:`.las`, a
job moves down at the tick it crosses one); within a queue, jobs go by their Gittins index,
highest first, ties by ``(submit, job_id)``. The index is the job's at the start of its
current service quantum: ``G(k x delta)`` with ``k`` the whole quanta of ``delta``
GPU-seconds it has attained. The step is the single-list plan of :mod:`.ordered` with the
key ``(queue, -G)``; a running job's key changes only at the tick it crosses a quantum or a
threshold, and the policy asks for a wake-up then.

``mode="tiresias"`` (opt-in) does what Tiresias's simulator does instead: one list, no
queues, re-sorted stably by its rank table only at its events, lowest rank first, a
waiting job ranked by attained *time* (see docs/model.md).
"""

from __future__ import annotations

import heapq
import math
import numbers
from bisect import bisect_right
from dataclasses import dataclass, field

from fitgpp.sim.engine import RUNNING
from fitgpp.sim.policies.base import PolicyError
from fitgpp.sim.policies.gittins_index import (ExactIndex, TiresiasIndex, fit, quantum,
                                               read_distribution)
from fitgpp.sim.policies.las import MAX_THRESHOLD, Las, ticks_to_serve, wake_when_served
from fitgpp.sim.policies.modes import Mode, mode_field
from fitgpp.sim.policies.ordered import OrderedPolicy


@dataclass(frozen=True)
class Gittins(OrderedPolicy):
    delta: float = field(default=3250, metadata={
        "units": "GPU-s", "description": "service quantum of the Gittins index (Tiresias: 3250)"})
    thresholds: tuple = field(default=(3250.0, 7200.0), metadata={
        "units": "GPU-s", "description": "queue thresholds of attained service, as LAS's"})
    distribution: str = field(default="", metadata={
        "description": "job-size file in Tiresias's format (CSV, 'duration' column, "
                       "GPU-seconds); empty: fitted from the run's jobs"})
    mode: Mode = mode_field("Tiresias's gittins: one list, its rank table, re-sorted at its "
                            "events")
    name = "gittins"
    settles = True  # (see OrderedPolicy._settled)

    def __post_init__(self):
        d = self.delta
        if isinstance(d, bool) or not isinstance(d, numbers.Real) or not 0 < d <= MAX_THRESHOLD:
            raise PolicyError(f"gittins: delta must be a number > 0 and <= {MAX_THRESHOLD:g} "
                              f"(GPU-seconds), got {d!r}"[:200])
        object.__setattr__(self, "delta", int(d) if float(d).is_integer() else float(d))
        try:
            th = Las(thresholds=self.thresholds).thresholds  # the same checks as LAS's
        except PolicyError as exc:
            raise PolicyError(str(exc).replace("las:", "gittins:")) from None
        object.__setattr__(self, "thresholds", th)
        self._check_mode()
        if not isinstance(self.distribution, str):
            raise PolicyError("gittins: distribution must be a file name (str), got "
                              f"{self.distribution!r}"[:200])
        sizes = read_distribution(self.distribution) if self.distribution else None
        object.__setattr__(self, "_sizes", sizes)

    def inputs_digest(self) -> str:
        """sha256 of the sizes read from ``distribution`` ("" when fitted from the run): part
        of :func:`~fitgpp.sim.policies.registry.digest`, so a sweep's cached cells and a rerun
        see a changed file."""
        if self._sizes is None:
            return ""
        import hashlib
        return hashlib.sha256(",".join(map(str, self._sizes)).encode()).hexdigest()

    def bind(self, eng) -> None:
        super().bind(eng)
        sizes = self._sizes if self._sizes is not None else fit(eng)
        tiresias = self.mode == "tiresias"
        index = (TiresiasIndex if tiresias else ExactIndex)(sizes, self.delta) if sizes else None
        eng.scratch["gittins"] = {"level": [0] * eng.n, "k": [0] * eng.n, "index": index,
                                  "due": [], "due_at": [-1] * eng.n, "unit": self.delta,
                                  "started": False, "tiresias": tiresias}

    # ---- exact: key (queue, -G) --------------------------------------------------------
    def wait_key(self, eng, i):
        g = eng.scratch["gittins"]
        if g["tiresias"]:
            return self._rank(eng, g, i, eng.progress(i, eng.now) * eng.tick)
        return (g["level"][i], -g["index"](g["k"][i]) if g["index"] else 0.0)

    def run_key(self, eng, i, t):
        g = eng.scratch["gittins"]
        if g["tiresias"]:
            gpus = eng.dg[i] * eng.tasks[i]
            return self._rank(eng, g, i, eng.progress(i, t) * eng.tick * gpus)
        return self.wait_key(eng, i)

    def static(self, eng, i):
        return self.wait_key(eng, i)

    def _attained(self, eng, i, t) -> float:
        return eng.dg[i] * eng.tasks[i] * (eng.progress(i, t) * eng.tick)

    def prepare(self, eng, s, t, arrivals) -> None:
        g = eng.scratch["gittins"]
        due, due_at, crossing = g["due"], g["due_at"], []
        while due and due[0][0] <= t:
            c, i = heapq.heappop(due)
            if due_at[i] == c and eng.state[i] == RUNNING:
                crossing.append(i)
        for i in crossing:
            due_at[i] = -1
            att = self._attained(eng, i, t)
            g["level"][i] = sum(1 for x in self.thresholds if x <= att)
            g["k"][i] = quantum(att, self.delta)
            self._rekey(s, i, self.static(eng, i))
            self._watch(eng, g, i)

    def starting(self, eng, s, i) -> None:
        g = eng.scratch["gittins"]
        if g["tiresias"]:
            g.get("kept", {}).pop(i, None)  # its attained service moves again
        else:
            self._watch(eng, g, i)

    def _watch(self, eng, g, i: int) -> None:
        """Ask for a wake-up at the tick running job ``i`` crosses its next quantum or its
        queue's threshold."""
        gpus = eng.dg[i] * eng.tasks[i]
        if gpus <= 0:
            return  # no service: its key never changes
        q = g["level"][i]
        nxt = (g["k"][i] + 1) * self.delta
        if q < len(self.thresholds):
            nxt = min(nxt, self.thresholds[q])
        tick = eng.tick
        need = ticks_to_serve(nxt, lambda n: gpus * (n * tick), max(1, math.ceil(nxt / (gpus * tick))),
                              1)
        wake_when_served(eng, g, i, need)

    # ---- mode "tiresias" ----------------------------------------------------------------
    def _rank(self, eng, g, i, seconds) -> float:
        index = g["index"]
        return index(int(seconds)) if index else 0.0

    def list_key(self, eng, t: int):
        """Tiresias's rank of each job at tick ``t`` (as ``run_key``/``wait_key``, inlined); a
        job that does not run keeps its attained service, so its rank is kept until it starts."""
        g = eng.scratch["gittins"]
        index = g["index"]
        if index is None:
            return lambda i: 0.0
        data, gi, top = index.data, index.gi, index.data[-1]
        work, rem, end, state, dg, tasks, tick = (eng.work, eng.rem, eng.end, eng.state,
                                                  eng.dg, eng.tasks, eng.tick)
        kept = g.setdefault("kept", {})

        def key(i):
            if state[i] == RUNNING:
                a = int((work[i] - min(rem[i], end[i] - t)) * tick * (dg[i] * tasks[i]))
                return gi[bisect_right(data, a)] if a <= top else 0
            r = kept.get(i)
            if r is None:
                a = int((work[i] - rem[i]) * tick)
                r = kept[i] = gi[bisect_right(data, a)] if a <= top else 0
            return r
        return key

    def list_keys(self, eng, t: int, order: list) -> list:
        """``list_key`` of each job of ``order``, inlined into one loop."""
        g = eng.scratch["gittins"]
        index = g["index"]
        if index is None:
            return [0.0] * len(order)
        data, gi, top = index.data, index.gi, index.data[-1]
        work, rem, end, state, dg, tasks, tick = (eng.work, eng.rem, eng.end, eng.state,
                                                  eng.dg, eng.tasks, eng.tick)
        kept = g.setdefault("kept", {})
        keys = []
        for i in order:
            if state[i] == RUNNING:
                a = int((work[i] - min(rem[i], end[i] - t)) * tick * (dg[i] * tasks[i]))
                keys.append(gi[bisect_right(data, a)] if a <= top else 0)
                continue
            r = kept.get(i)
            if r is None:
                a = int((work[i] - rem[i]) * tick)
                r = kept[i] = gi[bisect_right(data, a)] if a <= top else 0
            keys.append(r)
        return keys

    def event(self, eng, t: int, event: bool) -> bool:
        """Tiresias's events: an arrival, a finish, or its "Gittins unit" (a time that starts
        at ``delta`` seconds and grows by the time of each event)."""
        g = eng.scratch["gittins"]
        if not g["tiresias"]:
            return event
        sec, tick = t * eng.tick, eng.tick
        if not g["started"]:  # unit events before the first visit, with nothing to run
            g["started"] = True
            while g["unit"] < sec:
                g["unit"] += g["unit"]
            if not event and sec < g["unit"]:
                eng.wake(math.ceil(g["unit"] / tick))
        if event or sec >= g["unit"]:
            g["unit"] += sec
            eng.wake(math.ceil(g["unit"] / tick))
            return True
        return False
