"""The verdict grammar: every sentence that judges a result is written here, from its interval.

One set of rules (stated for people in ``docs/verdicts.md``, "How findings are worded"):

- **A measured number** is an :class:`Estimate`: a mean over seeds with its Student-t interval
  (:func:`fitgpp.analysis.metrics.t_interval`) and the number of seeds behind it. With fewer than
  :data:`MIN_SEEDS` seeds (one run included) there is no interval, and every verdict on it is
  "cannot tell": no sign, no "improves", no "matches". A bare float is one run.
- **Against the paper** (:func:`against_paper`): "matches" when the paper's value lies inside
  the interval and the interval excludes 0, or when the whole interval lies within the
  closeness band (the paper's value +- the narrower of :data:`CLOSE_PP` and :data:`CLOSE_REL`
  of its size; the sentence then says so). Otherwise, when the interval excludes 0: "same
  sign, larger/smaller" or "differs in sign". When it includes 0: "no detectable change",
  then "does not reproduce the paper's cost/gain" when the paper's value lies outside the
  interval, "cannot tell" when inside. "Agrees with the paper" (:func:`paper_summary`) only
  when every number it rests on matches.
- **A change against a baseline** (:func:`change_text`, :func:`cost_or_gain`): a gain or a
  cost only when its interval excludes 0 (a gain in the metric's better direction, a cost
  against it: a cost is never negative); else "no detectable change".
- **Between settings over seeds** (:func:`compare`, :func:`best_of`, :func:`order_against`):
  "better"/"worse", "best", "lower"/"higher" only when a two-sided paired t-test over seeds
  (``scipy.stats.ttest_rel``; one seed gives both settings the same workload, so the seeds
  pair) rejects equal means at :data:`ALPHA`; else "no detectable difference" (a tie, named);
  fewer than :data:`MIN_SEEDS` paired seeds: "cannot tell". The t-test and not Wilcoxon's:
  with 3-5 seeds Wilcoxon's smallest two-sided p-value (0.25 at 3 pairs, 0.0625 at 5) never
  reaches 0.05.
- **Intervals** (:func:`cut_interval`, the one function that does it): every interval shown is
  cut at its quantity's range (:func:`value_range`: a slowdown is at least 1, a change at least
  -100 %, a count or share at least 0) and every cut bound is marked ``*`` (:data:`CLIP_NOTE`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from fitgpp.analysis.metrics import (CHANGE_RANGE, CLIP_NOTE, COUNT_RANGE, METRICS,  # noqa: F401
                                     MIN_CI_VALUES, SLOWDOWN_RANGE, UNBOUNDED, Interval, _g, _nan,
                                     bounded_interval, cut_interval, interval_cell, paired_p,
                                     percent, percent_values, t_interval, value_range)

Better = Literal["lower", "higher"]
#: Level of the paired test between settings.
ALPHA = 0.05
#: Fewest seeds (paired seeds, for a comparison) a verdict is made from.
MIN_SEEDS = MIN_CI_VALUES
#: The closeness band around a paper's value: this many percentage points (as a fraction) ...
CLOSE_PP = 0.05
#: ... or this share of the paper's size, whichever is narrower.
CLOSE_REL = 0.25
#: Kept for older callers: a change smaller than this is shown as no change in point words.
NO_CHANGE = 0.005


# ---------------------------------------------------------------- what is measured
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
        """From per-seed values (NaNs dropped): mean, Student-t interval, count."""
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

    def text(self, *, as_percent: bool = True, value_range=CHANGE_RANGE) -> str:
        """``-6.8 % [-18.1 %, +4.5 %]`` (bounds cut and marked by :func:`cut_interval`), or,
        without an interval, the mean and the seeds' range (``-63.7 % (2 seeds: -78.0 % to
        -50.0 %)``)."""
        if self.known:
            return cut_interval(self.mean, self.low, self.high, value_range).text(
                as_percent=as_percent)
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


# ---------------------------------------------------------------- against the paper
@dataclass(frozen=True)
class Claim:
    """One number of the paper: a change against the baseline (a fraction)."""
    key: str
    title: str
    change: float
    better: Better = "lower"


#: The paper's headline (synthetic workload, FitGpp s=4 against FIFO): the change of each
#: metric, a fraction. The one place these numbers are written.
PAPER = {"te_p95": -0.966, "be_median": 0.180, "be_p95": 0.239}
PAPER_CLAIMS = tuple(Claim(k, METRICS[k].title, v, METRICS[k].better) for k, v in PAPER.items())


def claim_of(key: str, change: float) -> Claim:
    """A claim on metric ``key`` (title and better direction from its declaration)."""
    return Claim(key, METRICS[key].title, change, METRICS[key].better)


def band(claim: Claim) -> float:
    """Half-width of the closeness band around the paper's value (a fraction)."""
    return min(CLOSE_PP, CLOSE_REL * abs(claim.change))


