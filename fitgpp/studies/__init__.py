"""The research questions, one module each (as :mod:`fitgpp.policies` holds one module per
policy): ``rq1`` ... ``rq6``, then ``run_length`` (key ``runlen``: how
the headline moves with the number of jobs and the load). Each module declares its experiment (a :class:`Study`: the
grid, the baseline, the workload), its analysis (findings computed from the results) and
its figures, and lists what it declares in ``STUDIES``. Adding a research question is one
module here (found by its name, ``rq<N>.py``) plus its notebook.

:data:`STUDIES` maps each study's key to its declaration, in the order of the report.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from .base import (FULL, QUICK, Outcome, ReproduceError, RQResult, Size, Study, label_of)


def _modules() -> list[str]:
    """The research questions ``rq<N>`` in order, then the studies of how far their numbers
    can be trusted (``run_length``)."""
    names = [m.name for m in pkgutil.iter_modules(__path__)]
    rqs = sorted((n for n in names if re.fullmatch(r"rq\d+", n)), key=lambda n: int(n[2:]))
    return rqs + [n for n in ("run_length",) if n in names]


def _collect() -> dict[str, Study]:
    out: dict[str, Study] = {}
    for name in _modules():
        for study in importlib.import_module(f"{__name__}.{name}").STUDIES:
            out[study.key] = study
    return out


#: Every research question, by key, in the order of the report.
STUDIES: dict[str, Study] = _collect()

__all__ = ["FULL", "QUICK", "Outcome", "RQResult", "ReproduceError", "STUDIES", "Size", "Study",
           "label_of"]
