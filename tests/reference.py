"""An independent, deliberately slow reference implementation of SPEC.md.

Written from SPEC.md alone (not from ``fitgpp/sim/engine.py`` or ``fitgpp/sim/policies``)
so the tests can compare two implementations. It steps every single tick and
recomputes every ledger quantity (free, reserved, avail, projected) from the job
states each time it is needed: plain lists, no caches, no event jumping.

Choices where SPEC leaves room (the project's documented choices):

- jobs are ordered by ``(submit tick, job_id)``;
- ``size(x) = max_r demand[r] / C[r]``, ``C[r]`` the largest capacity of ``r``
  among the nodes; a resource with ``C[r] == 0`` contributes 0;
- FitGpp victim order ``(gp, size, job_id)`` with ``gp`` in ticks; the node
  key's "sum of size(V)" is Python ``sum()`` over ``V`` in victim order;
- LRTP's remaining work is the ticks of work left at the schedule step;
- RAND: see :meth:`Reference._rand_choice`;
- "earlier unstarted reservations" are TE jobs earlier in ``(submit, job_id)``
  order that reserve the same node and are still waiting;
- victims with ``gp == 0`` are released inside the preempt step, so the BE pass
  of the same tick may restart them.

LAS (SPEC "Class-neutral policies: LAS") is modelled literally too: each queue is a
plain list; attained service is recomputed from ``work - remaining``; each schedule
step rebuilds a planned ledger from capacity (stopping jobs are leaving), visits every queue
in list order (after each step a list is its running jobs then the others; arrivals
and demoted jobs join the tail, so a job demoted now comes after the waiting jobs of
its new queue, as in Tiresias), then signals, then starts where the plan put each job. Choices where SPEC leaves room (the
project's documented reading): after the step each list becomes its running jobs then
its other jobs, both in visiting order (so a job preempted now goes ahead of jobs
already waiting, as in Tiresias); a stopping job keeps its place among the waiting; a
job to start goes to the lowest-id node(s) of the plan with room for it, and keeps
waiting if its room there is still held after the preemptions (SPEC's "lowest-id
node(s) with avail >= demand after the step's preemptions" can disagree with the plan
on several nodes, and then two steps in a row can undo each other forever).

FIFO's backfilling readings (SPEC "FIFO (no preemption)", ``backfill``) are modelled as
worded there: ``"greedy"`` tries every later waiting job in queue order on its lowest-id
node(s) with free >= demand now; ``"easy"`` steps ``T = t + 1, t + 2, ...`` until the head
fits on ``tasks`` nodes of ``free`` at ``T`` (each running job ending at ``t`` + reload left
+ work left, each stopping one at its release), takes the ``tasks`` lowest-id such nodes, and
lets a later job start on its usual nodes now if it ends by ``T`` or its demand fits in the
extra (free at ``T`` - head's demand) of each of those nodes it would use, which it then
takes. Choice where SPEC leaves room: the later job's nodes are its usual ones (the rule is
a condition on them, not a search for other nodes).

Multi-node jobs and restart cost (SPEC sections of those names) are modelled
literally: a gang holds a *list* of nodes and every ledger sum walks it; a
restarted job counts down a ``reload_left`` before its ``remaining`` work moves,
a preemption throws the unfinished reload away, and LRTP's remaining is
``reload_left + remaining``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

WAITING, RUNNING, STOPPING, DONE, FUTURE = "waiting", "running", "stopping", "done", "future"
POLICY_NAMES = ("fifo", "prio", "fitgpp", "lrtp", "rand", "las", "sjf", "lpjf", "shortest",
                "shortest-gpu", "dlas", "gittins")
#: LAS on attained GPU-time (las) or on attained time (dlas)
LAS_LIKE = ("las", "dlas")
#: single-list policies (docs/model.md, "Tiresias's single-list schedulers")
ORDERED = ("sjf", "shortest", "shortest-gpu", "gittins")


@dataclass
class RefJob:
    job_id: int
    te: bool
    demand: tuple  # (gpu, cpu_milli, mem_mib)
    submit: int    # ticks
    work: int      # ticks
    gp: int        # ticks (0 for TE)
    remaining: int
    tasks: int = 1
    ro: int = 0        # restart overhead, ticks
    state: str = FUTURE
    nodes: tuple = ()  # nodes held while running or stopping (one per task)
    node: int | None = None  # lowest node held, kept after it finishes
    release: int | None = None
    reservation: int | None = None
    preemptions: int = 0
    first_start: int | None = None
    finish: int | None = None
    ran: int = 0       # ticks spent running (advanced)
    stopped: int = 0   # ticks spent stopping (sum of gp over preemptions)
    finished_times: int = 0
    reload_left: int = 0   # ticks of checkpoint reload still to do in this run
    reloaded: int = 0      # ticks spent reloading, over all runs
    runs: list = None      # per run: (reload planned, ticks it ran)

    @property
    def key(self):
        return (self.submit, self.job_id)


@dataclass(frozen=True)
class RefResult:
    """Per-job outcome, all times in ticks."""

    first_start: int
    finish: int
    preemptions: int
    node: int
    stopped: int
    ran: int
    submit: int
    work: int
    reloaded: int = 0

    @property
    def slowdown(self) -> float:
        return (self.finish - self.submit) / self.work


def add(a, b):
    return tuple(x + y for x, y in zip(a, b))


def sub(a, b):
    return tuple(x - y for x, y in zip(a, b))


def ge(a, b):
    return all(x >= y for x, y in zip(a, b))


ZERO = (0, 0, 0)


class Reference:
    """One simulation run; call :meth:`run`."""

    def __init__(self, jobs_df, capacity, policy, *, tick=60, s=4.0, P=3, seed=0,
                 on_tick=None, thresholds=(3250.0, 7200.0), mode="exact", delta=3250,
                 sizes=None, backfill="none"):
        if policy not in POLICY_NAMES:
            raise ValueError(f"unknown policy {policy!r}")
        if backfill not in ("none", "easy", "greedy"):
            raise ValueError(f"unknown backfill {backfill!r}")
        self.policy = policy
        self.backfill = backfill  # FIFO's reading
        self.shadows = []         # EASY: (tick, head's job_id, its shadow tick) per blocked step
        self.tick_s = float(tick)
        self.thresholds = list(thresholds)
        self.queues = [[] for _ in range(len(self.thresholds) + 1)]  # LAS
        self.mode = mode        # the policies' mode (SRTF, SRSF, LPJF, Gittins): "exact" or "tiresias"
        self.tlist = []         # mode "tiresias": the list as last sorted / walked
        self.event = False      # a job arrived or finished at this tick
        self.s = float(s)
        self.P = P
        self.rng = np.random.default_rng(seed)
        self.on_tick = on_tick
        self.cap = [tuple(int(v) for v in row) for row in np.asarray(capacity)]
        self.N = len(self.cap)
        self.C = [max(row[r] for row in self.cap) for r in range(3)]
        self.jobs = []
        for row in jobs_df.itertuples(index=False):
            te = row.cls == "TE"
            gp_s = 0.0 if te or row.grace_period != row.grace_period else float(row.grace_period)
            work = max(1, math.ceil(float(row.duration) / tick))
            tasks = getattr(row, "tasks", 1)
            tasks = 1 if tasks != tasks else int(tasks)   # empty = default
            ro_s = getattr(row, "restart_overhead", 0.0)
            ro_s = 0.0 if ro_s != ro_s else float(ro_s)
            self.jobs.append(RefJob(
                job_id=int(row.job_id), te=te,
                demand=(int(row.gpu), int(row.cpu_milli), int(row.mem_mib)),
                submit=math.floor(float(row.submit_time) / tick), work=work,
                gp=0 if te else math.ceil(gp_s / tick), remaining=work,
                tasks=tasks, ro=math.ceil(ro_s / tick), runs=[]))
        self.jobs.sort(key=lambda j: j.key)
        self.t = None
        # Gittins: the job sizes it knows (GPU-seconds), its quantum, Tiresias's unit clock
        self.delta = delta
        self.sizes = sorted(sizes) if sizes is not None else sorted(
            math.ceil(j.demand[0] * j.tasks * (j.work * self.tick_s)) for j in self.jobs)
        self.unit = delta

    # ---- ledger, recomputed from scratch every time -------------------------------------
    def free(self, n):
        held = ZERO
        for j in self.jobs:
            if j.state in (RUNNING, STOPPING) and n in j.nodes:
                held = add(held, j.demand)
        return sub(self.cap[n], held)

    def reserved(self, n):
        r = ZERO
        for j in self.jobs:
            if j.te and j.state == WAITING and j.reservation == n:
                r = add(r, j.demand)
        return r

    def avail(self, n):
        return sub(self.free(n), self.reserved(n))

    def projected(self, n):
        held = ZERO
        for j in self.jobs:
            if j.state == RUNNING and n in j.nodes:
                held = add(held, j.demand)
        return sub(sub(self.cap[n], held), self.reserved(n))

    def size(self, j):
        return j.tasks * max((j.demand[r] / self.C[r]) if self.C[r] else 0.0 for r in range(3))

    def left(self, j):
        """Ticks until a running job is done: its reload still to do plus its work."""
        return j.reload_left + j.remaining

    # ---- state changes ------------------------------------------------------------------
    def start(self, j, nodes):
        assert j.state == WAITING and len(nodes) == j.tasks == len(set(nodes))
        j.state, j.nodes, j.node, j.reservation = RUNNING, tuple(nodes), min(nodes), None
        # a job restarting after a preemption reloads its checkpoint first
        j.reload_left = j.ro if j.preemptions > 0 else 0
        j.runs.append([j.reload_left, 0])
        if j.first_start is None:
            j.first_start = self.t

    def signal(self, v):
        assert v.state == RUNNING and not v.te
        v.preemptions += 1
        v.state = STOPPING
        v.reload_left = 0  # a reload cut short is lost; the next start reloads in full
        v.release = self.t + v.gp
        v.stopped += v.gp
        if v.gp == 0:  # released at once, within the preempt step
            v.state, v.nodes, v.node, v.release = WAITING, (), None, None

    # ---- one tick -----------------------------------------------------------------------
    def tick(self):
        t = self.t
        self.event = False
        for j in self.jobs:                                        # 1. finish
            if j.state == RUNNING and j.remaining == 0:
                assert j.reload_left == 0
                j.state, j.finish = DONE, t
                j.finished_times += 1
                self.event = True
        for j in self.jobs:                                        # 2. release
            if j.state == STOPPING and j.release == t:
                j.state, j.nodes, j.node, j.release = WAITING, (), None, None
        for j in self.jobs:                                        # 3. arrive
            if j.state == FUTURE and j.submit == t:
                j.state = WAITING
                self.event = True
        if self.policy in LAS_LIKE:
            for j in self.jobs:  # joining LAS's queue 0, in (submit, job_id) order
                if j.state == WAITING and j.submit == t:
                    self.queues[0].append(j)
        if self.policy == "fifo":                                  # 4. schedule
            self.fifo()
        elif self.policy == "lpjf" and self.mode == "tiresias":
            self.lpjf_tiresias()
        elif self.policy == "lpjf":
            self.lpjf()
        elif self.policy in ORDERED:
            self.ordered()
        elif self.policy in LAS_LIKE:
            self.las()
        else:
            self.te_pass()
            self.be_pass()
        if self.on_tick is not None:
            self.on_tick(self, "scheduled")
        for j in self.jobs:                                        # 5. advance
            if j.state == RUNNING:
                if j.reload_left > 0:
                    j.reload_left -= 1
                    j.reloaded += 1
                else:
                    j.remaining -= 1
                j.ran += 1
                j.runs[-1][1] += 1
        if self.on_tick is not None:
            self.on_tick(self, "advanced")

    def waiting(self, te=None):
        out = [j for j in self.jobs if j.state == WAITING and (te is None or j.te == te)]
        return sorted(out, key=lambda j: j.key)

    def fifo(self):
        """SPEC "FIFO (no preemption)": heads start while they fit; when the head fits
        nowhere, ``backfill`` says what happens to the jobs behind it."""
        while True:
            queue = self.waiting()
            if not queue:
                return
            head = queue[0]
            nodes = self.fit_now(head)
            if nodes is None:
                break
            self.start(head, nodes)
        if self.backfill == "greedy":      # every later job that fits, in queue order
            for j in queue[1:]:
                nodes = self.fit_now(j)
                if nodes is not None:
                    self.start(j, nodes)
        elif self.backfill == "easy":
            self.easy(head, queue[1:])

    def fit_now(self, j):
        """The ``tasks`` lowest-id nodes with free >= the demand of ``j`` now, or None."""
        nodes = [n for n in range(self.N) if ge(self.free(n), j.demand)]
        return nodes[:j.tasks] if len(nodes) >= j.tasks else None

    def free_at(self, n, T):
        """free(n) at tick ``T`` (after its finish and release steps) if nothing starts
        before: the running jobs end at ``t`` + reload left + work left, stopping ones at
        their release tick."""
        held = ZERO
        for j in self.jobs:
            if n not in j.nodes:
                continue
            if (j.state == RUNNING and self.t + self.left(j) > T) or \
                    (j.state == STOPPING and j.release > T):
                held = add(held, j.demand)
        return sub(self.cap[n], held)

    def easy(self, head, later):
        """EASY backfilling, as SPEC words it: the head's shadow tick (the first tick at
        which it fits, the running and stopping jobs ending as they will) and the nodes it
        would take then; a later job starts now only if it fits now and ends by the shadow
        tick or uses none of what the head will need on those nodes (the extra)."""
        T = self.t + 1
        while True:
            at_T = [n for n in range(self.N) if ge(self.free_at(n, T), head.demand)]
            if len(at_T) >= head.tasks:
                break
            T += 1
            assert T <= self.bound(), "the head never fits"
        shadow_nodes = at_T[:head.tasks]
        extra = {n: sub(self.free_at(n, T), head.demand) for n in shadow_nodes}
        self.shadows.append((self.t, head.job_id, T))
        for j in later:
            nodes = self.fit_now(j)
            if nodes is None:
                continue
            # a job that starts now ends after its reload (if it was preempted) and its work
            ends = self.t + (j.ro if j.preemptions > 0 else 0) + j.remaining
            if ends <= T:
                self.start(j, nodes)
                continue
            mine = [n for n in nodes if n in extra]
            if all(ge(extra[n], j.demand) for n in mine):
                for n in mine:
                    extra[n] = sub(extra[n], j.demand)
                self.start(j, nodes)

    def lpjf(self):
        """Longest pending first: pending time ``t - submit`` (a job waits once: nothing
        preempts it), longest first; the head that fits nowhere blocks the rest."""
        while True:
            queue = sorted(self.waiting(), key=lambda j: (-(self.t - j.submit), j.submit,
                                                          j.job_id))
            if not queue:
                return
            head = queue[0]
            nodes = [n for n in range(self.N) if ge(self.free(n), head.demand)]
            if len(nodes) < head.tasks:
                return
            self.start(head, nodes[:head.tasks])

    def lpjf_tiresias(self):
        """Tiresias's loop, literally: at an arrival or a finish only, walk the pending list
        (arrival order) and remove each job that starts from the list being walked (so the
        next one is passed over); stop at the first that fits nowhere."""
        self.tlist += [j for j in self.jobs if j.state == WAITING and j.submit == self.t]
        if not self.event:
            return
        for j in self.tlist:
            nodes = [n for n in range(self.N) if ge(self.free(n), j.demand)]
            if len(nodes) < j.tasks:
                break
            self.start(j, nodes[:j.tasks])
            self.tlist.remove(j)

    # ---- single-list policies (SJF, SRTF, SRSF) ------------------------------------------
    def remaining_time(self, j):
        """Ticks job ``j`` still needs: reload left + work left while running; work left
        plus a full reload (if it was preempted) while not running."""
        if j.state == RUNNING:
            return j.reload_left + j.remaining
        return j.remaining + (j.ro if j.preemptions > 0 else 0)

    def gittins_index(self, b):
        """G(b): P(b < S <= b + delta) / E[min(S - b, delta); S > b] over the sizes; 0 if no
        size exceeds b (docs/model.md, "Gittins, exactly")."""
        above = [x for x in self.sizes if x > b]
        if not above:
            return 0.0
        done = sum(1 for x in above if x <= b + self.delta)
        return done / sum(min(x - b, self.delta) for x in above)

    def tiresias_rank(self, a):
        """Tiresias's rank table at ``a`` (docs/model.md): the entry of the first size > a,
        computed at that size - 1; 0 beyond the largest size."""
        S, n, d = self.sizes, len(self.sizes), self.delta
        if a >= S[-1]:
            return 0
        x = min(v for v in S if v > a) - 1
        idx = sum(1 for v in S if v <= x)
        idx_d = n - 1 if x + d > S[-1] - 1 else sum(1 for v in S if v <= x + d)
        p = round((idx_d - idx) * 1.0 / (n - idx), 5)
        e = round((sum(S[idx:idx_d]) + d * (n - idx_d)) / (n - idx), 5)
        return round(p * 1000000 / e, 4) if e else 0.0

    def gittins_key(self, j):
        gpus = j.demand[0] * j.tasks
        seconds = (j.work - j.remaining) * self.tick_s
        if self.mode == "tiresias":  # a running job by GPU-time, a waiting one by time
            return self.tiresias_rank(int(seconds * gpus if j.state == RUNNING else seconds))
        att = gpus * seconds
        k = 0
        while (k + 1) * self.delta <= att:
            k += 1
        level = sum(1 for x in self.thresholds if x <= att)
        return (level, -self.gittins_index(k * self.delta))

    def order_key(self, j):
        gpus = j.demand[0] * j.tasks
        if self.policy == "gittins":
            return self.gittins_key(j)
        if self.policy == "sjf":
            return gpus
        if self.policy == "shortest":
            return self.remaining_time(j)
        return gpus * self.remaining_time(j)  # shortest-gpu

    def ordered(self):
        live = (WAITING, RUNNING, STOPPING)
        if self.mode == "tiresias":
            if self.policy == "gittins":  # Tiresias's unit clock is an event too
                if self.event or self.t * self.tick_s >= self.unit:
                    self.unit += self.t * self.tick_s
                    self.event = True
            if self.event:  # re-sorted only at an arrival or a finish, stably, key alone
                self.tlist = [j for j in self.tlist if j.state in live]
                self.tlist += [j for j in self.jobs if j.state == WAITING and j.submit == self.t]
                self.tlist.sort(key=self.order_key)
            order = list(self.tlist)
        else:
            order = sorted((j for j in self.jobs if j.state in live),
                           key=lambda j: (self.order_key(j), j.submit, j.job_id))
        plan = list(self.cap)  # stopping jobs are leaving: their room is planned as free
        stop, go = [], []
        for j in order:
            if j.state == RUNNING:
                if j.te or all(ge(plan[n], j.demand) for n in j.nodes):
                    for n in j.nodes:
                        plan[n] = sub(plan[n], j.demand)
                else:
                    stop.append(j)
            elif j.state == WAITING:
                nodes = [n for n in range(self.N) if ge(plan[n], j.demand)][:j.tasks]
                if len(nodes) == j.tasks:
                    for n in nodes:
                        plan[n] = sub(plan[n], j.demand)
                    go.append((j, nodes))
        for v in stop:
            self.signal(v)
        for j, nodes in go:
            if all(ge(self.avail(n), j.demand) for n in nodes):
                self.start(j, nodes)

    def be_pass(self):
        while True:
            queue = self.waiting(te=False)
            if not queue:
                return
            head = queue[0]
            nodes = [n for n in range(self.N) if ge(self.avail(n), head.demand)]
            if len(nodes) < head.tasks:
                return
            self.start(head, nodes[:head.tasks])

    def earlier_reserved(self, j, n):
        r = ZERO
        for k in self.jobs:
            if (k.te and k.state == WAITING and k.reservation == n and k.key < j.key):
                r = add(r, k.demand)
        return r

    def try_reserved_start(self, j):
        n = j.reservation
        if ge(sub(self.free(n), self.earlier_reserved(j, n)), j.demand):
            self.start(j, [n])

    def te_pass(self):
        for j in self.waiting(te=True):
            assert j.state == WAITING
            if j.reservation is not None:
                self.try_reserved_start(j)
                continue
            nodes = [n for n in range(self.N) if ge(self.avail(n), j.demand)]
            if j.tasks > 1:  # a TE gang: starts on enough nodes or waits; never preempts
                if len(nodes) >= j.tasks:
                    self.start(j, nodes[:j.tasks])
                continue
            if nodes:
                self.start(j, nodes[:1])
                continue
            if self.policy == "prio":
                continue
            choice = self.rand_choice(j) if self.policy == "rand" else self.keyed_choice(j)
            if choice is None:
                continue
            n, victims = choice
            j.reservation = n
            for v in victims:
                self.signal(v)
            self.try_reserved_start(j)

    # ---- LAS ------------------------------------------------------------------------------
    def attained(self, j):
        """GPU-seconds of service: GPUs x tasks x ticks of progress x tick length (LAS);
        seconds of progress, whatever the GPUs (DLAS)."""
        seconds = (j.work - j.remaining) * self.tick_s
        return seconds if self.policy == "dlas" else j.demand[0] * j.tasks * seconds

    def las(self):
        for q in self.queues:  # finished jobs leave their queue
            q[:] = [j for j in q if j.state != DONE]
        for j in self.jobs:  # demotion at the crossing tick, (submit, job_id) order
            if j.state != RUNNING:
                continue
            for k in range(len(self.thresholds)):
                if j in self.queues[k] and self.attained(j) >= self.thresholds[k]:
                    self.queues[k].remove(j)
                    self.queues[k + 1].append(j)
        plan = list(self.cap)  # stopping jobs are leaving: their room is planned as free
        stop, go, visited = [], [], []
        for q in self.queues:
            # list order: running jobs then the others, as the last step left them, then the
            # jobs that joined since (arrivals; demoted jobs, running, at the tail)
            order = list(q)
            visited.append(order)
            for j in order:
                if j.state == RUNNING:
                    if j.te or all(ge(plan[n], j.demand) for n in j.nodes):
                        for n in j.nodes:
                            plan[n] = sub(plan[n], j.demand)
                    else:
                        stop.append(j)
                elif j.state == WAITING:
                    nodes = [n for n in range(self.N) if ge(plan[n], j.demand)][:j.tasks]
                    if len(nodes) == j.tasks:
                        for n in nodes:
                            plan[n] = sub(plan[n], j.demand)
                        go.append((j, nodes))
        for v in stop:
            self.signal(v)
        for j, nodes in go:
            if all(ge(self.avail(n), j.demand) for n in nodes):
                self.start(j, nodes)
        for q, order in zip(self.queues, visited):
            q[:] = [j for j in order if j.state == RUNNING] + [j for j in order
                                                               if j.state != RUNNING]

    # ---- victim selection ---------------------------------------------------------------
    def eligible(self, n, te_job):
        out = []
        for b in self.jobs:
            if (not b.te and b.state == RUNNING and n in b.nodes and b.preemptions < self.P):
                if self.policy == "fitgpp" and not (self.size(b) <= self.s * self.size(te_job)):
                    continue
                out.append(b)
        return out

    def victim_order(self, jobs):
        if self.policy == "fitgpp":
            return sorted(jobs, key=lambda b: (b.gp, self.size(b), b.job_id))
        if self.policy == "lrtp":
            return sorted(jobs, key=lambda b: (-self.left(b), b.job_id))
        raise AssertionError(self.policy)

    def node_key(self, n, V):
        if self.policy == "fitgpp":
            return (max((v.gp for v in V), default=0), len(V), sum(self.size(v) for v in V), n)
        if self.policy == "lrtp":
            return (0 if not V else 1, -self.left(V[0]) if V else 0, n)
        raise AssertionError(self.policy)

    def keyed_choice(self, j):
        candidates = []
        for n in range(self.N):
            proj = self.projected(n)
            if ge(proj, j.demand):
                candidates.append((self.node_key(n, []), n, []))
                continue
            order = self.victim_order(self.eligible(n, j))
            got = proj
            for k, v in enumerate(order):
                got = add(got, v.demand)
                if ge(got, j.demand):
                    V = order[:k + 1]
                    candidates.append((self.node_key(n, V), n, V))
                    break
        if not candidates:
            return None
        _, n, V = min(candidates, key=lambda c: c[0])
        return n, V

    def rand_choice(self, j):
        """RAND's draw protocol (documented choice).

        Candidates are the nodes with ``projected >= demand`` (empty V) or with
        ``projected + demand(all eligible) >= demand``. If some candidate needs no
        victims, the lowest such id wins and nothing is drawn. Otherwise
        ``rng.integers(len(candidates))`` picks the node, then
        ``rng.permutation(len(eligible))`` orders its eligible jobs (listed by
        ascending job_id) and the shortest covering prefix is preempted.
        """
        cands = []
        for n in range(self.N):
            proj = self.projected(n)
            if ge(proj, j.demand):
                cands.append((n, None))
                continue
            elig = sorted(self.eligible(n, j), key=lambda b: b.job_id)
            total = proj
            for b in elig:
                total = add(total, b.demand)
            if ge(total, j.demand):
                cands.append((n, elig))
        if not cands:
            return None
        empty = [n for n, e in cands if e is None]
        if empty:
            return min(empty), []
        k = int(self.rng.integers(len(cands)))
        n, elig = cands[k]
        perm = self.rng.permutation(len(elig))
        order = [elig[int(i)] for i in perm]
        got = self.projected(n)
        for i, v in enumerate(order):
            got = add(got, v.demand)
            if ge(got, j.demand):
                return n, order[:i + 1]
        raise AssertionError("candidate node without a covering prefix")

    # ---- driver -------------------------------------------------------------------------
    def bound(self):
        """A tick by which every run must be over (see the argument in ``run``)."""
        n_te = sum(j.te for j in self.jobs)
        if self.policy in LAS_LIKE + ORDERED:  # each arrival or demotion may preempt all
            n_te = len(self.jobs) ** 2 * (len(self.thresholds) + 1)
        return (max(j.submit for j in self.jobs) + sum(j.work for j in self.jobs)
                + n_te * sum(j.gp + j.ro for j in self.jobs) + 2)

    def run(self):
        # Whenever a job waits, either something runs or stops, or the schedule
        # step starts something; preemption events number at most one per TE job.
        # Hence the bound in ``bound``; passing it means the reference is wrong.
        if not self.jobs:
            return {}
        self.t = 0
        limit = self.bound()
        while any(j.state != DONE for j in self.jobs):
            if self.t > limit:
                raise RuntimeError(f"reference did not finish by tick {limit}")
            self.tick()
            self.t += 1
        return {j.job_id: RefResult(j.first_start, j.finish, j.preemptions, j.node, j.stopped,
                                    j.ran, j.submit, j.work, j.reloaded) for j in self.jobs}


def reference_simulate(jobs_df, capacity, policy, *, tick=60, s=4.0, P=3, seed=0,
                       on_tick=None, thresholds=(3250.0, 7200.0),
                       mode="exact", delta=3250, sizes=None,
                       backfill="none") -> dict[int, RefResult]:
    """Simulate like SPEC.md says, the slow way: ``{job_id: RefResult}`` in ticks.

    ``on_tick(ref, phase)`` (optional) is called after the schedule step
    (``phase == "scheduled"``) and after the advance step (``"advanced"``) of
    every tick; ``ref`` is the :class:`Reference` with ``ref.t`` the tick.
    """
    return Reference(jobs_df, capacity, policy, tick=tick, s=s, P=P, seed=seed,
                     on_tick=on_tick, thresholds=thresholds, mode=mode, delta=delta,
                     sizes=sizes, backfill=backfill).run()
