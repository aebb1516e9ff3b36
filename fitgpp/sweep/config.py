"""The experiment description: a workload, a cluster, a grid of policies, seeds.

Validated once, here, whether it comes from a TOML file (:func:`load_experiment`)
or from Python objects (:class:`Experiment`). A knob given as a list is swept
(it becomes a dimension of the result); a single value is held fixed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fitgpp.sim.cluster import DEFAULT_CLUSTER, Cluster, ClusterError
from fitgpp.sim.validate import MAX_CELLS, MAX_SEED, MAX_TIME_S, MIN_TICK_S, read_toml
from fitgpp.sim.trace import Trace
from fitgpp.sweep.checks import _KNOB_CHECKS, KNOBS, ExperimentError, _fail, _number, _sorted, _values
from fitgpp.sweep.policy_grid import PolicyGrid, _policies

#: Parameters of the built-in policies that span a dimension of the result (any dataclass
#: field of a policy does; see :attr:`Experiment.grid_params`). Kept for older code.
GRID_PARAMS = ("s", "max_preemptions")
_TOP_KEYS = ("name", "description", "tick", "seeds", "workload", "cluster", "policies")
_CLUSTER_KEYS = ("nodes", "gpu", "cpu_milli", "mem_mib")


@dataclass(frozen=True)
class Workload:
    """Where the jobs come from: a workload ``model`` (a shipped name, a path to a
    model JSON or a WorkloadModel) with knobs, or a ``trace`` (a CSV path or a Trace
    object). Each knob is a value, a list of values to sweep, or None (the model's own
    value; ``n_jobs`` defaults to 1000).
    """

    model: str | None = None
    trace: str | None = None
    n_jobs: int | Sequence[int] | None = None
    load: float | Sequence[float] | None = None
    te_fraction: float | Sequence[float] | None = None
    grace_scale: float | Sequence[float] | None = None
    gang_fraction: float | Sequence[float] | None = None
    gang_tasks: int | Sequence[int] | None = None
    restart_overhead: float | Sequence[float] | None = None
    restart_sigma: float | Sequence[float] | None = None
    be_8gpu_share: float | Sequence[float] | None = None
    on_unfit: str | None = None

    def __post_init__(self):
        where = "[workload]"
        if self.on_unfit is not None:
            if self.trace is not None:
                _fail(where, "key 'on_unfit' applies to a workload model, not to a trace")
            if self.on_unfit not in ("error", "restrict"):
                _fail(where, f"key 'on_unfit' must be \"error\" or \"restrict\", "
                             f"got {self.on_unfit!r}")
        if (self.model is None) == (self.trace is None):
            _fail(where, "needs exactly one of 'model' (a workload model name or JSON path) "
                         "or 'trace' (a trace CSV path)")
        for key in ("model", "trace"):
            v = getattr(self, key)
            if key == "model" and hasattr(v, "sha256") and hasattr(v, "to_json"):
                continue  # a WorkloadModel object, already validated by its own loader
            if key == "trace" and isinstance(v, Trace):
                continue  # a Trace object, validated when it was read
            if v is not None:
                if isinstance(v, os.PathLike):
                    v = os.fspath(v)
                if not isinstance(v, str) or not v:
                    _fail(where, f"key '{key}' must be a non-empty string, got {v!r}")
                object.__setattr__(self, key, v)
        if self.model is not None and self.n_jobs is None:
            object.__setattr__(self, "n_jobs", 1000)
        for key in KNOBS:
            v = getattr(self, key)
            if v is None:
                continue
            if self.trace is not None:
                _fail(where, f"key '{key}' applies to a workload model, not to a trace")
            object.__setattr__(self, key, _values(where, key, v, _KNOB_CHECKS[key]))
        for key, needs in (("gang_tasks", "gang_fraction"), ("restart_sigma", "restart_overhead")):
            if getattr(self, key) is not None and getattr(self, needs) is None:
                _fail(where, f"key '{key}' needs key '{needs}'")

    @property
    def swept(self) -> dict[str, tuple]:
        """Knobs given as lists: each becomes a dimension of the result."""
        if self.trace is not None:
            return {}
        return {k: getattr(self, k) for k in KNOBS if isinstance(getattr(self, k), tuple)}

    @property
    def fixed(self) -> dict:
        """Knobs held at one value (None = the model's own), plus ``on_unfit``."""
        if self.trace is not None:
            return {}
        out = {k: getattr(self, k) for k in KNOBS if not isinstance(getattr(self, k), tuple)}
        return {**out, "on_unfit": self.on_unfit}

    def to_dict(self) -> dict:
        if isinstance(self.trace, Trace):  # recorded, not re-readable: it lives in memory
            from fitgpp.sweep.digests import trace_digest
            src = self.trace.source
            return {"trace": src.get("path") or f"(in memory: {src.get('kind', 'a Trace')})",
                    "trace_sha256": trace_digest(self.trace), "jobs": len(self.trace)}
        if self.trace is not None:
            return {"trace": self.trace}
        m = self.model
        out = {"model": m if isinstance(m, str) else getattr(m, "path", None) or m.name}
        for k in (*KNOBS, "on_unfit"):
            v = getattr(self, k)
            if v is not None:
                out[k] = list(v) if isinstance(v, tuple) else v
        return out


def _bounded(what: str, n: int) -> None:
    if n > MAX_CELLS:
        _fail("", f"the sweep has {n} {what} (the product of its lists of policy parameters, "
                  f"workload knobs and seeds), more than the bound of {MAX_CELLS} "
                  "(fitgpp.sim.validate.MAX_CELLS); sweep fewer values")


def _declared_cells(doc: Mapping) -> int:
    """The cells a TOML document declares, from the lengths of its lists alone (before any
    value is checked: a long list is refused at once, not after checking each value)."""
    def n(v):
        return len(v) if isinstance(v, (list, tuple)) else 1
    wl, pol = doc.get("workload"), doc.get("policies")
    if isinstance(wl, Workload):
        wl = {k: getattr(wl, k) for k in KNOBS}
    if not isinstance(wl, Mapping) or not isinstance(pol, Mapping):
        return 0
    rest = math.prod(n(wl.get(k)) for k in KNOBS) * n(doc.get("seeds", [0]))
    return rest * sum(math.prod(n(v) for k, v in p.items() if k not in ("policy", "seed"))
                      if isinstance(p, Mapping) else 1 for p in pol.values())


@dataclass(frozen=True)
class Experiment:
    """A sweep: ``workload`` x ``policies`` (grids) x ``seeds`` on ``cluster`` with ``tick`` s.

    ``policies``: a mapping ``{label: {param: value or list}}`` (the label is a
    registered name, or the table holds ``policy = "module:Class"`` or a class or
    object), a list of policy specs (names, classes, objects), or a sequence of
    :class:`PolicyGrid`. ``seeds`` are workload seeds (RAND uses the
    same seed unless its grid gives one). ``cluster``: a :class:`fitgpp.Cluster`,
    ``{"nodes": N, "gpu": G, ...}``, ``{"groups": [...]}``, a cluster TOML path,
    or None for :data:`fitgpp.DEFAULT_CLUSTER`.
    """

    workload: Workload
    policies: tuple[PolicyGrid, ...]
    seeds: tuple[int, ...] = (0,)
    cluster: Cluster = field(default=DEFAULT_CLUSTER)
    tick: float = 60.0
    name: str = ""
    description: str = ""

    def __post_init__(self):
        wl = self.workload
        if isinstance(self.policies, Mapping):   # refused at once, as a TOML file's is
            _bounded("cells to run", _declared_cells({"workload": wl, "policies": self.policies,
                                                      "seeds": self.seeds}))
        if isinstance(wl, Mapping):
            wl = _workload_from_dict(wl)
        if not isinstance(wl, Workload):
            _fail("", f"key 'workload' must be a Workload or a table, got {wl!r}")
        object.__setattr__(self, "workload", wl)
        object.__setattr__(self, "policies", _policies(self.policies))
        seeds = self.seeds
        if not isinstance(seeds, (list, tuple)):
            _fail("", f"key 'seeds' must be a list of integers >= 0, got {seeds!r}")
        object.__setattr__(self, "seeds",
                           _values("", "seeds", list(seeds),
                                   lambda w, k, v: _number(w, k, v, lo=0, hi=MAX_SEED,
                                                           integer=True)))
        object.__setattr__(self, "cluster", _cluster(self.cluster))
        object.__setattr__(self, "tick", _number("", "tick", self.tick, lo=MIN_TICK_S,
                                                 hi=MAX_TIME_S))
        for key in ("name", "description"):
            if not isinstance(getattr(self, key), str):
                _fail("", f"key '{key}' must be a string, got {getattr(self, key)!r}")
        self._check_size()

    def _check_size(self) -> None:
        """Refuse a grid beyond :data:`~fitgpp.sim.validate.MAX_CELLS`, counted from the declared
        lists before anything is built: the cells to run (each policy's combinations x swept
        knobs x seeds) and the points of the result (policies x the values of every swept
        parameter x swept knobs x seeds)."""
        rest = math.prod(len(v) for v in self.workload.swept.values()) * len(self.seeds)
        cells = sum(math.prod(len(v) for _, v in p.values) for p in self.policies) * rest
        points = len(self.policies) * math.prod(len(self.grid_values(k))
                                                for k in self.grid_params) * rest
        _bounded("cells to run", cells)
        _bounded("points in its result grid", points)

    @property
    def policy_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.policies)

    @property
    def grid_params(self) -> tuple[str, ...]:
        """The policy parameters that are dimensions of the result: every field (but
        ``seed``) of every policy, the built-in ``s`` and ``max_preemptions`` first, then
        others in the order the policies declare them."""
        names = [k for p in self.policies for k, _ in p.values]
        return tuple(dict.fromkeys([k for k in GRID_PARAMS if k in names] + names))

    def param_attrs(self, key: str) -> dict:
        """Coordinate attrs of parameter ``key``: the ``description`` and ``units`` its
        dataclass field declares in ``metadata``, else which policies take it."""
        for p in self.policies:
            f = {f.name: f for f in dataclasses.fields(p.cls)}.get(key)
            if f is not None and f.metadata.get("description"):
                return {k: str(f.metadata[k]) for k in ("description", "units")
                        if k in f.metadata}
        takers = [p.name for p in self.policies if key in p.params]
        return {"description": f"parameter {key} of policy {', '.join(takers)}"}

    def grid_values(self, key: str) -> tuple:
        """Sorted union of the values of parameter ``key`` over the policies that take it."""
        return tuple(_sorted({v for p in self.policies for v in p.params.get(key, ())}))

    def to_dict(self) -> dict:
        return {
            "name": self.name, "description": self.description, "tick": self.tick,
            "seeds": list(self.seeds), "workload": self.workload.to_dict(),
            "cluster": {"groups": self.cluster.to_dict()},
            "policies": {p.name: p.to_dict() for p in self.policies},
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, doc: Mapping, *, base: Path | None = None) -> Experiment:
        """Build from a parsed TOML/JSON document; relative paths resolve against ``base``."""
        return _from_doc(doc, base or Path.cwd())


