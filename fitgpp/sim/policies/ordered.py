"""One list in priority order, one plan of the cluster: the schedule step shared by the
single-list schedulers of Tiresias's simulator (SJF, SRTF, SRSF; see docs/model.md).

Each step goes over every job in the system in the policy's order against a *plan* of
the cluster that starts from capacity (what stopping jobs hold counts as free: they are
leaving). A running job that fits the plan on its own nodes is kept (a running TE job is
always kept); a running BE job that does not fit is preempted. A waiting job that fits is
to start on the lowest-id node(s) of the plan with room for it; one that does not fit is
skipped (no head-of-line blocking). A stopping job waits its release. Then the
preemptions happen, and the jobs to start start on the nodes the plan gave them; a job
whose planned room is still held (by a job in its grace period, or a TE job kept beyond
the plan) waits, and the policy looks again at the next tick.

:class:`OrderedPolicy` keeps the waiting jobs (waiting or stopping) in a list sorted by a
key that is constant while a job does not run (``wait_key``) and the running jobs sorted
by their key at the tick (``run_key``); the step visits the merge of the two. On a
cluster of one node (a pool, as in Tiresias's comparisons) it visits only what can change
the plan (:func:`~fitgpp.sim.policies.ordered_visit.visit_pool`), decides a plain step
without a visit (:meth:`OrderedPolicy._quick`), and skips a step that can change nothing
(:meth:`OrderedPolicy._settled`; the engine then skips its visit at ``t + 1`` too).
A subclass with a ``mode`` field (:mod:`.modes`) set to ``"tiresias"`` keeps instead one
list, re-sorted (stably, by the key alone) only at Tiresias's events, an arrival or a
finish: ties then keep the order of the previous sort, as Tiresias's simulator does.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right, insort
from itertools import chain

from fitgpp.sim.engine import DONE, RUNNING, WAITING
from fitgpp.sim.policies.modes import check_mode
from fitgpp.sim.policies.ordered_visit import Plan, fits, visit_merged, visit_pool, visit_pool_list


class OrderedPolicy:
    """Base of a single-list policy: say ``wait_key(eng, i)`` (constant while job ``i`` does
    not run) and ``run_key(eng, i, t)`` (its key while running at tick ``t``); the lower key
    goes first, ties by index, i.e. ``(submit, job_id)``. If running jobs keep their order
    among themselves, say so with ``static(eng, i)`` (a key fixed while ``i`` runs) and
    ``offset(t)`` (``run_key = static - offset``): the step then keeps them sorted instead
    of sorting them. A subclass with a ``mode`` field offers ``"tiresias"`` too."""

    name = "ordered"
    max_preemptions = None  # no limit: a job may be preempted each time it is outranked
    waiting_any_order = True  # it never reads engine.waiting_be: a dict, O(1) per start
    static = None  # or a method (eng, i) -> key fixed while job i runs
    #: or a method (eng, i) -> (a, b), whole numbers fixed while job i runs, with
    #: ``run_key = a - b * t``: the running jobs of one ``b`` then keep their order, kept
    #: sorted per ``b`` and merged at each step (instead of keyed and sorted one by one)
    linear = None
    #: the keys move as :meth:`_settled` needs (a started job's no later, a stopped job's no
    #: earlier, a running job's falling relative to the waiting jobs' but at the ticks its
    #: ``prepare`` re-keys it): a step may then be skipped when nothing can change
    settles = False

    def _check_mode(self) -> None:
        if hasattr(self, "mode"):
            check_mode(self)

    def wait_key(self, eng, i: int):
        raise NotImplementedError

    def run_key(self, eng, i: int, t: int):
        raise NotImplementedError

    def offset(self, t: int):
        return 0

    # hooks for a policy whose keys depend on its own bookkeeping (DLAS); no-ops here
    def prepare(self, eng, s, t: int, arrivals) -> None:
        """Before the step: ``arrivals`` are about to join."""

    def stopping(self, eng, s, stops: list) -> None:
        """``stops`` (in visiting order) are about to be preempted."""

    def starting(self, eng, s, i: int) -> None:
        """Job ``i`` has just started."""

    def settle(self, eng, s, t: int) -> None:
        """After the step's preemptions and starts."""

    def list_key(self, eng, t: int):
        """With ``mode="tiresias"``: the key the list is sorted by at an event at tick ``t``."""
        state = eng.state
        return lambda i: (self.run_key(eng, i, t) if state[i] == RUNNING
                          else self.wait_key(eng, i))

    def list_keys(self, eng, t: int, order: list) -> list:
        """The keys of the jobs ``order`` (``list_key``), as a list; a policy may inline it."""
        return list(map(self.list_key(eng, t), order))

    def tiresias_mode(self) -> bool:
        """One list re-sorted at Tiresias's events (``mode="tiresias"``)?"""
        return getattr(self, "mode", "exact") == "tiresias"

    def event(self, eng, t: int, event: bool) -> bool:
        """With ``mode="tiresias"``: is tick ``t`` an event in Tiresias's sense (the list is
        re-sorted)? ``event``: a job arrived or finished (Tiresias's events)."""
        return event

    def bind(self, eng) -> None:
        # on one node (a pool) the waiting jobs are kept per demand, for the fast step
        one = eng.n_nodes == 1
        eng.scratch["ordered"] = {"wait": {} if one else [], "run": set(), "arrived": 0,
                                  "done": 0, "list": [], "min_gpu": min(eng.dg, default=0),
                                  "one": one, "rs": [], "ri": [], "rg": [], "skey": {}, "ends": [],
                                  "lin": {}, "wk": {}, "settled": False, "epoch": -1, "later": False,
                                  # the jobs in "wait": how many, and their GPUs, CPU, memory
                                  "wsum": [0, 0, 0, 0], "tiresias": self.tiresias_mode(),
                                  # a policy's own hooks (else the no-ops are not called)
                                  **{h: getattr(type(self), h) is not getattr(OrderedPolicy, h)
                                     for h in ("prepare", "starting", "settle")},
                                  # (_act_pool_static)
                                  "pool_static": one and self.static is not None
                                  and not self.tiresias_mode(),
                                  # CPU or memory asked by some job (else they never bind)
                                  "cm": any(eng.dc) or any(eng.dm)}

    def _wait_add(self, eng, s, i: int) -> None:
        wait, g, c, m = s["wait"], eng.dg[i], eng.dc[i], eng.dm[i]
        if s["one"]:
            wait = wait.get((g, c, m)) or wait.setdefault((g, c, m), [])
        entry = s["wk"][i] = (self.wait_key(eng, i), i)  # (its key is fixed while it waits)
        insort(wait, entry)
        w = s["wsum"]
        w[0] += 1
        w[1] += g
        w[2] += c
        w[3] += m

    def _wait_remove(self, eng, s, i: int) -> None:
        wait, g, c, m = s["wait"], eng.dg[i], eng.dc[i], eng.dm[i]
        if s["one"]:
            wait = wait[g, c, m]
        del wait[bisect_left(wait, s["wk"].pop(i))]
        w = s["wsum"]
        w[0] -= 1
        w[1] -= g
        w[2] -= c
        w[3] -= m

    def _run_add(self, eng, s, i: int) -> None:
        s["run"].add(i)
        heapq.heappush(s["ends"], eng.end[i] * eng.n + i)  # (end, i) as one number
        static = self.static
        if static is not None:
            key = s["skey"][i] = (static(eng, i), i)
            rs = s["rs"]
            k = bisect_left(rs, key)
            rs.insert(k, key)
            s["ri"].insert(k, i)
            s["rg"].insert(k, eng.dg[i])  # (its GPUs per task, beside it)
        elif self.linear is not None:  # (a, i) as one number, a * n + i
            a, b = self.linear(eng, i)
            key = s["skey"][i] = b, a * eng.n + i
            grp = s["lin"].get(b)
            if grp is None:
                grp = s["lin"][b] = []
            insort(grp, key[1])

    def _run_remove(self, s, i: int) -> None:
        s["run"].discard(i)
        if self.static is not None:
            rs = s["rs"]
            k = bisect_left(rs, s["skey"].pop(i))
            del rs[k], s["ri"][k], s["rg"][k]
        elif self.linear is not None:
            b, key = s["skey"].pop(i)
            grp = s["lin"][b]
            del grp[bisect_left(grp, key)]

    def _rekey(self, s, i: int, key) -> None:
        """Running job ``i``'s key fixed while it runs (``static``) is now ``key``."""
        rs, ri, rg, skey = s["rs"], s["ri"], s["rg"], s["skey"]
        was = skey[i]
        k = bisect_left(rs, was)
        g = rg[k]
        del rs[k], ri[k], rg[k]
        new = skey[i] = (key, i)
        k = bisect_left(rs, new)
        rs.insert(k, new)
        ri.insert(k, i)
        rg.insert(k, g)
        self._moved(s, i, was[0], key)

    def _moved(self, s, i: int, was, key) -> None:
        """Running job ``i``'s key changed from ``was`` to ``key`` (a policy's ``prepare``):
        note in ``s["later"]`` if it moved later past a waiting job (see :meth:`_settled`)."""
        if key <= was or s["later"]:
            return
        lo, hi = (was, i), (key, i)
        for lst in (s["wait"].values() if s["one"] else (s["wait"],)):
            k = bisect_right(lst, lo)
            if k < len(lst) and lst[k] < hi:
                s["later"] = True
                return

    def _running(self, eng, s, t: int) -> tuple[list, list, object]:
        """The running jobs in order: ``(keys, indices, offset)``, ``keys[k] = (static key,
        i)`` with ``run_key = static - offset``; with ``linear`` on one node, ``keys[k] =
        run_key * n + i`` (n jobs) and ``offset = -n``."""
        if self.static is not None:
            return s["rs"], s["ri"], self.offset(t)
        if self.linear is not None:  # merge the runs of each b (the sort finds them)
            rs, n = [], eng.n
            for b, grp in s["lin"].items():
                c = b * t * n
                rs += [e - c for e in grp]  # (run_key, i) as one number, run_key * n + i
            rs.sort()
            ri = [e % n for e in rs]
            if s["one"]:
                return rs, ri, -n  # (visit_pool compares as numbers; see there)
            return [(e // n, i) for e, i in zip(rs, ri)], ri, 0
        rs = sorted(zip([self.run_key(eng, i, t) for i in s["run"]], s["run"]))
        return rs, [i for _, i in rs], 0

    def schedule(self, eng, t: int) -> bool:
        """The step at tick ``t``; True when it settled (:meth:`_settled`): the next step
        changes nothing until an event, so the engine need not visit ``t + 1``."""
        s = eng.scratch["ordered"]
        k0 = k = s["arrived"]
        n, submit = eng.n, eng.submit
        while k < n and submit[k] <= t:
            k += 1
        s["arrived"] = k
        if eng.n_done != s["done"]:
            ends, run, state, past = s["ends"], s["run"], eng.state, (t + 1) * n
            while ends and ends[0] < past:  # ended by t (an entry of a preempted run is stale)
                i = heapq.heappop(ends) % n
                if i in run and state[i] != RUNNING:
                    self._run_remove(s, i)
        if s["tiresias"]:
            plan = Plan(eng, s["min_gpu"])
            self._visit_list(eng, s, plan, range(k0, k), t)
            s["done"] = eng.n_done
            self._act(eng, s, plan, t, True)
            self._settled(eng, s, plan, True)
        else:
            self._step(eng, s, t, k0, k)
        return s["settled"]

    def _step(self, eng, s, t: int, k0: int, k: int) -> None:
        """The step outside the Tiresias modes: the waiting jobs in ``s["wait"]`` (fixed
        keys), the running ones per :meth:`_running`; ``k0:k`` arrived now."""
        if s["prepare"]:
            self.prepare(eng, s, t, range(k0, k))
        s["done"] = eng.n_done
        if k == k0 and s["settled"] and eng.epoch == s["epoch"] and not s["later"]:
            return  # nothing can start or stop (see _settled)
        for i in range(k0, k):
            self._wait_add(eng, s, i)
        if s["one"] and not s["wsum"][0]:  # nothing waits: nothing starts or stops
            if s["settle"]:
                self.settle(eng, s, t)
            self._settled(eng, s, None, False)
            return
        plan = Plan(eng, s["min_gpu"])
        if s["one"]:
            if self._quick(eng, s, plan, k0, k, t):
                pass
            elif self.static is not None:  # (self._running, inlined)
                visit_pool(eng, plan, s["wait"], s["rs"], s["ri"], self.offset(t), s["cm"],
                           rg=s["rg"])
            elif self.linear is not None and not s["cm"]:
                visit_pool(eng, plan, s["wait"], None, None, 0, False, s["lin"], t)
            else:
                rs, ri, off = self._running(eng, s, t)
                visit_pool(eng, plan, s["wait"], rs, ri, off, s["cm"])
        else:
            rs, ri, off = self._running(eng, s, t)
            visit_merged(eng, plan, s["wait"], rs, ri, off)
        self._act(eng, s, plan, t, False)
        self._settled(eng, s, plan, False)

    def _quick(self, eng, s, plan: Plan, k0: int, k: int, t: int) -> bool:
        """On one node: the step's outcome without the visit, when it is plain; True if so
        (``plan.starts`` holds it). Every running job fits the node with the others, so the
        visit keeps them all unless a start takes their room (so with nothing waiting it
        does nothing: :meth:`_step`), and when all that waits fits the room the running jobs
        leave (stopping jobs count as free), it starts every waiting job, in order, and
        stops none. When
        only jobs that arrived are new since a settled step (see :meth:`_settled`), an
        arrival that does not fit beside the running jobs ahead of it changes nothing: if
        none fits, the step does nothing."""
        w = s["wsum"]
        if (w[1] <= eng.free_g[0] + eng.stop_g[0] and w[2] <= eng.free_c[0] + eng.stop_c[0]
                and w[3] <= eng.free_m[0] + eng.stop_m[0]):
            if w[0] == k - k0:  # only the arrivals wait
                wk = s["wk"]
                plan.starts = [(k0, [0])] if k == k0 + 1 else \
                    [(i, [0]) for _, i in sorted(map(wk.__getitem__, range(k0, k)))]
                return True
            state, lists = eng.state, [lst for lst in s["wait"].values() if lst]
            entries = lists[0] if len(lists) == 1 else sorted(chain.from_iterable(lists))
            plan.starts = [(i, [0]) for _, i in entries if state[i] == WAITING]
            return True
        if k == k0 or s["cm"] or not s["settled"] or eng.epoch != s["epoch"] or s["later"]:
            return False
        cap, dg, wk = eng.cap_g[0], eng.dg, s["wk"]
        return all(dg[a] > cap - self._ahead(eng, s, wk[a], t) for a in range(k0, k))

    def _ahead(self, eng, s, entry, t: int) -> int:
        """GPUs of the running jobs ahead of the waiting job ``entry = (key, i)``."""
        key, i = entry
        if self.static is not None:
            off = self.offset(t)
            pos = bisect_left(s["rs"], ((key + off) if off else key, i))
            return sum(s["rg"][:pos])
        if self.linear is not None:  # each group b: b GPUs per job (one node: one task)
            n = eng.n
            return sum(b * bisect_left(grp, (key + b * t) * n + i) for b, grp in s["lin"].items())
        rs, ri, off = self._running(eng, s, t)
        return sum(eng.dg[j] for (rk, j) in rs if (rk, j) < entry)

    def _settled(self, eng, s, plan: Plan, tiresias: bool) -> None:
        """Note whether the next step may be skipped: on one node, outside the Tiresias
        modes, for a policy whose keys move as ``settles`` says.

        After a step that holds no start, the same step would change nothing: a job it
        started has a key as running no later than its key as waiting, a job it stopped a
        key as waiting no earlier than its key as running, so each waiting job has at least
        the running jobs ahead of it that it had, where it did not fit. Until something
        arrives, finishes, is preempted or released (``eng.epoch``), only the keys change: a
        running job's key falls relative to the waiting jobs' (fixed while they wait) or, at
        a tick the policy watches, moves, and its ``prepare`` sets ``s["later"]`` when one
        moves *later* past a waiting job. While none does, the next step starts nothing: on
        one node every running job fits the plan when nothing starts (they fit the node
        together), and each waiting job has the same running jobs ahead of it or more, so
        no more room; and so it stops nothing either."""
        s["settled"] = (self.settles and s["one"] and not tiresias
                        and not s.pop("held", False))
        s["epoch"], s["later"] = eng.epoch, False

    def _visit_list(self, eng, s, plan: Plan, arrivals, t: int) -> None:
        order, state = s["list"], eng.state
        if self.event(eng, t, bool(arrivals) or eng.n_done != s["done"]):  # re-sort
            order[:] = [i for i in order if state[i] != DONE]
            order.extend(arrivals)
            keys = self.list_keys(eng, t, order)  # a stable sort by the keys alone
            order[:] = [order[k] for k in sorted(range(len(order)), key=keys.__getitem__)]
        if s["one"] and not s["cm"]:
            visit_pool_list(eng, plan, order, s["min_gpu"])
            return
        k = 0
        for k, i in enumerate(order):
            if plan.full():
                break
            plan.visit(i)
        else:
            return
        for i in order[k:]:  # no room left: a BE job is stopped, a TE job kept
            if state[i] == RUNNING:
                plan.keep(i)

    def _act(self, eng, s, plan: Plan, t: int, tiresias: bool) -> None:
        """Preempt ``plan.stops``, then start ``plan.starts`` where their room is free now (a
        start whose room is still held waits: the policy looks again at the next tick)."""
        if s["pool_static"]:
            return self._act_pool_static(eng, s, plan, t)
        stops, starts = plan.stops, plan.starts
        if stops:
            self.stopping(eng, s, stops)
            preempt, run_remove, wait_add = eng.preempt, self._run_remove, self._wait_add
            for i in stops:
                preempt(i, t)
                run_remove(s, i)
                if not tiresias:
                    wait_add(eng, s, i)
        held = False
        if starts:
            start, wait_remove, run_add = eng.start, self._wait_remove, self._run_add
            starting = self.starting if s["starting"] else None
            fg, fc, fm, dg, dc, dm = eng.free_g, eng.free_c, eng.free_m, eng.dg, eng.dc, eng.dm
            rg, rc, rm = eng.res_g, eng.res_c, eng.res_m
            for i, nodes in starts:
                if len(nodes) == 1:  # fits(eng, i, n), inlined
                    n = nodes[0]
                    ok = (fg[n] - rg[n] >= dg[i] and fc[n] - rc[n] >= dc[i]
                          and fm[n] - rm[n] >= dm[i])
                else:
                    ok = all(fits(eng, i, n) for n in nodes)
                if not ok:
                    held = True  # its room is still held: it waits; look again next tick
                    continue
                if not tiresias:
                    wait_remove(eng, s, i)
                start(i, nodes[0] if len(nodes) == 1 else nodes, t)
                if starting is not None:
                    starting(eng, s, i)
                run_add(eng, s, i)
        if s["settle"]:
            self.settle(eng, s, t)
        if held:
            s["held"] = True
            eng.wake(t + 1)

    def _act_pool_static(self, eng, s, plan: Plan, t: int) -> None:
        """:meth:`_act` on one node outside the Tiresias modes, for a policy with ``static``
        keys: the bookkeeping of :meth:`_run_remove` and :meth:`_wait_add` (a stop), and of
        :meth:`_wait_remove` and :meth:`_run_add` (a start), inlined."""
        stops, starts = plan.stops, plan.starts
        run, skey, rs, ri, rgpu = s["run"], s["skey"], s["rs"], s["ri"], s["rg"]
        wait, wk, wsum = s["wait"], s["wk"], s["wsum"]
        dg, dc, dm, static = eng.dg, eng.dc, eng.dm, self.static
        if stops:
            self.stopping(eng, s, stops)
            preempt, wait_key = eng.preempt, self.wait_key
            for i in stops:
                preempt(i, t)
                run.discard(i)
                k = bisect_left(rs, skey.pop(i))
                del rs[k], ri[k], rgpu[k]
                d = (g, c, m) = dg[i], dc[i], dm[i]
                lst = wait.get(d) or wait.setdefault(d, [])
                entry = wk[i] = (wait_key(eng, i), i)  # (its key is fixed while it waits)
                insort(lst, entry)
                wsum[0] += 1
                wsum[1] += g
                wsum[2] += c
                wsum[3] += m
        held = False
        if starts:
            start, ends, n = eng.start, s["ends"], eng.n
            starting = self.starting if s["starting"] else None
            fg, fc, fm = eng.free_g, eng.free_c, eng.free_m
            rg, rc, rm = eng.res_g, eng.res_c, eng.res_m
            for i, _ in starts:
                g, c, m = dg[i], dc[i], dm[i]
                if fg[0] - rg[0] < g or fc[0] - rc[0] < c or fm[0] - rm[0] < m:
                    held = True  # its room is still held: it waits; look again next tick
                    continue
                lst = wait[g, c, m]
                del lst[bisect_left(lst, wk.pop(i))]
                wsum[0] -= 1
                wsum[1] -= g
                wsum[2] -= c
                wsum[3] -= m
                start(i, 0, t)
                if starting is not None:
                    starting(eng, s, i)
                run.add(i)
                heapq.heappush(ends, eng.end[i] * n + i)
                key = skey[i] = (static(eng, i), i)
                k = bisect_left(rs, key)
                rs.insert(k, key)
                ri.insert(k, i)
                rgpu.insert(k, g)
        if s["settle"]:
            self.settle(eng, s, t)
        if held:
            s["held"] = True
            eng.wake(t + 1)
