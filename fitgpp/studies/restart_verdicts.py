"""RQ6's verdicts in words (:mod:`fitgpp.studies.restart_cost` holds the numbers they are
computed from): whether preempting pays off against PRIO and whether it helps TE as restarts
cost more, each from an interval over seeds at each overhead, and a range of changes named by
what each change is by its own interval. The rules are stated once, in :data:`RULES`, and
quoted by notebook 07, ``docs/restart-cost.md`` and ``results.md``.

The grammar is :mod:`fitgpp.analysis.verdicts`'s: a sign only where the interval excludes 0,
"cannot tell" where it does not decide or below 3 seeds. So "does not stop paying off" is said
only where the net's interval lies above 0 at every overhead, never because none lies below.
"""

from __future__ import annotations

import math

import pandas as pd

from fitgpp.analysis.metrics import percent
from fitgpp.analysis.verdicts import MIN_SEEDS, Estimate, cost_or_gain

#: The findings table's verdict columns, each by the rule that computes it: the one statement
#: of these rules, quoted by notebook 07, docs/restart-cost.md and ``results.md`` (a test
#: checks they quote it word for word).
RULES = {
    "stops_paying_min": "the first overhead where the net's 95 % interval over seeds lies "
                        "below 0 (a detectable net loss against PRIO)",
    "not_paying_min": "the first overhead where the net's interval does not lie above 0 (no "
                      "detectable net gain)",
    "stops_helping_te_min": "the first overhead where the TE gain's interval does not lie "
                            "above 0 (no detectable TE gain)",
    "te_gain_none": "whether the TE gain is exactly 0 in every seed at every overhead (TE p95 "
                    "as PRIO's: preempting never helped TE)",
}
#: What the rules say where they find nothing, and below 3 seeds.
RULES_NOTE = ("NaN where no overhead of the sweep meets the rule; with fewer than 3 seeds "
              "there is no interval, every one of them is NaN and the words say \"cannot tell\"")


def _states(lo, hi) -> list[str]:
    """Per overhead: whether an interval lies ``"above"`` 0, ``"below"`` or ``"includes"`` it."""
    return ["above" if a > 0 else "below" if b < 0 else "includes" for a, b in zip(lo, hi)]


def _where(ovh, states, what: str) -> str:
    """``"(the net's interval lies above 0 at 0, 10 min; includes 0 at 30 min)"``."""
    if len(set(states)) == 1:
        verb = {"above": "lies above 0", "below": "lies below 0", "includes": "includes 0"}
        return f"({what} {verb[states[0]]} at every overhead)"
    said = {"above": "above 0", "below": "below 0", "includes": "includes 0"}
    runs = [f"{said[k]} at {', '.join(f'{o:g}' for o, x in zip(ovh, states) if x == k)} min"
            for k in ("above", "includes", "below") if k in states]
    return f"({what}: {'; '.join(runs)})"


def paying_phrase(ovh, lo, hi, seeds: int, te_none: bool = False) -> str:
    """Whether preempting pays off against PRIO over the overheads ``ovh`` [min], from the
    net's interval at each (``lo``, ``hi``): "does not stop paying off" only where every
    interval lies above 0, "stops paying off at" the first that lies below 0 after intervals
    above 0, "cannot tell" where an interval includes 0 first. ``te_none``: the TE gain is 0
    everywhere, which is said first (the net is then the BE side alone)."""
    if seeds < MIN_SEEDS:
        return f"cannot tell whether it stops paying off ({_few(seeds)})"
    st = _states(lo, hi)
    where = _where(ovh, st, "the net's interval")
    if te_none:
        return (f"never pays off for TE (TE p95 as PRIO's in every seed at every overhead), "
                f"and the net is the BE p95 change alone {where}")
    k = next((n for n, x in enumerate(st) if x != "above"), None)
    if k is None:
        return f"does not stop paying off up to {ovh[-1]:g} min {where}"
    if st[k] == "below":
        return (f"never pays off: a net loss already at {ovh[0]:g} min " if k == 0 else
                f"stops paying off at {ovh[k]:g} min ") + where
    j = next((n for n in range(k, len(st)) if st[n] == "below"), None)
    if k > 0:
        return (f"pays off {'at' if k == 1 else 'up to'} {ovh[k - 1]:g} min, then cannot tell "
                "whether it stops paying off " if j is None else
                f"stops paying off between {ovh[k - 1]:g} and {ovh[j]:g} min ") + where
    if j is None and "above" not in st:
        return f"cannot tell whether it pays off at any overhead {where}"
    return (f"cannot tell whether it pays off at {ovh[0]:g} min, and " + (
        f"no detectable net loss up to {ovh[-1]:g} min " if j is None else
        f"a net loss at {ovh[j]:g} min ") + where)


