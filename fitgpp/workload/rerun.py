"""``rerun``: a result run again from nothing but its attrs.

It sits above the simulator and the workloads because a result's workload is either a synthesis
recipe (drawn again with :func:`fitgpp.workload.from_recipe`) or a trace file (read again and
checked by sha256); the run itself is :func:`fitgpp.sim.run.simulate`.
"""

from __future__ import annotations

import xarray as xr

from fitgpp.errors import FitgppError
from fitgpp.sim.cluster import Cluster
from fitgpp.sim.policies import registry
from fitgpp.sim.run import SimulationError, simulate
from fitgpp.sim.trace import Trace, read_trace


class RerunWarning(UserWarning):
    """:func:`rerun` runs policy code other than the code that made the result."""


def result_of(ds) -> xr.Dataset:
    """``ds`` if it is a result (an xarray Dataset), the result read from it if it is a path
    (:func:`fitgpp.sim.run.load`), else a :class:`SimulationError` saying what rerun takes."""
    import os
    if isinstance(ds, xr.Dataset):
        return ds
    if isinstance(ds, (str, os.PathLike)) and not isinstance(ds, bool):
        from fitgpp.sim.run import load
        return load(ds)
    raise SimulationError(f"rerun: expected a result (an xarray Dataset) or the path of a "
                          f"result file, got {type(ds).__name__} {ds!r}"[:300])


def rerun(ds: xr.Dataset, *, policy=None, allow_modules=()) -> xr.Dataset:
    """Run a result again from nothing but its attrs (workload recipe or trace file, cluster,
    policy and parameters, tick, sampling); the answer is identical if the inputs still are.
    ``ds``: the result, or the path of a result file (read by :func:`fitgpp.load`).

    Only what a result written by fitgpp can hold is accepted (bounds in
    :mod:`fitgpp.sim.validate`). The policy is built again from ``attrs["policy"]`` and
    ``attrs["policy_params"]``. A result file is data people share, and reading data must
    not run code: importing a module runs it (``unittest.__main__`` runs every test file
    here), so rerun imports nothing the file names on its own. A registered policy is
    found by name; any other (``module:Class``) only when the caller allows it:

    - ``policy``: the policy class (or an object of it) the result must name, e.g.
      ``rerun(ds, policy=Patient)`` for a class defined in a notebook;
    - ``allow_modules``: names of modules the caller trusts, e.g.
      ``rerun(ds, allow_modules=("mypolicies",))``; only the exact module names listed
      are imported.

    Raises :class:`SimulationError` if the attrs are not what a result holds or the
    workload cannot be found again (a DataFrame given in memory leaves no recipe; a trace
    file that moved or changed is refused), and :class:`fitgpp.PolicyError` if the policy
    is not allowed or cannot be built.
    """
    a = result_of(ds).attrs
    source, cluster, policy, tick, sample_every = _rerun_attrs(a, policy, allow_modules)
    recorded = a.get("policy_digest")
    if recorded is not None and registry.digest(policy) != recorded:
        import warnings
        warnings.warn(f"policy {a['policy']}: its code differs from the code that made this "
                      "result (policy_digest); the rerun uses the code as it is now",
                      RerunWarning, stacklevel=2)
    kind = source.get("kind")
    try:
        if kind == "synthetic":
            from fitgpp.workload import from_recipe
            trace = from_recipe(_checked_recipe(source))
        elif kind in ("csv", "tiresias"):  # read again, checked by sha256
            trace = trace_file_again(source, SimulationError)
        else:
            raise SimulationError(f"workload of kind {kind!r} carries no recipe to rerun from "
                                  "(pass a CSV path, a Tiresias CSV read by "
                                  "fitgpp.sim.tiresias.read_tiresias, or a synthesized Trace "
                                  "to simulate to keep one)")
        return simulate(trace, cluster, policy, tick=tick, sample_every=sample_every)
    except FitgppError:
        raise
    except (KeyError, TypeError, AttributeError, ValueError, OverflowError, RecursionError,
            NotImplementedError) as exc:  # e.g. an abstract policy class it was allowed
        raise SimulationError(f"result attrs cannot be rerun ({type(exc).__name__}: "
                              f"{' '.join(str(exc).split())})"[:300]) from None


