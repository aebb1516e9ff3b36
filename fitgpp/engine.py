"""The tick engine: owns time, job states and the per-node ledger of SPEC.md.

One tick ``t`` runs, in order: finish, release, arrive, schedule (the
policy's turn), advance. Work is not decremented tick by tick: a running job
stores the tick ``end`` at which its work reaches 0, so "remaining work at
``t``" is ``end - t``. The engine jumps from one *event* tick to the next
(an arrival, a finish, a release); SPEC.md says quiet ticks change nothing,
which holds except after a schedule step that preempted: such a step can
free or re-project resources that TE jobs earlier in the same pass had
already looked at, so the engine also visits ``t + 1`` then. With
``jump=False`` it steps every tick (for tests); results are identical.

**The policy protocol.** A policy is an object with ``name``, ``bind(engine)``
(called once before the run) and ``schedule(engine, t)`` (step 4 of every visited
tick); optionally ``victim_key(engine, i)`` (a key, fixed for one run of BE job
``i``, by which the engine keeps ``running_be[n]`` sorted) and ``max_preemptions``.
Jobs are indices ``0..n-1`` in ``(submit, job_id)`` order. A policy may *read*
(and must not modify):

- per job: ``job_id``, ``te``, ``dg``/``dc``/``dm`` (per-task demand), ``tasks``,
  ``size``, ``submit``, ``work``, ``gp``, ``ro`` (restart overhead), ``state``,
  ``nodes`` (tuple of nodes while running or stopping), ``end`` (tick a running
  job finishes; remaining = ``end - t``), ``rem``, ``preemptions``, ``resv``;
- per node: ``cap_*``, ``free_*``, ``stop_*``, ``res_*``, ``avail_g``,
  ``running_be[n]`` (sorted ``(victim_key, i)``), ``n_nodes``;
- queues: ``waiting_te`` (dict in index order), ``waiting_be`` (heap of indices);
- ``epoch`` (moves whenever resources may have been freed) and ``now``.

It *acts* only through :meth:`Engine.start`, :meth:`Engine.reserve`,
:meth:`Engine.preempt` and :meth:`Engine.wake`, and keeps per-run state in
``scratch`` (policy objects are frozen). A policy that decides by time must call
``wake(t')`` for the tick ``t'`` at which its decision may change, else jumping
over quiet ticks may skip it.

Units: ticks everywhere in here; demands as (gpu, cpu_milli, mem_mib).
"""

from __future__ import annotations

import heapq
import numbers
from bisect import bisect_left, insort

import numpy as np

# job states
PENDING, WAITING, RUNNING, STOPPING, DONE = range(5)
STATE_NAMES = ("pending", "waiting", "running", "stopping", "done")


