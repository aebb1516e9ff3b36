"""The cluster: nodes ``0..N-1`` with a capacity ``(gpu, cpu_milli, mem_mib)`` each.

Built homogeneous (:meth:`Cluster.homogeneous`) or from node groups, in
Python or from a small TOML file::

    [[nodes]]            # one table per group; node ids follow file order
    count = 48
    gpu = 8
    cpu_milli = 96000
    mem_mib = 786432
    name = "dgx"         # optional label
"""

from __future__ import annotations

from fitgpp.errors import FitgppError
from fitgpp.sim.validate import MAX_NODE_RESOURCE, MAX_NODES, loads_json, read_toml

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_FIELDS = ("count", "gpu", "cpu_milli", "mem_mib")


class ClusterError(FitgppError):
    """A cluster description is malformed; the message names the group and field."""


@dataclass(frozen=True)
class NodeGroup:
    """``count`` identical nodes of ``gpu`` GPUs, ``cpu_milli`` millicores, ``mem_mib`` MiB."""

    count: int
    gpu: int
    cpu_milli: int
    mem_mib: int
    name: str = ""

    def __post_init__(self):
        _check_group({f: getattr(self, f) for f in _FIELDS},
                     f"node group {self.name!r}" if self.name else "node group")


def _check_group(values: dict, where: str) -> None:
    """Raise ClusterError naming ``where`` and the field if a group's numbers are invalid."""
    for f in _FIELDS:
        v = values[f]
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ClusterError(f"{where}: field '{f}' must be an integer, got {v!r}")
        if v < 0 or (f == "count" and v < 1):
            raise ClusterError(f"{where}: field '{f}' must be "
                               f"{'>= 1' if f == 'count' else '>= 0'}, got {v}")
        top = MAX_NODES if f == "count" else MAX_NODE_RESOURCE
        if v > top:
            raise ClusterError(f"{where}: field '{f}' must be <= {top} "
                               f"(2**{top.bit_length() - 1}), got {v}")
    if values["gpu"] == values["cpu_milli"] == values["mem_mib"] == 0:
        raise ClusterError(f"{where}: nodes have no capacity at all (gpu, cpu_milli and "
                           f"mem_mib are all 0)")


@dataclass(frozen=True)
class Cluster:
    """An ordered tuple of node groups; node ids run through the groups in order."""

    groups: tuple[NodeGroup, ...]

    def __post_init__(self):
        if not self.groups:
            raise ClusterError("cluster has no nodes")
        object.__setattr__(self, "groups", tuple(self.groups))

    @classmethod
    def homogeneous(cls, nodes: int, gpu: int = 8, cpu_milli: int = 96_000,
                    mem_mib: int = 786_432) -> Cluster:
        return cls((NodeGroup(nodes, gpu, cpu_milli, mem_mib),))

    @classmethod
    def from_groups(cls, groups: list[dict]) -> Cluster:
        out = []
        for k, g in enumerate(groups):
            if not isinstance(g, dict):
                raise ClusterError(f"node group #{k + 1}: expected a table, got {g!r}")
            unknown = sorted(set(g) - set(_FIELDS) - {"name"})
            if unknown:
                raise ClusterError(f"node group #{k + 1}: unknown field(s) {', '.join(unknown)}"
                                   f" (allowed: {', '.join(_FIELDS)}, name)")
            where = f"node group #{k + 1}" + (f" ({g['name']!r})" if g.get("name") else "")
            missing = [f for f in _FIELDS if f not in g]
            if missing:
                raise ClusterError(f"{where}: missing field(s) {', '.join(missing)}")
            _check_group(g, where)
            out.append(NodeGroup(**{f: g[f] for f in _FIELDS}, name=str(g.get("name", ""))))
        return cls(tuple(out))

    @classmethod
    def from_toml(cls, path: str | os.PathLike) -> Cluster:
        p = Path(path)
        doc = read_toml(p, "cluster TOML", ClusterError)
        if "nodes" not in doc or not isinstance(doc["nodes"], list):
            raise ClusterError(f"{p}: expected one or more [[nodes]] tables")
        extra = sorted(set(doc) - {"nodes"})
        if extra:
            raise ClusterError(f"{p}: unknown key(s) {', '.join(extra)}")
        try:
            return cls.from_groups(doc["nodes"])
        except ClusterError as exc:
            raise ClusterError(f"{p}: {exc}") from None

    @property
    def n_nodes(self) -> int:
        return sum(g.count for g in self.groups)

    @property
    def capacity(self) -> np.ndarray:
        """``(n_nodes, 3)`` int64 array of (gpu, cpu_milli, mem_mib) per node."""
        rows = [(g.gpu, g.cpu_milli, g.mem_mib) for g in self.groups for _ in range(g.count)]
        return np.array(rows, dtype=np.int64).reshape(-1, 3)

    @property
    def total_gpus(self) -> int:
        return sum(g.count * g.gpu for g in self.groups)

    def fits_some_node(self, demand: np.ndarray) -> np.ndarray:
        """Boolean per row of ``demand`` (k, 3): fits on at least one node."""
        return self.nodes_fitting(demand) > 0

    def nodes_fitting(self, demand: np.ndarray) -> np.ndarray:
        """Per row of ``demand`` (k, 3): how many nodes it fits on (a gang of ``tasks``
        tasks needs at least ``tasks`` of them)."""
        nodes: dict[tuple[int, int, int], int] = {}  # distinct capacity -> nodes of it
        for g in self.groups:
            key = (g.gpu, g.cpu_milli, g.mem_mib)
            nodes[key] = nodes.get(key, 0) + g.count
        caps = np.array(list(nodes), dtype=np.int64).reshape(-1, 3)
        count = np.array(list(nodes.values()), dtype=np.int64)
        demand = np.asarray(demand).reshape(-1, 3)
        fits = (demand[:, None, :] <= caps[None, :, :]).all(axis=2)
        return fits.astype(np.int64) @ count

    def describe(self) -> str:
        return " + ".join(f"{g.count}x({g.gpu} GPU, {g.cpu_milli} mCPU, {g.mem_mib} MiB)"
                          for g in self.groups)

    def to_dict(self) -> list[dict]:
        return [{"count": g.count, "gpu": g.gpu, "cpu_milli": g.cpu_milli,
                 "mem_mib": g.mem_mib, **({"name": g.name} if g.name else {})}
                for g in self.groups]

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> Cluster:
        groups = loads_json(text, "cluster JSON", ClusterError)
        if not isinstance(groups, list):
            raise ClusterError(f"cluster JSON must be a list of node groups, got {groups!r}")
        return cls.from_groups(groups)


#: The workbook's default cluster: 16 nodes of 8 GPUs (quick enough for widgets).
DEFAULT_CLUSTER = Cluster.homogeneous(16, gpu=8, cpu_milli=96_000, mem_mib=786_432)

#: The workbook's default offered GPU load (1 = every GPU busy on average): the usable
#: capacity of ``paper-default`` on :data:`DEFAULT_CLUSTER` found by the run-length study
#: (docs/run-length.md): at 0.8 every FitGpp run of 10,000 jobs or more is steady and its
#: numbers stop moving with the run length; at 0.9 FIFO's queue grows for the whole run.
DEFAULT_LOAD = 0.8
