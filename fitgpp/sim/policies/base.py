"""What every policy shares: the protocol, the parameter checks, first-fit search, and
the two-queue skeleton of docs/model.md (TE pass, then BE pass).

:class:`Policy` is the protocol, the one place it is written down. A two-queue policy
(PRIO, FitGpp, LRTP, RAND) only has to say how it picks a node and victims for a TE job
that fits nowhere: :meth:`TwoQueuePolicy.choose`. A class-neutral policy (LAS) writes
``schedule`` itself.
"""

from __future__ import annotations

from fitgpp.sim.engine import PolicyError

import numbers
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Protocol, runtime_checkable


@runtime_checkable
class Policy(Protocol):
    """The protocol every policy, built in or written in a notebook cell, programs against.

    A policy is a frozen dataclass whose fields are its parameters (what sweeps, the CLI's
    ``--param`` and ``rerun`` set). It has:

    - ``name``: a short name for results and legends.
    - ``max_preemptions``: times one BE job may be preempted: an int (0 for a policy that
      never preempts), or None for no limit. State it; a policy that leaves it out has no
      limit (the engine reads it once, with None as the default). A dataclass field of
      that name is also the policy's ``P`` parameter.
    - ``bind(engine)``: called once before the run (usually does nothing).
    - ``schedule(engine, t)``: step 4 of every tick the engine visits. It may start any
      waiting job on nodes where it fits (``engine.start``; a job not waiting, or a node
      without its demand free, is refused with :class:`PolicyError`), in any order it likes;
      preempt any running BE job (``engine.preempt``; a TE job, a job not running, or one
      already preempted ``max_preemptions`` times is refused with :class:`PolicyError`
      before anything changes); reserve for a waiting TE job (``engine.reserve``); ask to
      be visited at a later tick (``engine.wake``): a policy that decides by time must,
      else jumping over quiet ticks would skip its decision. It may return True to say
      that its next step changes nothing until something arrives, finishes or is
      released, or a wake-up comes: the engine then skips the visit it makes at ``t + 1``
      after a step that preempted (any other return value: it visits).
    - optionally ``victim_key(engine, i)``: the engine then keeps every node's running BE
      jobs sorted by it in ``engine.running_be[n]``; if the key of a running job changes,
      the policy calls ``engine.rekey(i)``.
    - optionally ``waiting_any_order = True``: ``engine.waiting_be`` is then a dict of the
      waiting BE jobs in no useful order (O(1) to take one out) instead of a heap of
      indices whose head is the first: for a policy that starts them in its own order and
      never reads that heap's head (LAS).

    It reads the engine and never writes it: per job ``te``, ``dg``/``dc``/``dm``,
    ``tasks``, ``size``, ``submit``, ``work``, ``gp``, ``ro``, ``state``, ``nodes``, ``end``,
    ``preemptions``, ``resv`` (each a sequence indexed by job: a list, or an ``array``
    of integers to save memory), ``progress(i, t)`` (ticks of work done) and
    ``attained(i, t)`` (GPU-seconds of service); per node ``cap_*``, ``free_*``,
    ``stop_*``, ``res_*``; ``waiting_te``, ``waiting_be``, ``tick`` (seconds), ``now`` and
    ``epoch`` (moves when resources may have been freed). State that lives for one run
    goes in ``engine.scratch``, never on the (frozen, shared) policy object. Jobs are
    indices ``0..n-1`` in ``(submit, job_id)`` order.
    """

    name: str
    max_preemptions: Any

    def bind(self, engine) -> None: ...

    def schedule(self, engine, t: int) -> None: ...


def check_int(policy, name: str, minimum: int) -> None:
    """Validate an integer parameter (numpy integers accepted and stored as int)."""
    v = getattr(policy, name)
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < minimum:
        raise PolicyError(f"{policy.name}: {name} must be an integer >= {minimum}, got {v!r}")
    object.__setattr__(policy, name, int(v))


