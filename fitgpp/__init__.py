"""fitgpp: an exact tick simulator and workbook for low-latency GPU scheduling with preemption.

Reproduces the research questions of Yabuuchi, Taniwaki, Omura, "Low-latency
job scheduling with preemption for the development of deep learning"
(OpML '19). The simulation contract is ``SPEC.md``; see ``docs/``.
"""

from .errors import FitgppError
from .cluster import DEFAULT_CLUSTER, Cluster, ClusterError, NodeGroup
from .policies import POLICIES, Fifo, FitGpp, Lrtp, PolicyError, Prio, Rand, make_policy
from ._version import __version__
from .simulate import SimulationError, load, rerun, save, simulate, summarize
from .trace import COLUMNS, Trace, TraceError, read_trace, write_trace

__all__ = [
    "COLUMNS", "Cluster", "ClusterError", "DEFAULT_CLUSTER", "Fifo", "FitGpp", "Lrtp",
    "NodeGroup", "POLICIES", "PolicyError", "Prio", "Rand", "SimulationError", "Trace",
    "TraceError", "__version__", "load", "make_policy", "read_trace", "rerun", "save", "simulate",
    "summarize", "write_trace",
]
