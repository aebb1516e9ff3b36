"""The research questions, one module each (as :mod:`fitgpp.sim.policies` holds one module per
policy): ``rq<N>.py`` in the order of N, then ``run_length``. Each module declares its
experiments (a :class:`Study` each: the grid, the baseline, the workload), their analysis
(findings computed from the results) and figures, and lists what it declares in its
``STUDIES``; one module may declare several (``rq2`` and ``rq2w``). Adding a research
question is one module here (found by its name, ``rq<N>.py``) plus its notebook.

:data:`STUDIES` maps each study's key to its declaration, in the order of the report. The
list below is written from it when this package is imported:
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from fitgpp.studies.base import Outcome, Study, label_of
from fitgpp.studies.size import FULL, QUICK, ReproduceError, RQResult, Size


def _modules() -> list[str]:
    """The research questions ``rq<N>`` in order, then the studies of how far their numbers
    can be trusted (``run_length``)."""
    names = [m.name for m in pkgutil.iter_modules(__path__)]
    rqs = sorted((n for n in names if re.fullmatch(r"rq\d+", n)), key=lambda n: int(n[2:]))
    return rqs + [n for n in ("run_length",) if n in names]


def _collect() -> dict[str, tuple[str, Study]]:
    """``{key: (module, study)}`` over every module of :func:`_modules`, in order."""
    out: dict[str, tuple[str, Study]] = {}
    for name in _modules():
        for study in importlib.import_module(f"{__name__}.{name}").STUDIES:
            out[study.key] = (name, study)
    return out


def _listing(found: dict[str, tuple[str, Study]]) -> str:
    """One bullet per study: its key, its module and its title."""
    return "\n".join(f"- ``{key}`` (``{module}``): {study.title}"
                     for key, (module, study) in found.items())


_FOUND = _collect()
#: Every research question, by key, in the order of the report.
STUDIES: dict[str, Study] = {key: study for key, (_, study) in _FOUND.items()}
__doc__ = f"{__doc__ or ''}\n{_listing(_FOUND)}\n"

__all__ = ["FULL", "QUICK", "Outcome", "RQResult", "ReproduceError", "STUDIES", "Size", "Study",
           "label_of"]
