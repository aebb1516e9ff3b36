"""Running a sweep: cached cells are read, the others run as Dask tasks (or in
process), each result is cached the moment it arrives, then all are assembled.

Results come back to the client, which alone writes the cache: workers need
nothing but the package, and a sweep on a remote cluster caches on the machine
that asked for it. An interrupted sweep (Ctrl-C, a lost worker, a crash) keeps
every cell that finished; running it again computes only the rest.
"""

from __future__ import annotations

import functools
import os
import time
import warnings
from pathlib import Path

import xarray as xr

from fitgpp.sweep.cache import CellCache, Summarized
from fitgpp.sweep.cell import Cell, cell_key, cells_of, code_digest, compute_cell, resolve_source
from fitgpp.sweep.config import Experiment, ExperimentError
from fitgpp.sweep.derived import Kept, derived
from fitgpp.sweep.summary import assemble, cell_metrics
from fitgpp._version import __version__
from fitgpp.sim.policies import registry
from fitgpp.sim.validate import MAX_WORKERS


class SweepError(ExperimentError):
    """A sweep cannot run as asked (bad worker count, code mismatch on workers)."""


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

    ``workers``: size of the LocalCluster started for the sweep (default: the
    machine's CPUs, at most one per cell, or this process where Dask cannot pay: see
    :func:`dask_pays`); ``0`` or ``serial=True`` computes in
    this process without Dask (and ignores ``$FITGPP_SCHEDULER``). ``scheduler``:
    address of an existing Dask scheduler (default ``$FITGPP_SCHEDULER``), or a
    callable returning one, called only if some cell must be computed; no
    cluster is started then, and ``workers`` must not be given.
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
    ``if __name__ == "__main__":`` (workers are spawned processes).
    """
    exp, local, scheduler = _checked_request(exp, workers, scheduler, serial)
    t0 = time.perf_counter()
    store = None if cache is False else CellCache(None if cache is True else cache)
    source = resolve_source(exp)
    cells = [c for c in cells_of(exp) if only is None or only(c)]
    keys = [cell_key(exp, source, c) for c in cells]
    results, todo = _lookup(store, keys, cells, source)
    cell_of = dict(zip(keys, cells))
    for k, hit in results.items():   # a summarized cell found damaged later: computed again
        if isinstance(hit, Summarized):
            hit.recompute = functools.partial(_recompute, store, k, source, cell_of[k], exp)
    n_unique = len(results) + len(todo)
    n_cached = len(results)
    if not local and workers is None and (not scheduler or getattr(scheduler, "auto", False)):
        local = not dask_pays(len(todo))  # a cluster sized to the machine, if it can pay
    bar = _Progress(progress, n_unique, n_cached)

    def done(key, res):
        _check_code(res)
        results[key] = res = Kept(res)
        if store is not None:
            res.summary = store.put(key, res)   # where its derived values are kept
        bar.update()

    try:
        if local:
            for k, c in todo.items():
                done(k, compute_cell(source, c, exp.cluster, exp.tick, policy_digest(c)))
        elif todo:  # no cluster is started when everything is cached
            _run_dask(source, todo, exp, workers, scheduler, done)
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
    _check_code(res)
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
    if scheduler and workers is not None:
        raise SweepError("give either workers (a local cluster, or 0 for in-process) or a "
                         f"scheduler address, not both (got workers={workers}, "
                         f"scheduler={scheduler!r})")
    if not local:
        scheduler = scheduler or os.environ.get("FITGPP_SCHEDULER") or None
    return exp, local, scheduler


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


def _check_code(res: dict) -> None:
    """Refuse results from workers with another fitgpp version; warn once when only
    the source differs (an edited install), since the cache key used this process's code."""
    global _WARNED
    if res["fitgpp"] != __version__:
        raise SweepError(f"a worker runs fitgpp {res['fitgpp']} but this process runs "
                         f"{__version__}; install the same fitgpp on the workers")
    if res["code"] != code_digest() and not _WARNED:
        _WARNED = True
        warnings.warn(f"a worker runs other fitgpp source (code {res['code'][:12]}) than this "
                      f"process (code {code_digest()[:12]}); were files edited during the sweep?",
                      SweepWarning, stacklevel=2)


