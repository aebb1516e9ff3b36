"""The capacity ledger: where every GPU-hour the cluster offered over a run went.

The window is the run's span, from the first submission to the last finish (the ticks
``[min submit, max finish)``, the same window as ``gpu_util_mean``); the cluster offers
``GPUs x ticks`` of it, ``ledger_capacity``. Every GPU at every tick of the window is in
exactly one part:

- ``useful_te``, ``useful_be``: running and making progress (each job's work, once: a
  preempted job keeps its progress);
- ``reload``: running but reloading a checkpoint after a preemption (lost reloads included);
- ``grace``: held by a preempted job during its grace period;
- ``reserved``: idle, reserved for a waiting TE job (FitGpp reserves a node's free GPUs
  while the victims there finish their grace periods);
- ``idle_fits``: idle (and not reserved) while jobs wait, and some waiting job would fit
  in the free unreserved GPUs, CPU and memory of some node (a gang: of ``tasks`` distinct
  nodes) -- the policy chose not to start it (a strict queue blocked behind its head);
- ``idle_nofit``: idle while jobs wait, and no waiting job would fit anywhere
  (fragmentation: the free GPUs are spread over nodes too thinly);
- ``idle_empty``: idle with nothing waiting.

While some job waits, the engine adds the idle GPUs to their part over the interval up to
the next tick it visits (:func:`account`: whether a waiting job would fit is known only
there; no work per quiet tick), in integer GPU-ticks. Everything else is integrated after the
run from the state the engine records at each visited tick, and progress, reloads and grace
periods are also summed job by job; :func:`ticks` checks that each way agrees, so the parts
add up to the capacity exactly. The state after a schedule step holds
until the next visited tick (SPEC: quiet ticks change nothing), so jumping and stepping
every tick give the same ledger.
"""

from __future__ import annotations

import numpy as np

from fitgpp.errors import FitgppError

#: The parts in the order tables show them: name -> description (each a ``ledger_<name>``
#: variable of a result, in GPU-hours).
PARTS = {
    "useful_te": "GPU-hours of progress of TE jobs (their work on all their GPUs)",
    "useful_be": "GPU-hours of progress of BE jobs (their work on all their GPUs)",
    "reload": "GPU-hours running but reloading a checkpoint after a preemption (lost "
              "reloads included)",
    "grace": "GPU-hours held by preempted jobs during their grace periods",
    "reserved": "GPU-hours idle but reserved for a waiting TE job",
    "idle_fits": "GPU-hours idle while jobs wait and some waiting job would fit on the "
                 "free, unreserved resources (a gang: on as many distinct nodes)",
    "idle_nofit": "GPU-hours idle while jobs wait and no waiting job would fit anywhere",
    "idle_empty": "GPU-hours idle with nothing waiting",
}
CAPACITY_NOTE = ("GPU-hours the cluster offered over the run: all its GPUs from the first "
                 "submission to the last finish; the ledger_* parts add up to it exactly")


def account(eng, dt: int) -> None:
    """Add ``dt`` ticks of ``eng``'s state after this schedule step, while some job waits,
    to ``eng.ledger``: ``[reserved, idle_fits, idle_nofit]`` in GPU-ticks, then the last
    waiting one-task job found to fit and its node (-1: none), tried first next time (it
    usually still waits and still fits), and ``eng.taken`` (starts and reservations so far)
    when some job last fit (-1: none did). The engine calls it at every visited tick."""
    if not (eng.waiting_te or eng.waiting_be):
        return
    idle = eng.total_gpu - eng.run_gpu - eng.stop_gpu
    if not idle:
        return
    led = eng.ledger
    if eng.resv_gpu:
        held = sum(min(r, f) for r, f in zip(eng.res_g, eng.free_g) if r)
        led[0] += held * dt
        idle -= held
        if not idle:
            return
    if led[5] == eng.taken:
        # some job fit at the last check and nothing was started or reserved since: resources
        # only grew and no waiting job left, so one still fits
        led[1] += idle * dt
        return
    j, n = led[3], led[4]
    if j >= 0 and eng.state[j] == 1 and eng.dg[j] <= eng.avail_g[n] \
            and eng.dc[j] <= eng.free_c[n] - eng.res_c[n] \
            and eng.dm[j] <= eng.free_m[n] - eng.res_m[n]:
        led[1] += idle * dt
        led[5] = eng.taken
    elif some_fit(eng):
        led[1] += idle * dt
        led[5] = eng.taken
    else:
        led[2] += idle * dt
        led[5] = -1


