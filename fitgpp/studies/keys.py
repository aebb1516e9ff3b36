"""Which columns of a study's table say which row is which: its keys. A row of a study's
table is one configuration: the model variant (RQ6's workload, RQ4's grace distribution),
the value of each swept knob (restart cost, TE share, load, ...) and the policy with its
swept fields (its label, ``FitGpp s=4 P=3``). Every file a table becomes (CSV, LaTeX,
Markdown, HTML) carries these columns, so no two of its rows read the same.

    table, keys = keyed(r.table, STUDIES["rq6"])   # keys: {column: heading}
    # {'workload': 'workload', 'overhead_min': 'restart cost (min)', 'policy': 'policy'}

A knob whose display unit is not the stored one (the restart cost: seconds stored, minutes
shown, :data:`fitgpp.figures.names.NAMES`) is keyed by a column in the display unit: the
table's own when it has one (``overhead_min``), else one added (``restart_overhead_min``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fitgpp.analysis.metrics import METRICS
from fitgpp.figures import names

__all__ = ["keyed", "measures"]


def measures(table: pd.DataFrame) -> set[str]:
    """The columns of ``table`` that hold numbers measured, not settings: a metric, a change,
    anything with an interval (``c`` beside ``c_lo``), a bound or its mark, the seed count."""
    cols = set(map(str, table.columns))
    out = {c for c in cols if c in METRICS or c.startswith("change_") or f"{c}_lo" in cols
           or c.endswith(("_lo", "_hi", "_cut")) or c in ("seeds", "steady")}
    return out


def _dims(study, knobs) -> list[str]:
    """The study's dimensions that tell configurations apart, in the order a table shows
    them: the variant, each knob, then the policy."""
    variant = [study.variant_dim] if study is not None and study.variants else []
    return variant + list(knobs) + ["policy"]


def _same(a, b) -> bool:
    """Whether two columns hold the same values, row by row (numbers to 9 digits)."""
    try:
        return bool(np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-9,
                                equal_nan=True))
    except (TypeError, ValueError):
        return list(map(str, a)) == list(map(str, b))


def _column(table: pd.DataFrame, dim: str, stored: pd.Series | None) -> str | None:
    """The column of ``table`` that holds dimension ``dim`` in its display unit (``stored``:
    the values as stored, when the table has them under another name); None: none does."""
    scale = names.name(dim).scale
    if stored is None:
        return None
    if scale == 1:
        return stored.name
    for c in table.columns:         # the table's own column in the display unit
        if c not in measures(table) and _same(table[c], stored / scale):
            return c
    return None


def _stored(table: pd.DataFrame, dim: str, values) -> pd.Series | None:
    """``dim``'s column as stored: the column of that name, else the one whose values are
    the dimension's (RQ6 keeps the restart cost as ``overhead_s``)."""
    if dim in table:
        return table[dim]
    want = None if values is None or callable(values) else {float(v) for v in values}
    for c in table.columns:
        if c in measures(table) or want is None:
            continue
        try:
            got = set(table[c].astype(float))
        except (TypeError, ValueError):
            continue
        if got and got <= want:
            return table[c]
    return None


def keyed(table: pd.DataFrame, study=None, knobs: dict | None = None
          ) -> tuple[pd.DataFrame, dict[str, str]]:
    """``table`` (a copy, with a column in the display unit added where a knob needs one)
    and its keys, ``{column: heading}``: the columns of ``study``'s dimensions (its variant,
    each knob, the policy; one that takes a single value too: it says which), then, if rows
    still repeat, the other setting columns one by one until no two rows share their keys.
    ``knobs``: ``{knob: values}`` the table was run with, when not the study's (a result's
    ``config["knobs"]``)."""
    out = table.copy()
    keys: dict[str, str] = {}
    knobs = dict(knobs if knobs is not None else study.knobs if study is not None else {})
    for dim in _dims(study, knobs):
        values = knobs.get(dim)
        stored = _stored(out, dim, values)
        col = _column(out, dim, stored)
        if stored is not None and col is None:        # add the column in the display unit
            n = names.name(dim)
            col = f"{dim}_{n.unit}"
            out[col] = stored.to_numpy(float) / n.scale
        if col is None:
            continue
        keys[col] = names.title(dim) if col != "policy" else "policy"
    rest = [c for c in out.columns if c not in keys and c not in measures(out)
            and c not in ("family", "name")]
    for c in rest:
        if not out.duplicated(list(keys)).any():
            break
        if out.groupby(list(keys), dropna=False)[c].nunique(dropna=False).max() > 1:
            keys[c] = names.title(c)
    if "policy" in keys:              # the policy last, as the tables read: where, then who
        keys["policy"] = keys.pop("policy")
    return out, keys


def keyed_table(result, study=None, *, digits: int = 3):
    """The table for people of a study's ``result`` (an :class:`~fitgpp.studies.RQResult`,
    or anything with ``table`` and ``title``): its keys first (:func:`keyed`), then the
    columns that answer the question (:func:`fitgpp.analysis.tables.rq_columns`: the brief
    metrics, the study's own, their changes against its baseline in percent); ``.full``
    holds every column."""
    from fitgpp.analysis.tables import people_table, rq_columns
    t, keys = keyed(result.table, study)
    cols = {c: h for c, h in rq_columns(getattr(result, "columns", ()),
                                          getattr(result, "baseline", "FIFO")).items()
            if c in t.columns and c not in keys}
    extra = [c for c in t.columns if str(c).endswith("_seed0")]   # per-question extras (RQ3)
    cols.update({c: c.replace("_seed0", " (seed 0)").replace("_", " ") for c in extra})
    return people_table(t, cols, ids=keys, digits=digits, caption=result.title,
                        percent=[c for c in cols if c.startswith("change_")])
