"""The tick engine: owns time, job states and the per-node ledger of docs/model.md.

One tick ``t`` runs, in order: finish, release, arrive, schedule (the
policy's turn), advance. Work is not decremented tick by tick: a running job
stores the tick ``end`` at which its work reaches 0, so "remaining work at
``t``" is ``end - t``. The engine jumps from one *event* tick to the next
(an arrival, a finish, a release); docs/model.md says quiet ticks change nothing,
which holds except after a schedule step that preempted: such a step can
free or re-project resources that TE jobs earlier in the same pass had
already looked at, so the engine also visits ``t + 1`` then (unless the policy's
``schedule`` returned True: its next step changes nothing until an event). With
``jump=False`` it steps every tick (for tests); results are identical.

**The policy protocol.** It is written down once, as :class:`fitgpp.sim.policies.base.Policy`:
``name``, ``bind(engine)``, ``schedule(engine, t)``, ``max_preemptions`` (None = no limit)
and optionally ``victim_key(engine, i)``. A policy reads this engine (never writes it),
acts only through :meth:`Engine.start`, :meth:`Engine.preempt`, :meth:`Engine.reserve`,
:meth:`Engine.wake` and :meth:`Engine.rekey`, and keeps per-run state in ``scratch``.
The engine refuses (:mod:`fitgpp.sim.refusals`: a PolicyError before anything changes) to
preempt a TE job, a job not running or a BE job preempted ``max_preemptions`` times, and to
start a job that is not waiting or on a node without its demand free (never overcommitted).

Units: ticks everywhere in here; demands as (gpu, cpu_milli, mem_mib).
"""

from __future__ import annotations

import heapq
import numbers
from array import array
from bisect import bisect_left, insort

import numpy as np

from fitgpp.errors import FitgppError
from fitgpp.sim.columns import largest_share, shared as _shared, small as _small
from fitgpp.sim.heap import push_waiting, remove_waiting
from fitgpp.sim.ledger import account
from fitgpp.sim.refusals import preempt_refusal, start_refusal

from fitgpp.sim.invariants import check as _check_invariants
from fitgpp.sim.states import DONE, PENDING, RUNNING, STOPPING, WAITING


class PolicyError(FitgppError):
    """A policy parameter is out of range, or a policy broke the engine's protocol; the
    message names it. Defined here, below the policies, because the engine raises it."""


