"""LAS's queues and its plan, kept incrementally (the rules are in :mod:`.las`).

The queues of one run live in ``engine.scratch["las"]``:

- ``run[q]``: the running jobs of queue ``q`` in queue order, as ``{job: seq}`` (seq grows with
  each job added, so queue order is seq order); ``onq[q][n]``: those of them on node ``n``;
  ``P[q]``: per node, capacity minus the demand of the running jobs of queues ``0..q`` (GPU,
  CPU, memory lists);
- ``waitq``: the other jobs of each queue (waiting or stopping) in queue order, by GPU
  demand (:class:`.las_wait.WaitQueues`);
- ``dem[q]``: running jobs demoted into queue ``q`` at this tick, at its tail (visited after
  its waiting jobs), until the step ends and they join ``run[q]``.

A plan goes over queue 0, 1, ... against a ledger that starts from capacity. Until the first
job is planned to start, every running job is kept (running jobs fit the nodes they hold), so
the plan starts at the first queue with anything to decide, from capacity minus the sums of
the queues so far. A node is *dirty* once a start is planned on it: only there can a running
job fail to fit, so a queue's running jobs are kept in bulk (its sums) on clean nodes and
looked at one by one only where they hold a dirty node.
"""

from __future__ import annotations

import heapq

from fitgpp.sim.engine import WAITING
from fitgpp.sim.policies.las_wait import WaitQueues


def new_queues(eng, k: int) -> dict:
    """Empty queues for ``k`` levels on the engine's nodes."""
    nn = eng.n_nodes
    return {"run": [{} for _ in range(k)], "waitq": WaitQueues(eng.dg, k),
            "dem": [[] for _ in range(k)],
            "onq": [[{} for _ in range(nn)] for _ in range(k)],
            "P": [[list(eng.cap_g), list(eng.cap_c), list(eng.cap_m)] for _ in range(k)],
            "seq": 0, "demand": list(zip(eng.dg, eng.dc, eng.dm)),
            "at": [()] * eng.n}


def add_running(eng, s, q: int, i: int) -> None:
    """Running job ``i`` joins the tail of ``run[q]``."""
    s["seq"] += 1
    s["run"][q][i] = s["seq"]
    onq = s["onq"][q]
    at = s["at"][i] = eng.nodes[i]
    for n in at:
        onq[n][i] = None
    _charge(eng, s, q, i, at, 1)


def drop_running(eng, s, q: int, i: int) -> None:
    """Job ``i`` leaves ``run[q]`` (it finished, stopped or was demoted; a stopped job
    released at once holds no nodes any more: the ones it was added with count)."""
    del s["run"][q][i]
    onq, at = s["onq"][q], s["at"][i]
    for n in at:
        del onq[n][i]
    _charge(eng, s, q, i, at, -1)


def _charge(eng, s, q: int, i: int, at, sign: int) -> None:
    g, c, m = sign * eng.dg[i], sign * eng.dc[i], sign * eng.dm[i]
    for pg, pc, pm in s["P"][q:]:
        for n in at:
            pg[n] -= g
            pc[n] -= c
            pm[n] -= m


def plan(eng, s) -> tuple[list, list, list]:
    """Go over the queues against a planned ledger; return (jobs to start with their planned
    nodes, jobs to preempt, per queue the demoted jobs kept), starts and stops in visiting
    order."""
    state = eng.state
    starts, stops = [], []
    kept = [[] for _ in s["run"]]
    # the ledger, once something is to be decided: [gpu, cpu, mem] lists per node, equal to
    # P[q] but on the nodes in `touched`; `dirty`: nodes a start is planned on
    led = None
    touched: dict[int, None] = {}
    dirty: dict[int, None] = {}
    for q in range(len(s["run"])):
        dem = s["dem"][q]
        if led is None:
            if not dem and not s["waitq"].any_waiting(q, state):
                continue  # every running job so far is kept; nothing else to decide here
            led = [list(x) for x in s["P"][q]]
        else:
            _keep_queue(eng, s, q, led, touched, dirty, stops)
        _place_waiting(eng, s, q, led, touched, dirty, starts)
        for i in dem:
            if _keep(eng, led, dirty, i):
                kept[q].append(i)
                touched.update(dict.fromkeys(eng.nodes[i]))
            else:
                stops.append(i)
    return starts, stops, kept


def _keep_queue(eng, s, q: int, led, touched, dirty, stops: list) -> None:
    """The running jobs of queue ``q``: in bulk (the ledger moves from ``P[q-1]`` to ``P[q]``)
    wherever the whole queue fits, one by one (in queue order) where it holds a dirty node
    it does not fit on as a whole (a *tight* node: only there can one of them fail to fit,
    since leaving out a job only leaves more room); a BE job that does not fit on a tight
    node is to preempt."""
    run = s["run"][q]
    if not run:
        return  # P[q] == P[q-1]: the ledger stays
    lg, lc, lm = led
    bg, bc, bm = s["P"][q - 1]
    delta = [(n, lg[n] - bg[n], lc[n] - bc[n], lm[n] - bm[n]) for n in touched]
    ng, nc, nm = s["P"][q]
    lg, lc, lm = led[0], led[1], led[2] = ng.copy(), nc.copy(), nm.copy()
    for n, a, b, c in delta:
        lg[n] += a
        lc[n] += b
        lm[n] += c
    tight = [n for n in dirty if lg[n] < 0 or lc[n] < 0 or lm[n] < 0]
    if tight:
        _keep_tight(eng, s, q, led, touched, tight, stops)


