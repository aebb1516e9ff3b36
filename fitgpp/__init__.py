"""fitgpp: an exact tick simulator and workbook for low-latency GPU scheduling with preemption.

Reproduces the research questions of Yabuuchi, Taniwaki, Omura, "Low-latency
job scheduling with preemption for the development of deep learning"
(OpML '19). The simulation contract is ``SPEC.md``; see ``docs/``.

The names below are imported on first use, so that ``import fitgpp`` (and a command
line that only needs a few of them) does not pay for numpy, pandas and xarray up front.
"""

import importlib
import sys
import types

from .errors import FitgppError

#: public name -> the submodule that defines it
_EXPORTS = {
    **dict.fromkeys(("DEFAULT_CLUSTER", "DEFAULT_LOAD", "Cluster", "ClusterError", "NodeGroup"),
                    "cluster"),
    **dict.fromkeys(("POLICIES", "Fifo", "FitGpp", "Lrtp", "PolicyError", "Prio", "Rand",
                     "make_policy"), "policies"),
    **dict.fromkeys(("SimulationError", "load", "rerun", "save", "simulate", "summarize"),
                    "simulate"),
    "__version__": "_version",
    **dict.fromkeys(("COLUMNS", "Trace", "TraceError", "read_trace", "write_trace"), "trace"),
}

__all__ = sorted(["FitgppError", *_EXPORTS])


def __getattr__(name: str):
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module 'fitgpp' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{where}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


class _Package(types.ModuleType):
    """Keeps ``fitgpp.simulate`` the function: importing the submodule ``fitgpp.simulate``
    (which any module may do first) would otherwise rebind the package's attribute to it."""

    def __setattr__(self, name, value):
        if name == "simulate" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
