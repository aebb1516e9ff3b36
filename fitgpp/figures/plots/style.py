"""One label and one style (colour, shape, dash) per policy, read by every chart."""

from __future__ import annotations

import functools
import json
import numbers

import numpy as np
import altair as alt

from fitgpp.figures import names
from fitgpp.figures.plots.base import (POLICY_STYLE, _EXTRA, _EXTRA_DASH, _EXTRA_SHAPES, PlotError,
                                       natural_key)


# ------------------------------------------------------------------ labels and styles
#: How the built-in policies are written in labels (a researcher's policy: its own name).
#: A registered policy missing here reads as its registry name in capitals (``sjf``: SJF),
#: so registering a policy is enough to name it.
FAMILIES = {"fifo": "FIFO", "prio": "PRIO", "fitgpp": "FitGpp", "lrtp": "LRTP", "rand": "RAND",
            "las": "LAS", "shortest": "SRTF", "shortest-gpu": "SRSF", "dlas": "DLAS",
            "gittins": "Gittins"}


def family(name: str) -> str:
    """``FitGpp`` for ``fitgpp``, ``LAS`` for ``las``; a registered policy without an entry
    in :data:`FAMILIES` in capitals; a policy that is not registered keeps its own name."""
    from fitgpp.sim.policies import POLICIES
    key = str(name).lower()
    return FAMILIES.get(key) or (key.upper() if key in POLICIES else str(name))


def _number(x) -> str:
    """A number as a label writes it: a whole number as an integer (``8``, never ``8.0``;
    ``1234567``, not ``1.23457e+06``), any other to 10 significant digits (``5.5``; ``0.3``
    for a slider's ``0.30000000000000004``)."""
    f = float(x)
    return str(int(f)) if f.is_integer() and abs(f) < 1e15 else f"{f:.10g}"


