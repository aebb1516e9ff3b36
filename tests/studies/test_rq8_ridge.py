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
    """A change that rises linearly with the restart cost, with a fixed interval half-width
    (``half``; NaN: no interval), counting what is asked for."""

    def __init__(self, slope=0.03, start=-0.2, half=0.05, seeds=5):
        self.slope, self.start, self.half, self.seeds = slope, start, half, seeds
        self.asked: list[set] = []
        self.baselines = {"FIFO": {}}

    def run(self, wanted):
        self.asked.append({m for ms in wanted.values() for m in ms})

    def change(self, pair, m, key, baseline="FIFO"):
        mean = self.start + self.slope * m
        if key == "te_p95":
            mean = -0.966
        elif key == "be_p95":
            mean = mean + 0.06
        h = self.half
        return Estimate(mean, mean - h, mean + h, self.seeds)

    def probed(self):
        return sorted(set().union(*self.asked))


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


def test_the_band_walks_out_from_the_ridge_point_while_the_be_median_matches():
    p = FakeProber(slope=0.01, start=0.06, half=0.02)   # +18 % at 12 min exactly
    point, region = ridge._drive(p, {0: ridge._band(p, PAIR, (11, 12), "FIFO", 60)})[0]
    assert point == 12
    # matches: interval contains +18 % (10..14) or lies within +-4.5 pp of it (in 10..14 too)
    want = [m for m in range(61) if (0.06 + 0.01 * m - 0.02 <= 0.18 <= 0.06 + 0.01 * m + 0.02)
            or (0.135 <= 0.04 + 0.01 * m and 0.08 + 0.01 * m <= 0.225)]
    assert region == want
    assert ridge._drive(p, {0: ridge._band(p, PAIR, (60, None), "FIFO", 60)})[0] == (None, [])


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
                      & (probes["te_fraction"] == c["te_fraction"])].set_index("minute")
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
