"""The Dask cluster a sweep starts on this machine: started only from code that may start
processes, and closed without a word.

Dask starts a local cluster's workers as new Python processes that import the script which
started them (the ``spawn`` start method). A script that starts a sweep at its top level, not
under ``if __name__ == "__main__":``, would start another cluster in every worker as it is
imported, and Dask would fail with ``RuntimeError: Nanny failed to start.`` and about 290
lines of tracebacks; :func:`local_cluster` finds that line of the script first and says
what to add (:func:`unguarded_line`).
"""

from __future__ import annotations

import ast
import logging
import sys

from fitgpp.sim.validate import MAX_WORKERS
from fitgpp.sweep.sink import SweepError

GUARD = 'if __name__ == "__main__":'


def local_cluster(n_workers: int):
    """A Dask LocalCluster of ``n_workers`` single-threaded processes with every listener on
    the loopback interface only (scheduler, workers, nannies and the HTTP endpoint; ":0" =
    any free port: None still tries 8787, and warns when another cluster holds it).

    Its processes log only CRITICAL messages: nothing that matters is lost, since a failing
    cell raises in the client and lost workers are handled by the sweep (their cells run
    again elsewhere, or it fails saying so). Refused, with the line to fix, when it would be
    started by a script's top level as its workers import it (:func:`unguarded_line`)."""
    from distributed import LocalCluster
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or \
            not 1 <= n_workers <= MAX_WORKERS:
        raise SweepError(f"a local cluster takes 1 to {MAX_WORKERS} workers, got "
                         f"{n_workers!r}"[:300])
    where = unguarded_line()
    if where is not None:
        raise SweepError(f"{where}: this line starts Dask workers, which import the script "
                         f"again and would run it too: put it under {GUARD} (see "
                         "docs/experiments.md, \"Running it\")")
    return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                        host="127.0.0.1", dashboard_address="127.0.0.1:0",
                        silence_logs=logging.CRITICAL)


def close_cluster(cluster) -> None:
    """Close a cluster made by :func:`local_cluster`, in an order that prints nothing: its
    workers first stop their heartbeats and logging (a heartbeat sent while the scheduler
    closed printed a ``CommClosedError`` traceback), then the workers close, then the
    scheduler."""
    try:
        from distributed import Client
        with Client(cluster, timeout="10s") as client:
            client.run(_quiet)
    except Exception:  # noqa: BLE001 - a broken cluster is closed all the same
        pass
    cluster.close()


def _quiet(dask_worker=None) -> None:
    """On a worker about to close: no more heartbeats, no more log lines."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    if dask_worker is not None:
        dask_worker.periodic_callbacks["heartbeat"].stop()


def unguarded_line() -> str | None:
    """``"script.py:LINE"`` when this call comes from the top level of the script run as
    ``__main__`` and that line is not under ``if __name__ == "__main__":`` (Dask's workers,
    spawned, import that script and would run it), else None; None too when it cannot tell
    (an interactive session, a notebook, a script whose source cannot be read)."""
    import dask
    method = dask.config.get("distributed.worker.multiprocessing-method", "spawn")
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    name = getattr(getattr(main, "__spec__", None), "name", None) or ""
    if method not in ("spawn", "forkserver") or not path or not str(path).endswith(".py") \
            or name == "__main__" or name.endswith(".__main__"):
        return None   # (a package's __main__.py is not imported again by spawned processes)
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_globals is vars(main)
                                     and frame.f_code.co_name == "<module>"):
        frame = frame.f_back
    if frame is None:
        return None
    line = frame.f_lineno
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return None
    guarded = any(_is_guard(n.test) and n.body[0].lineno <= line <= n.body[-1].end_lineno
                  for n in ast.walk(tree) if isinstance(n, ast.If))
    return None if guarded else f"{path}:{line}"


def _is_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round), alone or in an ``and``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_is_guard(v) for v in test.values)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(a, ast.Name) and a.id == "__name__" for a in sides) and \
        any(isinstance(a, ast.Constant) and a.value == "__main__" for a in sides)