def _keep_tight(eng, s, q: int, led, touched, tight: list, stops: list) -> None:
    """Queue ``q``'s running jobs on the tight nodes, one by one in queue order, against the
    plan as it was before the queue (``pre``); the others were kept in bulk."""
    lg, lc, lm = led
    bg, bc, bm = s["P"][q - 1]
    ng, nc, nm = s["P"][q]
    # the plan before the queue on the tight nodes: after it, less the queue's jobs there
    pre = {n: [lg[n] + bg[n] - ng[n], lc[n] + bc[n] - nc[n], lm[n] + bm[n] - nm[n]]
           for n in tight}
    onq, seq = s["onq"][q], s["run"][q]
    jobs = set()
    for n in tight:
        jobs.update(onq[n])
    dg, dc, dm, te, nodes = eng.dg, eng.dc, eng.dm, eng.te, eng.nodes
    for i in sorted(jobs, key=seq.__getitem__):
        g, c, m, at = dg[i], dc[i], dm[i], nodes[i]
        if te[i] or all(pre[n][0] >= g and pre[n][1] >= c and pre[n][2] >= m
                        for n in at if n in pre):
            for n in at:
                p = pre.get(n)
                if p is not None:
                    p[0] -= g
                    p[1] -= c
                    p[2] -= m
        else:
            stops.append(i)
            for n in at:  # its room off the tight nodes was taken in bulk: give it back
                if n not in pre:
                    lg[n] += g
                    lc[n] += c
                    lm[n] += m
                    touched[n] = None
    for n, p in pre.items():
        lg[n], lc[n], lm[n] = p


def _keep(eng, led, dirty, i: int) -> bool:
    """A running job demoted this tick: kept (its room taken) if it fits the plan on its
    dirty nodes or is TE; on a clean node a running job always fits."""
    lg, lc, lm = led
    g, c, m, at = eng.dg[i], eng.dc[i], eng.dm[i], eng.nodes[i]
    if not eng.te[i] and not all(lg[n] >= g and lc[n] >= c and lm[n] >= m
                                 for n in at if n in dirty):
        return False
    for n in at:
        lg[n] -= g
        lc[n] -= c
        lm[n] -= m
    return True


def _place_waiting(eng, s, q: int, led, touched, dirty, starts: list) -> None:
    """Each waiting job of queue ``q``, in order: to start on the lowest-id node(s) of the
    plan with room, if any. The plan only shrinks, so the most GPUs of one node, found first
    and again once a search fails, still bounds it after later starts: the jobs above it
    are passed over without a search, each GPU demand's list at once (not even opened if
    above it from the start; the bound never grows), and once no node has ``min_gpu`` GPUs
    left nobody else fits."""
    state, demand, tasks = eng.state, s["demand"], eng.tasks
    wq = s["waitq"]
    gpu, key = wq.gpu, wq.key
    lg, lc, lm = led
    min_gpu, nn = s["min_gpu"], len(lg)
    bg = max(lg)  # a bound on the largest room of one node in GPUs (exact until a start)
    if bg < min_gpu:
        return
    exact = True
    heads = wq.visit(q, bg)
    pop, replace = heapq.heappop, heapq.heapreplace
    while heads:
        _, cl, i, rest = heads[0]
        if gpu[cl] > bg:
            pop(heads)  # no node has room for one task of this demand's jobs
            continue
        for k, j in rest:  # the class's next job takes its place in the merge
            if key[j] == k:
                replace(heads, (k, cl, j, rest))
                break
        else:
            pop(heads)
        if state[i] != WAITING:
            continue  # a stopping one waits for its release
        g, c, m = demand[i]
        k = tasks[i]
        at = []
        for n in range(nn):
            if lg[n] >= g and lc[n] >= c and lm[n] >= m:
                at.append(n)
                if len(at) == k:
                    break
        else:
            if not exact:  # find the bound once a search fails; it holds until a start
                bg, exact = max(lg), True
                if bg < min_gpu:
                    return
            continue
        for n in at:
            lg[n] -= g
            lc[n] -= c
            lm[n] -= m
            dirty[n] = touched[n] = None
        exact = False
        starts.append((i, at))


def reorder(eng, s, started: list, stopped: list, kept: list) -> None:
    """Each queue becomes: its running jobs as visited, then its other jobs as visited (so
    a job preempted now goes ahead of the jobs that were waiting; one demoted now and
    preempted stays at the tail). ``started``: jobs that did start, in visiting order."""
    level, run, wq = s["level"], s["run"], s["waitq"]
    out = {}
    for i in stopped:
        q = level[i]
        if i in run[q]:
            drop_running(eng, s, q, i)
            out.setdefault(q, [[], []])[0].append(i)
        else:  # demoted at this tick: it stays at the tail, after the waiting jobs
            out.setdefault(q, [[], []])[1].append(i)
    for i in started:
        q = level[i]
        wq.remove(q, i)
        add_running(eng, s, q, i)
    for q, dem in enumerate(s["dem"]):
        if dem:
            for i in kept[q]:
                add_running(eng, s, q, i)
            dem.clear()
    for q, (front, tail) in out.items():
        if front:
            wq.push_front(q, front)
        for i in tail:
            wq.push_back(q, i)
