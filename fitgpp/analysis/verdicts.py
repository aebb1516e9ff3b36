"""Verdicts from stated rules: every finding sentence is generated from the numbers.

- **Against the paper** (:func:`against_paper`): the measured change is compared with the
  paper's *by direction first*. A change smaller than :data:`NO_CHANGE` in size is "no
  change"; a change of the other sign is "differs in sign", whatever its size, and never
  counts as agreeing (a BE gain where the paper reports a BE cost is not the paper's
  trade-off). Of the same sign, it "matches" when within both :data:`CLOSE_PP` (5 percentage
  points) and :data:`CLOSE_REL` (25 %) of the paper's size (the narrower of the two); else it
  is "same sign, larger" or "same sign, smaller".
- **Between two settings over seeds** (:func:`compare`): "better" or "worse" only when a
  two-sided paired t-test over seeds (``scipy.stats.ttest_rel``; the same seed gives both
  settings the same workload, so the seeds pair) rejects equal means at :data:`ALPHA`, in
  the direction the metric calls better; otherwise "no detectable difference". With fewer
  than :data:`MIN_SEEDS` paired seeds: "cannot tell". The t-test and not the Wilcoxon
  signed-rank test: with the 3-5 seeds a study runs, Wilcoxon's smallest possible two-sided
  p-value (0.25 at 3 pairs, 0.0625 at 5) can never reach 0.05, so it could never say "better".
- **Cost and gain** (:func:`cost_or_gain`, :func:`extremes`): a change in the metric's better
  direction is a gain, in the other a cost (a negative change of a lower-is-better metric
  is a gain, never a cost).
- **Intervals** (:func:`bounded_interval`): the Student-t interval of
  :func:`fitgpp.analysis.metrics.t_interval`, clipped to the metric's range (a slowdown is at least 1,
  a change at least -100 %); a clipped bound is marked with ``*`` and :data:`CLIP_NOTE`.
  Percent text comes from :func:`fitgpp.analysis.metrics.percent`; a column headed "(%)" holds
  :func:`percent_values`, never fractions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from fitgpp.analysis.metrics import METRICS, MIN_CI_VALUES, percent, t_interval

Better = Literal["lower", "higher"]
#: Level of the paired test between settings.
ALPHA = 0.05
#: Fewest paired seeds a comparison between settings is made from.
MIN_SEEDS = MIN_CI_VALUES
#: A change smaller than this in size (a fraction) is no change.
NO_CHANGE = 0.005
#: Same-sign changes within this many percentage points (as a fraction) of the paper's match.
CLOSE_PP = 0.05
#: ... and within this share of the paper's size (the narrower of the two counts).
CLOSE_REL = 0.25
#: Range of a slowdown and of a change against a baseline (a fraction).
SLOWDOWN_RANGE = (1.0, math.inf)
CHANGE_RANGE = (-1.0, math.inf)
CLIP_NOTE = ("* an interval bound clipped to the metric's range (a slowdown is at least 1, "
             "a change at least -100 %)")


@dataclass(frozen=True)
class Claim:
    """One number of the paper: a change against the baseline (a fraction)."""
    key: str
    title: str
    change: float
    better: Better = "lower"


#: The paper's headline (synthetic workload, FitGpp s=4 against FIFO): the change of each
#: metric, a fraction. The one place these numbers are written; titles and directions are
#: the metrics' own (:data:`fitgpp.analysis.metrics.METRICS`).
PAPER = {"te_p95": -0.966, "be_median": 0.180, "be_p95": 0.239}
PAPER_CLAIMS = tuple(Claim(k, METRICS[k].title, v, METRICS[k].better) for k, v in PAPER.items())


def claim_of(key: str, change: float) -> Claim:
    """A claim on metric ``key`` (title and better direction from its declaration)."""
    return Claim(key, METRICS[key].title, change, METRICS[key].better)


def cost_or_gain(change: float, better: Better = "lower") -> str:
    """``"gain"`` for a change in the metric's better direction, ``"cost"`` for one against
    it, ``"none"`` below :data:`NO_CHANGE`, ``"n/a"`` for NaN (nothing measured)."""
    if math.isnan(change):
        return "n/a"
    if abs(change) < NO_CHANGE:
        return "none"
    return "gain" if (change < 0) == (better == "lower") else "cost"


def describe_change(change: float, title: str, better: Better = "lower") -> str:
    """``"BE median slowdown improves by 18.8 %"``: the change in words that fit its sign."""
    kind = cost_or_gain(change, better)
    if kind == "n/a":
        return f"{title}: not measured"
    if kind == "none":
        return f"{title} does not change ({percent(change)})"
    verb = "improves" if kind == "gain" else "worsens"
    return f"{title} {verb} by {percent(abs(change), sign=False)}"


@dataclass(frozen=True)
class PaperVerdict:
    """A measured change against one of the paper's numbers."""
    key: str
    title: str
    measured: float
    paper: float
    verdict: Literal["matches", "same sign, larger", "same sign, smaller", "differs in sign",
                     "no change", "not measured"]
    sentence: str


