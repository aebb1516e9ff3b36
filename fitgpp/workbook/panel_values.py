"""The values of a panel's declaration: the value typed into its "Add a value" box, as a value
of the dimension it is added to (a policy field's declared type, an integer number of jobs,
else a finite number), and the declaration with a value added (:func:`extend`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import dataclasses
import math

from fitgpp.sim.policies import registry
from fitgpp.studies.reproduce import Study
from fitgpp.workbook.views import PanelError

if TYPE_CHECKING:  # the annotations name the classes by their full paths
    import pandas as pd

    import fitgpp.studies.reproduce

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


def extend(study: Study, size: fitgpp.studies.reproduce.Size, dim: str,
           value) -> tuple[Study, fitgpp.studies.reproduce.Size]:
    """The declaration with ``value`` added to dimension ``dim`` (``s``, ``max_preemptions``,
    a knob) or set (``load``, ``n_jobs``, ``model``; ``seed``: the number of seeds)."""
    dims = study.dimensions(size)
    if dim == "seed":
        n = int(value)
        if n < 1:
            raise PanelError(f"seeds: need at least 1, got {value!r}")
        return study, dataclasses.replace(size, seeds=tuple(range(n)))
    if dim in SIZE_DIMS:
        v = cast_value(study, dim, value)
        return study, dataclasses.replace(size, **{dim: v})
    if dim == "model":
        return study.replace(model=str(value)), size
    if dim in study.params() or any(dim in g.params for g in study.grid().policies):
        return _add_param(study, dim, value), size
    if dim in study.knobs:
        vals = tuple(sorted({*map(float, study.knobs[dim]), cast_value(study, dim, value)}))
        return study.replace(knobs={**study.knobs, dim: vals}), size
    raise PanelError(f"{study.key}: cannot add a value to {dim!r}; it takes values for "
                     f"{sorted([*study.params(), *study.knobs, *SIZE_DIMS, 'seed', 'model'])}")


def _add_param(study: Study, dim: str, value) -> Study:
    """``study`` with ``value`` added to field ``dim`` of every policy that takes it (cast
    to the field's declared type)."""
    value = cast_value(study, dim, value)
    pols, added = {}, False
    for (name, spec), grid in zip(study.policies.items(), study.grid().policies):
        spec = dict(spec)
        if dim in grid.params:
            old = grid.params[dim]
            spec[dim] = [*old, value] if value not in old else list(old)
            added = True
        pols[name] = spec
    if not added:
        raise PanelError(f"{study.key}: no policy takes {dim!r}")
    return study.replace(policies=pols)


def opening_value(dim: str, dims: dict, size):
    """The value a panel's control of ``dim`` (values ``dims[dim]``) opens at: the first,
    except: the policy is FitGpp, ``s`` 4 and ``P`` 3 when computed, the load the size's
    (0.8, where the effects show; 10 opened at 0.5, where every number was 1) and the
    longest run (the steadiest)."""
    if dim == "policy" and "fitgpp" in dims[dim]:
        return "fitgpp"
    if dim == "s" and 4.0 in dims[dim]:
        return 4.0
    if dim == "max_preemptions" and 3 in dims[dim]:
        return 3
    if dim == "load" and size.load in dims[dim]:
        return size.load
    if dim == "n_jobs":
        return max(dims[dim])
    return dims[dim][0]


def clip_note(nums: pd.DataFrame) -> str:
    """The note under a numbers table when some interval bound in it was cut at its range
    (marked ``*``, :data:`fitgpp.analysis.metrics.CLIP_NOTE`), else nothing."""
    from fitgpp.analysis.metrics import CLIP_NOTE
    cut = nums.astype(str).apply(lambda col: col.str.contains(r"\*", regex=True)).to_numpy().any()
    return f"<p><small>{CLIP_NOTE}.</small></p>" if cut else ""
