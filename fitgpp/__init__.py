"""fitgpp: an exact tick simulator and workbook for low-latency GPU scheduling with preemption.

Reproduces the research questions of Yabuuchi, Taniwaki, Omura, "Low-latency
job scheduling with preemption for the development of deep learning"
(OpML '19). The simulation contract is ``SPEC.md``; see ``docs/``.

The names below are imported on first use, so that ``import fitgpp`` (and a command
line that only needs a few of them) does not pay for numpy, pandas and xarray up front.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

from fitgpp.errors import FitgppError
from fitgpp.figures import lazy_iri as _lazy_iri

# before any module of the package imports altair: its jsonschema would compile IRI grammars
# no Vega-Lite schema uses (~1.5 s CPU), in a notebook or script as on the command line
_lazy_iri.defer()

#: public name -> the module that defines it
_EXPORTS = {
    **dict.fromkeys(("DEFAULT_CLUSTER", "DEFAULT_LOAD", "Cluster", "ClusterError", "NodeGroup"),
                    "sim.cluster"),
    **dict.fromkeys(("POLICIES", "Fifo", "FitGpp", "Las", "Lrtp", "PolicyError", "Prio", "Rand",
                     "TwoQueuePolicy", "make_policy"), "sim.policies"),
    **dict.fromkeys(("SimulationError", "load", "save"), "sim.run"),
    **dict.fromkeys(("COLUMNS", "Trace", "TraceError", "read_trace", "write_trace"), "sim.trace"),
    **dict.fromkeys(("load_model", "synthesize"), "workload"),
    "summarize": "analysis.metrics",
    **dict.fromkeys(("STUDIES", "Study"), "studies"),
    "__version__": "_version",
}

#: Modules that moved into the layers (docs/architecture.md) -> where their names are now,
#: looked up in this order. ``import fitgpp.engine`` and the like keep working, with a
#: DeprecationWarning; a package's submodules move with it (``fitgpp.policies.fifo``).
_MOVED = {
    **{m: (f"sim.{m}",) for m in ("validate", "cluster", "trace", "engine", "tiresias")},
    "policies": ("sim.policies",),
    "simulate": ("sim.run", "workload.rerun", "analysis.metrics"),
    **{m: (f"analysis.{m}",) for m in ("metrics", "stability", "verdicts")},
    "tables": ("analysis.tables", "figures.export"),
    "plots": ("figures.plots",),
    "figcheck": ("figures.check", "figures.chart_rules", "figures.plots.text"),
    "figrules": ("figures.print_rules",),
    "export": ("figures.export", "figures.files"),
    **{m: (f"studies.{m}",) for m in ("restart_cost", "reproduce")},
    "panels": ("workbook.panels", "workbook.views"),
    **{m: (f"workbook.{m}",) for m in ("panel_export", "views", "live", "static", "widgets",
                                        "workbench")},
    "commands": ("cli",),
}

__all__ = sorted(["FitgppError", "rerun", "simulate", *_EXPORTS])


def simulate(trace, cluster, policy="fitgpp", **kwargs):
    """Simulate ``trace`` on ``cluster`` under ``policy``: :func:`fitgpp.sim.run.simulate`
    (every argument as there), then the run's steady-state verdict in its attrs
    (:func:`fitgpp.analysis.stability.judge`: ``steady_state`` is "steady", "not steady" or "cannot
    tell", with ``steady_state_text`` saying why), so a single run says whether its queue
    settled or grew for the whole run."""
    from fitgpp.analysis.stability import judge
    from fitgpp.sim.run import simulate as run
    return judge(run(trace, cluster, policy, **kwargs))


def rerun(ds, **kwargs):
    """:func:`fitgpp.workload.rerun.rerun` (every argument as there); when ``ds`` carries a
    steady-state verdict (:func:`fitgpp.simulate` wrote one), the rerun gets its own, so a
    rerun of a result is identical to it."""
    from fitgpp.workload.rerun import rerun as again, result_of
    ds = result_of(ds)   # (or the path of a result file)
    out = again(ds, **kwargs)
    if "steady_state" in ds.attrs:
        from fitgpp.analysis.stability import judge
        judge(out)
    return out


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


def _new_homes(name: str) -> tuple[str, ...] | None:
    """Where the names of the old module ``name`` (``fitgpp.engine``, ``fitgpp.policies.fifo``)
    live now; None for a name that did not move."""
    head, _, rest = name.removeprefix(f"{__name__}.").partition(".")
    homes = _MOVED.get(head) if name.startswith(f"{__name__}.") else None
    if homes is None:
        return None
    return tuple(f"{__name__}.{h}" + (f".{rest}" if rest else "") for h in homes[:1 if rest else None])


class _OldModule(types.ModuleType):
    """An old module path: every attribute is looked up in the modules that now hold it."""

    def __getattr__(self, attr):
        if attr.startswith("__"):   # the import system's own questions (__path__, __file__)
            raise AttributeError(attr)
        for home in self.__dict__["_homes"]:
            module = importlib.import_module(home)
            if hasattr(module, attr):
                return getattr(module, attr)
        raise AttributeError(f"module {self.__name__!r} (now {self._homes[0]}) has no "
                             f"attribute {attr!r}")


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old module paths of :data:`_MOVED`."""

    def find_spec(self, name, path=None, target=None):
        homes = _new_homes(name)
        if homes is None:
            return None
        is_pkg = hasattr(importlib.import_module(homes[0]), "__path__")
        return importlib.util.spec_from_loader(name, self, is_package=is_pkg)

    def create_module(self, spec):
        homes = _new_homes(spec.name)
        warnings.warn(f"{spec.name} has moved to {homes[0]} (see the architecture page of the "
                      "docs); the old path will go in a later version", DeprecationWarning,
                      stacklevel=3)
        module = _OldModule(spec.name, f"Moved to :mod:`{homes[0]}`.")
        module._homes = homes
        if spec.submodule_search_locations is not None:
            module.__path__ = []   # its submodules are found by this finder, under their new names
        return module

    def exec_module(self, module):
        pass


sys.meta_path.append(_OldPaths())