def _workload_from_dict(d: Mapping, base: Path | None = None) -> Workload:
    if not isinstance(d, Mapping):
        _fail("", f"[workload] must be a table, got {d!r}")
    allowed = ("model", "trace", *KNOBS, "on_unfit")
    unknown = [k for k in d if k not in allowed]
    if unknown:
        _fail("[workload]", f"unknown key '{unknown[0]}' (allowed: {', '.join(allowed)})")
    d = dict(d)
    if base is not None:
        if isinstance(d.get("trace"), str):
            d["trace"] = str((base / d["trace"]).resolve())
        m = d.get("model")
        if isinstance(m, str) and (m.endswith(".json") or "/" in m or os.sep in m):
            d["model"] = str((base / m).resolve())
    return Workload(**d)


def _cluster(c) -> Cluster:
    if c is None:
        return DEFAULT_CLUSTER
    if isinstance(c, Cluster):
        return c
    try:
        if isinstance(c, (str, os.PathLike)):
            return Cluster.from_toml(c)
        if isinstance(c, Mapping):
            if "groups" in c:
                extra = [k for k in c if k != "groups"]
                if extra:
                    _fail("[cluster]", f"unknown key '{extra[0]}' next to 'groups'")
                return Cluster.from_groups(list(c["groups"]))
            unknown = [k for k in c if k not in _CLUSTER_KEYS]
            if unknown:
                _fail("[cluster]", f"unknown key '{unknown[0]}' (allowed: "
                                   f"{', '.join(_CLUSTER_KEYS)}, or [[cluster.groups]])")
            if "nodes" not in c:
                _fail("[cluster]", "missing key 'nodes' (number of nodes)")
            try:
                return Cluster.from_groups([{"count": c["nodes"], "gpu": c.get("gpu", 8),
                                             "cpu_milli": c.get("cpu_milli", 96_000),
                                             "mem_mib": c.get("mem_mib", 786_432)}])
            except ClusterError as exc:
                msg = str(exc).replace("node group #1: ", "").replace("'count'", "'nodes'")
                _fail("[cluster]", msg.replace("field '", "key '"))
    except ClusterError as exc:
        _fail("[cluster]", str(exc))
    _fail("", f"key 'cluster' must be a table or a cluster TOML path, got {c!r}")