def _kind(x: float, better: Better) -> str:
    """Cost or gain of a stated number (the paper's), by its sign."""
    return "none" if x == 0 else "gain" if (x < 0) == (better == "lower") else "cost"


Verdict = Literal["matches", "same sign, larger", "same sign, smaller", "differs in sign",
                  "no detectable change", "cannot tell", "not measured"]


@dataclass(frozen=True)
class PaperVerdict:
    """A measured change against one of the paper's numbers. ``verdict`` is one of
    :data:`Verdict`; ``phrase`` adds which way a match holds ("inside the interval" or
    "within the closeness band") or, for no detectable change, whether the paper's value
    is outside the interval ("does not reproduce the paper's cost") or inside ("cannot
    tell"); ``sentence`` says it all with the numbers."""
    key: str
    title: str
    measured: Estimate
    paper: float
    verdict: Verdict
    phrase: str
    sentence: str

    @property
    def matches(self) -> bool:
        return self.verdict == "matches"


def _paper_phrase(e: Estimate, claim: Claim) -> tuple[Verdict, str]:
    c, kind = claim.change, _kind(claim.change, claim.better)
    if _nan(e.mean):
        return "not measured", "not measured"
    if not e.known:
        return "cannot tell", _few(e.seeds)
    inside = e.low <= c <= e.high
    if e.sign and inside:
        return "matches", "matches (the paper's value lies inside the interval)"
    w = band(claim)
    if c - w <= e.low and e.high <= c + w:
        return "matches", (f"matches within the closeness band of +-{100 * w:.1f} pp (the "
                           "paper's value lies outside the interval)")
    if e.sign:
        if e.sign != int(np.sign(c)):
            return "differs in sign", "differs in sign"
        size = "larger" if e.low > 0 and e.low > c or e.high < 0 and e.high < c else "smaller"
        return f"same sign, {size}", f"same sign, {size}"  # type: ignore[return-value]
    if inside:
        return "no detectable change", "no detectable change; cannot tell"
    return "no detectable change", (f"no detectable change; does not reproduce the paper's "
                                    f"{kind}")


def against_paper(measured, claim: Claim) -> PaperVerdict:
    """The verdict on ``measured`` (an :class:`Estimate`, per-seed values, or a bare number:
    one run) against ``claim``, by the rules of this module."""
    e = as_estimate(measured)
    verdict, phrase = _paper_phrase(e, claim)
    sentence = (f"{claim.title} {e.text(value_range=CHANGE_RANGE)} against the paper's "
                f"{percent(claim.change)}: {phrase}.")
    return PaperVerdict(claim.key, claim.title, e, claim.change, verdict, phrase, sentence)


def against_paper_all(measured: Mapping, claims: Sequence[Claim] = PAPER_CLAIMS
                      ) -> list[PaperVerdict]:
    """:func:`against_paper` for every claim; ``measured`` maps claim keys to estimates."""
    return [against_paper(measured[c.key], c) for c in claims]


