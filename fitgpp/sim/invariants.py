"""The engine's ledger asserted from scratch at a visited tick (``check=True``; slow, for
tests): every node's free, stopping and reserved resources against its jobs, and each job's
queue, nodes and preemptions."""

from fitgpp.sim.states import DONE, RUNNING, STATE_NAMES, STOPPING, WAITING


def check(eng, t: int) -> None:
    """Assert the ledger of docs/model.md from scratch (slow; for tests)."""
    k = eng.n_nodes
    run = [[0, 0, 0] for _ in range(k)]
    stop = [[0, 0, 0] for _ in range(k)]
    res = [[0, 0, 0] for _ in range(k)]
    for i in range(eng.n):
        d = (eng.dg[i], eng.dc[i], eng.dm[i])
        s = eng.state[i]
        held = eng.nodes[i]
        if s in (RUNNING, STOPPING):
            if len(held) != eng.tasks[i] or len(set(held)) != len(held):
                raise AssertionError(f"tick {t}: job {eng.job_id[i]} with {eng.tasks[i]} "
                                     f"task(s) holds nodes {held}")
            accs = [(run if s == RUNNING else stop)[n] for n in held]
        elif s == WAITING and eng.te[i] and eng.resv[i] >= 0:
            if eng.tasks[i] != 1:
                raise AssertionError(f"tick {t}: TE gang {eng.job_id[i]} holds a reservation")
            accs = [res[eng.resv[i]]]
        else:
            if held and s != DONE:
                raise AssertionError(f"tick {t}: {STATE_NAMES[s]} job {eng.job_id[i]} "
                                     f"holds nodes {held}")
            accs = []
        for acc in accs:
            for r in range(3):
                acc[r] += d[r]
        if s == WAITING and (i in eng.waiting_te) == (i in eng.waiting_be):
            raise AssertionError(f"tick {t}: waiting job {eng.job_id[i]} not in exactly one queue")
        if s != WAITING and (i in eng.waiting_te or i in eng.waiting_be):
            raise AssertionError(f"tick {t}: job {eng.job_id[i]} is {STATE_NAMES[s]} but queued")
        if (s == WAITING) != (i in eng.waiting_g.get(eng.dg[i], ())):
            raise AssertionError(f"tick {t}: job {eng.job_id[i]} is {STATE_NAMES[s]}, and "
                                 f"{'not ' if s == WAITING else ''}in waiting_g")
        if eng.max_preemptions is not None and eng.preemptions[i] > eng.max_preemptions:
            raise AssertionError(f"tick {t}: job {eng.job_id[i]} preempted "
                                 f"{eng.preemptions[i]} times")
        if eng.te[i] and eng.preemptions[i]:
            raise AssertionError(f"tick {t}: TE job {eng.job_id[i]} was preempted")
    if sum(map(len, eng.waiting_g.values())) != len(eng.waiting_te) + len(eng.waiting_be):
        raise AssertionError(f"tick {t}: waiting_g holds other jobs than the two queues")
    for n in range(k):
        cap = (eng.cap_g[n], eng.cap_c[n], eng.cap_m[n])
        free = (eng.free_g[n], eng.free_c[n], eng.free_m[n])
        for r in range(3):
            if free[r] != cap[r] - run[n][r] - stop[n][r]:
                raise AssertionError(f"tick {t}: node {n} free ledger out of sync")
            if free[r] < 0:
                raise AssertionError(f"tick {t}: node {n} free < 0 in resource {r}")
        if (eng.stop_g[n], eng.stop_c[n], eng.stop_m[n]) != tuple(stop[n]):
            raise AssertionError(f"tick {t}: node {n} stopping ledger out of sync")
        if (eng.res_g[n], eng.res_c[n], eng.res_m[n]) != tuple(res[n]):
            raise AssertionError(f"tick {t}: node {n} reservation ledger out of sync")
        if eng.avail_g[n] != eng.free_g[n] - eng.res_g[n]:
            raise AssertionError(f"tick {t}: node {n} avail_g out of sync")