def _rerun_attrs(a, allowed_policy, allow_modules) -> tuple:
    """(workload source, cluster, policy, tick, sample_every) from a result's attrs, each
    checked to be what :func:`simulate` writes; the policy only as :func:`rerun` allows."""
    from fitgpp.sim.validate import (MAX_PREEMPTIONS, MAX_SEED, MAX_TIME_S, check_int,
                                     check_number, check_tick, loads_json)
    for k in ("workload", "cluster", "policy", "policy_params", "tick", "sample_every"):
        if k not in a:
            raise SimulationError(f"result lacks attr {k!r}; cannot rerun")
        if k in ("workload", "cluster", "policy", "policy_params") and not isinstance(a[k], str):
            raise SimulationError(f"result attr {k!r} must be a string, got {a[k]!r}"[:300])
    source = loads_json(a["workload"], "result attr 'workload'", SimulationError)
    if not isinstance(source, dict):
        raise SimulationError("result attr 'workload' must be a JSON object")
    cluster = Cluster.from_json(a["cluster"])
    params = loads_json(a["policy_params"], "result attr 'policy_params'", SimulationError)
    if not isinstance(params, dict):
        raise SimulationError("result attr 'policy_params' must be a JSON object")
    if "max_preemptions" in params:
        check_int(params["max_preemptions"], "attr policy_params: max_preemptions", 1,
                  MAX_PREEMPTIONS, SimulationError)
    if "seed" in params:
        check_int(params["seed"], "attr policy_params: seed", 0, MAX_SEED, SimulationError)
    try:
        policy = registry.resolve(registry.allowed_class(a["policy"], allowed_policy,
                                                         allow_modules, "result attr 'policy'"),
                                  **params)
    except FitgppError:
        raise
    except Exception as exc:  # a module:Class that cannot be imported, bad parameters
        raise SimulationError(f"result attrs 'policy', 'policy_params': cannot build the policy "
                              f"({type(exc).__name__}: {exc})"[:300]) from None
    tick = check_tick(a["tick"], "attr tick", SimulationError)
    sample_every = check_number(a["sample_every"], "attr sample_every (seconds)", tick,
                                MAX_TIME_S, error=SimulationError)
    return source, cluster, policy, tick, sample_every


def _checked_recipe(source: dict) -> dict:
    """A synthesis recipe holding only what :func:`~fitgpp.workload.synthesize` records,
    within the bounds of :mod:`fitgpp.sim.validate` (n_jobs, seed, knobs, model file)."""
    from fitgpp.sim.validate import MAX_GRACE_SCALE, MAX_JOBS, MAX_SEED, check_int, check_number
    where = "result attr 'workload'"
    check_int(source.get("n_jobs"), f"{where}: n_jobs", 1, MAX_JOBS, SimulationError)
    check_int(source.get("seed"), f"{where}: seed", 0, MAX_SEED, SimulationError)
    for k, lo, hi in (("load", 0, 1e3), ("te_fraction", 0, 1), ("grace_scale", 0, MAX_GRACE_SCALE)):
        if source.get(k) is not None:
            check_number(source[k], f"{where}: {k}", lo, hi, error=SimulationError)
    for k in ("model", "model_sha256"):
        if not isinstance(source.get(k), str) or not source[k]:
            raise SimulationError(f"{where}: {k} must be a non-empty string")
    for k in ("model_file", "cluster", "on_unfit"):
        if source.get(k) is not None and not isinstance(source[k], str):
            raise SimulationError(f"{where}: {k} must be a string or null")
    return source


def trace_file_again(source: dict, error=SimulationError) -> Trace:
    """The trace a result's ``source`` names, read again from its file (a SPEC CSV, or a
    Tiresias CSV with the conversion recorded), refused with ``error`` if the file's sha256
    is not the one recorded (it moved, changed, or the record has none)."""
    import hashlib

    from fitgpp.sim.validate import read_regular
    path, kind = source.get("path"), source.get("kind")
    data = read_regular(path, "trace file of this result", error, limit=None)
    digest = hashlib.sha256(data).hexdigest()
    if digest != source.get("sha256"):
        raise error(f"trace file {path} changed since this result was made "
                    f"(sha256 {digest[:12]} != {str(source.get('sha256'))[:12]})"[:300])
    if kind == "tiresias":
        from fitgpp.sim.tiresias import read_tiresias
        node_gpu, cls = source.get("node_gpu"), source.get("cls", "BE")
        if node_gpu is not None and (isinstance(node_gpu, bool) or not isinstance(node_gpu, int)
                                     or node_gpu < 1):
            raise error(f"result attr 'workload': node_gpu must be an integer >= 1, "
                        f"got {node_gpu!r}"[:300])
        t = read_tiresias(path, node_gpu=node_gpu, cls=cls)
        return Trace(jobs=t.jobs, source=source, dropped=t.dropped)
    return read_trace(path, source=source)