def against_paper_row(row, claims: Sequence[Claim] = PAPER_CLAIMS) -> list[PaperVerdict]:
    """:func:`against_paper_all` of a table row holding ``change_<key>`` with its bounds."""
    return [against_paper(Estimate.from_row(row, f"change_{c.key}"), c) for c in claims]


def holds_together(verdicts: Sequence[PaperVerdict]) -> bool:
    """Whether every number matches the paper's under the rule (the only ground for
    "agrees with the paper")."""
    return bool(verdicts) and all(v.matches for v in verdicts)


def contradicts(verdicts: Sequence[PaperVerdict]) -> bool:
    """Whether some number is detectably off the paper's: a different sign, the same sign but
    larger or smaller by its interval, or no detectable change where the paper's value lies
    outside the interval (the only ground for "does not reproduce")."""
    return any(v.verdict in ("differs in sign", "same sign, larger", "same sign, smaller")
               or "does not reproduce" in v.phrase for v in verdicts)


def paper_summary(verdicts: Sequence[PaperVerdict]) -> str:
    """One sentence over all claims: "Agrees with the paper on all N numbers" only when every
    one matches; "Does not reproduce the paper's headline" when some number is detectably
    off; else "Cannot tell whether ..."; the claims grouped by phrase."""
    if holds_together(verdicts):
        return f"Agrees with the paper on all {len(verdicts)} numbers."
    groups: dict[str, list[str]] = {}
    for v in verdicts:
        groups.setdefault(v.phrase, []).append(v.title)
    parts = "; ".join(f"{phrase}: {', '.join(titles)}" for phrase, titles in groups.items())
    head = ("Does not reproduce the paper's headline" if contradicts(verdicts) else
            "Cannot tell whether this reproduces the paper's headline")
    return f"{head} ({parts})."


# ---------------------------------------------------------------- a change against a baseline
def cost_or_gain(change, better: Better = "lower") -> str:
    """``"gain"`` (the interval lies on the metric's better side of 0), ``"cost"`` (on the
    other), ``"none"`` (the interval includes 0: no detectable change), ``"cannot tell"``
    (fewer than :data:`MIN_SEEDS` seeds; a bare number is one run), ``"n/a"`` (NaN)."""
    e = as_estimate(change)
    if _nan(e.mean):
        return "n/a"
    if not e.known:
        return "cannot tell"
    if e.sign == 0:
        return "none"
    return "gain" if (e.sign < 0) == (better == "lower") else "cost"


def change_text(change, title: str, better: Better = "lower") -> str:
    """``"BE median slowdown improves by 18.8 % [12.0 %, 25.6 %]"``: the change in the words
    its interval earns (:func:`cost_or_gain`); a cost is a positive size, never negative."""
    e = as_estimate(change)
    kind = cost_or_gain(e, better)
    if kind == "n/a":
        return f"{title}: not measured"
    if kind == "cannot tell":
        return f"{title} changes by {e.text()}: {_few(e.seeds)}"
    if kind == "none":
        return f"{title}: no detectable change ({e.text()})"
    cut = cut_interval(e.mean, e.low, e.high, CHANGE_RANGE)
    size = Interval(abs(e.mean), *sorted((abs(cut.low), abs(cut.high))))
    verb = "improves" if kind == "gain" else "worsens"
    marks = "*" if cut.clipped else ""
    return (f"{title} {verb} by {percent(size.mean, sign=False)} "
            f"[{percent(size.low, sign=False)}, {percent(size.high, sign=False)}]{marks}")


#: The old name: a change in words (now always from its interval).
describe_change = change_text