#: What a ``max_preemptions`` field declares for controls and sweep coordinates
#: (``field(default=3, metadata=MAX_PREEMPTIONS)``): its range and what it means.
MAX_PREEMPTIONS = {"min": 1, "max": 10, "label": "P (max preemptions)", "short": "P",
                   "units": "1", "description": "P: times a BE job may be preempted"}


def check_max_preemptions(policy) -> None:
    check_int(policy, "max_preemptions", 1)


def first_fit(eng, i: int, reserved: bool) -> int:
    """Lowest node id whose free (``reserved=False``) or avail (``True``) >= demand of ``i``; -1 if none."""
    g, c, m = eng.dg[i], eng.dc[i], eng.dm[i]
    fg, fc, fm = eng.free_g, eng.free_c, eng.free_m
    if reserved:
        if g and max(eng.avail_g) < g:
            return -1  # quick reject: no node has the GPUs
        return _scan_avail(eng, g, c, m)
    else:
        if g and max(fg) < g:
            return -1
        for n in range(eng.n_nodes):
            if fg[n] >= g and fc[n] >= c and fm[n] >= m:
                return n
    return -1


def _scan_avail(eng, g: int, c: int, m: int) -> int:
    """Lowest node id whose avail (free - reserved) >= ``(g, c, m)``; -1 if none."""
    fc, fm, rc, rm = eng.free_c, eng.free_m, eng.res_c, eng.res_m
    for n, a in enumerate(eng.avail_g):  # avail_g = free_g - res_g
        if a >= g and fc[n] - rc[n] >= c and fm[n] - rm[n] >= m:
            return n
    return -1


def first_fit_nodes(eng, i: int, reserved: bool) -> list[int] | None:
    """For a gang (SPEC "Multi-node jobs"): the ``tasks`` lowest-id nodes whose free
    (``reserved=False``) or avail (``True``) >= the per-task demand of ``i``; None if fewer
    nodes qualify."""
    g, c, m, k = eng.dg[i], eng.dc[i], eng.dm[i], eng.tasks[i]
    fg, fc, fm = eng.free_g, eng.free_c, eng.free_m
    rg, rc, rm = (eng.res_g, eng.res_c, eng.res_m) if reserved else ((0,) * eng.n_nodes,) * 3
    out = []
    for n in range(eng.n_nodes):
        if fg[n] - rg[n] >= g and fc[n] - rc[n] >= c and fm[n] - rm[n] >= m:
            out.append(n)
            if len(out) == k:
                return out
    return None


def projected(eng, n: int) -> tuple[int, int, int]:
    """capacity - running - reserved on node ``n``: what it offers once its stopping jobs leave."""
    return (eng.free_g[n] + eng.stop_g[n] - eng.res_g[n],
            eng.free_c[n] + eng.stop_c[n] - eng.res_c[n],
            eng.free_m[n] + eng.stop_m[n] - eng.res_m[n])


def shortest_prefix(eng, i: int, n: int, victims) -> list[int] | None:
    """The shortest prefix of ``victims`` (in the given order) whose release lets
    ``projected(n)`` cover the demand of ``i``; ``[]`` if nothing is needed, None if never."""
    g, c, m = eng.dg[i], eng.dc[i], eng.dm[i]
    pg, pc, pm = projected(eng, n)
    if pg >= g and pc >= c and pm >= m:
        return []
    out = []
    dg, dc, dm = eng.dg, eng.dc, eng.dm
    for v in victims:
        out.append(v)
        pg += dg[v]
        pc += dc[v]
        pm += dm[v]
        if pg >= g and pc >= c and pm >= m:
            return out
    return None


def params_of(policy) -> dict:
    return {f.name: getattr(policy, f.name) for f in fields(policy)}