_WARNED = False


class SweepWarning(UserWarning):
    """Something in a sweep deserves attention but does not stop it."""


def policy_digest(cell: Cell) -> str:
    """The digest of the cell's policy, computed here, on the client, where its class was
    defined (:func:`fitgpp.sim.policies.registry.digest`)."""
    return registry.digest(cell.make_policy())


def _run_dask(source, todo: dict[str, Cell], exp, workers, scheduler, done) -> None:
    from distributed import Client, as_completed

    cluster = None
    if callable(scheduler):  # started on demand by the caller (e.g. fitgpp reproduce)
        scheduler = scheduler()
    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise SweepError(f"cannot reach the Dask scheduler at {scheduler!r} ({exc}); check "
                             "--scheduler / FITGPP_SCHEDULER") from None
    else:
        cluster = local_cluster(workers or min(machine_workers(), len(todo)))
        client = Client(cluster)
    futures = []
    try:
        # The workload travels inside one task (not scattered), so the scheduler can
        # rebuild it if the worker that held it dies.
        src = client.submit(_same, source, key=f"fitgpp-source-{source.digest}", pure=False)
        futures = [client.submit(compute_cell, src, c, exp.cluster, exp.tick, policy_digest(c),
                                 pure=False, key=f"fitgpp-cell-{k}") for k, c in todo.items()]
        by_key = {f.key: k for f, k in zip(futures, todo)}
        _collect(client, as_completed(futures, with_results=True), by_key, done)
    finally:
        if futures:
            client.cancel(futures)
        client.close()
        if cluster is not None:
            close_cluster(cluster)


def local_cluster(n_workers: int):
    """A Dask LocalCluster of ``n_workers`` single-threaded processes with every listener on
    the loopback interface only (scheduler, workers, nannies and the HTTP endpoint; ":0" =
    any free port: None still tries 8787, and warns when another cluster holds it).

    Its processes log only CRITICAL messages: a worker whose heartbeat met a scheduler that
    was closing printed an ERROR traceback to stderr now and then, though nothing was
    wrong. Nothing that matters is lost: a failing cell raises in the client, and lost
    workers are handled by the sweep (their cells run again elsewhere, or it fails saying so)."""
    import logging

    from distributed import LocalCluster
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or \
            not 1 <= n_workers <= MAX_WORKERS:
        raise SweepError(f"a local cluster takes 1 to {MAX_WORKERS} workers, got "
                         f"{n_workers!r}"[:300])
    return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                        host="127.0.0.1", dashboard_address="127.0.0.1:0",
                        silence_logs=logging.CRITICAL)


def close_cluster(cluster) -> None:
    """Close a cluster made by :func:`local_cluster`."""
    cluster.close()


def _same(x):
    return x


def _collect(client, results, by_key, done) -> None:
    """Hand each finished cell to ``done``; fail when the scheduler has had no worker for
    NO_WORKERS_TIMEOUT_S seconds, or cannot be reached, rather than wait forever."""
    from distributed import CancelledError
    idle_since, checked = None, 0.0
    while not results.is_empty():
        try:
            batch = results.next_batch(block=False)
        except CancelledError:
            raise SweepError("the Dask scheduler lost the sweep's tasks (was it restarted?); "
                             "run the sweep again: finished cells are cached") from None
        for fut, res in batch:
            if fut.status == "error":
                fut.result()  # raises the cell's own error (a FitgppError is one line)
            done(by_key[fut.key], res)
        if batch:
            idle_since = None
            continue
        time.sleep(0.1)
        now = time.monotonic()
        if now - checked < 1.0:
            continue
        checked = now
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