def change_range(changes: Sequence[float], title: str, better: Better = "lower",
                 digits: int = 0) -> str:
    """A range of point changes named by what they are: ``"BE p95 cost 6 % to 10 %"`` when all
    are costs, ``"BE p95 gain 6 % to 10 %"`` when all are gains (a cost is never given as a
    negative number), else ``"BE p95 change -10 % to +6 %"``."""
    x = np.asarray(changes, dtype=float) + 0.0     # no "-0 %"
    x = x[~np.isnan(x)]
    if not len(x):
        return f"{title}: not measured"
    kinds = {_kind(v, better) for v in x}
    if kinds <= {"cost"} or kinds <= {"gain"}:
        word = "cost" if kinds == {"cost"} else "gain"
        lo, hi = sorted((float(np.min(np.abs(x))), float(np.max(np.abs(x)))))
        return f"{title} {word} {percent(lo, digits, sign=False)} to {percent(hi, digits, sign=False)}"
    return f"{title} change {percent(float(x.min()), digits)} to {percent(float(x.max()), digits)}"


@dataclass(frozen=True)
class Extremes:
    """The setting with the largest cost and the one with the largest gain (None: no
    detectable one of that kind), and a sentence that says both."""
    largest_cost: str | None
    largest_gain: str | None
    sentence: str


def extremes(changes: Mapping, *, title: str, better: Better = "lower") -> Extremes:
    """Largest cost and largest gain among ``changes`` (label -> estimate), each only among
    the changes whose interval makes them that kind (:func:`cost_or_gain`)."""
    est = {k: as_estimate(v) for k, v in changes.items()}
    kinds = {k: cost_or_gain(e, better) for k, e in est.items()}
    cost = [k for k, kind in kinds.items() if kind == "cost"]
    gain = [k for k, kind in kinds.items() if kind == "gain"]
    worst = max(cost, key=lambda k: abs(est[k].mean)) if cost else None
    best = max(gain, key=lambda k: abs(est[k].mean)) if gain else None
    undecided = sum(kind in ("none", "cannot tell") for kind in kinds.values())
    parts = [f"largest {title} cost: {worst} ({est[worst].text()})" if worst else
             f"no setting has a detectable {title} cost",
             f"largest {title} gain: {best} ({est[best].text()})" if best else
             f"no setting has a detectable {title} gain"]
    if undecided:
        parts.append(f"{undecided} of {len(est)} show no detectable change or too few seeds")
    sentence = "; ".join(parts) + "."
    return Extremes(worst, best, sentence[0].upper() + sentence[1:])


def size_phrase(jobs: int, seeds: int) -> str:
    """``"(6,957 jobs, 1 seed)"``: the size of what was run, from the run itself."""
    return f"({int(jobs):,} job{'s' * (jobs != 1)}, {int(seeds)} seed{'s' * (seeds != 1)})"



# ---------------------------------------------------------------- between settings over seeds
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
    seed i; pairs with a NaN are dropped). ``as_percent``: the values are fractions (changes),
    shown in percent and their differences in percentage points. Below ``min_seeds`` pairs
    the sentence gives both means and "cannot tell", and no order ("equal", "lower")."""
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
                          math.nan, math.nan, math.nan, sentence)
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
    return Comparison(a, b, title, verdict, n, mean, lo, hi, p, sentence)


@dataclass(frozen=True)
class Best:
    """Which of several settings is best on one metric: ``best`` (None: none is detectably
    better than every other), ``ties`` (the settings not detectably different from the
    leader, the leader first) and the sentence."""
    best: str | None
    ties: tuple
    sentence: str


def holm(pvalues: Sequence[float], alpha: float = ALPHA) -> list[bool]:
    """Which of ``pvalues`` the Holm step-down correction rejects at family level ``alpha``:
    the j-th smallest (from 0) is compared with ``alpha / (m - j)``, stopping at the first
    that is not below it (so the chance of any false "better" over the m tests stays at most
    ``alpha``)."""
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
           f"{'s' * (m != 1)} with {lead}, family level {ALPHA:g}")
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