def _from_doc(doc: Mapping, base: Path) -> Experiment:
    unknown = [k for k in doc if k not in _TOP_KEYS]
    if unknown:
        _fail("", f"unknown key '{unknown[0]}' (allowed: {', '.join(_TOP_KEYS)})")
    _bounded("cells to run", _declared_cells(doc))
    for key in ("workload", "policies"):
        if key not in doc:
            _fail("", f"missing [{key}] table")
    cluster = doc.get("cluster")
    if isinstance(cluster, str):
        cluster = (base / cluster).resolve()
    return Experiment(
        workload=_workload_from_dict(doc["workload"], base),
        policies=doc["policies"],
        seeds=doc.get("seeds", [0]),
        cluster=cluster,
        tick=doc.get("tick", 60.0),
        name=doc.get("name", ""),
        description=doc.get("description", ""),
    )


def load_experiment(path: str | os.PathLike) -> Experiment:
    """Read and validate an experiment TOML file; errors name the file, table and key."""
    p = Path(path)
    doc = read_toml(p, "experiment TOML", ExperimentError)
    try:
        exp = _from_doc(doc, p.resolve().parent)
    except (ExperimentError, TypeError) as exc:
        raise ExperimentError(f"{p.name}: {exc}") from None
    if not exp.name:
        object.__setattr__(exp, "name", p.stem)
    return exp
