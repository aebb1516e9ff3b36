"""A measured number as the verdict grammar reads it (:class:`Estimate`): a mean over seeds,
its Student-t interval and how many seeds it rests on. Its rules are stated with the rest of
the grammar in :mod:`fitgpp.analysis.verdicts` (which re-exports these names) and
``docs/verdicts.md``."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fitgpp.analysis.metrics import (CHANGE_RANGE, MIN_CI_VALUES, _g, _nan, cut_interval, percent,
                                     t_interval)

#: Fewest seeds (paired seeds, for a comparison) a verdict is made from.
MIN_SEEDS = MIN_CI_VALUES


@dataclass(frozen=True)
class Estimate:
    """A measured number: its ``mean`` over ``seeds`` runs and the interval ``low``..``high``
    (NaN with fewer than :data:`MIN_SEEDS` seeds). ``values``: the per-seed values when known
    (to say their range when there is no interval)."""
    mean: float
    low: float = math.nan
    high: float = math.nan
    seeds: int = 1
    values: tuple = ()

    @classmethod
    def of(cls, values) -> Estimate:
        """From per-seed values (NaNs dropped: a seed the configuration did not run): mean,
        Student-t interval at the current level (:func:`fitgpp.analysis.metrics.interval_level`),
        count."""
        x = np.asarray(values, dtype=float).ravel()
        x = x[~np.isnan(x)]
        m, lo, hi = t_interval(x)
        return cls(m, lo, hi, len(x), tuple(float(v) for v in x))

    @classmethod
    def from_row(cls, row, col: str, seeds: int | None = None) -> Estimate:
        """``row[col]`` with ``row[col_lo]``, ``row[col_hi]`` (a table of
        :meth:`fitgpp.studies.Outcome.table`); seeds from ``seeds``, else ``row["seeds"]``,
        else 3 when the bounds are there and 1 when not."""
        m, lo, hi = (float(row.get(c, math.nan)) for c in (col, f"{col}_lo", f"{col}_hi"))
        if seeds is None:
            seeds = int(row["seeds"]) if "seeds" in row and not _nan(row["seeds"]) else \
                (MIN_SEEDS if not (_nan(lo) or _nan(hi)) else 1)
        return cls(m, lo, hi, int(seeds))

    @property
    def known(self) -> bool:
        """Whether there is an interval to judge from (enough seeds, finite bounds)."""
        return self.seeds >= MIN_SEEDS and not (_nan(self.low) or _nan(self.high))

    @property
    def sign(self) -> int:
        """+1 or -1 when the interval excludes 0, else 0 (also when it cannot tell)."""
        if not self.known:
            return 0
        return 1 if self.low > 0 else -1 if self.high < 0 else 0

    def text(self, *, as_percent: bool = True, value_range=CHANGE_RANGE, seeds: bool = True) -> str:
        """``-6.8 % [-18.1 %, +4.5 %] (n = 5)`` (bounds cut and marked by :func:`cut_interval`;
        ``seeds=False``: without the count), or, without an interval, the mean and the seeds'
        range (``-63.7 % (2 seeds: -78.0 % to -50.0 %)``)."""
        if self.known:
            shown = cut_interval(self.mean, self.low, self.high, value_range).text(
                as_percent=as_percent)
            return f"{shown} (n = {self.seeds})" if seeds else shown
        f = percent if as_percent else _g
        if len(self.values) >= 2:
            return (f"{f(self.mean)} ({self.seeds} seeds: {f(min(self.values))} to "
                    f"{f(max(self.values))})")
        return f"{f(self.mean)} ({_seeds(self.seeds)})"


def as_estimate(x) -> Estimate:
    """An :class:`Estimate` as is; per-seed values (a sequence or array) through
    :meth:`Estimate.of`; a bare number as one run."""
    if isinstance(x, Estimate):
        return x
    if np.ndim(x) == 0:
        return Estimate(float(x), seeds=1, values=(float(x),))
    return Estimate.of(x)


def _seeds(n: int) -> str:
    return "one run" if n == 1 else f"{n} seeds"


def _few(n: int) -> str:
    return f"cannot tell ({_seeds(n)}: fewer than {MIN_SEEDS})"
