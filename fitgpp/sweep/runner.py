"""Running a sweep: cached cells are read, the others run as Dask tasks (or in
process), each result is cached the moment it is done, then all are assembled.

On Dask, a worker does all of a cell's work (:mod:`fitgpp.sweep.remote`): it simulates it,
encodes its cache entry, computes the numbers the Dataset is assembled from and, when it can
see the sweep's cache, writes the entry there itself; else the entry's bytes come back and a
thread of this process writes them (:mod:`fitgpp.sweep.sink`). Workers need nothing but the
package. Each task is released as soon as its cell is kept, so a worker that dies costs only
the cells it was running. An interrupted sweep (Ctrl-C, a lost worker, a crash) keeps every
cell that finished; running it again computes only the rest. See docs/cluster.md.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from pathlib import Path

import xarray as xr

from fitgpp.sweep.cache import CellCache, Summarized
from fitgpp.sweep.cell import Cell, cell_key, cells_of, compute_cell, resolve_source
from fitgpp.sweep.config import Experiment
from fitgpp.sweep.derived import derived
from fitgpp.sweep.local import close_cluster, local_cluster  # noqa: F401  (their old home)
from fitgpp.sweep.sink import Sink, SweepError, SweepWarning, check_code  # noqa: F401
from fitgpp.sweep.summary import assemble, cell_metrics
from fitgpp._version import __version__
from fitgpp.sim.policies import registry
from fitgpp.sim.validate import MAX_WORKERS


#: A Dask sweep whose scheduler has had no worker for this many seconds while cells are
#: still to compute fails with a SweepError (cells that finished stay cached).
NO_WORKERS_TIMEOUT_S = 60.0


#: With ``workers`` left to the sweep, Dask runs the cells only on more cores than
#: ``MIN_DASK_CORES - 1`` and for at least ``MIN_DASK_CELLS`` cells to compute, else they run
#: in this process: on 2 cores a 1-worker LocalCluster took 1.9 x the in-process time and 2
#: workers gained nothing (paired ratios 0.67-1.50, median 1.0, issue 26), and starting a
#: cluster takes seconds. The results are the same either way.
MIN_DASK_CORES = 3
MIN_DASK_CELLS = 4


def dask_pays(n_cells: int, cores: int | None = None) -> bool:
    """Whether running ``n_cells`` cells on a Dask cluster sized to the machine can beat
    running them here (see :data:`MIN_DASK_CORES`)."""
    cores = machine_workers() if cores is None else cores
    return cores >= MIN_DASK_CORES and n_cells >= MIN_DASK_CELLS


def machine_workers() -> int:
    """CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def run_sweep(exp: Experiment, *, workers: int | None = None, scheduler: str | None = None,
              cache=None, progress=True, serial: bool = False,
              stats: dict | None = None, runs: dict | None = None,
              only=None) -> xr.Dataset:
    """Run every cell of ``exp`` (an Experiment, or the path of its TOML file) and
    return one Dataset (see fitgpp.sweep.summary and docs/experiments.md).

    Where the cells run, one rule (docs/cluster.md): a ``scheduler`` -- an address of an
    existing Dask scheduler, or a callable returning one, called only if some cell must be
    computed; default ``$FITGPP_SCHEDULER`` -- runs them there, and ``workers`` must not be
    given with one. Else ``workers`` is the size of the LocalCluster started for the sweep
    (default: the machine's CPUs, at most one per cell, or this process where Dask cannot
    pay: see :func:`dask_pays`); ``0`` (or ``serial=True``) computes in this process.
    ``cache``: a directory, None for the default (``$FITGPP_CACHE`` or
    ``~/.cache/fitgpp``), or False for no cache. ``progress``: True for a tqdm
    bar, False for none, or a callable ``progress(done, total)``. ``stats``, if
    a dict, receives ``cells`` (grid points), ``unique`` (distinct computations),
    ``cached``, ``computed`` and ``seconds``. ``runs``, if a dict, receives each
    :class:`Cell`'s result, per-job columns and time series included; turn one into a
    simulation Dataset with :func:`fitgpp.sweep.run_dataset`. ``only``: a predicate on a
    :class:`Cell`; the cells it refuses are neither run nor read and are NaN in the Dataset
    (adaptive replication runs some configurations on more seeds than others).

    A script that starts a LocalCluster must guard its entry point with
    ``if __name__ == "__main__":`` (workers are spawned processes); a script that does not
    is refused with the line to put under it.
    """
    exp, local, scheduler = _checked_request(exp, workers, scheduler, serial)
    t0 = time.perf_counter()
    store = None if cache is False else CellCache(None if cache is True else cache)
    source = resolve_source(exp)
    cells = [c for c in cells_of(exp) if only is None or only(c)]
    keys = [cell_key(exp, source, c) for c in cells]
    results, todo = _lookup(store, keys, cells, source)
    cell_of = dict(zip(keys, cells))

    def recompute(k):   # a summarized cell found damaged later: computed again
        return functools.partial(_recompute, store, k, source, cell_of[k], exp)
    for k, hit in results.items():
        if isinstance(hit, Summarized):
            hit.recompute = recompute(k)
    n_unique = len(results) + len(todo)
    n_cached = len(results)
    if not local and workers is None and (not scheduler or getattr(scheduler, "auto", False)):
        local = not dask_pays(len(todo))  # a cluster sized to the machine, if it can pay
    bar = _Progress(progress, n_unique, n_cached)
    sink = Sink(store, results, bar, recompute)
    try:
        if local:
            for k, c in todo.items():
                sink(k, compute_cell(source, c, exp.cluster, exp.tick, policy_digest(c)))
        elif todo:  # no cluster is started when everything is cached
            _run_dask(source, todo, exp, workers, scheduler, sink)
    finally:
        try:
            sink.finish()   # the entries still being written in the background
        finally:
            bar.close()
    ds = assemble(exp, cells, [derived(results[k], "cell_metrics", cell_metrics) for k in keys],
                  source.digest)
    if runs is not None:
        runs.update({c: results[k] for k, c in zip(keys, cells)})
    if stats is not None:
        stats.update(cells=len(cells), unique=n_unique, cached=n_cached,
                     computed=n_unique - n_cached, seconds=time.perf_counter() - t0)
    return ds


