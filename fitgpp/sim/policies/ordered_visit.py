"""The plan of the cluster during one step of the single-list policies
(:mod:`fitgpp.sim.policies.ordered`), and the visits that fill it: the general one
(:func:`visit_merged`), and on a cluster of one node (a pool) the ones that visit only what
can change the plan (:func:`visit_pool`; :func:`visit_pool_list` for a Tiresias mode)."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from heapq import heapify, heappop, heapreplace
from itertools import accumulate
from operator import mul

from fitgpp.sim.engine import RUNNING, WAITING

class Plan:
    """The planned room of every node during one step, and what the step decided."""

    __slots__ = ("eng", "pg", "pc", "pm", "room", "big", "min_gpu", "starts", "stops")

    def __init__(self, eng, min_gpu: int):
        self.eng = eng
        self.pg, self.pc, self.pm = list(eng.cap_g), list(eng.cap_c), list(eng.cap_m)
        self.room = sum(self.pg)  # planned free GPUs over the nodes with room (never < 0)
        self.big = None  # the largest planned room of one node; None: to recompute
        self.min_gpu = min_gpu
        self.starts: list[tuple[int, list[int]]] = []
        self.stops: list[int] = []

    def full(self) -> bool:
        """No job can be placed any more (every job needs more GPUs than are left)."""
        return self.min_gpu > 0 and self.room < self.min_gpu

    def visit(self, i: int) -> None:
        st = self.eng.state[i]
        if st == RUNNING:
            self.keep(i)
        elif st == WAITING and not self.full():
            self.place(i)

    def keep(self, i: int) -> None:
        """Running job ``i``: kept if it fits the plan on its nodes (or is TE), else to stop."""
        eng, pg, pc, pm = self.eng, self.pg, self.pc, self.pm
        at, g, c, m, te = eng.nodes[i], eng.dg[i], eng.dc[i], eng.dm[i], eng.te[i]
        if not te and not all(pg[n] >= g and pc[n] >= c and pm[n] >= m for n in at):
            self.stops.append(i)
            return
        for n in at:
            pg[n] -= g
            pc[n] -= c
            pm[n] -= m
        self.big = None
        self.room -= g * len(at)
        if te and min(pg[n] for n in at) < 0:  # a TE job kept beyond the plan
            self.room = sum(x for x in pg if x > 0)

    def place(self, i: int) -> None:
        """Waiting job ``i``: to start on the lowest-id node(s) of the plan with room."""
        eng, pg, pc, pm = self.eng, self.pg, self.pc, self.pm
        g, c, m, k = eng.dg[i], eng.dc[i], eng.dm[i], eng.tasks[i]
        if g * k > self.room:
            return
        if self.big is None:
            self.big = (max(pg), max(pc), max(pm))
        big = self.big
        if g > big[0] or c > big[1] or m > big[2]:
            return
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
        self.room -= g * k
        self.big = None
        self.starts.append((i, at))


def fits(eng, i: int, n: int) -> bool:
    """avail(n) >= the (per-task) demand of job ``i``."""
    return (eng.free_g[n] - eng.res_g[n] >= eng.dg[i] and eng.free_c[n] - eng.res_c[n] >= eng.dc[i]
            and eng.free_m[n] - eng.res_m[n] >= eng.dm[i])



def visit_pool_list(eng, plan: Plan, order: list, min_gpu: int) -> None:
    """The same visit as :meth:`OrderedPolicy._visit_list` on one node whose jobs ask for GPUs
    only: the plan is one number, the node's planned free GPUs (below 0 once a TE job is kept
    beyond it). A running job is kept if it is TE or fits; a waiting one of one task starts if
    it fits and the plan is not full (a gang never fits on one node)."""
    state, dg, te, tasks = eng.state, eng.dg, eng.te, eng.tasks
    p = plan.pg[0]
    stops, starts = plan.stops, plan.starts
    # full: fewer planned GPUs than any job asks (p only falls along the visit)
    lim = min_gpu if min_gpu > 0 else -math.inf
    for i in order:
        st = state[i]
        if st == RUNNING:
            g = dg[i]
            if te[i] or p >= g:
                p -= g
            else:
                stops.append(i)
        elif st == WAITING and p >= lim and tasks[i] == 1 and p >= dg[i]:
            p -= dg[i]
            starts.append((i, [0]))
    plan.pg[0] = p
    plan.room = max(p, 0)
    plan.big = None


def visit_merged(eng, plan: Plan, wait: list, rs: list, ri: list, off) -> None:
    """Visit the merge of the waiting jobs ``wait`` (sorted ``(key, i)``) and the running
    ones (``rs``/``ri``, see :meth:`OrderedPolicy._running`) in order."""
    a = b = 0
    nw, nr = len(wait), len(ri)
    while (a < nw or b < nr) and not plan.full():
        if b < nr and (a >= nw or ((rs[b][0] - off) if off else rs[b][0], ri[b]) < wait[a]):
            plan.keep(ri[b])
            b += 1
        else:
            i = wait[a][1]
            a += 1
            if eng.state[i] == WAITING:
                plan.place(i)
    for b in range(b, nr):  # no room left: a BE job is stopped, a TE job kept
        plan.keep(ri[b])


def visit_pool(eng, plan: Plan, classes: dict, rs: list, ri: list, off, cm: bool = True,
               lin: dict | None = None, t: int = 0, rg: list | None = None) -> None:
    """The same visit as :func:`visit_merged` on a cluster of one node, with
    the waiting jobs kept per demand (``classes``: demand -> sorted ``(key, i)``). On one
    node a waiting job fits iff its demand fits the room left where it stands, and the room
    only shrinks along the order: so only the head of each demand that still fits matters,
    and the running jobs between two waiting ones are kept at once when they all fit
    (``cm``: some job asks for CPU or memory; else :func:`visit_pool_gpu`, ``rg`` the GPUs
    of ``ri`` if known, or with ``lin``, the running jobs per GPU count at tick ``t`` instead
    of ``rs``/``ri``, :func:`visit_pool_lin`)."""
    if not cm:
        if lin is not None:
            return visit_pool_lin(eng, plan, classes, lin, t)
        return visit_pool_gpu(eng, plan, classes, rs, ri, off,
                              list(map(eng.dg.__getitem__, ri)) if rg is None else rg)
    pg, pc, pm = plan.pg, plan.pc, plan.pm
    state = eng.state
    live = {d: [lst, 0] for d, lst in classes.items()
            if lst and d[0] <= pg[0] and d[1] <= pc[0] and d[2] <= pm[0]}
    b = 0
    while live:
        best = None
        for d, head in list(live.items()):
            lst, k = head
            while k < len(lst) and state[lst[k][1]] != WAITING:
                k += 1  # a stopping job waits its release
            head[1] = k
            if k == len(lst):
                del live[d]
            elif best is None or lst[k] < best[0]:
                best = (lst[k], d)
        if best is None:
            break
        (key, w), d = best
        # (a negative offset -n: the keys of rs are run_key * n + i)
        pos = bisect_left(rs, key * -off + w if off < 0 else ((key + off) if off else key, w), b)
        _keep_span(eng, plan, ri, b, pos)
        b = pos
        if d[0] <= pg[0] and d[1] <= pc[0] and d[2] <= pm[0]:
            pg[0] -= d[0]
            pc[0] -= d[1]
            pm[0] -= d[2]
            plan.starts.append((w, [0]))
            live[d][1] += 1
        else:
            del live[d]  # the room only shrinks: no later job of this demand fits either
        for d in [d for d in live if d[0] > pg[0] or d[1] > pc[0] or d[2] > pm[0]]:
            del live[d]
    _keep_span(eng, plan, ri, b, len(ri))
    plan.room = max(pg[0], 0)
    plan.big = None


def _keep_span(eng, plan: Plan, ri: list, b: int, e: int) -> None:
    """Keep running jobs ``ri[b:e]`` on node 0: all at once if their sum fits, else one by one."""
    if b >= e:
        return
    pg, pc, pm = plan.pg, plan.pc, plan.pm
    span = ri[b:e]
    sg = sum(map(eng.dg.__getitem__, span))
    sc, sm = sum(map(eng.dc.__getitem__, span)), sum(map(eng.dm.__getitem__, span))
    if sg <= pg[0] and sc <= pc[0] and sm <= pm[0]:
        pg[0] -= sg
        pc[0] -= sc
        pm[0] -= sm
        return
    for i in span:
        plan.keep(i)


def visit_pool_gpu(eng, plan: Plan, classes: dict, rs: list, ri: list, off, rg: list) -> None:
    """:func:`visit_pool` when no job asks for CPU or memory: the plan is one number, the
    node's planned free GPUs ``p`` (below 0 once a TE job is kept beyond it). The heads of
    the demands that may still fit wait in one heap, by key (:func:`_heads`); a head whose
    demand no longer fits leaves it when it comes up (``p`` only falls along the order).
    The running jobs ahead of a waiting one (``rg``: the GPUs of each of ``ri``) are kept at
    once when they fit, else by the longest runs that fit (:func:`_keep_each`)."""
    p, state = plan.pg[0], eng.state
    heads, least = _heads(classes, p, state)  # (no head left asks fewer GPUs than least)
    if not heads:
        return  # nothing starts: every running job fits the node with the others
    b, starts = 0, plan.starts
    while heads and p >= least:
        entry, g, k, lst = heads[0]
        if g > p:
            heappop(heads)
            continue
        key, w = entry
        # (a negative offset -n: the keys of rs are run_key * n + i)
        pos = bisect_left(rs, key * -off + w if off < 0 else ((key + off) if off else key, w), b)
        if pos > b:
            span = sum(rg[b:pos])
            p = p - span if span <= p else _keep_each(eng, plan, ri[b:pos], rg[b:pos], p)
            b = pos
            if g > p:
                heappop(heads)
                continue
        p -= g
        starts.append((w, [0]))
        _advance(heads, state)
    if b < len(ri):
        span = sum(rg[b:])
        p = p - span if span <= p else _keep_each(eng, plan, ri[b:], rg[b:], p)
    plan.pg[0] = p
    plan.room = max(p, 0)
    plan.big = None


def visit_pool_lin(eng, plan: Plan, classes: dict, lin: dict, t: int) -> None:
    """:func:`visit_pool_gpu` for a policy whose running jobs are kept per GPU count ``b``
    (``linear``: ``lin[b]`` sorted ``a * n + i``, ``run_key = a - b * t``), without merging
    them: where a waiting job stands is a position in each group, the running jobs ahead of
    it ``b`` GPUs each (on one node a job has one task), and only a span that does not fit
    at once is merged, to be kept job by job."""
    p, state = plan.pg[0], eng.state
    heads, least = _heads(classes, p, state)  # (no head left asks fewer GPUs than least)
    if not heads:
        return
    n, starts = eng.n, plan.starts
    bs = [b for b, grp in lin.items() if grp]
    grps = [lin[b] for b in bs]
    cs = [b * t * n for b in bs]
    cur, done = [0] * len(bs), 0  # decided: grps[j][:cur[j]], done GPUs
    lens = list(map(len, grps))
    top = max(grp[-1] - c for grp, c in zip(grps, cs)) if grps else -1  # the last running
    while heads and p >= least:
        entry, g, k, lst = heads[0]
        if g > p:
            heappop(heads)
            continue
        x = entry[0] * n + entry[1]  # (run_key, i) < entry iff run_key * n + i < x
        new = lens if x > top else [bisect_left(grp, x + c, q)
                                    for grp, c, q in zip(grps, cs, cur)]
        if new != cur:
            upto = sum(map(mul, bs, new))
            span = upto - done  # (they fit at once, as usual: _keep_groups's first case)
            p = p - span if span <= p else _keep_groups(eng, plan, grps, cs, cur, new, span, p)
            cur, done = new, upto
            if g > p:
                heappop(heads)
                continue
        p -= g
        starts.append((entry[1], [0]))
        _advance(heads, state)
    span = sum(map(mul, bs, lens)) - done
    p = p - span if span <= p else _keep_groups(eng, plan, grps, cs, cur, lens, span, p)
    plan.pg[0] = p
    plan.room = max(p, 0)
    plan.big = None


def _keep_groups(eng, plan: Plan, grps: list, cs: list, cur: list, new: list, span: int,
                 p: int) -> int:
    """Keep the running jobs of groups ``grps`` from positions ``cur`` to ``new`` (``span``
    GPUs): at once if they fit ``p``, else merged in order (``cs``: each group's offset), by
    :func:`_keep_each`. The GPUs left."""
    if span <= p:
        return p - span
    n, merged = eng.n, []
    for grp, c, q0, q1 in zip(grps, cs, cur, new):
        if q1 > q0:
            merged += [e - c for e in grp[q0:q1]]
    merged.sort()
    ids = [e % n for e in merged]
    return _keep_each(eng, plan, ids, list(map(eng.dg.__getitem__, ids)), p)


def _heads(classes: dict, p: int, state) -> tuple[list, int]:
    """A heap of the first waiting job of each demand of at most ``p`` GPUs: ``(entry, g, k,
    lst)``, ``lst[k] = entry`` (its stopping jobs wait their release); and the fewest GPUs
    one asks (``p + 1`` if none)."""
    heads, least = [], p + 1
    for (g, _, _), lst in classes.items():
        if g <= p and lst:
            k = 0
            while state[lst[k][1]] != WAITING:
                k += 1
                if k == len(lst):
                    break
            else:
                heads.append((lst[k], g, k, lst))
                if g < least:
                    least = g
    heapify(heads)
    return heads, least


def _advance(heads: list, state) -> None:
    """The head on top started: the next waiting job of its demand takes its place."""
    _, g, k, lst = heads[0]
    k += 1
    while k < len(lst) and state[lst[k][1]] != WAITING:
        k += 1
    if k < len(lst):
        heapreplace(heads, (lst[k], g, k, lst))
    else:
        heappop(heads)


def _keep_each(eng, plan: Plan, span: list, gpus: list, p: int) -> int:
    """Keep running jobs ``span`` (``gpus`` each) on node 0, with ``p`` planned free GPUs:
    the longest run that fits at once, then the next job alone (a TE job is kept beyond the
    plan, a BE job that does not fit is stopped), repeat. The GPUs left."""
    te, stops = eng.te, plan.stops
    acc = [0]
    acc += accumulate(gpus)  # acc[j]: GPUs of span[:j]
    k, e = 0, len(span)
    while k < e:
        j = bisect_right(acc, p + acc[k], k, e + 1) - 1  # span[k:j] fit together
        if j > k:
            p -= acc[j] - acc[k]
            k = j
            continue
        i = span[k]
        if te[i] or gpus[k] <= p:
            p -= gpus[k]
        else:
            stops.append(i)
        k += 1
    return p