def _is_number(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def _text(v) -> str:
    """A parameter value as a label writes it: a number by :func:`_number`, a sequence of
    numbers joined by commas (LAS's thresholds ``3250,7200``), anything else as ``str``."""
    if _is_number(v):
        return _number(v)
    if isinstance(v, (list, tuple)) and v and all(_is_number(x) for x in v):
        return ",".join(_number(x) for x in v)
    return str(v)


def config_label(name: str, params: dict, varying=()) -> str:
    """The one name of a configuration: the policy's family, ``s`` when it has one, and
    every other field in ``varying`` (the ones that differ within the compared set, e.g.
    those its grid sweeps): ``FitGpp s=4``, ``FitGpp s=4 P=3``, ``patient s=4 patience=80``,
    ``FIFO``, ``LAS`` (one LAS setting), ``LAS threshold=3250`` (several); a workload value
    in words and its declared unit (:func:`fitgpp.figures.names.phrase`): ``FitGpp s=4 load
    0.9``, ``FIFO restart cost 10 min`` (``restart_overhead`` 600 s). A whole number reads as an
    integer (``fewer lookahead=8``, never ``8.0``). A field that declares
    ``named="unless default"`` (FIFO's ``backfill``: which reading of the policy runs) is named
    exactly when it is not at its default, varying or not: ``FIFO``, ``FIFO backfill=easy``.
    Tables, legends, a panel's numbers, export records and findings name a configuration
    through this function (``label_of`` in :mod:`fitgpp.studies.base` for a study's grid)."""
    reading = _readings(str(name))
    shown = [k for k in params if (k == "s" or k in varying or k in reading)
             and not (k in reading and params[k] == reading[k])]
    return " ".join([family(name), *(names.phrase(k, params[k]) if k in names.NAMES else
                                     f"{names.short(k)}={_text(params[k])}" for k in shown)])


@functools.lru_cache(maxsize=64)
def _readings(name: str) -> dict:
    """``{field: default}`` of the fields of policy ``name`` (a registry name or
    ``module:Class``) whose metadata says ``named="unless default"``; ``{}`` for a name
    that resolves to no policy (a researcher's label)."""
    import dataclasses
    from fitgpp.errors import FitgppError
    from fitgpp.sim.policies import POLICIES, registry
    if name.lower() not in POLICIES and ":" not in name:
        return {}
    try:
        cls = registry.policy_class(name)
    except FitgppError:
        return {}
    return {f.name: f.default for f in dataclasses.fields(cls)
            if f.metadata.get("named") == "unless default"}


def _params(attrs) -> dict:
    """The policy's parameters a simulation Dataset records (``policy_params``, JSON)."""
    try:
        got = json.loads(attrs.get("policy_params") or "{}")
    except (TypeError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def policy_label(ds, varying=()) -> str:
    """The label of a simulation Dataset (from its attrs) or of a policy name, as
    :func:`config_label` writes it: FitGpp's ``s``, the fields in ``varying``, and a field
    declared ``named="unless default"`` when it is not at its default."""
    attrs = ds if isinstance(ds, dict) else getattr(ds, "attrs", {"policy": str(ds)})
    ref = str(attrs.get("policy", "?"))
    name = ref.rpartition(":")[2]  # module:Class -> Class
    params = {"s": float(attrs["s"])} if family(name) == "FitGpp" and "s" in attrs else {}
    given = _params(attrs)
    params.update({k: given[k] for k in varying if k in given})
    reading = {k: given[k] for k, d in _readings(ref).items() if k in given and given[k] != d}
    params.update(reading)
    return config_label(name, params, [*varying, *reading])


def run_labels(runs) -> list[str]:
    """Labels of simulation Datasets compared together: each as :func:`policy_label`, with
    the fields of its policy that differ between the runs of that policy (two LAS runs with
    other thresholds: ``LAS thresholds=3250,7200`` and ``LAS thresholds=1000,2000``; one
    LAS run: ``LAS``)."""
    attrs = [getattr(ds, "attrs", {"policy": str(ds)}) for ds in runs]
    given = [(str(a.get("policy", "?")), _params(a)) for a in attrs]
    seen: dict[str, dict[str, set]] = {}
    for name, params in given:
        for k, v in params.items():
            seen.setdefault(name, {}).setdefault(k, set()).add(json.dumps(v, sort_keys=True))
    varying = {name: [k for k, vs in fields.items() if len(vs) > 1]
               for name, fields in seen.items()}
    return [policy_label(ds, varying.get(name, ())) for ds, (name, _) in zip(runs, given)]


def _family(label: str) -> str:
    return label.split(" ")[0]


def _order_key(lb: str) -> tuple:
    fam = _family(lb)
    return (list(POLICY_STYLE).index(fam) if fam in POLICY_STYLE else 99, natural_key(lb))


def _styles(labels) -> dict[str, alt.Scale]:
    """Colour, shape and dash scales for the given labels, from :func:`policy_styles`."""
    styles = policy_styles(labels)
    order = list(styles)
    return {"order": order,
            "color": alt.Scale(domain=order, range=[styles[lb][0] for lb in order]),
            "shape": alt.Scale(domain=order, range=[styles[lb][1] for lb in order]),
            "dash": alt.Scale(domain=order, range=[styles[lb][2] for lb in order])}


def _as_runs(results) -> dict[str, object]:
    """``{label: Dataset}`` from a dict, a list of Datasets, or one Dataset."""
    if hasattr(results, "data_vars"):
        results = [results]
    if isinstance(results, dict):
        out = dict(results)
    else:
        results = list(results)
        out = dict(zip(run_labels(results), results))
    if not out:
        raise PlotError("no results to plot: pass at least one Dataset")
    for lb, ds in out.items():
        missing = {"cls", "slowdown"} - set(getattr(ds, "data_vars", ()))
        if missing:
            raise PlotError(f"result {lb!r} is not a simulation Dataset: missing {sorted(missing)}")
    return out


def _hours(x):
    return np.asarray(x, dtype=float) / 3600.0


def _spare(name: str) -> int:
    """A stable index into the spare styles for a label that is not a built-in family's
    first: the same label gets the same style in every chart, whatever else is drawn."""
    import hashlib
    return int(hashlib.sha256(str(name).encode()).hexdigest(), 16) % len(_EXTRA)


def policy_styles(labels) -> dict[str, tuple[str, str, list]]:
    """``{label: (colour, shape, dash)}``, the one palette of every chart: a built-in
    policy's plain label (``FIFO``, ``FitGpp s=4``, the family's first) keeps its
    :data:`POLICY_STYLE`; other labels (``FitGpp s=8``, a user's ``patient``) get a spare
    style chosen from the label itself, so it does not change with the other labels."""
    order = sorted(dict.fromkeys(map(str, labels)), key=_order_key)
    out, used, first = {}, set(), set()
    for lb in order:
        fam = _family(lb)
        if fam in POLICY_STYLE and fam not in first:
            first.add(fam)
            out[lb] = POLICY_STYLE[fam]
            continue
        if len(used) < len(_EXTRA):
            i = _spare(lb)
            while i in used:
                i = (i + 1) % len(_EXTRA)
            used.add(i)
            out[lb] = (_EXTRA[i], _EXTRA_SHAPES[i], _EXTRA_DASH[i])
            continue
        # the spare styles are taken: then the styles of the built-in families not drawn
        # here (six loads in one chart had two pairs of identical lines)
        free = [f for f in POLICY_STYLE if f not in first]
        if free:
            first.add(free[0])
            out[lb] = POLICY_STYLE[free[0]]
        else:     # more than nine series: the spare styles again, in order
            i = (len(out) - len(POLICY_STYLE)) % len(_EXTRA)
            out[lb] = (_EXTRA[i], _EXTRA_SHAPES[i], _EXTRA_DASH[i])
    return out