def some_fit(eng) -> bool:
    """Whether some waiting job (each task of a gang on its own node) fits in the free,
    unreserved GPUs, CPU and memory of ``eng``'s nodes now (a one-task job found to fit is
    kept in ``eng.ledger[3:5]``). Only jobs of at most the most unreserved GPUs any node
    has are looked at, through ``eng.waiting_g`` (the waiting jobs by GPUs per task, fewest
    first): the cost does not grow with the jobs too large to fit. A one-task job is first
    tried on the node with the most unreserved GPUs (CPU and memory rarely bind), then on
    every node."""
    dc, dm, tasks, av, led = eng.dc, eng.dm, eng.tasks, eng.avail_g, eng.ledger
    gmax = max(av)
    top = av.index(gmax)
    c_top, m_top = eng.free_c[top] - eng.res_c[top], eng.free_m[top] - eng.res_m[top]
    for g, waiting in eng.waiting_g.items():
        if g > gmax:
            break  # (and every later group: they need even more GPUs)
        for i in waiting:
            if tasks[i] == 1 and dc[i] <= c_top and dm[i] <= m_top:
                led[3], led[4] = i, top
                return True
            n = _fits(eng, i)
            if n >= 0:
                led[3], led[4] = (i, n) if tasks[i] == 1 else (-1, 0)
                return True
    return False


def _fits(eng, i: int) -> int:
    """The last of the nodes job ``i``'s tasks fit on (each on its own), -1 if too few."""
    g, c, m, need = eng.dg[i], eng.dc[i], eng.dm[i], eng.tasks[i]
    av, fc, fm, rc, rm = eng.avail_g, eng.free_c, eng.free_m, eng.res_c, eng.res_m
    for n in range(eng.n_nodes):
        if g <= av[n] and c <= fc[n] - rc[n] and m <= fm[n] - rm[n]:
            need -= 1
            if not need:
                return n
    return -1