def _recompute(store, key: str, source, cell: Cell, exp: Experiment) -> dict:
    """The result of a cached cell computed again, and cached: its file was found damaged
    or gone when its arrays were first read, after its summary had answered the lookup."""
    res = compute_cell(source, cell, exp.cluster, exp.tick, policy_digest(cell))
    check_code(res["fitgpp"], res["code"])
    store.put(key, res)
    return res


def pending(exp: Experiment, cache=None) -> tuple[int, int]:
    """``(distinct cells, of which cached)`` of ``exp``, without reading or computing any: an
    entry counts as cached when its file is there (:func:`run_sweep` still checks it)."""
    if cache is False:
        return len({cell_key(exp, resolve_source(exp), c) for c in cells_of(exp)}), 0
    store = CellCache(None if cache is True else cache)
    source = resolve_source(exp)
    keys = {cell_key(exp, source, c) for c in cells_of(exp)}
    return len(keys), sum(os.path.lexists(store.path(k)) for k in keys)


def _checked_request(exp, workers, scheduler, serial) -> tuple[Experiment, bool, str | None]:
    """The Experiment (read from its TOML file if a path is given), whether to compute in
    this process, and the scheduler address (``$FITGPP_SCHEDULER`` by default) otherwise."""
    if isinstance(exp, (str, os.PathLike)):
        from fitgpp.sweep.config import load_experiment
        exp = load_experiment(exp)
    if not isinstance(exp, Experiment):
        raise SweepError(f"run_sweep needs an Experiment, got {type(exp).__name__}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or not 0 <= workers <= MAX_WORKERS):
        raise SweepError(f"workers must be an integer in [0, {MAX_WORKERS}], got {workers!r}"
                         [:300])
    local = serial or workers == 0
    env = os.environ.get("FITGPP_SCHEDULER") or None
    if (scheduler or env) and (workers is not None or serial):
        got = f"scheduler={scheduler!r}" if scheduler else \
            f"$FITGPP_SCHEDULER={env!r}; unset it to run the cells here"
        raise SweepError("give either workers (a local cluster, or 0 for in-process) or a "
                         f"scheduler address, not both (got workers={0 if serial else workers}, "
                         f"{got})"[:400])
    return exp, local, None if local else scheduler or env


def _lookup(store, keys, cells, source=None) -> tuple[dict[str, dict], dict[str, Cell]]:
    """Split the distinct cells into cached results and cells still to compute (an entry
    whose length is not the cell's number of jobs counts as corrupt)."""
    results: dict[str, dict] = {}
    todo: dict[str, Cell] = {}
    for k, c in zip(keys, cells):
        if k in results or k in todo:
            continue  # the same computation twice in one grid (e.g. fifo on a trace per seed)
        n = (len(source.trace) if source is not None and source.kind == "trace"
             else dict(c.knobs).get("n_jobs"))
        hit = store.get(k, n_jobs=n) if store is not None else None
        if hit is not None:
            results[k] = hit
        else:
            todo[k] = c
    return results, todo


def policy_digest(cell: Cell) -> str:
    """The digest of the cell's policy, computed here, on the client, where its class was
    defined (:func:`fitgpp.sim.policies.registry.digest`)."""
    return registry.digest(cell.make_policy())


def _run_dask(source, todo: dict[str, Cell], exp, workers, scheduler, done) -> None:
    """Run the cells ``todo`` on Dask and hand each to ``done`` (a :class:`Sink`): on the
    scheduler named (or returned by the callable ``scheduler``), else on a local cluster
    started for them and closed after."""
    from distributed import Client, as_completed

    from fitgpp.sweep.remote import run_cell
    cluster, ours = None, True
    if callable(scheduler):  # started on demand by the caller (e.g. fitgpp reproduce)
        scheduler = scheduler()
    if scheduler:
        client, ours = _client_of(scheduler)
    else:
        cluster = local_cluster(workers or min(machine_workers(), len(todo)))
        client = Client(cluster)
    token, pending = None, None
    deaths = _Deaths(done.deaths)   # what the nannies of a cluster in this process saw
    try:
        target, token = _target(done.store)
        # The workload travels inside one task (not scattered), so the scheduler can
        # rebuild it if the worker that held it dies.
        src = client.submit(_same, source, key=f"fitgpp-source-{source.digest}", pure=False)
        keys = list(todo)
        digests: dict = {}   # one per policy configuration, not per cell
        for k in keys:
            c = todo[k]
            if (c.policy, c.params) not in digests:
                digests[c.policy, c.params] = policy_digest(c)
        futures = client.map(run_cell, [todo[k] for k in keys],
                             [digests[todo[k].policy, todo[k].params] for k in keys], keys,
                             source=src,
                             cluster=exp.cluster, tick=exp.tick, target=target,
                             version=__version__, key=[f"{_TASK}{k}" for k in keys], pure=False)
        pending = as_completed(futures, with_results=True)
        del futures   # each task is released once its cell is kept (a lost worker loses none)
        _collect(client, pending, done, todo)
    finally:
        deaths.remove()
        if pending is not None and not pending.is_empty():
            client.cancel(list(pending.futures))
        if token is not None:
            token.unlink(missing_ok=True)
        if ours:
            client.close()
        if cluster is not None:
            close_cluster(cluster)


def _client_of(address: str):
    """``(client, ours)``: the Client this process already has of the scheduler at
    ``address`` (a notebook's; two Clients of one scheduler in a process held this one's
    results back by seconds), else a new one, which the sweep closes."""
    from distributed import Client, default_client
    from distributed.comm.addressing import normalize_address
    try:
        current = default_client()
        if current.status == "running" and \
                normalize_address(current.scheduler.address) == normalize_address(address):
            return current, False
    except (ValueError, AttributeError, TypeError):
        pass   # no client yet, or an address that does not parse: a client of our own
    try:
        return Client(address, timeout="20s"), True
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise SweepError(f"cannot reach the Dask scheduler at {address!r} ({exc}); check "
                         "--scheduler / FITGPP_SCHEDULER") from None


#: The key of a cell's Dask task: this and the cell's cache key.
_TASK = "fitgpp-cell-"


def _target(store):
    """The sweep's cache as workers are told of it (:class:`~fitgpp.sweep.remote.Target`),
    with the token file a worker looks for to know it sees this very directory; ``(None,
    None)`` without a cache. A token that cannot be written: no worker writes, the client
    does."""
    import secrets

    from fitgpp.sweep.remote import TOKEN, Target
    if store is None:
        return None, None
    target = Target(os.path.abspath(store.root), secrets.token_hex(16))
    path = Path(target.root) / TOKEN.format(token=target.token)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("a fitgpp sweep is running; its workers write cells here\n")
    except OSError:
        return target, None
    return target, path


def _same(x):
    return x


def _collect(client, results, done, todo) -> None:
    """Hand each finished cell to ``done``, waking when results come in; while none comes,
    ask the scheduler every second how many workers it has (with another Client open in this
    process, results reached this one only at such a call), and fail when it has had none for
    NO_WORKERS_TIMEOUT_S seconds, or cannot be reached, rather than wait forever."""
    from distributed import CancelledError
    idle_since, last = None, time.monotonic()
    while not results.is_empty():
        try:
            batch = results.next_batch(block=False)
        except CancelledError:
            raise SweepError("the Dask scheduler lost the sweep's tasks (was it restarted?); "
                             "run the sweep again: finished cells are cached") from None
        for fut, res in batch:
            if fut.status == "error":
                _failed(fut, todo[fut.key[len(_TASK):]], done)
            done.receive(res)
        if batch:
            idle_since, last = None, time.monotonic()
            del batch, fut, res   # released: the scheduler forgets the cell
            continue
        _wait(results, QUIET_S)
        now = time.monotonic()
        if now - last < QUIET_S:
            continue   # a result came in within the second
        last = now
        try:
            n_workers = len(client.nthreads())
        except Exception as exc:  # the scheduler itself is gone
            raise SweepError(f"lost the Dask scheduler ({type(exc).__name__}: {exc}); finished "
                             "cells are cached") from None
        if n_workers:
            idle_since = None
        elif idle_since is None:
            idle_since = now
        elif now - idle_since > NO_WORKERS_TIMEOUT_S:
            raise SweepError(f"no Dask worker for {NO_WORKERS_TIMEOUT_S:g} s while cells were "
                             "left to compute: all workers are gone; finished cells are cached")


#: Seconds without a result after which the sweep asks its scheduler for its workers.
QUIET_S = 1.0


def _wait(results, timeout: float) -> None:
    """Sleep until a result is in ``results`` (a ``distributed.as_completed``) or ``timeout``
    seconds pass, as its own blocking iteration waits (else poll every 0.1 s)."""
    cond, q = getattr(results, "thread_condition", None), getattr(results, "queue", None)
    if cond is None or not hasattr(q, "empty"):
        time.sleep(0.1)
        return
    with cond:
        if q.empty():
            cond.wait(timeout)


def _failed(fut, cell: Cell, done) -> None:
    """Raise the error of a cell's task: the cell's own (a FitgppError is one line), or, when
    its worker died every time it ran it, a SweepError naming the cell."""
    from distributed.scheduler import KilledWorker
    try:
        fut.result()
    except KilledWorker as exc:
        seen = ", ".join(sorted(set(done.deaths)))
        how = f": here its processes {seen}" if seen else ""
        kept = "; the cells that finished are cached" if done.store is not None else ""
        raise SweepError(f"cell {describe(cell)}: its Dask worker died each of the "
                         f"{exc.allowed_failures + 1} times it ran it (the process exited, was "
                         f"killed, or ran out of memory{how}){kept}"[:900]) from None


class _Deaths(logging.Handler):
    """Notes, in ``seen``, how each worker process of a cluster in this process ended ("exited
    with status 3", "was killed by signal 9"), as its nanny logs it, while it is attached."""

    def __init__(self, seen: list):
        super().__init__(logging.INFO)
        self.seen = seen
        self.logger = logging.getLogger("distributed.nanny")
        self.logger.addHandler(self)

    def emit(self, record) -> None:
        words = record.getMessage().split(" ", 3)
        if words[:2] == ["Worker", "process"] and len(words) == 4:
            self.seen.append(words[3])

    def remove(self) -> None:
        self.logger.removeHandler(self)


def describe(cell: Cell) -> str:
    """A cell in words: its policy with its fields, its seed and its workload's knobs."""
    fields = ", ".join(f"{k}={v!r}" for k, v in cell.params)
    knobs = ", ".join(f"{k}={v!r}" for k, v in cell.knobs)
    return (f"{cell.policy}{f' ({fields})' if fields else ''}, seed {cell.seed}"
            f"{f', workload {knobs}' if knobs else ''}")


class _Progress:
    def __init__(self, progress, total, initial):
        self.fn = progress if callable(progress) else None
        self.done, self.total = initial, total
        self.bar = None
        if progress is True:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=total, initial=initial, unit="cell", desc="sweep")
        if self.fn:
            self.fn(self.done, self.total)

    def update(self):
        self.done += 1
        if self.bar is not None:
            self.bar.update()
        if self.fn:
            self.fn(self.done, self.total)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def cache_dir_for(cache) -> Path | None:
    """Where ``run_sweep(cache=...)`` keeps cells (None when caching is off)."""
    return None if cache is False else CellCache(None if cache is True else cache).root