@dataclass(frozen=True)
class TwoQueuePolicy:
    """The skeleton shared by PRIO, FitGpp, LRTP and RAND (docs/model.md, "How the policies
    schedule").

    ``memo_safe``: the TE pass skips a TE job whose demand already found neither a node nor
    victims while nothing has been freed since (the engine's ``epoch``). That is exact only
    if :meth:`choose` does not depend on the tick or on anything but the ledger. A class
    keeps the memo only by declaring ``memo_safe = True`` in its own body; a subclass that
    does not (say, FitGpp with a waiting-time rule) is run without it, which is slower and
    always exact.
    """

    preempts = True
    memo_safe: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "memo_safe" not in cls.__dict__:
            cls.memo_safe = False  # not inherited: each class vouches for its own choose()

    def bind(self, eng) -> None:
        pass

    def choose(self, eng, i: int, t: int) -> tuple[int, list[int]] | None:
        """Node and ordered victims for TE job ``i`` that fits nowhere now, or None."""
        raise NotImplementedError

    def schedule(self, eng, t: int) -> None:
        if eng.waiting_te:
            self._te_pass(eng, t)
        if eng.waiting_be:
            be_pass(eng, t)

    def _te_pass(self, eng, t: int) -> None:
        fg, fc, fm = eng.free_g, eng.free_c, eng.free_m
        dg, dc, dm, resv = eng.dg, eng.dc, eng.dm, eng.resv
        pending: dict[int, list[int]] = {}  # node -> earlier still-unstarted reservations
        # demand -> engine epoch at which a TE job of that demand found neither a node nor
        # victims; that stays true until resources may free up (the epoch moves), across ticks
        failed = eng.scratch.setdefault("te_failed", {}) if self.memo_safe else None
        tasks = eng.tasks
        for i in list(eng.waiting_te):
            g, c, m = dg[i], dc[i], dm[i]
            if tasks[i] > 1:
                # a TE gang never preempts nor reserves, and does not block the TE jobs behind
                key = (g, c, m, tasks[i])
                if failed is not None and failed.get(key) == eng.epoch:
                    continue
                nodes = first_fit_nodes(eng, i, reserved=True)
                if nodes is not None:
                    eng.start(i, nodes, t)
                elif failed is not None:
                    failed[key] = eng.epoch
                continue
            n = resv[i]
            if n < 0:
                if failed is not None and failed.get((g, c, m)) == eng.epoch:
                    continue
                n = first_fit(eng, i, reserved=True)
                if n >= 0:
                    eng.start(i, n, t)
                    continue
                pick = self.choose(eng, i, t) if self.preempts else None
                if pick is None:
                    if failed is not None:
                        failed[(g, c, m)] = eng.epoch
                    continue
                n, victims = pick
                eng.reserve(i, n)
                for v in victims:
                    eng.preempt(v, t)
            p = pending.get(n)
            if p is None:
                if fg[n] >= g and fc[n] >= c and fm[n] >= m:
                    eng.start(i, n, t)
                else:
                    pending[n] = [g, c, m]
            elif fg[n] - p[0] >= g and fc[n] - p[1] >= c and fm[n] - p[2] >= m:
                eng.start(i, n, t)
            else:
                p[0] += g
                p[1] += c
                p[2] += m


def be_pass(eng, t: int) -> None:
    """Start BE jobs from the head of their queue on the lowest-id node with avail >= demand,
    until the head fits nowhere (head-of-line blocking within BE)."""
    h = eng.waiting_be
    blocked = eng.scratch.get("be_blocked")
    tasks, dg, dc, dm = eng.tasks, eng.dg, eng.dc, eng.dm
    most = None  # at least the most GPUs any node has free (starts only take some away)
    while h:
        i = h[0]
        if blocked is not None and blocked[0] == i and blocked[1] == eng.epoch:
            return  # same head, nothing freed since it last failed: it fails again
        if tasks[i] == 1:  # first_fit(eng, i, reserved=True), its quick reject per pass
            g = dg[i]
            if g and most is None:
                most = max(eng.avail_g)
            n = None if g and g > most else _scan_avail(eng, g, dc[i], dm[i])
            n = None if n is not None and n < 0 else n
        else:
            n = first_fit_nodes(eng, i, reserved=True)
        if n is None:
            eng.scratch["be_blocked"] = (i, eng.epoch)
            return
        eng.start(i, n, t)
