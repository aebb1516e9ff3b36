"""What the studies' line figures draw from a table: the long table of means and intervals
(:func:`_long`) and the series of changes against a study's baseline (:func:`changes`).
Re-exported by :mod:`fitgpp.studies.base`, their old home."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fitgpp.analysis.metrics import METRICS, value_range


def _long(table: pd.DataFrame, metrics: dict, id_vars: list[str]) -> pd.DataFrame:
    """The long table :func:`fitgpp.figures.plots.metric_lines` draws: per column ``c`` of
    ``metrics`` its mean, interval and ``lowest``, the least value its quantity can take (1 for
    a slowdown, 0 for a count; NaN for a change, whose whiskers stop at -100 % anyway)."""
    parts = []
    for c, name in metrics.items():
        low = value_range(c)[0]
        parts.append(table[id_vars].assign(
            metric=name, value=table[c], lo=table[f"{c}_lo"], hi=table[f"{c}_hi"],
            lowest=low if np.isfinite(low) and not c.startswith("change_") else np.nan))
    return pd.concat(parts, ignore_index=True)


def changes(o, keys=("te_p95", "be_median", "be_p95")) -> dict[str, str]:
    """Figure series: the changes of metrics ``keys`` against the study's baseline, titled
    from their declarations."""
    return {f"change_{k}": f"{METRICS[k].title} vs {o.baseline_label()}" for k in keys}
