"""One cell of a sweep: one policy configuration on one workload (knobs, seed).

:func:`compute_cell` is what a Dask worker runs; it needs nothing but the
package. It returns what the metrics and the figures read (per-job columns,
the cluster's time series, run and grace intervals: :mod:`fitgpp.sweep.runs`),
not the full simulation Dataset: about 50 bytes per job, so results travel and
cache cheaply, and any statistic or figure (another percentile, a CDF, a
timeline) comes from the cache without simulating again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fitgpp._version import __version__
from fitgpp.sim.policies import registry
from fitgpp.sim.run import simulate
from fitgpp.sweep.digests import model_digest, trace_digest
from fitgpp.sweep.config import Experiment, ExperimentError
from fitgpp.sweep.runs import reduce_run

#: Bumped when the cached cell layout or the meaning of a key changes.
CELL_FORMAT = "fitgpp-sweep-cell/3"


@dataclass(frozen=True)
class Cell:
    """``policy`` (its label in the result) with ``params`` (a sorted tuple of (name,
    value), RAND's seed included) on the workload drawn with ``knobs`` (sorted (name,
    value)) and ``seed``. ``spec`` is what builds the policy: its class, or the object
    whose fields ``params`` replace (None: ``policy`` is a registered name)."""

    policy: str
    params: tuple
    knobs: tuple
    seed: int
    spec: object = None

    def make_policy(self):
        """The policy object this cell runs."""
        return registry.resolve(self.spec if self.spec is not None else self.policy,
                                **dict(self.params))

    def __reduce__(self):
        # A policy class outside the package (a notebook's __main__, a file beside it) may not
        # be importable where the cell runs (a Dask worker): ship it by value (cloudpickle).
        spec = self.spec
        if spec is not None and not _in_package(spec):
            import cloudpickle
            registry.ship_by_value(spec)
            spec = _ByValue(cloudpickle.dumps(spec))
        return (_cell, (self.policy, self.params, self.knobs, self.seed, spec))


@dataclass(frozen=True)
class _ByValue:
    blob: bytes


def _cell(policy, params, knobs, seed, spec):
    if isinstance(spec, _ByValue):
        import cloudpickle
        spec = cloudpickle.loads(spec.blob)
    return Cell(policy, params, knobs, seed, spec)


def _in_package(spec) -> bool:
    cls = spec if isinstance(spec, type) else type(spec)
    return cls.__module__.split(".")[0] == "fitgpp"


@dataclass(frozen=True)
class Source:
    """The resolved workload, shipped to workers once: a validated trace, or a model
    object with its content digest. ``digest`` identifies the jobs' origin in cache keys."""

    kind: str  # "trace" | "model"
    digest: str
    trace: object = None
    model: object = None
    model_ref: str = ""


def resolve_source(exp: Experiment) -> Source:
    """Read the trace or load the workload model once, on the client."""
    wl = exp.workload
    if wl.trace is not None and not isinstance(wl.trace, str):  # a Trace object
        return Source("trace", trace_digest(wl.trace), trace=wl.trace)
    if wl.trace is not None:
        from fitgpp.sim.trace import TraceError, read_trace
        try:
            tr = read_trace(wl.trace, cluster=exp.cluster)
        except TraceError as exc:
            raise ExperimentError(f"[workload] key 'trace': {exc}") from None
        return Source("trace", tr.source["sha256"], trace=tr)
    try:
        from fitgpp.workload import load_model
    except ImportError as exc:  # pragma: no cover - the workload module ships with the package
        raise ExperimentError(f"[workload] key 'model' needs fitgpp.workload ({exc})") from None
    from fitgpp.errors import FitgppError
    try:
        model = load_model(wl.model)
    except FitgppError as exc:
        raise ExperimentError(f"[workload] key 'model': {exc}") from None
    return Source("model", model_digest(model, wl.model), model=model, model_ref=wl.model)


def cells_of(exp: Experiment) -> list[Cell]:
    """Every cell of the sweep, in a fixed order."""
    import itertools
    wl = exp.workload
    swept = wl.swept
    # a knob left at None takes synthesize's default, so it is not passed at all
    fixed = sorted((k, v) for k, v in wl.fixed.items() if v is not None)
    knob_sets = [tuple(sorted([*fixed, *zip(swept, vals)]))
                 for vals in itertools.product(*swept.values())]
    out = []
    for grid in exp.policies:
        spec = grid.cls if isinstance(grid.policy, str) else grid.policy
        for params in grid.combos():
            for knobs in knob_sets:
                for seed in exp.seeds:
                    p = dict(params)
                    if grid.has_seed:
                        p["seed"] = grid.seed if grid.seed is not None else seed
                    out.append(Cell(grid.name, tuple(sorted(p.items())), knobs, seed, spec))
    return out


