"""RQ8's ridge search: bisection on whole minutes finds where a rising change crosses each
target, the interval of that crossing from the per-point intervals, what lies past the probes,
and the band around the ridge point; on the real model at a tiny size, every probe is paired
against one baseline run per pair and what it found is what its probes say."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from fitgpp.analysis.verdicts import Estimate
from fitgpp.studies import QUICK
from fitgpp.studies import rq8_ridge as ridge

PAIR = ridge.Pair(0.85, 0.7)
COARSE = (0, 10, 20, 30, 45, 60)


class FakeProber:
    """A change that rises linearly with the restart cost, with an interval half-width
    ``half`` at 5 seeds that shrinks as 1/sqrt(seeds) (NaN: no interval), counting what is
    asked for and on how many seeds."""

    def __init__(self, slope=0.03, start=-0.2, half=0.05, seeds=5):
        self.slope, self.start, self.half, self.seeds = slope, start, half, seeds
        self.asked: list[set] = []
        self.n: dict = {}
        self.baselines = {"FIFO": {}}

    @property
    def fit(self):
        return {(PAIR, m): {"seeds": tuple(range(n))} for m, n in self.n.items()}

    def run(self, wanted, n=None):
        self.asked.append({m for ms in wanted.values() for m in ms})
        for ms in wanted.values():
            for m in ms:
                self.n[m] = max(self.n.get(m, 0), n or self.seeds)

    def change(self, pair, m, key, baseline="FIFO"):
        mean = self.start + self.slope * m
        if key == "te_p95":
            mean = -0.966
        elif key == "be_p95":
            mean = 0.239 + (mean - 0.18)
        n = self.n.get(m, self.seeds)
        h = self.half * math.sqrt(5 / n)
        return Estimate(mean, mean - h, mean + h, n)


def _search(prober, t, kind):
    fn = {"mean": ridge._not_above_mean, "below": ridge._below_interval,
          "above": ridge._not_above_interval}[kind]
    return ridge._drive(prober, {0: ridge._boundary(prober, PAIR, fn(t), COARSE)})[0]


def test_bisection_finds_the_adjacent_minutes_around_each_boundary_in_few_probes():
    p = FakeProber()   # mean -0.2 + 0.03 m: crosses 0 at 6.67 min, +18 % at 12.67 min
    assert _search(p, 0.0, "mean") == (6, 7)
    assert _search(p, 0.18, "mean") == (12, 13)
    # the interval (+-0.045): the last minute whose interval lies below 0 is 5 (hi = -0.005),
    # the first whose interval lies above 0 is 9 (lo = +0.025)
    w = FakeProber(half=0.045)
    assert _search(w, 0.0, "below") == (5, 6)
    assert _search(w, 0.0, "above") == (8, 9)
    q = FakeProber()
    _search(q, 0.18, "mean")
    extra = set().union(*q.asked) - set(COARSE)
    assert len(extra) <= 6, sorted(extra)     # a 10-min bracket: one at a 5, then 4 at most
    assert [len(a) for a in q.asked] == [6, 1, 4]


def test_a_boundary_past_the_probes_is_said_so():
    early = FakeProber(start=0.3)   # above +18 % already at 0 min
    assert _search(early, 0.18, "mean") == (None, 0)
    late = FakeProber(slope=0.001)  # never reaches +18 % by 60 min
    assert _search(late, 0.18, "mean") == (60, None)
    untold = FakeProber(half=math.nan, seeds=2)
    assert _search(untold, 0.18, "below") is None   # no intervals: cannot tell
    assert _search(untold, 0.18, "mean") == (12, 13)


def test_an_undecided_ridge_point_gets_more_seeds_until_decided_then_the_band_is_walked():
    """+18 % at 12 min; at 5 seeds its intervals (+-0.08) reach past the closeness band
    (+-4.5 pp around +18 %): undecided. At the looks of the seed budget it gets 10, then 20
    seeds (+-0.04: confirmed), and the band is the minutes around it confirmed on 20 seeds."""
    p = FakeProber(slope=0.01, start=0.06, half=0.08)
    p.run({PAIR: [11, 12]})   # the crossing's bracket, probed by the bisection
    point, n, band = ridge._drive(p, {0: ridge._band(p, PAIR, (11, 12), "FIFO", 60,
                                                     (10, 20, 30))})[0]
    assert (point, n) == (12, 20)
    # confirmed where the interval (+-0.04 at 20 seeds) lies within +18 % +- 4.5 pp
    assert band == [m for m in range(61) if 0.135 <= 0.06 + 0.01 * m - 0.04
                    and 0.06 + 0.01 * m + 0.04 <= 0.225] == [12]
    assert p.n[12] == 20 and p.n[11] == p.n[13] == 20   # the walk ran on as many seeds
    assert 30 not in p.n.values()                        # decided: no more looks
    tight = FakeProber(slope=0.005, start=0.12, half=0.01)  # +-0.01: confirmed at once
    tight.run({PAIR: [11, 12]})
    point, n, band = ridge._drive(tight, {0: ridge._band(tight, PAIR, (11, 12), "FIFO", 60,
                                                         (10, 20, 30))})[0]
    assert (point, n) == (12, 5) and band == list(range(6, 19))
    assert ridge._drive(p, {0: ridge._band(p, PAIR, (60, None), "FIFO", 60)})[0] == (None, 0, [])


def test_the_full_plan_covers_the_declared_axes():
    full = ridge.plan(ridge.Size(n_jobs=10000, seeds=(0, 1, 2, 3, 4)))
    assert full.loads == (0.7, 0.8, 0.85, 0.9)
    assert np.allclose(full.shares, np.arange(0.3, 0.95, 0.1))
    assert full.long_factor * 10000 == 30000 and full.max_min == 60
    variants = {p.variant for p in full.pairs()}
    assert {"8 nodes", "32 nodes"} <= variants and len(variants) == 5   # two values each
    assert len([p for p in full.pairs() if p.variant == "default"]) == 28
    assert ridge.plan(QUICK).loads == (0.85,)


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    size = dataclasses.replace(QUICK, n_jobs=300, seeds=(0, 1, 2))
    return ridge.find(size, cache=tmp_path_factory.mktemp("ridge"))


def test_what_it_found_is_what_its_probes_say(found):
    probes, crossings = found.probes, found.crossings
    assert set(crossings["target"]) == {0.0, 0.18}
    for _, c in crossings.iterrows():
        mine = probes[(probes["variant"] == c["variant"]) & (probes["load"] == c["load"])
                      & (probes["te_fraction"] == c["te_fraction"])
                      & (probes["baseline"] == c["baseline"])].set_index("minute")
        means = mine["change_be_median"]
        if c["side"] == "crosses":
            assert c["first"] == c["last"] + 1 and c["last"] <= c["at"] <= c["first"]
            assert means.loc[c["last"]] <= c["target"] < means.loc[c["first"]]
        elif c["side"] == "beyond":
            assert means.loc[found.plan.max_min] <= c["target"]
        else:
            assert means.loc[0] > c["target"]
        if not math.isnan(c["lo"]):
            assert mine.loc[c["lo"], "change_be_median_hi"] < c["target"]
    assert found.jobs == (300, 900) and found.stats["computed"] > 0



def test_every_ridge_point_is_run_at_the_second_run_length():
    """The full run left 12 of 24 ridge points against strict FIFO 'not run' at 30,000 jobs:
    the long runs were asked per pair in a dict keyed by the pair alone, so EASY FIFO's ridge
    point replaced strict FIFO's where the two differ. Every baseline's ridge point of a pair
    of the grid is run at the second run length."""
    other = ridge.Pair(0.9, 0.7)
    varied = ridge.Pair(0.85, 0.7, nodes=8)
    bands = {(PAIR, "FIFO"): (10, 30, []), (PAIR, "EASY FIFO"): (1, 5, []),
             (other, "FIFO"): (9, 30, []), (other, "EASY FIFO"): (None, 5, []),
             (varied, "FIFO"): (18, 5, [])}
    assert ridge.long_minutes(bands, [PAIR, other]) == {PAIR: {10, 1}, other: {9}}