def against_paper(measured: float, claim: Claim) -> PaperVerdict:
    """The verdict on ``measured`` (a fraction) against ``claim``, by the module's rule."""
    here, paper = cost_or_gain(measured, claim.better), cost_or_gain(claim.change, claim.better)
    head = f"{claim.title}: {percent(measured)} here against the paper's {percent(claim.change)}"
    if here == "n/a":
        verdict, why = "not measured", "no value to compare"
    elif here == "none":
        verdict, why = "no change", f"no change here where the paper reports a {paper}"
    elif here != paper:
        verdict = "differs in sign"
        why = f"a {here} here where the paper reports a {paper}"
    elif abs(measured - claim.change) <= min(CLOSE_PP, CLOSE_REL * abs(claim.change)):
        verdict, why = "matches", f"the same {here}, of about the paper's size"
    else:
        size = "larger" if abs(measured) > abs(claim.change) else "smaller"
        verdict, why = f"same sign, {size}", f"a {size} {here} than the paper's"
    return PaperVerdict(claim.key, claim.title, float(measured), claim.change, verdict,
                        f"{head}: {verdict} ({why}).")


def against_paper_all(measured: Mapping[str, float],
                      claims: Sequence[Claim] = PAPER_CLAIMS) -> list[PaperVerdict]:
    """:func:`against_paper` for every claim; ``measured`` maps claim keys to changes."""
    return [against_paper(measured[c.key], c) for c in claims]


def holds_together(verdicts: Sequence[PaperVerdict]) -> bool:
    """Whether every number matches the paper's (same sign, close in size)."""
    return all(v.verdict == "matches" for v in verdicts)


def paper_summary(verdicts: Sequence[PaperVerdict]) -> str:
    """One sentence over all claims: "Agrees with the paper on all N" only when every one
    matches; otherwise the claims grouped by verdict."""
    if holds_together(verdicts):
        return f"Agrees with the paper on all {len(verdicts)} numbers."
    groups: dict[str, list[str]] = {}
    for v in verdicts:
        groups.setdefault(v.verdict, []).append(v.title)
    parts = [f"{verdict}: {', '.join(titles)}" for verdict, titles in groups.items()]
    return "Does not reproduce the paper's headline (" + "; ".join(parts) + ")."


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


def _number(x: float, as_percent: bool) -> str:
    return percent(x) if as_percent else f"{x:.3g}"


def _diff_text(x: float, as_percent: bool) -> str:
    return f"{100 * x:+.1f} pp" if as_percent else f"{x:+.3g}"


