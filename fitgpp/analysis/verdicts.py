"""The verdict grammar: every sentence that judges a result is written here, from its interval.

One set of rules (stated for people in ``docs/verdicts.md``, "How findings are worded"):

- **A measured number** is an :class:`Estimate` (:mod:`fitgpp.analysis.estimate`): a mean over
  seeds with its Student-t interval (:func:`fitgpp.analysis.metrics.t_interval`) and the number
  of seeds behind it, which its text states (``n = 5``). With fewer than :data:`MIN_SEEDS`
  seeds (one run included) there is no interval, and every verdict on it is "cannot tell": no
  sign, no "improves", no "matches". A bare float is one run.
- **Three categories**: every verdict object has a ``category``, ``confirmed``,
  ``contradicted`` or ``undecided`` (:data:`CATEGORIES`), and every count of cells or settings
  states all three (:func:`count_sentence`). Undecided is not "no".
- **Against the paper** (:func:`against_paper`): the closeness band is the paper's value +-
  the narrower of :data:`CLOSE_PP` and :data:`CLOSE_REL` of its size. *Confirmed* ("matches")
  only by the equivalence test: the whole interval lies within the band. *Contradicted* when
  the interval lies wholly outside the band (no overlap): "differs in sign", "same sign,
  larger/smaller", or "no detectable change; does not reproduce the paper's cost/gain".
  Otherwise *undecided*: "consistent, interval too wide to confirm" when the interval contains
  the paper's value but reaches beyond the band, "inconclusive" when it excludes the paper's
  value but still overlaps the band, "cannot tell" below 3 seeds. "Agrees with the paper"
  (:func:`paper_summary`) only when every number it rests on is confirmed.
- **A change against a baseline** (:func:`change_text`, :func:`cost_or_gain`): a gain or a
  cost only when its interval excludes 0 (a gain in the metric's better direction, a cost
  against it: a cost is never negative); else "no detectable change". A range of changes
  (:func:`change_range`) is named by each change's interval, never by the point's sign. A
  direction expected of a change (:func:`direction`) is confirmed by its sign, contradicted by
  the other sign or by an interval within +-:data:`NEGLIGIBLE` of 0 (no change that large).
- **Between settings over seeds** (:func:`compare`, :func:`best_of`, :func:`order_against`,
  :mod:`fitgpp.analysis.comparisons`): "better"/"worse", "best", "lower"/"higher" only when a
  two-sided paired t-test over seeds rejects equal means; else "no detectable difference";
  fewer than :data:`MIN_SEEDS` paired seeds: "cannot tell".
- **Levels**: intervals are 95 % and tests at :data:`ALPHA`, unless a study added seeds in
  rounds: then every interval and test of its analysis is at the level its stopping rule
  spends per look (:mod:`fitgpp.analysis.looks`).
- **Intervals** (:func:`cut_interval`, the one function that does it): every interval shown is
  cut at its quantity's range (:func:`value_range`: a slowdown is at least 1, a change at least
  -100 %, a count or share at least 0) and every cut bound is marked ``*`` (:data:`CLIP_NOTE`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from fitgpp.analysis.comparisons import (ALPHA, Best, Better, Comparison, best_of,  # noqa: F401
                                         compare, current_alpha, holm, order_against)
from fitgpp.analysis.estimate import MIN_SEEDS, Estimate, _few, _seeds, as_estimate  # noqa: F401
from fitgpp.analysis.metrics import (CHANGE_RANGE, CLIP_NOTE, COUNT_RANGE, METRICS,  # noqa: F401
                                     MIN_CI_VALUES, SLOWDOWN_RANGE, UNBOUNDED, Interval, _g, _nan,
                                     at_level, bounded_interval, cut_interval, interval_cell,
                                     interval_level, paired_p, percent, percent_values, t_interval,
                                     value_range)
from fitgpp.errors import FitgppError

#: The closeness band around a paper's value: this many percentage points (as a fraction) ...
CLOSE_PP = 0.05
#: ... or this share of the paper's size, whichever is narrower.
CLOSE_REL = 0.25
#: A change whose whole interval lies within +- this (a fraction: 5 percentage points) is
#: negligible: no change that large, a decided answer (:func:`decided_change`).
NEGLIGIBLE = 0.05
#: Kept for older callers: a change smaller than this is shown as no change in point words.
NO_CHANGE = 0.005
CONFIRMED, CONTRADICTED, UNDECIDED = "confirmed", "contradicted", "undecided"
#: The category of every verdict, in the order counts state them.
CATEGORIES = (CONFIRMED, CONTRADICTED, UNDECIDED)
Category = Literal["confirmed", "contradicted", "undecided"]


class VerdictError(FitgppError):
    """Something that is not a verdict was given where verdicts are counted."""


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


Verdict = Literal["matches", "consistent", "inconclusive", "same sign, larger",
                  "same sign, smaller", "differs in sign", "no detectable change", "cannot tell",
                  "not measured"]


@dataclass(frozen=True)
class PaperVerdict:
    """A measured change against one of the paper's numbers. ``verdict`` is one of
    :data:`Verdict`, ``category`` one of :data:`CATEGORIES`; ``phrase`` says why (where the
    interval lies against the closeness band, and whether it holds the paper's value);
    ``sentence`` says it all with the numbers."""
    key: str
    title: str
    measured: Estimate
    paper: float
    verdict: Verdict
    phrase: str
    sentence: str
    category: Category = UNDECIDED

    @property
    def matches(self) -> bool:
        """Confirmed: the whole interval lies within the closeness band."""
        return self.verdict == "matches"


def _paper_phrase(e: Estimate, claim: Claim) -> tuple[Verdict, str, Category]:
    c, kind = claim.change, _kind(claim.change, claim.better)
    if _nan(e.mean):
        return "not measured", "not measured", UNDECIDED
    if not e.known:
        return "cannot tell", _few(e.seeds), UNDECIDED
    w = band(claim)
    lo, hi = c - w, c + w
    pp = f"the closeness band of +-{100 * w:.1f} pp"
    where = "inside" if e.low <= c <= e.high else "outside"
    if lo <= e.low and e.high <= hi:
        return "matches", (f"matches: the interval lies within {pp} (the paper's value lies "
                           f"{where} the interval)"), CONFIRMED
    if e.high < lo or e.low > hi:     # no overlap with the band
        if e.sign and e.sign != int(np.sign(c)):
            return "differs in sign", "differs in sign", CONTRADICTED
        if e.sign:
            size = "larger" if (e.low > hi) == (c > 0) else "smaller"
            return (f"same sign, {size}",  # type: ignore[return-value]
                    f"same sign, {size} (the interval lies wholly outside {pp})", CONTRADICTED)
        return "no detectable change", (f"no detectable change; does not reproduce the "
                                        f"paper's {kind}"), CONTRADICTED
    none = "" if e.sign else "no detectable change; "
    if where == "inside":
        return "consistent", (f"{none}consistent, interval too wide to confirm (it holds the "
                              f"paper's value but reaches beyond {pp})"), UNDECIDED
    return "inconclusive", (f"{none}inconclusive (the paper's value lies outside the interval, "
                            f"which still overlaps {pp})"), UNDECIDED


def against_paper(measured, claim: Claim) -> PaperVerdict:
    """The verdict on ``measured`` (an :class:`Estimate`, per-seed values, or a bare number:
    one run) against ``claim``, by the rules of this module."""
    e = as_estimate(measured)
    verdict, phrase, cat = _paper_phrase(e, claim)
    sentence = (f"{claim.title} {e.text(value_range=CHANGE_RANGE)} against the paper's "
                f"{percent(claim.change)}: {phrase}.")
    return PaperVerdict(claim.key, claim.title, e, claim.change, verdict, phrase, sentence, cat)


def against_paper_all(measured: Mapping, claims: Sequence[Claim] = PAPER_CLAIMS
                      ) -> list[PaperVerdict]:
    """:func:`against_paper` for every claim; ``measured`` maps claim keys to estimates."""
    return [against_paper(measured[c.key], c) for c in claims]


def against_paper_row(row, claims: Sequence[Claim] = PAPER_CLAIMS) -> list[PaperVerdict]:
    """:func:`against_paper_all` of a table row holding ``change_<key>`` with its bounds."""
    return [against_paper(Estimate.from_row(row, f"change_{c.key}"), c) for c in claims]


def holds_together(verdicts: Sequence[PaperVerdict]) -> bool:
    """Whether every number is confirmed (the only ground for "agrees with the paper")."""
    return category(verdicts) == CONFIRMED


def contradicts(verdicts: Sequence[PaperVerdict]) -> bool:
    """Whether some number is contradicted: its interval lies wholly outside the closeness
    band (the only ground for "does not reproduce")."""
    return category(verdicts) == CONTRADICTED


def paper_summary(verdicts: Sequence[PaperVerdict]) -> str:
    """One sentence over all claims: "Agrees with the paper on all N numbers" only when every
    one is confirmed; "Does not reproduce the paper's headline" when some number is
    contradicted; else "Cannot tell whether ..."; the claims grouped by phrase."""
    if holds_together(verdicts):
        return f"Agrees with the paper on all {len(verdicts)} numbers."
    groups: dict[str, list[str]] = {}
    for v in verdicts:
        groups.setdefault(v.phrase, []).append(v.title)
    parts = "; ".join(f"{phrase}: {', '.join(titles)}" for phrase, titles in groups.items())
    head = ("Does not reproduce the paper's headline" if contradicts(verdicts) else
            "Cannot tell whether this reproduces the paper's headline")
    return f"{head} ({parts})."


# ---------------------------------------------------------------- counting verdicts
def category(item) -> Category:
    """The category of ``item``: a verdict object (its ``category``), a category itself, or
    several verdicts held together (a cell's three numbers): confirmed only when each is,
    contradicted when one is, else undecided (an empty set is undecided)."""
    if isinstance(item, str):
        if item not in CATEGORIES:
            raise VerdictError(f"{item!r} is not a verdict category (one of "
                               f"{', '.join(CATEGORIES)})")
        return item  # type: ignore[return-value]
    if hasattr(item, "category"):
        return category(item.category)
    if not isinstance(item, Iterable):
        raise VerdictError(f"cannot count {type(item).__name__} {item!r}: give verdicts, "
                           "categories, or sequences of verdicts")
    cats = [category(i) for i in item]
    if cats and all(c == CONFIRMED for c in cats):
        return CONFIRMED
    return CONTRADICTED if CONTRADICTED in cats else UNDECIDED


def tally(items) -> dict[str, int]:
    """``{category: how many}`` of ``items`` (see :func:`category`), every category present."""
    out = dict.fromkeys(CATEGORIES, 0)
    for i in items:
        out[category(i)] += 1
    return out


def count_sentence(items, noun: str, claim: str = "the paper's numbers") -> str:
    """The one way a count of verdicts is said, all three numbers: ``"of 18 settings judged
    against the paper's numbers: 0 confirmed, 14 contradicted, 4 undecided"``. ``items``: one
    per cell or setting, each a verdict, a category or a cell's verdicts held together."""
    t = tally(items)
    return (f"of {sum(t.values())} {noun} judged against {claim}: {t[CONFIRMED]} confirmed, "
            f"{t[CONTRADICTED]} contradicted, {t[UNDECIDED]} undecided")


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
        return f"{title}: no detectable change ({e.text(seeds=False)}, n = {e.seeds})"
    cut = cut_interval(e.mean, e.low, e.high, CHANGE_RANGE)
    size = Interval(abs(e.mean), *sorted((abs(cut.low), abs(cut.high))))
    verb = "improves" if kind == "gain" else "worsens"
    marks = "*" if cut.clipped else ""
    return (f"{title} {verb} by {percent(size.mean, sign=False)} "
            f"[{percent(size.low, sign=False)}, {percent(size.high, sign=False)}]{marks} "
            f"(n = {e.seeds})")


#: The old name: a change in words (now always from its interval).
describe_change = change_text


def change_range(changes: Sequence, title: str, better: Better = "lower",
                 digits: int = 0) -> str:
    """A range of changes, each named by its interval (:func:`cost_or_gain`), never by its
    point's sign: ``"BE p95 cost 6 % to 10 %"`` when every interval makes its change a cost
    (a cost is never given as a negative number), ``"... gain ..."`` likewise, else each kind
    with its count: ``"BE p95: cost 40 % to 110 % in 3, no detectable change in 3 (-37 % to
    +8 %)"``. ``changes``: estimates (or per-seed values); a bare number is one run, which has
    no interval, so bare numbers are named only "change", with their signs."""
    est = [e for e in map(as_estimate, changes) if not _nan(e.mean)]
    if not est:
        return f"{title}: not measured"
    kinds = [cost_or_gain(e, better) for e in est]

    def span(group, signed):
        x = np.array([e.mean for e in group]) + 0.0     # no "-0 %"
        x = np.sort(x if signed else np.abs(x))
        a, b = (percent(float(v), digits, sign=signed) for v in (x[0], x[-1]))
        return a if a == b else f"{a} to {b}"

    if set(kinds) in ({"cost"}, {"gain"}):
        return f"{title} {kinds[0]} {span(est, False)}"
    if set(kinds) == {"cannot tell"}:
        return f"{title} change {span(est, True)}"
    words = {"cost": "cost", "gain": "gain", "none": "no detectable change",
             "cannot tell": "cannot tell"}
    parts = []
    for kind, word in words.items():
        group = [e for e, k in zip(est, kinds) if k == kind]
        if group:
            signed = kind in ("none", "cannot tell")
            parts.append(f"{word} {span(group, False)} in {len(group)}" if not signed else
                         f"{word} in {len(group)} ({span(group, True)})")
    return f"{title}: " + ", ".join(parts)


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


def size_phrase(jobs: int, seeds) -> str:
    """``"(6,957 jobs, 1 seed)"``: the size of what was run, from the run itself; ``seeds``: a
    count, or the counts of the configurations (``"(10,000 jobs, 5 to 20 seeds per
    configuration)"`` when they differ: seeds added in rounds)."""
    counts = sorted({int(n) for n in np.atleast_1d(seeds)})
    jobs_text = f"{int(jobs):,} job{'s' * (jobs != 1)}"
    if len(counts) > 1:
        return f"({jobs_text}, {counts[0]} to {counts[-1]} seeds per configuration)"
    n = counts[0]
    return f"({jobs_text}, {n} seed{'s' * (n != 1)})"


# ---------------------------------------------------------------- a direction, and when it is decided
def negligible(change, margin: float = NEGLIGIBLE) -> bool:
    """Whether the whole interval of ``change`` lies within +-``margin`` of 0 (an equivalence
    test: no change as large as ``margin``); False without an interval."""
    e = as_estimate(change)
    return e.known and -margin <= e.low and e.high <= margin


def decided_change(change, margin: float = NEGLIGIBLE) -> bool:
    """Whether more seeds could still change what is said of ``change``: decided when its
    sign is shown (the interval excludes 0) or it is :func:`negligible`; a change whose true
    value is 0 is decided by the second, so a null effect stops instead of taking every seed."""
    e = as_estimate(change)
    return e.known and (e.sign != 0 or negligible(e, margin))


@dataclass(frozen=True)
class DirectionVerdict:
    """A change against a direction expected of it (``expect``: "gain" or "cost"): ``kind``
    is :func:`cost_or_gain`'s answer, or "negligible"; ``category`` as the rules say."""
    title: str
    measured: Estimate
    expect: str
    kind: str
    category: Category
    sentence: str


def direction(change, title: str, expect: str = "gain", better: Better = "lower",
              margin: float = NEGLIGIBLE) -> DirectionVerdict:
    """``change`` against the direction ``expect``: confirmed when its interval makes it that
    kind, contradicted when it makes it the other kind or lies within +-``margin`` of 0 (no
    change that large), else undecided (no detectable change beyond the margin, or fewer
    than :data:`MIN_SEEDS` seeds)."""
    if expect not in ("gain", "cost"):
        raise VerdictError(f"an expected direction is 'gain' or 'cost', got {expect!r}")
    e = as_estimate(change)
    kind = cost_or_gain(e, better)
    if kind == "none" and negligible(e, margin):
        kind = "negligible"
    cat = (CONFIRMED if kind == expect else
           CONTRADICTED if kind in ("gain", "cost", "negligible") else UNDECIDED)
    why = (f"no change beyond +-{100 * margin:.1f} pp" if kind == "negligible" else
           f"a {kind}" if kind in ("gain", "cost") else "no sign")
    sentence = f"{change_text(e, title, better)}; expected a {expect}: {why}, {cat}"
    return DirectionVerdict(title, e, expect, kind, cat, sentence)
