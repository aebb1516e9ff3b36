"""Adaptive replication: seeds added in rounds to the configurations whose verdict is still
undecided, until it is decided or the seed budget (:attr:`fitgpp.studies.Size.max_seeds`) is
spent. The rule is stated for people in ``docs/verdicts.md`` ("Seeds added until a verdict is
reached") and its statistics are :mod:`fitgpp.analysis.looks`'.

- **Looks fixed in advance**: the seeds asked, then twice as many each round, up to the budget
  (5, 10, 20, 30 at the full size); every interval and test of the run is at the level the
  rule spends per look (Bonferroni over the looks: 98.75 % for 4).
- **What decides** a configuration is its study's :attr:`~fitgpp.studies.Study.undecided`:
  by default each headline change against the baseline (:func:`undecided_changes`: decided
  when its interval shows its sign, or lies within +-5 pp of 0); RQ1 and RQ2 judge against
  the paper (:func:`against_paper_undecided`).
- **Common random numbers**: a configuration's seeds are always the first n of one sequence
  (the seeds asked, then the next integers), and an undecided configuration's baseline (and
  the partners its study names) get the same new seeds, so every change and comparison stays
  paired seed by seed.
- **Only the missing cells** run, through the same sweep (its cache, Dask as the size says,
  its progress bar); a seed a configuration did not run is NaN in the Outcome's arrays.
- **Recorded** (:class:`Rounds`, in :attr:`fitgpp.studies.Outcome.rounds`, the result's
  ``rounds`` and its configuration's ``"adaptive"``): which configurations got how many seeds
  in which round. The simulator is deterministic, so a rerun makes the same rounds.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from fitgpp.analysis.looks import look_level, looks
from fitgpp.analysis.metrics import METRICS, at_level, brief
from fitgpp.analysis.verdicts import (PAPER_CLAIMS, UNDECIDED, Estimate, against_paper, category,
                                      decided_change)


def conf_key(conf: dict) -> str:
    """The identity of a configuration (policy, its fields, knobs, variant) as text."""
    return json.dumps([conf["name"], conf["params"], conf["knobs"], conf["variant"]],
                      sort_keys=True, default=str)


def seed_sequence(seeds, budget: int) -> tuple[int, ...]:
    """The seeds asked, then the next integers after the largest, ``budget`` in all."""
    seeds = tuple(int(s) for s in seeds)
    return seeds + tuple(range(max(seeds) + 1, max(seeds) + 1 + budget - len(seeds)))


def where(conf: dict) -> str:
    """A configuration as people read it: ``FitGpp s=4 (load 0.85, te_fraction 0.7)``."""
    extra = [f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in conf["knobs"].items()]
    if conf["variant"] is not None:
        extra.insert(0, str(conf["variant"]))
    return conf["label"] + (f" ({', '.join(extra)})" if extra else "")


@dataclass
class Rounds:
    """What adaptive replication did: the ``schedule`` of looks (seed counts), the interval
    ``level`` of every look, the seed ``sequence`` (a configuration with n seeds ran its first
    n), each round (``{"round", "seeds", "undecided", "extended"}``: the configurations found
    undecided, and those given the round's seeds with their baselines and partners), the
    seeds each configuration ended with (``final``, by :func:`where`) and the configurations
    still undecided at the end (``remaining``)."""
    schedule: tuple[int, ...]
    level: float
    sequence: tuple[int, ...]
    rounds: list[dict] = field(default_factory=list)
    final: dict[str, int] = field(default_factory=dict)
    remaining: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def table(self) -> pd.DataFrame:
        """One row per configuration: its seeds and the round that gave it the last ones."""
        last = {c: r["round"] for r in self.rounds for c in r["extended"]}
        return pd.DataFrame([{"configuration": c, "seeds": n, "last round": last.get(c, 0),
                              "undecided": c in self.remaining} for c, n in self.final.items()])

    def text(self) -> str:
        """One sentence: the rule, each round, and what is left undecided."""
        k = sum(n >= 3 for n in self.schedule)
        head = (f"Seeds added in rounds to the undecided configurations (looks at "
                f"{', '.join(map(str, self.schedule))} seeds, every interval and test at "
                f"{100 * self.level:.4g} %: 95 % spread over {k} look{'s' * (k != 1)}, "
                "Bonferroni)")
        said = [f"round {r['round']}: {len(r['undecided'])} undecided, {len(r['extended'])} "
                f"configurations (with their baselines) to {r['seeds']} seeds"
                for r in self.rounds]
        n = len(self.final)
        tail = (f"{len(self.remaining)} of {n} configurations still undecided at the budget "
                f"of {self.schedule[-1]} seeds" if self.remaining and self.rounds and
                self.rounds[-1]["seeds"] == self.schedule[-1] else
                f"{len(self.remaining)} of {n} configurations undecided")
        return head + ": " + "; ".join(said or ["no round was needed"]) + f"; {tail}."


def run(study, size, sweep: Callable, cache=None):
    """Run ``study`` at ``size`` through ``sweep(size, plan, cache) -> Outcome``, adding seeds
    in rounds when ``size.max_seeds`` is above its seeds (not for a study of one seed)."""
    first = len(study.seeds(size))
    if study.one_seed or size.budget <= first:
        return sweep(size, None, cache)
    keep = None
    if cache is False:   # no cache asked: a temporary one, so each round reuses the last's cells
        keep = tempfile.TemporaryDirectory(prefix="fitgpp-rounds-")
        cache = keep.name
    schedule = looks(first, size.budget)
    sequence = seed_sequence(size.seeds, size.budget)
    rec = Rounds(schedule, look_level(schedule), sequence)
    decide = study.undecided or undecided_changes
    o = _judged(sweep(size, None, cache), None, rec.level)
    plan = {conf_key(c): first for c in o.configurations()}
    o.plan, computed = dict(plan), o.stats["computed"]
    for look, n in enumerate(schedule[1:], 1):
        with at_level(rec.level):
            found = _unique(decide(o))
        if not found:
            break
        extended = _unique([*found, *(b for c in found if (b := o.baseline(c)) is not None)])
        for c in extended:
            plan[conf_key(c)] = max(plan[conf_key(c)], n)
        rec.rounds.append({"round": look, "seeds": n, "undecided": [where(c) for c in found],
                           "extended": [where(c) for c in extended]})
        at = dataclasses.replace(size, seeds=sequence[:max(plan.values())])
        o = _judged(sweep(at, dict(plan), cache), dict(plan), rec.level)
        computed += o.stats["computed"]
    with at_level(rec.level):
        rec.remaining = [where(c) for c in _unique(decide(o))]
    rec.final = {where(c): plan[conf_key(c)] for c in o.configurations()}
    o.rounds = rec
    # the stats of the whole run: every round's simulated cells, the rest from the cache
    o.stats.update(computed=computed, cached=o.stats["unique"] - computed)
    if keep is not None:
        o.memo["temporary cache"] = keep   # removed with the Outcome
    return o


def _judged(o, plan, level):
    o.plan, o.level = plan, level
    return o


def _unique(confs) -> list[dict]:
    out = {}
    for c in confs:
        out.setdefault(conf_key(c), c)
    return list(out.values())


def cell_filter(study, size, plan: dict, variant) -> Callable:
    """``Cell -> bool`` for :func:`fitgpp.sweep.run_sweep`'s ``only``: the cells of variant
    ``variant`` whose configuration's first ``plan[key]`` seeds include the cell's seed."""
    seeds = study.seeds(size)
    by = {}
    for key, n in plan.items():
        name, params, knobs, var = json.loads(key)
        if _same(variant, var):
            by.setdefault(name, []).append((params, knobs, set(seeds[:n])))

    def only(cell) -> bool:
        p, k = dict(cell.params), dict(cell.knobs)
        for params, knobs, ran in by.get(cell.policy, ()):
            if all(_same(p.get(f), v) for f, v in params.items()) and \
                    all(_same(k.get(f), v) for f, v in knobs.items()):
                return cell.seed in ran
        return False
    return only


def _same(a, b) -> bool:
    """A cell's value against one read back from a configuration's key (JSON: a tuple is a
    list, any other object its text)."""
    return a == b or json.loads(json.dumps(a, default=str)) == b


# ---------------------------------------------------------------- what decides a configuration
def undecided_changes(o) -> list[dict]:
    """The default: each configuration with a baseline is undecided while some headline change
    against it (the brief metrics', :func:`fitgpp.analysis.metrics.brief`) is undecided by
    :func:`fitgpp.analysis.verdicts.decided_change` (no sign shown, and not within +-5 pp of
    0: a change whose true value is 0 is decided by the second, so it stops)."""
    out = []
    for conf in o.configurations():
        base = o.baseline(conf)
        if base is None or conf_key(base) == conf_key(conf):
            continue
        for m in brief(o.study.columns):
            x = o.change(conf, m)
            if m.vs_baseline and not all(v != v for v in x) and \
                    not decided_change(Estimate.of(x)):
                out.append(conf)
                break
    return out


def against_paper_undecided(select: Callable[[dict], bool], each: bool = False,
                            claims=PAPER_CLAIMS) -> Callable:
    """A study's ``undecided`` judged against the paper's numbers (``claims``): of the
    configurations ``select`` picks, those whose verdict is undecided, by the three numbers
    held together (:func:`fitgpp.analysis.verdicts.category`: confirmed only when all are,
    contradicted when one is), or with ``each`` by every number on its own."""
    def undecided(o) -> list[dict]:
        out = []
        for conf in o.configurations():
            if not select(conf) or o.baseline(conf) is None:
                continue
            said = [against_paper(Estimate.of(o.change(conf, METRICS[c.key])), c)
                    for c in claims]
            if (any(v.category == UNDECIDED for v in said) if each
                    else category(said) == UNDECIDED):
                out.append(conf)
        return out
    return undecided