def _series(eng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GPU-ticks running and in grace, and idle GPU-ticks with nothing waiting: integrals of
    the engine's recorded state (one row per visited tick, held until the next)."""
    t, vals = eng.recorded()
    dt = np.diff(t, append=t[-1:]) if len(t) else t
    run, stop = vals[:, 0].astype(np.int64), vals[:, 1].astype(np.int64)
    empty = (vals[:, 3] == 0) & (vals[:, 4] == 0)
    idle = (eng.total_gpu - run - stop) * dt
    return int(run @ dt), int(stop @ dt), np.array([idle[empty].sum(), idle[~empty].sum()])


def ticks(eng) -> dict[str, int]:
    """Every part and ``capacity`` in GPU-ticks (integers). Progress, reloads and grace
    periods are summed job by job, and checked against the integral of the GPUs running and
    in grace; the idle parts while jobs wait come from :func:`account`, and are checked
    against the integral of the idle GPUs while some job waits; RuntimeError if any of these
    disagree (they agree by construction: a mismatch is a bug)."""
    te = np.asarray(eng.te, dtype=bool)
    gpus = np.asarray(eng.dg, dtype=np.int64) * np.asarray(eng.tasks, dtype=np.int64)
    work = gpus * np.asarray(eng.work, dtype=np.int64)
    reserved, fits, nofit = eng.ledger[:3]
    run, stop, (empty, waiting) = _series(eng)
    out = {"useful_te": int(work[te].sum()), "useful_be": int(work[~te].sum()),
           "reload": int((gpus * np.asarray(eng.reload_ticks, dtype=np.int64)).sum()),
           "grace": int((gpus * np.asarray(eng.stop_ticks, dtype=np.int64)).sum()),
           "reserved": reserved, "idle_fits": fits, "idle_nofit": nofit, "idle_empty": int(empty)}
    span = (max(eng.finish) - eng.submit[0]) if eng.n else 0
    out["capacity"] = eng.total_gpu * span
    if (out["useful_te"] + out["useful_be"] + out["reload"] != run or out["grace"] != stop
            or reserved + fits + nofit != waiting
            or sum(v for k, v in out.items() if k != "capacity") != out["capacity"]):
        raise RuntimeError(f"capacity ledger out of balance: {out}, engine {eng.ledger}")
    return out


def variables(eng, tick: float) -> dict:
    """The ``ledger_*`` variables of a result (GPU-hours, 0-d, each with its GPU-ticks in
    the attr ``gpu_ticks``)."""
    import xarray as xr
    out = {}
    for name, v in ticks(eng).items():
        desc = CAPACITY_NOTE if name == "capacity" else PARTS[name]
        out[f"ledger_{name}"] = xr.Variable((), np.array(v * tick / 3600.0),
                                            {"units": "GPU-h", "description": desc,
                                             "gpu_ticks": np.int64(v)}, fastpath=True)
    return out


class LedgerError(FitgppError):
    """A result's ledger does not read as one; the message names the variable."""


def _part(ds, name: str) -> float:
    """The value of ``ledger_<name>`` in ``ds``: one finite number >= 0, else a
    :class:`LedgerError` saying what it is instead."""
    var = f"ledger_{name}"
    if var not in getattr(ds, "data_vars", ()):
        raise LedgerError(f"result has no variable {var!r} (the ledger has "
                          f"{', '.join(f'ledger_{p}' for p in [*PARTS, 'capacity'])}): written "
                          "before the capacity ledger, or edited")
    v = ds[var]
    if v.dims:
        raise LedgerError(f"result variable {var!r} has dimensions {v.dims}, not one number "
                          "(GPU-hours of the run)"[:300])
    if v.dtype.kind not in "iuf":
        raise LedgerError(f"result variable {var!r} holds {v.dtype} ({str(v.values)[:40]!r}), "
                          "not a number of GPU-hours")
    x = float(v.values)
    if not (np.isfinite(x) and x >= 0):
        raise LedgerError(f"result variable {var!r} is {x!r}, not a number of GPU-hours >= 0")
    return x


def table(ds) -> "pd.DataFrame":  # noqa: F821
    """One run's ledger: a row per part (and the capacity), GPU-hours and share of the
    capacity. A result whose ledger does not read as one (a part missing or renamed, turned to
    text, given a dimension, negative or not finite, or parts that do not add up to the
    capacity) is a :class:`LedgerError` naming the variable."""
    import pandas as pd
    if not hasattr(ds, "data_vars"):
        raise LedgerError(f"ledger: expected a result (an xarray Dataset; fitgpp.load reads a "
                          f"file), got {type(ds).__name__}")
    names = [*PARTS, "capacity"]
    hours = {n: _part(ds, n) for n in names}
    cap, total = hours["capacity"], sum(hours[n] for n in PARTS)
    if abs(total - cap) > 1e-9 * max(cap, 1.0):
        raise LedgerError(f"result's ledger parts add up to {total:.9g} GPU-hours, not to its "
                          f"capacity ledger_capacity = {cap:.9g}: edited?")
    rows = [{"part": n, "gpu_h": hours[n], "share": hours[n] / cap if cap else np.nan}
            for n in names]
    return pd.DataFrame(rows).set_index("part")