_CODE_DIGEST: str | None = None
#: The package's code that can change a cell's result, as paths under the package (a folder
#: ends in "/"): the whole simulator layer (engine and the modules it keeps its state in,
#: policies, traces, clusters, the capacity ledger, ``simulate``), how workloads are drawn,
#: and what a cell keeps of its run. The whole ``sim/`` folder, not a list of its files: a
#: module split out of the engine is covered the day it appears. A user's policy outside the
#: package is keyed by its own digest (:func:`fitgpp.sim.policies.registry.digest`).
RESULT_CODE = ("sim/", "workload/", "sweep/cell.py", "sweep/digests.py", "sweep/runs.py")


def code_digest(root: Path | None = None) -> str:
    """sha256 over the files of :data:`RESULT_CODE` (under ``root``, default this
    package), so that a cache never serves a result computed by different code under the
    same version number. Any other file (the command line, figures, panels, studies) may
    change without recomputing a cell."""
    global _CODE_DIGEST
    if root is not None:
        return _digest_files(root)
    if _CODE_DIGEST is None:
        _CODE_DIGEST = _digest_files(Path(__file__).resolve().parent.parent)
    return _CODE_DIGEST


def _digest_files(root: Path) -> str:
    h = hashlib.sha256()
    for entry in RESULT_CODE:
        files = sorted((root / entry).rglob("*.py")) if entry.endswith("/") else [root / entry]
        for f in files:
            h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def cell_key(exp: Experiment, source: Source, cell: Cell) -> str:
    """Cache key: sha256 of everything that determines the cell's result."""
    if source.kind == "trace":
        workload = {"trace_sha256": source.digest}
    else:
        workload = {"model_sha256": source.digest, "knobs": dict(cell.knobs), "seed": cell.seed}
    policy = cell.make_policy()
    doc = {
        "format": CELL_FORMAT, "fitgpp": __version__, "code": code_digest(),
        "workload": workload, "cluster": exp.cluster.to_dict(), "tick": exp.tick,
        # the policy's class and parameters, and the code of its class and bases (a policy
        # outside the package is not in code_digest; an edited one must not hit the cache)
        "policy": registry.ref(policy), "params": dict(cell.params),
        "policy_code": registry.digest(policy),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


class DrawError(ExperimentError):
    """The workload of a cell cannot be drawn; the message names the [workload] keys and
    the seed (the command line puts the config file in front)."""

    def __init__(self, cell_or_text, exc: Exception | None = None):
        if exc is None:  # unpickled on the client: the message as made on the worker
            super().__init__(cell_or_text)
            return
        keys = ", ".join(f"{k} = {v!r}" for k, v in cell_or_text.knobs if k != "on_unfit")
        why = " ".join(str(exc).split()).replace("<DataFrame>: rows", "drawn jobs")
        super().__init__(f"[workload] {keys}, seed {cell_or_text.seed}: cannot draw the "
                         f"workload: {why}"[:600])

    def __reduce__(self):
        return (DrawError, (str(self),))


_TRACES: dict = {}  # per-process memo of synthesized workloads, so policies share one draw


def _trace_for(source: Source, cell: Cell, cluster):
    if source.kind == "trace":
        return source.trace
    memo = (source.digest, cell.knobs, cell.seed, cluster.to_json())
    tr = _TRACES.get(memo)
    if tr is None:
        from fitgpp.errors import FitgppError
        from fitgpp.workload import synthesize
        try:
            tr = synthesize(source.model, seed=cell.seed, cluster=cluster, **dict(cell.knobs))
        except FitgppError as exc:
            raise DrawError(cell, exc) from None
        if len(_TRACES) >= 8:
            _TRACES.pop(next(iter(_TRACES)))
        _TRACES[memo] = tr
    return tr


def compute_cell(source: Source, cell: Cell, cluster, tick: float,
                 policy_digest: str | None = None) -> dict:
    """Simulate one cell and reduce it to what the metrics and figures read
    (:func:`fitgpp.sweep.runs.reduce_run`).

    ``policy_digest``: the policy's digest as the client computed it for the cell's key,
    recorded in the result's attrs. A worker that received a notebook's class by value
    cannot always see its code the way the client does (no source text, no module file),
    so the digest it would compute may differ; the class it runs is the client's.

    The result records how long the simulation took (``compute_wall_s``, ``compute_cpu_s``:
    wall and CPU seconds of this call, where it ran), so a filled cache tells what a cold
    run cost; no figure or number reads them."""
    import time
    t0, c0 = time.perf_counter(), time.process_time()
    ds = simulate(_trace_for(source, cell, cluster), cluster, cell.make_policy(), tick=tick,
                  segments=True)
    if policy_digest is not None:
        ds.attrs["policy_digest"] = policy_digest
    return {
        **reduce_run(ds),
        "gpu_util": np.float64(ds.attrs["gpu_util_mean"]),
        "code": code_digest(),
        "fitgpp": __version__,
        "compute_wall_s": time.perf_counter() - t0,
        "compute_cpu_s": time.process_time() - c0,
    }
