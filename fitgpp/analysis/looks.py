"""The stopping rule of adaptive replication: at which seed counts a configuration is judged
(its *looks*), and the level every interval and test is made at so that judging it several
times keeps the error rate of each verdict at most 5 % (stated for people in
``docs/verdicts.md``, "Seeds added until a verdict is reached").

- **Looks, fixed in advance** (:func:`looks`): the seeds asked (``n0``), then twice as many at
  each round, up to the budget (``Size.max_seeds``): 5, 10, 20, 30 for 5 seeds and a budget of
  30. Nothing seen in the results changes the looks; the results decide only *whether* a
  configuration goes on to the next one.
- **Alpha spent over the looks (Bonferroni)** (:func:`look_level`): each look that can decide
  (one with at least :data:`~fitgpp.analysis.metrics.MIN_CI_VALUES` seeds) is made at level
  ``alpha / K``, K the number of such looks: 0.05 / 4 = 0.0125 (98.75 % intervals) for the
  looks above. A wrong verdict at some look (a false sign, a false "confirmed", a false
  "contradicted") needs a wrong interval at that look; by the union bound the chance of one
  at any of the K looks is at most K x alpha / K = alpha, whatever the dependence between
  looks (the seeds of a look include those of the one before) and whatever the
  distribution of a seed's value. Pocock's or O'Brien-Fleming's boundaries spend less per
  look but are derived for normal statistics at equal steps; Bonferroni holds for Student-t
  intervals at the unequal steps used here, and with at most 5 looks it costs little.
- **The same level everywhere in the run**: every interval and paired test of a study run
  with a budget is made at ``1 - alpha / K``, its first look included and whether or not a
  configuration got more seeds: the rule was fixed before any result was seen.

:func:`sequential` applies the rule to one stream of values (what tests simulate).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from fitgpp.analysis.metrics import LEVEL, MIN_CI_VALUES, at_level
from fitgpp.errors import FitgppError


class LooksError(FitgppError):
    """A seed budget or schedule that cannot be run."""


def looks(first: int, budget: int) -> tuple[int, ...]:
    """Seed counts at which a configuration is judged: ``first``, then doubled each round, the
    last capped at ``budget`` (``(first,)`` when the budget is not above it: no rounds)."""
    for name, v in (("seeds", first), ("budget", budget)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise LooksError(f"{name} must be a whole number >= 1, got {v!r}")
    out = [int(first)]
    while out[-1] < budget:
        out.append(min(int(budget), 2 * out[-1]))
    return tuple(out)


def deciding_looks(schedule: Sequence[int]) -> int:
    """How many looks of ``schedule`` can decide anything (at least MIN_CI_VALUES seeds: with
    fewer there is no interval, so no verdict and no error to spend alpha on); at least 1."""
    return max(1, sum(int(n) >= MIN_CI_VALUES for n in schedule))


def look_level(schedule: Sequence[int], level: float = LEVEL) -> float:
    """The interval level of every look of ``schedule``: ``1 - (1 - level) / K`` (Bonferroni
    over the K deciding looks, :func:`deciding_looks`); ``level`` itself with one look."""
    return 1.0 - (1.0 - level) / deciding_looks(schedule)


def sequential(values: Sequence[float] | np.ndarray, schedule: Sequence[int],
               judge: Callable[[np.ndarray], str | None],
               level: float | None = None) -> tuple[int, str | None]:
    """The rule on one stream: judge the first n of ``values`` at each look n of ``schedule``
    (within :func:`fitgpp.analysis.metrics.at_level` of ``level``, default
    :func:`look_level`), stopping at the first look where ``judge`` returns a verdict (None:
    undecided). Returns ``(seeds used, verdict or None)``."""
    level = look_level(schedule) if level is None else level
    x = np.asarray(values, dtype=float)
    if len(x) < schedule[-1]:
        raise LooksError(f"{len(x)} values for looks up to {schedule[-1]} seeds")
    said = None
    with at_level(level):
        for n in schedule:
            said = judge(x[:n])
            if said is not None:
                return n, said
    return int(schedule[-1]), said