def compare(a_values, b_values, *, a: str, b: str, title: str, better: Better = "lower",
            as_percent: bool = False, alpha: float = ALPHA,
            min_seeds: int = MIN_SEEDS) -> Comparison:
    """Compare setting ``a`` with ``b`` over seeds (``a_values[i]`` and ``b_values[i]`` from
    seed i; pairs with a NaN are dropped) by the module's rule. ``as_percent``: the values
    are fractions (changes), shown in percent and their differences in percentage points."""
    x, y = np.asarray(a_values, dtype=float), np.asarray(b_values, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = len(x)
    seeds = f"{n} seed" + ("" if n == 1 else "s")
    if n < min_seeds:
        rel = ("equal to" if np.array_equal(x, y) else
               "lower than" if x.mean() < y.mean() else "higher than") if n else "unknown against"
        sentence = (f"{title}: {a} ({_number(x.mean(), as_percent) if n else 'n/a'}) is {rel} "
                    f"{b} ({_number(y.mean(), as_percent) if n else 'n/a'}) over {seeds}; "
                    f"fewer than {min_seeds} seeds cannot tell whether the difference is real.")
        return Comparison(a, b, title, "cannot tell", n, float(np.mean(x - y)) if n else math.nan,
                          math.nan, math.nan, math.nan, sentence)
    from scipy import stats
    d = x - y
    p = float(stats.ttest_rel(x, y).pvalue) if np.any(d != 0) else 1.0
    mean, lo, hi = t_interval(d)
    if p < alpha:
        verdict = "better" if (mean < 0) == (better == "lower") else "worse"
        word = f"{a} is {verdict} than {b}"
    else:
        verdict, word = "no detectable difference", f"no detectable difference between {a} and {b}"
    sentence = (f"{title}: {word} over {seeds} (mean paired difference "
                f"{_diff_text(mean, as_percent)} [{_diff_text(lo, as_percent)}, "
                f"{_diff_text(hi, as_percent)}], paired t-test p = {p:.2g} at level {alpha:g}).")
    return Comparison(a, b, title, verdict, n, mean, lo, hi, p, sentence)


@dataclass(frozen=True)
class Extremes:
    """The setting with the largest cost and the one with the largest gain (None: there is
    none of that kind), and a sentence that says both."""
    largest_cost: str | None
    largest_gain: str | None
    sentence: str


def extremes(changes: Mapping[str, float], *, title: str, better: Better = "lower") -> Extremes:
    """Largest cost and largest gain among ``changes`` (label -> change, a fraction), each
    only among the changes of that kind (:func:`cost_or_gain`)."""
    kinds = {k: cost_or_gain(v, better) for k, v in changes.items()}
    cost = [k for k, kind in kinds.items() if kind == "cost"]
    gain = [k for k, kind in kinds.items() if kind == "gain"]
    worst = max(cost, key=lambda k: abs(changes[k])) if cost else None
    best = max(gain, key=lambda k: abs(changes[k])) if gain else None
    parts = [f"largest {title} cost: {worst} ({percent(changes[worst])})" if worst else
             f"no setting has a {title} cost",
             f"largest {title} gain: {best} ({percent(changes[best])})" if best else
             f"no setting has a {title} gain"]
    sentence = "; ".join(parts) + "."
    return Extremes(worst, best, sentence[0].upper() + sentence[1:])


def size_phrase(jobs: int, seeds: int) -> str:
    """``"(6,957 jobs, 1 seed)"``: the size of what was run, from the run itself (pass the
    number of jobs in the result, not the size that was asked for)."""
    return f"({int(jobs):,} job{'s' * (jobs != 1)}, {int(seeds)} seed{'s' * (seeds != 1)})"


def order_against(values: Mapping[str, float], ref: str, ref_value: float, *, title: str,
                  group: str = "setting") -> str:
    """Where each of ``values`` (label -> value of one run) sits against ``ref``: how many
    are lower and which, and which are higher or equal. Point values of single runs, so the
    words are "lower"/"higher", not "better"/"worse" (that takes :func:`compare`)."""
    fmt = "{:.3g}".format
    lower = [k for k, v in values.items() if v < ref_value]
    higher = [k for k, v in values.items() if v > ref_value]
    equal = [k for k in values if k not in lower and k not in higher]
    n = len(values)
    count = "every" if len(lower) == n else "no" if not lower else f"{len(lower)} of {n}"
    plural = group[:-1] + "ies" if group.endswith("y") else group + "s"
    noun = f"{plural} are" if count not in ("every", "no") else f"{group} is"
    listed = lambda ks: ", ".join(f"{k} ({fmt(values[k])})" for k in ks)  # noqa: E731
    text = f"{title}: {count} {noun} lower than {ref} ({fmt(ref_value)})"
    if lower and count != "every":
        text += f": {listed(lower)}"
    if higher:
        text += f"; higher: {listed(higher)}"
    if equal:
        text += f"; equal: {listed(equal)}"
    return text + "."


@dataclass(frozen=True)
class Interval:
    """A mean and its interval, bounds clipped to the metric's range (``clipped_low`` and
    ``clipped_high`` say which were)."""
    mean: float
    low: float
    high: float
    clipped_low: bool = False
    clipped_high: bool = False

    def text(self, *, as_percent: bool = False) -> str:
        """``"1.01 [1*, 1.04]"`` (a ``*`` marks a clipped bound; see :data:`CLIP_NOTE`)."""
        f = (lambda x: percent(x)) if as_percent else "{:.3g}".format  # noqa: E731
        if math.isnan(self.low) or math.isnan(self.high):
            return f(self.mean)
        lo = f(self.low) + "*" * self.clipped_low
        hi = f(self.high) + "*" * self.clipped_high
        return f"{f(self.mean)} [{lo}, {hi}]"


def bounded_interval(values, value_range: tuple[float, float] = SLOWDOWN_RANGE) -> Interval:
    """The Student-t interval of the mean of ``values`` (:func:`fitgpp.analysis.metrics.t_interval`)
    clipped to ``value_range``, the clipped bounds marked."""
    mean, lo, hi = t_interval(values)
    a, b = value_range
    return Interval(mean, max(lo, a), min(hi, b), bool(lo < a), bool(hi > b))


def percent_values(fractions):
    """Fractions as the numbers a column headed "(%)" holds: ``-0.966`` -> ``-96.6``."""
    return np.asarray(fractions, dtype=float) * 100.0