class Engine:
    """State of one simulation. Jobs are indexed ``0..n-1`` in ``(submit, job_id)`` order,
    so the queue order of SPEC is plain index order."""

    def __init__(self, jobs: dict[str, np.ndarray], capacity: np.ndarray, policy,
                 *, check: bool = False, segments: bool = False):
        order = np.lexsort((jobs["job_id"], jobs["submit"]))
        self.order = order  # position -> row of the input
        col = {k: np.asarray(v)[order] for k, v in jobs.items()}
        n = self.n = len(order)
        self.job_id = col["job_id"].tolist()
        self.te = col["te"].astype(bool).tolist()
        self.dg = col["gpu"].tolist()
        self.dc = col["cpu_milli"].tolist()
        self.dm = col["mem_mib"].tolist()
        self.work = col["work"].tolist()
        self.gp = col["gp"].tolist()
        self.submit = col["submit"].tolist()
        ones, zeros = np.ones(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        #: tasks of a gang (1 for an ordinary job); each holds the per-task demand on its own node
        self.tasks = col.get("tasks", ones).tolist()
        #: restart overhead in ticks: reload time each time a preempted job starts again
        self.ro = col.get("ro", zeros).tolist()
        cmax = capacity.max(axis=0).astype(float)
        demand = np.stack([col["gpu"], col["cpu_milli"], col["mem_mib"]], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(cmax > 0, demand / np.where(cmax > 0, cmax, 1), 0.0)
        #: size(x) = tasks * max_r demand[r] / C[r], C[r] the largest capacity of r (SPEC)
        self.size = (frac.max(axis=1) * col.get("tasks", ones)).tolist()

        self.state = [PENDING] * n
        #: every node a job holds, ascending (after it finished: those it finished on)
        self.nodes: list[tuple[int, ...]] = [()] * n
        self.end = [0] * n             # tick at which a running job's work reaches 0
        self.rem = list(self.work)     # remaining work while not running
        self.preemptions = [0] * n
        self.first_start = [-1] * n
        self.finish = [-1] * n
        self.run_ticks = [0] * n       # ticks running, reloads included
        self.reload_ticks = [0] * n    # ticks running spent reloading a checkpoint
        self.stop_ticks = [0] * n
        self.run_ro = [0] * n          # reload ticks at the start of the current run
        self.started_at = [0] * n      # tick of the current run's start
        self.resv = [-1] * n           # node a waiting TE job holds a reservation on

        cap = capacity.astype(np.int64)
        self.n_nodes = len(cap)
        self.cap_g, self.cap_c, self.cap_m = (cap[:, k].tolist() for k in range(3))
        self.free_g, self.free_c, self.free_m = list(self.cap_g), list(self.cap_c), list(self.cap_m)
        z = [0] * self.n_nodes
        self.stop_g, self.stop_c, self.stop_m = list(z), list(z), list(z)
        self.res_g, self.res_c, self.res_m = list(z), list(z), list(z)
        #: free_g - res_g per node, kept up to date for fast "does any node have g GPUs" checks
        self.avail_g = list(self.cap_g)

        self.waiting_te: dict[int, None] = {}  # insertion order == index order (TE never requeue)
        self.waiting_be: list[int] = []        # heap of indices
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
        #: per node, running BE jobs as sorted ``(victim_key, index)``; None if the policy needs none
        self.running_be = [[] for _ in range(self.n_nodes)] if self._victim_key else None
        self.check = check
        #: with ``segments=True``: ``(i, node, kind, start, end)`` per closed interval, kind 0 =
        #: running, 1 = grace period after a preemption signal (ticks)
        self.segments: list[tuple[int, int, int, int, int]] | None = [] if segments else None
        # time series: one row per visited tick, state after the schedule step
        self.trace_t: list[int] = []
        self.trace_vals: list[tuple[int, int, int, int, int, int]] = []
        policy.bind(self)

    # ---------------------------------------------------------------- actions
    def start(self, i: int, n, t: int) -> None:
        """Start waiting job ``i`` at tick ``t`` on node ``n`` (an int), or for a gang on the
        nodes ``n`` (one per task, distinct); a TE job consumes its reservation."""
        if type(n) is not int or self.tasks[i] != 1:
            return self._start_general(i, n, t)
        g, c, m = self.dg[i], self.dc[i], self.dm[i]
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
            del self.waiting_te[i]
        else:
            self.avail_g[n] -= g
            if heapq.heappop(self.waiting_be) != i:
                raise RuntimeError("BE jobs must start from the head of their queue")
        self._running(i, (n,), t)

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
        for n in nodes:
            self.free_g[n] -= g
            self.free_c[n] -= c
            self.free_m[n] -= m
            self.avail_g[n] -= g
        self.run_gpu += g * k
        if self.te[i]:
            del self.waiting_te[i]
        elif heapq.heappop(self.waiting_be) != i:
            raise RuntimeError("BE jobs must start from the head of their queue")
        self._running(i, nodes, t)

    def _running(self, i: int, nodes: tuple[int, ...], t: int) -> None:
        self.state[i] = RUNNING
        self.nodes[i] = nodes
        self.started_at[i] = t
        # a job that was preempted first reloads its checkpoint (SPEC "Restart cost")
        ro = self.run_ro[i] = self.ro[i] if self.preemptions[i] else 0
        e = self.end[i] = t + ro + self.rem[i]
        if self.first_start[i] < 0:
            self.first_start[i] = t
        heapq.heappush(self._finish_heap, (e, i))
        if self.running_be is not None and not self.te[i]:
            key = (self._victim_key(self, i), i)
            for n in nodes:
                insort(self.running_be[n], key)

    def reserve(self, i: int, n: int) -> None:
        """Waiting TE job ``i`` reserves its demand on node ``n``."""
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
        nodes = self.nodes[i]
        self.preempted_in_step = True
        self.epoch += 1
        self.preemptions[i] += 1
        ran = t - self.started_at[i]
        self.rem[i] = min(self.rem[i], self.end[i] - t)
        self.run_ticks[i] += ran
        self.reload_ticks[i] += min(self.run_ro[i], ran)
        if self.running_be is not None:
            key = (self._victim_key(self, i), i)
            for n in nodes:
                lst = self.running_be[n]
                k = bisect_left(lst, key)
                if k == len(lst) or lst[k][1] != i:
                    raise RuntimeError("running-BE index out of sync")
                del lst[k]
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
        heapq.heappush(self.waiting_be, i)

    def _finish_step(self, t: int) -> None:
        h = self._finish_heap
        while h and h[0][0] <= t:
            e, i = heapq.heappop(h)
            if self.state[i] != RUNNING or self.end[i] != e:
                continue  # stale entry of a preempted run
            nodes = self.nodes[i]
            g, c, m = self.dg[i], self.dc[i], self.dm[i]
            if len(nodes) == 1:
                n = nodes[0]
                self.free_g[n] += g
                self.free_c[n] += c
                self.free_m[n] += m
                self.avail_g[n] += g
                self.run_gpu -= g
            else:
                for n in nodes:
                    self.free_g[n] += g
                    self.free_c[n] += c
                    self.free_m[n] += m
                    self.avail_g[n] += g
                self.run_gpu -= g * len(nodes)
            self.n_done += 1
            self.epoch += 1
            if self.running_be is not None and not self.te[i]:
                key = (self._victim_key(self, i), i)
                for n in nodes:
                    lst = self.running_be[n]
                    del lst[bisect_left(lst, key)]
            self.state[i] = DONE
            self.finish[i] = t
            if self.segments is not None:
                for n in nodes:
                    self.segments.append((i, n, 0, self.started_at[i], t))
            self.run_ticks[i] += t - self.started_at[i]
            self.reload_ticks[i] += self.run_ro[i]
            self.rem[i] = 0

    def _release_step(self, t: int) -> None:
        h = self._release_heap
        while h and h[0][0] <= t:
            _, i = heapq.heappop(h)
            self._release(i)

    def _arrive_step(self, t: int) -> None:
        k, submit, te = self._arrival, self.submit, self.te
        while k < self.n and submit[k] == t:
            self.state[k] = WAITING
            if te[k]:
                self.waiting_te[k] = None
            else:
                heapq.heappush(self.waiting_be, k)
            k += 1
        self._arrival = k

    def _next_finish(self) -> int | None:
        h = self._finish_heap
        while h and (self.state[h[0][1]] != RUNNING or self.end[h[0][1]] != h[0][0]):
            heapq.heappop(h)
        return h[0][0] if h else None

    # ------------------------------------------------------------------ loop
    def run(self, *, jump: bool = True, progress=None) -> None:
        """Run to completion. ``progress(done_jobs)`` is called now and then if given."""
        if self.n == 0:
            return
        submit = self.submit
        t = submit[0]
        visits = 0
        schedule = self.policy.schedule
        wake = self._wake_heap
        while True:
            self.now = t
            while wake and wake[0] <= t:
                heapq.heappop(wake)
            self._finish_step(t)
            self._release_step(t)
            self._arrive_step(t)
            self.preempted_in_step = False
            schedule(self, t)
            self._record(t)
            if self.check:
                self.check_invariants(t)
            # next tick
            cands = []
            if self._arrival < self.n:
                cands.append(submit[self._arrival])
            nf = self._next_finish()
            if nf is not None:
                cands.append(nf)
            if self._release_heap:
                cands.append(self._release_heap[0][0])
            if wake and (cands or self.waiting_te or self.waiting_be):
                cands.append(wake[0])  # (a wake-up with nothing left to do ends nothing)
            if not cands:
                if self.waiting_te or self.waiting_be:
                    raise RuntimeError(f"deadlock at tick {t}: jobs wait but nothing runs")
                break
            if not jump or self.preempted_in_step:
                t += 1
            else:
                t = min(cands)
            if progress is not None:
                visits += 1
                if visits % 4096 == 0:
                    progress(self.n_done)

    def _record(self, t: int) -> None:
        self.trace_t.append(t)
        self.trace_vals.append((self.run_gpu, self.stop_gpu, self.resv_gpu,
                                len(self.waiting_te), len(self.waiting_be)))

    # ------------------------------------------------------------ invariants
    def check_invariants(self, t: int) -> None:
        """Assert the ledger of SPEC.md from scratch (slow; for tests)."""
        k = self.n_nodes
        run = [[0, 0, 0] for _ in range(k)]
        stop = [[0, 0, 0] for _ in range(k)]
        res = [[0, 0, 0] for _ in range(k)]
        for i in range(self.n):
            d = (self.dg[i], self.dc[i], self.dm[i])
            s = self.state[i]
            held = self.nodes[i]
            if s in (RUNNING, STOPPING):
                if len(held) != self.tasks[i] or len(set(held)) != len(held):
                    raise AssertionError(f"tick {t}: job {self.job_id[i]} with {self.tasks[i]} "
                                         f"task(s) holds nodes {held}")
                accs = [(run if s == RUNNING else stop)[n] for n in held]
            elif s == WAITING and self.te[i] and self.resv[i] >= 0:
                if self.tasks[i] != 1:
                    raise AssertionError(f"tick {t}: TE gang {self.job_id[i]} holds a reservation")
                accs = [res[self.resv[i]]]
            else:
                if held and s != DONE:
                    raise AssertionError(f"tick {t}: {STATE_NAMES[s]} job {self.job_id[i]} "
                                         f"holds nodes {held}")
                accs = []
            for acc in accs:
                for r in range(3):
                    acc[r] += d[r]
            if s == WAITING and (i in self.waiting_te) == (i in self.waiting_be):
                raise AssertionError(f"tick {t}: waiting job {self.job_id[i]} not in exactly one queue")
            if s != WAITING and (i in self.waiting_te or i in self.waiting_be):
                raise AssertionError(f"tick {t}: job {self.job_id[i]} is {STATE_NAMES[s]} but queued")
            if self.preemptions[i] > getattr(self.policy, "max_preemptions", 0):
                raise AssertionError(f"tick {t}: job {self.job_id[i]} preempted "
                                     f"{self.preemptions[i]} times")
            if self.te[i] and self.preemptions[i]:
                raise AssertionError(f"tick {t}: TE job {self.job_id[i]} was preempted")
        for n in range(k):
            cap = (self.cap_g[n], self.cap_c[n], self.cap_m[n])
            free = (self.free_g[n], self.free_c[n], self.free_m[n])
            for r in range(3):
                if free[r] != cap[r] - run[n][r] - stop[n][r]:
                    raise AssertionError(f"tick {t}: node {n} free ledger out of sync")
                if free[r] < 0:
                    raise AssertionError(f"tick {t}: node {n} free < 0 in resource {r}")
            if (self.stop_g[n], self.stop_c[n], self.stop_m[n]) != tuple(stop[n]):
                raise AssertionError(f"tick {t}: node {n} stopping ledger out of sync")
            if (self.res_g[n], self.res_c[n], self.res_m[n]) != tuple(res[n]):
                raise AssertionError(f"tick {t}: node {n} reservation ledger out of sync")
            if self.avail_g[n] != self.free_g[n] - self.res_g[n]:
                raise AssertionError(f"tick {t}: node {n} avail_g out of sync")
