"""The value typed into a panel's "Add a value" box, as a value of the dimension it is added
to: a policy field's declared type, an integer number of jobs, else a finite number."""

from __future__ import annotations

import math

from fitgpp.sim.policies import registry
from fitgpp.workbook.views import PanelError

#: Dimensions that belong to the size (one value per run), not to the study's grid.
SIZE_DIMS = ("n_jobs", "load")


def cast_value(study, dim: str, value):
    """``value`` (a number, or the text typed in the panel) as a value of dimension ``dim``:
    a policy field's declared type (float, int, bool or str), an integer ``n_jobs``, else a
    finite number; a :class:`PanelError` names what was expected."""
    kind = float
    if dim == "n_jobs":
        kind = int
    elif dim not in SIZE_DIMS and dim not in study.knobs:
        kinds = [registry.declared(g.cls)[dim][0] for g in study.grid().policies
                 if dim in g.params]
        kind = kinds[0] if kinds and kinds[0] in (int, float, bool, str) else float
        if kind is float and kinds and kinds[0] is None and isinstance(value, str):
            try:  # an undeclared type: a number if it reads as one, else the text
                float(value)
            except ValueError:
                kind = str
    if kind is str:
        if not isinstance(value, str):
            raise PanelError(f"add a value to {dim}: expected text, got {value!r}")
        return value
    if kind is bool:
        low = str(value).strip().lower()
        if low not in ("true", "false"):
            raise PanelError(f"add a value to {dim}: expected true or false, got {value!r}")
        return low == "true"
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise PanelError(f"add a value to {dim}: {str(value)[:80]!r} is not a number") from None
    if not math.isfinite(v) or (kind is int and not v.is_integer()):
        raise PanelError(f"add a value to {dim}: expected "
                         f"{'an integer' if kind is int else 'a finite number'}, got {value!r}")
    return int(v) if kind is int else v