def helping_phrase(ovh, lo, hi, seeds: int, te_none: bool = False) -> str:
    """Whether preempting helps TE against PRIO over the overheads ``ovh`` [min], from the TE
    gain's interval at each: helps where it lies above 0; "stops helping TE at" the first
    overhead where it does not."""
    if seeds < MIN_SEEDS:
        return f"cannot tell whether it stops helping TE ({_few(seeds)})"
    if te_none:
        return "never helps TE (TE p95 as PRIO's in every seed at every overhead)"
    st = _states(lo, hi)
    where = _where(ovh, st, "the TE gain's interval")
    if "includes" not in st and "below" not in st:
        return f"does not stop helping TE up to {ovh[-1]:g} min {where}"
    k = next(n for n, x in enumerate(st) if x != "above")
    return (f"no detectable TE gain even at {ovh[0]:g} min " if k == 0 else
            f"stops helping TE at {ovh[k]:g} min ") + where


def _few(seeds: int) -> str:
    return f"{seeds} seed{'s' * (seeds != 1)}: fewer than {MIN_SEEDS}"


#: Words for a change named by its interval (:func:`range_by_interval`), by its kind
#: (:func:`fitgpp.analysis.verdicts.cost_or_gain`).
CHANGE_WORDS = {"gain": "gain", "cost": "cost", "none": "no detectable change"}
NET_WORDS = {"gain": "gain", "cost": "loss", "none": "no detectable change"}


def range_by_interval(g: pd.DataFrame, col: str, title: str, *, flip: bool = False,
                      better: str = "lower", words: dict = CHANGE_WORDS) -> str:
    """The changes in column ``col`` of the findings rows ``g`` (one per policy, with
    ``col_lo``, ``col_hi`` and ``seeds``), grouped by what each is by its own interval
    (:func:`fitgpp.analysis.verdicts.cost_or_gain`): ``"BE p95 cost 60 % to 110 % for LRTP,
    RAND; no detectable change -3 % to +9 % for FitGpp s=1, FitGpp s=4"``. A gain or a cost
    is a size (never negative), the others signed; below 3 seeds "cannot tell". ``flip``:
    the column holds the change's negative (RQ6's TE gain is -change(TE p95))."""
    k = -1.0 if flip else 1.0
    groups: dict[str, list] = {}
    for _, r in g.iterrows():
        lo, hi = sorted((k * r.get(f"{col}_lo", math.nan), k * r.get(f"{col}_hi", math.nan)))
        e = Estimate(k * r[col] + 0.0, lo, hi, int(r["seeds"]))
        groups.setdefault(cost_or_gain(e, better), []).append((r["policy"], e.mean))
    parts = []
    for kind in ("cost", "gain", "none", "cannot tell", "n/a"):
        if kind not in groups:
            continue
        names_, x = zip(*groups[kind])
        if kind == "n/a":
            text = f"{title}: not measured"
        elif kind in ("cost", "gain"):      # a size: never negative
            ends = sorted({abs(min(x, key=abs)), abs(max(x, key=abs))})
            text = f"{title} {words[kind]} " + " to ".join(percent(v, 0, sign=False) for v in ends)
        else:
            ends = sorted({percent(v, 0) for v in (min(x), max(x))}, key=lambda t: float(t[:-2]))
            n = int(g["seeds"].min())
            text = (f"{title}: {words[kind]} ({' to '.join(ends)})" if kind == "none" else
                    f"{title} change {' to '.join(ends)} (cannot tell: "
                    f"{_few(n) if n < MIN_SEEDS else 'no interval'})")
        parts.append(text + (f" for {', '.join(names_)}" if len(groups) > 1 else ""))
    return "; ".join(parts)


def rules_text() -> str:
    """The rules of the findings table's verdict columns (:data:`RULES`), as Markdown."""
    return "\n".join(["Where preempting stops paying off and stops helping TE, by rule "
                      f"({RULES_NOTE}):", ""] + [f"- `{k}`: {v}" for k, v in RULES.items()])