class Engine:
    """State of one simulation. Jobs are indexed ``0..n-1`` in ``(submit, job_id)`` order,
    so the queue order of SPEC is plain index order."""

    #: What is recorded at each visited tick, after the schedule step, in this order: GPUs
    #: running, GPUs held in grace periods, GPUs reserved, TE and BE jobs waiting.
    RECORDED = ("run_gpu", "stop_gpu", "resv_gpu", "waiting_te", "waiting_be")

    def __init__(self, jobs: dict[str, np.ndarray], capacity: np.ndarray, policy,
                 *, tick: float = 60.0, check: bool = False, segments: bool = False):
        self._init_jobs(jobs, capacity)
        n = self.n
        #: seconds per tick (what policies need to turn seconds into ticks)
        self.tick = float(tick)
        self._init_nodes(capacity)

        self.waiting_te: dict[int, None] = {}  # insertion order == index order (TE never requeue)
        # a heap of indices; a dict (O(1) removal) for a policy starting them in its own order
        self.waiting_be = {} if getattr(policy, "waiting_any_order", False) else []
        #: every waiting job (TE and BE) by its GPUs per task, fewest first (for the ledger)
        self.waiting_g: dict[int, dict[int, None]] = {g: {} for g in sorted(set(self.dg))}
        self._finish_heap: list[tuple[int, int]] = []
        self._release_heap: list[tuple[int, int]] = []
        self._wake_heap: list[int] = []  # ticks a policy asked to be visited at (see wake)
        self.now = 0                     # the tick being run
        self._arrival = 0
        self.preempted_in_step = False
        #: bumped whenever resources may have become available (finish, release, preemption);
        #: a failed placement stays failed while it is unchanged, which policies may memoize
        self.epoch = 0
        #: per-run scratch space for policies (their parameter objects are frozen)
        self.scratch: dict = {}
        self.n_done = 0
        #: GPUs held by running jobs, by stopping jobs, and reserved (cluster totals)
        self.run_gpu = self.stop_gpu = self.resv_gpu = 0
        self.policy = policy
        self._victim_key = getattr(policy, "victim_key", None)
        self._vkey: dict = {}  # running BE job -> the victim key it is filed under
        #: times a BE job may be preempted; None: no limit (a policy that never preempts may say 0)
        self.max_preemptions = getattr(policy, "max_preemptions", None)
        #: per node, running BE jobs as sorted ``(victim_key, index)``; None if the policy needs none
        self.running_be = [[] for _ in range(self.n_nodes)] if self._victim_key else None
        self.check = check
        #: with ``segments=True``: ``(i, node, kind, start, end)`` per closed interval, kind 0 =
        #: running, 1 = grace period after a preemption signal (ticks)
        self.segments: list[tuple[int, int, int, int, int]] | None = [] if segments else None
        # time series: one row per visited tick, state after the schedule step: the ticks, and
        # 5 values per tick (RECORDED), as int64 arrays (a list of tuples took ~200 bytes
        # per visited tick, 40 here)
        self.ledger, self.total_gpu, self.taken = [0, 0, 0, -1, 0, -1], sum(self.cap_g), 0
        self.trace_t = array("q")
        # GPUs (at most the cluster's) and queue lengths (at most n): int32 when they fit
        self.trace_vals = array("i" if max(self.total_gpu, n) < 2**31 else "q")
        policy.bind(self)

    def _init_jobs(self, jobs: dict[str, np.ndarray], capacity: np.ndarray) -> None:
        """Per-job columns in queue order, and every job's run state at tick 0."""
        order = np.lexsort((jobs["job_id"], jobs["submit"]))
        self.order = order  # position -> row of the input
        n = self.n = len(order)
        # each column in queue order only while it is converted (not all ten at once), and
        # as it is when the input is in queue order already (a drawn trace is)
        ordered = bool((order == np.arange(n)).all())

        def col(k, default=0):
            v = np.asarray(jobs[k]) if k in jobs else np.full(n, default, dtype=np.int64)
            return v if ordered else v[order]

        #: (an int64 array: read only in messages; 8 bytes a job)
        self.job_id = array("q", col("job_id").astype(np.int64).tobytes())
        self.te = col("te").astype(bool).tolist()
        self.dg = _shared(col("gpu"))
        self.dc = _shared(col("cpu_milli"))
        self.dm = _shared(col("mem_mib"))
        self.work = _shared(col("work"))
        self.gp = _small(col("gp"))
        self.submit = array("q", col("submit").astype(np.int64).tobytes())  # (mostly distinct)
        #: tasks of a gang (1 for an ordinary job); each holds the per-task demand on its own node
        tasks = col("tasks", 1)
        self.tasks = _small(tasks)
        #: restart overhead in ticks: reload time each time a preempted job starts again
        self.ro = _small(col("ro"))
        #: size(x) = tasks * max_r demand[r] / C[r], C[r] the largest capacity of r (SPEC)
        self.size = _shared(largest_share(capacity, [col(k) for k in
                                                      ("gpu", "cpu_milli", "mem_mib")]) * tasks)

        self.state = array("b", [PENDING]) * n  # (small ints: one byte a job)
        #: every node a job holds, ascending (after it finished: those it finished on)
        self.nodes: list[tuple[int, ...]] = [()] * n
        # Lists a policy reads often hold Python ints; the others are int64 arrays (8 bytes a
        # job instead of 8 + 32 once their values are set: a million jobs in little memory)
        self.end = array("q", bytes(8 * n))  # tick at which a running job's work reaches 0
        self.rem = list(self.work)     # remaining work while not running
        self.preemptions = array("i", [0]) * n
        self.first_start = array("q", [-1]) * n
        self.finish = array("q", [-1]) * n
        self.run_ticks = array("q", bytes(8 * n))     # ticks running, reloads included
        self.reload_ticks = array("q", bytes(8 * n))  # ticks running spent reloading a checkpoint
        self.stop_ticks = array("q", bytes(8 * n))
        self.run_ro = array("q", bytes(8 * n))        # reload ticks at the start of the current run
        self.started_at = array("q", bytes(8 * n))    # tick of the current run's start
        self.resv = array("i", [-1]) * n  # node a waiting TE job holds a reservation on

    def _init_nodes(self, capacity: np.ndarray) -> None:
        """Per-node capacity, free, stopping and reserved resources at tick 0."""
        cap = capacity.astype(np.int64)
        self.n_nodes = len(cap)
        self.cap_g, self.cap_c, self.cap_m = (cap[:, k].tolist() for k in range(3))
        self.free_g, self.free_c, self.free_m = list(self.cap_g), list(self.cap_c), list(self.cap_m)
        z = [0] * self.n_nodes
        self.stop_g, self.stop_c, self.stop_m = list(z), list(z), list(z)
        self.res_g, self.res_c, self.res_m = list(z), list(z), list(z)
        #: free_g - res_g per node, kept up to date for fast "does any node have g GPUs" checks
        self.avail_g = list(self.cap_g)
        self._one = [(n,) for n in range(self.n_nodes)]  # the nodes of a one-task job on n

    # ---------------------------------------------------------------- actions
    def start(self, i: int, n, t: int) -> None:
        """Start waiting job ``i`` at tick ``t`` on node ``n`` (an int), or for a gang on the
        nodes ``n`` (one per task, distinct); a TE job consumes its reservation."""
        if type(n) is not int or self.tasks[i] != 1:
            return self._start_general(i, n, t)
        g, c, m = self.dg[i], self.dc[i], self.dm[i]
        if self.state[i] != WAITING or self.free_g[n] < g or self.free_c[n] < c \
                or self.free_m[n] < m:
            self._refuse("start", i, start_refusal(self, i, (n,)))
        self.free_g[n] -= g
        self.free_c[n] -= c
        self.free_m[n] -= m
        self.run_gpu += g
        if self.te[i]:
            r = self.resv[i]
            if r >= 0:
                if r != n:
                    raise RuntimeError(f"job {self.job_id[i]} reserved node {r}, started on {n}")
                self.res_g[r] -= g
                self.res_c[r] -= c
                self.res_m[r] -= m
                self.resv_gpu -= g
                self.resv[i] = -1
            else:
                self.avail_g[n] -= g
            del self.waiting_te[i], self.waiting_g[g][i]
        else:
            self.avail_g[n] -= g
            self._unqueue_be(i)
        self._running(i, self._one[n], t)

    def _start_general(self, i: int, n, t: int) -> None:
        """:meth:`start` for gangs, and for node ids that are not plain ints."""
        if isinstance(n, numbers.Integral):
            nodes = (int(n),)
        else:
            nodes = tuple(sorted(int(x) for x in n))
        k = self.tasks[i]
        if len(nodes) != k or len(set(nodes)) != k:
            raise RuntimeError(f"job {self.job_id[i]} has {k} task(s) and needs as many distinct"
                               f" nodes, got {nodes}")
        if k == 1:
            return self.start(i, nodes[0], t)
        if self.resv[i] >= 0:
            raise RuntimeError(f"gang {self.job_id[i]} holds a reservation")
        g, c, m = self.dg[i], self.dc[i], self.dm[i]
        if self.state[i] != WAITING or any(self.free_g[x] < g or self.free_c[x] < c
                                           or self.free_m[x] < m for x in nodes):
            self._refuse("start", i, start_refusal(self, i, nodes))
        for n in nodes:
            self.free_g[n] -= g
            self.free_c[n] -= c
            self.free_m[n] -= m
            self.avail_g[n] -= g
        self.run_gpu += g * k
        if self.te[i]:
            del self.waiting_te[i], self.waiting_g[g][i]
        else:
            self._unqueue_be(i)
        self._running(i, nodes, t)

    def _unqueue_be(self, i: int) -> None:
        """Take waiting BE job ``i`` out of ``waiting_be`` (the caller checked it waits)."""
        remove_waiting(self.waiting_be, i)
        del self.waiting_g[self.dg[i]][i]

    def _running(self, i: int, nodes: tuple[int, ...], t: int) -> None:
        self.taken += 1
        self.state[i] = RUNNING
        self.nodes[i] = nodes
        self.started_at[i] = t
        if self.preemptions[i]:
            # a job that was preempted first reloads its checkpoint (SPEC "Restart cost")
            e = self.end[i] = t + self.ro[i] + self.rem[i]
            self.run_ro[i] = self.ro[i]
        else:  # its first start (only a preemption stops a job): run_ro[i] is still 0
            e = self.end[i] = t + self.rem[i]
            self.first_start[i] = t
        heapq.heappush(self._finish_heap, (e, i))
        if self.running_be is not None and not self.te[i]:
            key = self._vkey[i] = (self._victim_key(self, i), i)
            for n in nodes:
                insort(self.running_be[n], key)

    def reserve(self, i: int, n: int) -> None:
        """Waiting TE job ``i`` reserves its demand on node ``n``."""
        self.taken += 1
        self.resv[i] = n
        self.res_g[n] += self.dg[i]
        self.res_c[n] += self.dc[i]
        self.res_m[n] += self.dm[i]
        self.resv_gpu += self.dg[i]
        self.avail_g[n] -= self.dg[i]

    def preempt(self, i: int, t: int) -> None:
        """Signal running BE job ``i`` (every task of a gang): it stops now and is released
        at ``t + gp``. Its work left is what remained at the signal; an unfinished reload is
        lost (SPEC "Restart cost")."""
        self._check_preempt(i)
        nodes = self.nodes[i]
        self.preempted_in_step = True
        self.epoch += 1
        self.preemptions[i] += 1
        ran = t - self.started_at[i]
        self.rem[i] = min(self.rem[i], self.end[i] - t)
        self.run_ticks[i] += ran
        self.reload_ticks[i] += min(self.run_ro[i], ran)
        if self.running_be is not None:
            self._unfile(i)
        self.state[i] = STOPPING
        g, c, m = self.dg[i], self.dc[i], self.dm[i]
        for n in nodes:
            self.stop_g[n] += g
            self.stop_c[n] += c
            self.stop_m[n] += m
        self.run_gpu -= g * len(nodes)
        self.stop_gpu += g * len(nodes)
        gp = self.gp[i]
        self.stop_ticks[i] += gp
        if self.segments is not None:
            for n in nodes:
                self.segments.append((i, n, 0, self.started_at[i], t))
                self.segments.append((i, n, 1, t, t + gp))
        if gp == 0:
            self._release(i)
        else:
            heapq.heappush(self._release_heap, (t + gp, i))

    def _check_preempt(self, i: int) -> None:
        """Refuse a preemption the protocol forbids, before anything changes."""
        bad = preempt_refusal(self, i)
        if bad:
            self._refuse("preempt", i, bad)

    def _refuse(self, what: str, i: int, bad: str) -> None:
        raise PolicyError(f"{getattr(self.policy, 'name', self.policy)}: cannot {what} job "
                          f"{self.job_id[i]} at tick {self.now}: {bad}")

    def _unfile(self, i: int) -> None:
        """Take running BE job ``i`` out of ``running_be`` on each of its nodes."""
        key = self._vkey.pop(i)
        for n in self.nodes[i]:
            lst = self.running_be[n]
            k = bisect_left(lst, key)
            if k == len(lst) or lst[k][1] != i:
                raise RuntimeError("running-BE index out of sync")
            del lst[k]

    def rekey(self, i: int) -> None:
        """Refile running BE job ``i`` in ``running_be`` under its victim key as it is now: for
        a policy whose victim order changes during a run (call it when the key changes)."""
        if self.running_be is None or self.te[i] or self.state[i] != RUNNING:
            return
        self._unfile(i)
        key = self._vkey[i] = (self._victim_key(self, i), i)
        for n in self.nodes[i]:
            insort(self.running_be[n], key)

    def progress(self, i: int, t: int) -> int:
        """Ticks of work job ``i`` has done by tick ``t`` (reloads excluded)."""
        rem = self.rem[i]
        if self.state[i] == RUNNING:
            rem = min(rem, self.end[i] - t)
        return self.work[i] - rem

    def attained(self, i: int, t: int) -> float:
        """Attained service of job ``i`` at tick ``t`` in GPU-seconds: GPUs (per task x
        tasks) x ticks of progress x tick seconds; reloads are not service."""
        return self.dg[i] * self.tasks[i] * self.progress(i, t) * self.tick

    def wake(self, t: int) -> None:
        """Ask the engine to run a schedule step at tick ``t`` (> the current tick) even if
        nothing arrives, finishes or is released then: for policies that decide by time."""
        t = int(t)
        if t <= self.now:
            raise ValueError(f"wake({t}) at tick {self.now}: a wake-up must be in the future")
        heapq.heappush(self._wake_heap, t)

    # ------------------------------------------------------------- internals
    def _release(self, i: int) -> None:
        self.epoch += 1
        g, c, m = self.dg[i], self.dc[i], self.dm[i]
        for n in self.nodes[i]:
            self.stop_g[n] -= g
            self.stop_c[n] -= c
            self.stop_m[n] -= m
            self.free_g[n] += g
            self.free_c[n] += c
            self.free_m[n] += m
            self.avail_g[n] += g
        self.stop_gpu -= g * len(self.nodes[i])
        self.state[i] = WAITING
        self.nodes[i] = ()
        push_waiting(self.waiting_be, i)
        self.waiting_g[g][i] = None

    def _finish_step(self, t: int) -> None:
        h, state, end, nodes_of = self._finish_heap, self.state, self.end, self.nodes
        free_g, free_c, free_m, avail_g = self.free_g, self.free_c, self.free_m, self.avail_g
        filed = self.running_be is not None
        while h and h[0][0] <= t:
            e, i = heapq.heappop(h)
            if state[i] != RUNNING or end[i] != e:
                continue  # stale entry of a preempted run
            nodes = nodes_of[i]
            g, c, m = self.dg[i], self.dc[i], self.dm[i]
            for n in nodes:
                free_g[n] += g
                free_c[n] += c
                free_m[n] += m
                avail_g[n] += g
            self.run_gpu -= g * len(nodes)
            self.n_done += 1
            self.epoch += 1
            if filed and not self.te[i]:
                self._unfile(i)
            state[i] = DONE
            self.finish[i] = t
            started = self.started_at[i]
            if self.segments is not None:
                for n in nodes:
                    self.segments.append((i, n, 0, started, t))
            self.run_ticks[i] += t - started
            self.reload_ticks[i] += self.run_ro[i]
            self.rem[i] = 0

    def _release_step(self, t: int) -> None:
        h = self._release_heap
        while h and h[0][0] <= t:
            _, i = heapq.heappop(h)
            self._release(i)

    def _arrive_step(self, t: int) -> None:
        k, submit, te, wg, dg = self._arrival, self.submit, self.te, self.waiting_g, self.dg
        while k < self.n and submit[k] == t:
            self.state[k] = WAITING
            wg[dg[k]][k] = None
            if te[k]:
                self.waiting_te[k] = None
            else:
                push_waiting(self.waiting_be, k)
            k += 1
        self._arrival = k

    # ------------------------------------------------------------------ loop
    def run(self, *, jump: bool = True, progress=None) -> None:
        """Run to completion. ``progress(done_jobs)`` is called now and then if given.
        (Each step is called only when it has something to do at ``t``, and the state of
        :attr:`RECORDED` is recorded here, without a call per visited tick.)"""
        n = self.n
        if n == 0:
            return
        submit = self.submit
        t = submit[0]
        visits = 0
        schedule, check, heappop = self.policy.schedule, self.check, heapq.heappop
        wake, fin, rel = self._wake_heap, self._finish_heap, self._release_heap
        wte, wbe = self.waiting_te, self.waiting_be
        state, end = self.state, self.end
        trace_t, trace_vals = self.trace_t, self.trace_vals
        while True:
            self.now = t
            while wake and wake[0] <= t:
                heappop(wake)
            if fin and fin[0][0] <= t:
                self._finish_step(t)
            if rel and rel[0][0] <= t:
                self._release_step(t)
            k = self._arrival
            if k < n and submit[k] == t:
                self._arrive_step(t)
            self.preempted_in_step = False
            quiet = schedule(self, t)
            trace_t.append(t)
            trace_vals.extend((self.run_gpu, self.stop_gpu, self.resv_gpu, len(wte), len(wbe)))
            if check:
                self.check_invariants(t)
            # next tick: the earliest arrival, finish (stale entries dropped), release, wake-up
            k = self._arrival
            nxt = submit[k] if k < n else None
            while fin and (state[fin[0][1]] != RUNNING or end[fin[0][1]] != fin[0][0]):
                heappop(fin)
            if fin and (nxt is None or fin[0][0] < nxt):
                nxt = fin[0][0]
            if rel and (nxt is None or rel[0][0] < nxt):
                nxt = rel[0][0]
            if wake and (nxt is not None or wte or wbe):
                if nxt is None or wake[0] < nxt:  # (a wake-up with nothing left to do ends nothing)
                    nxt = wake[0]
            if nxt is None:
                if wte or wbe:
                    raise RuntimeError(f"deadlock at tick {t}: jobs wait but nothing runs")
                break
            t_was, t = t, (t + 1 if not jump or self.preempted_in_step and quiet is not True
                           else nxt)  # (not t + 1 after a preemption if schedule said quiet)
            if wte or wbe:
                account(self, t - t_was)  # idle GPUs while jobs wait (fitgpp.sim.ledger)
            if progress is not None:
                visits += 1
                if visits % 4096 == 0:
                    progress(self.n_done)

    def drop_run_state(self) -> None:
        """After the run: let go of what only running needed (the policy's scratch, demands
        but GPUs, remaining work, ends, current runs), so that building the result does
        not hold both (a million jobs: about 80 MB)."""
        self.scratch = {}
        #: after the run: the first node each job held, and the classes, as arrays
        self.node = np.fromiter((ns[0] for ns in self.nodes), np.int64, self.n)
        self.te = np.asarray(self.te, dtype=bool)
        for name in ("dc", "dm", "gp", "ro", "size", "state", "rem", "resv", "end",
                     "run_ticks", "run_ro", "started_at", "nodes"):
            setattr(self, name, None)

    def recorded(self) -> tuple[np.ndarray, np.ndarray]:
        """The visited ticks (int64) and the state recorded at each (:attr:`RECORDED`),
        one row of 5 per tick, as views of what was recorded (int32 or int64)."""
        t = np.frombuffer(self.trace_t, dtype=np.int64)
        dtype = np.int32 if self.trace_vals.itemsize == 4 else np.int64
        return t, np.frombuffer(self.trace_vals, dtype=dtype).reshape(-1, 5)


    # ------------------------------------------------------------ invariants
    def check_invariants(self, t: int) -> None:
        """Assert the ledger of docs/model.md from scratch (slow; for tests): see
        :func:`fitgpp.sim.invariants.check`."""
        _check_invariants(self, t)
