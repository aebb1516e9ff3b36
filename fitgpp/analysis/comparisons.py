"""Between settings over seeds: :func:`compare`, :func:`best_of`, :func:`order_against` and
the Holm correction (:func:`holm`), by the rules of the verdict grammar (stated in
:mod:`fitgpp.analysis.verdicts`, which re-exports these names, and ``docs/verdicts.md``): "better",
"worse", "best", "lower" or "higher" only when a two-sided paired t-test over seeds rejects
equal means at the current level (:func:`current_alpha`: 0.05, unless a study whose seeds were
added in rounds spends its level over its looks, :mod:`fitgpp.analysis.looks`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from fitgpp.analysis.estimate import MIN_SEEDS, _few, _seeds, as_estimate
from fitgpp.analysis.metrics import _g, interval_level, paired_p, percent, t_interval

Better = Literal["lower", "higher"]
#: Level of the paired test between settings (when no other is set, :func:`current_alpha`).
ALPHA = 0.05


def current_alpha() -> float:
    """The paired tests' level now: 1 - :func:`fitgpp.analysis.metrics.interval_level`
    (:data:`ALPHA` unless a block of :func:`fitgpp.analysis.metrics.at_level` sets another)."""
    return round(1.0 - interval_level(), 12)


@dataclass(frozen=True)
class Comparison:
    """Setting ``a`` against setting ``b`` on one metric over paired seeds.

    ``diff`` is the mean of ``a - b`` over seeds with its interval ``diff_low``..``diff_high``
    (NaN with fewer than :data:`MIN_SEEDS`); ``pvalue`` of the paired t-test (NaN when none)."""
    a: str
    b: str
    title: str
    verdict: Literal["better", "worse", "no detectable difference", "cannot tell"]
    seeds: int
    diff: float
    diff_low: float
    diff_high: float
    pvalue: float
    sentence: str
    test: str = "two-sided paired t-test over seeds (scipy.stats.ttest_rel)"
    level: float = ALPHA

    @property
    def category(self) -> str:
        """Read as the claim "``a`` is better than ``b``": ``confirmed`` (better by the test),
        ``contradicted`` (worse), else ``undecided`` (no detectable difference, or too few
        seeds)."""
        return {"better": "confirmed", "worse": "contradicted"}.get(self.verdict, "undecided")


def _number(x: float, as_percent: bool) -> str:
    return percent(x) if as_percent else f"{x:.3g}"


def _diff_text(x: float, as_percent: bool) -> str:
    return f"{100 * x:+.1f} pp" if as_percent else f"{x:+.3g}"


def compare(a_values, b_values, *, a: str, b: str, title: str, better: Better = "lower",
            as_percent: bool = False, alpha: float | None = None,
            min_seeds: int = MIN_SEEDS) -> Comparison:
    """Compare setting ``a`` with ``b`` over seeds (``a_values[i]`` and ``b_values[i]`` from
    seed i; pairs with a NaN are dropped: a seed one of them did not run). ``as_percent``:
    the values are fractions (changes), shown in percent and their differences in percentage
    points. Below ``min_seeds`` pairs the sentence gives both means and "cannot tell", and no
    order ("equal", "lower"). ``alpha``: the test's level (default: 1 - the current interval
    level, :func:`current_alpha`)."""
    alpha = current_alpha() if alpha is None else alpha
    x, y = np.atleast_1d(np.asarray(a_values, dtype=float)), \
        np.atleast_1d(np.asarray(b_values, dtype=float))
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = len(x)
    if n < min_seeds:
        means = (f"{a} {_number(x.mean(), as_percent) if n else 'n/a'}, "
                 f"{b} {_number(y.mean(), as_percent) if n else 'n/a'}")
        sentence = f"{title}: {means}: {_few(n)}, so no order between them is claimed."
        return Comparison(a, b, title, "cannot tell", n, float(np.mean(x - y)) if n else math.nan,
                          math.nan, math.nan, math.nan, sentence, level=alpha)
    d = x - y
    # the t statistic is undefined when every seed gives the same difference: equal values
    # are no difference (p = 1), the same nonzero difference on 3+ seeds a detectable one
    p = paired_p(d) if np.any(d != d[0]) else (1.0 if d[0] == 0 else 0.0)
    mean, lo, hi = t_interval(d)
    if p < alpha:
        verdict = "better" if (mean < 0) == (better == "lower") else "worse"
        word = f"{a} is {verdict} than {b}"
    else:
        verdict, word = "no detectable difference", f"no detectable difference between {a} and {b}"
    sentence = (f"{title}: {word} over {_seeds(n)} (mean paired difference "
                f"{_diff_text(mean, as_percent)} [{_diff_text(lo, as_percent)}, "
                f"{_diff_text(hi, as_percent)}], paired t-test p = {p:.2g} at level {alpha:g}).")
    return Comparison(a, b, title, verdict, n, mean, lo, hi, p, sentence, level=alpha)


@dataclass(frozen=True)
class Best:
    """Which of several settings is best on one metric: ``best`` (None: none is detectably
    better than every other), ``ties`` (the settings not detectably different from the
    leader, the leader first) and the sentence."""
    best: str | None
    ties: tuple
    sentence: str


def holm(pvalues: Sequence[float], alpha: float | None = None) -> list[bool]:
    """Which of ``pvalues`` the Holm step-down correction rejects at family level ``alpha``:
    the j-th smallest (from 0) is compared with ``alpha / (m - j)``, stopping at the first
    that is not below it (so the chance of any false "better" over the m tests stays at most
    ``alpha``; default :func:`current_alpha`)."""
    alpha = current_alpha() if alpha is None else alpha
    m = len(pvalues)
    out = [False] * m
    for j, i in enumerate(sorted(range(m), key=lambda i: pvalues[i])):
        if not pvalues[i] < alpha / (m - j):
            break
        out[i] = True
    return out


def best_of(values: Mapping, *, title: str, better: Better = "lower", fmt=_g) -> Best:
    """The best of ``values`` (label -> per-seed values, seed i at index i in each) on one
    metric: the setting with the best mean is called best only when the paired tests
    (:func:`compare`) against every other find it better after the Holm correction over
    those comparisons (:func:`holm`: several tests at once would otherwise find a "best" by
    chance more often than ``ALPHA``); the settings it cannot be told from are named as a
    tie; with fewer than :data:`MIN_SEEDS` seeds: "cannot tell"."""
    est = {k: as_estimate(v) for k, v in values.items()}
    sign = 1 if better == "lower" else -1
    order = sorted(est, key=lambda k: sign * est[k].mean)
    lead = order[0]
    shown = lambda ks: ", ".join(f"{k} ({fmt(est[k].mean)})" for k in ks)  # noqa: E731
    seeds = min(e.seeds for e in est.values())
    if len(order) == 1:
        return Best(None, (lead,), f"{title}: only {shown(order)}, nothing to compare.")
    if seeds < MIN_SEEDS:
        return Best(None, tuple(order), f"{title}: {_few(seeds)} which is best; means "
                    f"{shown(order)}.")
    said = [compare(values[lead], values[k], a=lead, b=k, title=title, better=better)
            for k in order[1:]]
    kept = holm([c.pvalue for c in said])
    ties = (lead, *[c.b for c, r in zip(said, kept) if not (r and c.verdict == "better")])
    m = len(said)
    how = (f"paired t-tests over {_seeds(seeds)}, Holm-corrected over the {m} comparison"
           f"{'s' * (m != 1)} with {lead}, family level {current_alpha():g}")
    if len(ties) == 1:
        return Best(lead, ties, f"{title}: best {shown([lead])}, better than each other "
                    f"setting ({how}).")
    rest = [k for k in order if k not in ties]
    text = f"{title}: no single best; {shown(ties)} cannot be told apart ({how})"
    return Best(None, ties, text + (f"; the others are worse: {shown(rest)}." if rest else "."))


def order_against(values: Mapping, ref: str, ref_values, *, title: str,
                  better: Better = "lower", group: str = "setting", fmt=_g) -> str:
    """Where each of ``values`` (label -> per-seed values, or a bare number: one run) sits
    against ``ref`` (its per-seed values): "lower"/"higher" only by the paired test of
    :func:`compare`, else "no detectable difference" or "cannot tell"."""
    r = as_estimate(ref_values)
    groups: dict[str, list[str]] = {}
    for k, v in values.items():
        c = compare(v, r.values or [r.mean], a=k, b=ref, title=title, better=better)
        word = ("cannot tell" if c.verdict == "cannot tell" else
                "no detectable difference" if c.verdict == "no detectable difference" else
                "lower" if c.diff < 0 else "higher")
        groups.setdefault(word, []).append(f"{k} ({fmt(as_estimate(v).mean)})")
    plural = group[:-1] + "ies" if group.endswith("y") else group + "s"
    words = [w for w in ("lower", "higher", "no detectable difference", "cannot tell")
             if w in groups]
    parts = [f"{w} than {ref}: {', '.join(groups[w])}" if w in ("lower", "higher") else
             f"{_few(r.seeds) if w == 'cannot tell' else w}: {', '.join(groups[w])}"
             for w in words]
    return (f"{title}, each of {len(values)} {plural} against {ref} ({fmt(r.mean)}): "
            + "; ".join(parts) + ".")
