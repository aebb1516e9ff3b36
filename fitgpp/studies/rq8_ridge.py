"""RQ8's ridge: the restart cost at which FitGpp's BE cost against FIFO crosses 0 and the
paper's +18 %, for each load x TE share, found by bisection (the searches themselves:
:mod:`fitgpp.studies.rq8_search`).

For one load and TE share (a :class:`Pair`; around the ridge also with another share of
8-GPU BE jobs or another cluster size), the BE median change of FitGpp (s=4, P=3) against
FIFO is a function of the restart cost r: each reload is time a preempted job holds its GPUs
without progress, so the change rises with r. Each target t (0, and the paper's +18 %) is
then crossed once; the search assumes it, and every probe is kept, so a table shows where a
probe breaks the order.

**Why bisection, on whole minutes.** A restart cost is rounded up to whole ticks of 60 s
(SPEC "Time"), so a minute is the model's resolution and adjacent minutes are the finest
answer there is. The coarse probes (:attr:`Plan.coarse`, 0 to 60 min) give brackets of 10-15
minutes; each bracket is cut at the multiples of 5 inside it, then at every minute left
inside: at most 6 probes per boundary, where a grid of every minute over 0-60 needs 61 per
load and TE share. Three boundaries per target, each of a predicate that holds below it:

- **the crossing**: the mean over seeds is not above t; the crossing is interpolated between
  the last minute not above and the first above;
- **its interval**, by inverting the per-point 95 % intervals (paired per seed, common random
  numbers: every restart cost runs on the same traces): the last minute whose interval lies
  wholly below t, and the first whose interval lies wholly above it. The crossing lies between
  them (each side at 95 %); with fewer than 3 seeds there are no intervals ("cannot tell").

A boundary already passed at 0 min is "at or below 0 min", one not reached by the last probe
"beyond" it.

**The ridge point and the band.** At the +18 % crossing, the probed minute whose mean is
closest to it is the ridge point: its TE p95 and BE p95 changes are given, and the minutes
around it are probed while its BE median still matches the paper's (against_paper): the
**band** is the minutes at which all three numbers match the paper's, its width their count.
The ridge points are run again at :attr:`Plan.long_factor` times the jobs (30,000 at the full
size): how far their numbers move with the run length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from fitgpp.analysis.metrics import METRICS, paired_change
from fitgpp.analysis.verdicts import (CONFIRMED, PAPER, PAPER_CLAIMS, UNDECIDED, Estimate,
                                      against_paper, category)
from fitgpp.studies.rq8_search import (_below_interval, _boundary, _bracket,  # noqa: F401
                                       _drive, _not_above_interval, _not_above_mean)
from fitgpp.studies.size import Size

#: The model RQ8 runs, and FitGpp's setting.
MODEL = "paper-wide-te"
FITGPP = {"fitgpp": {"s": [4.0], "max_preemptions": [3]}}
#: The baselines a change is against: label -> the sweep's policy table (the first is the
#: one every pair is compared with; the others, the pairs of the grid).
BASELINES = {"FIFO": {"fifo": {"backfill": ["none"]}},
             "EASY FIFO": {"fifo": {"backfill": ["easy"]}}}
#: What is probed at each restart cost: the paper's three numbers, as changes.
KEYS = ("te_p95", "be_median", "be_p95")
#: The targets of the BE median change: no change, and the paper's +18 %.
TARGETS = (0.0, PAPER["be_median"])
#: Jobs per run from which the full plan runs.
FULL_FROM = 5000


@dataclass(frozen=True)
class Pair:
    """Where a ridge is looked for: a load and TE share, with further workload knobs
    (sorted ``(name, value)``) and the cluster's number of nodes (None: the size's)."""
    load: float
    te_fraction: float
    knobs: tuple = ()
    nodes: int | None = None

    @property
    def variant(self) -> str:
        """``"default"``, or the knob this pair varies and its value."""
        if self.nodes is not None:
            return f"{self.nodes} nodes"
        if self.knobs:
            from fitgpp.figures import names
            return ", ".join(names.phrase(k, v) for k, v in self.knobs)
        return "default"

    def where(self) -> str:
        v = "" if self.variant == "default" else f", {self.variant}"
        return f"load {self.load:g}, TE share {self.te_fraction:g}{v}"


@dataclass(frozen=True)
class Plan:
    """What a size runs: the ridge over ``loads`` x ``shares``; coarse restart costs
    (minutes, the last is the largest probed); the knobs varied one at a time
    (``{knob: values}``, ``"nodes"`` the cluster size) at the ``around`` pairs; the ridge
    points again at ``long_factor`` times the jobs."""
    loads: tuple
    shares: tuple
    coarse: tuple
    variants: dict = field(default_factory=dict)
    around: tuple = ()
    long_factor: int = 3

    @property
    def max_min(self) -> int:
        return int(max(self.coarse))

    def pairs(self) -> list[Pair]:
        main = [Pair(a, b) for a in self.loads for b in self.shares]
        varied = [Pair(a, b, nodes=int(v)) if k == "nodes" else Pair(a, b, ((k, float(v)),))
                  for a, b in self.around for k, vals in self.variants.items() for v in vals]
        return main + varied


FULL_PLAN = Plan(loads=(0.7, 0.8, 0.85, 0.9), shares=(0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
                 coarse=(0, 10, 20, 30, 45, 60),
                 variants={"be_8gpu_share": (0.05, 0.3), "nodes": (8, 32)},
                 around=((0.8, 0.7), (0.85, 0.7)))
QUICK_PLAN = Plan(loads=(0.85,), shares=(0.7,), coarse=(0, 15, 30, 60),
                  variants={"be_8gpu_share": (0.3,), "nodes": (8,)}, around=((0.85, 0.7),))


def plan(size: Size) -> Plan:
    return FULL_PLAN if size.n_jobs >= FULL_FROM else QUICK_PLAN


# ---------------------------------------------------------------- running the probes
class Prober:
    """Runs and keeps the probes: FitGpp at a pair's restart costs (whole minutes) and each
    baseline once per pair (a baseline never preempts, so the restart cost does not change
    its runs), through :func:`fitgpp.sweep.run_sweep` (cached cell by cell, on Dask where the
    size asks). Every probe runs the first seeds of one sequence (the size's seeds, then the
    next integers: :func:`fitgpp.studies.adaptive.seed_sequence`), so a probe given more seeds
    keeps its first ones and every change stays paired seed by seed."""

    def __init__(self, size: Size, n_jobs: int, *, cache=None, scheduler=None,
                 baselines=BASELINES):
        from fitgpp.studies.adaptive import seed_sequence
        self.size, self.n_jobs, self.baselines = size, n_jobs, dict(baselines)
        self.seeds = tuple(size.seeds)
        self.sequence = seed_sequence(size.seeds, size.budget)
        self.cache = False if cache is None else cache
        self.how = {"scheduler": scheduler} if scheduler is not None else {"serial": True}
        self.fit: dict = {}     # (pair, minute) -> {"seeds", key: per-seed values, "growth"}
        self.base: dict = {}    # (pair, baseline) -> the same
        self.stats = dict.fromkeys(("cells", "unique", "cached", "computed"), 0)

    def _sweep(self, pair: Pair, policies: dict, seeds: tuple, minutes=()):
        from fitgpp.sim.cluster import Cluster
        from fitgpp.sweep import Experiment, run_sweep
        wl = {"model": MODEL, "n_jobs": self.n_jobs, "load": pair.load,
              "te_fraction": pair.te_fraction, **dict(pair.knobs)}
        if minutes:
            wl["restart_overhead"] = [60.0 * m for m in minutes]
        cluster = self.size.cluster if pair.nodes is None else Cluster.homogeneous(pair.nodes)
        exp = Experiment(workload=wl, policies=policies, seeds=seeds, cluster=cluster,
                         name="rq8-ridge")
        got, st = {}, {}
        ds = run_sweep(exp, cache=self.cache, progress=False, runs=got, stats=st, **self.how)
        for k in self.stats:
            self.stats[k] += st[k]
        return ds, got

    def run(self, wanted: dict, n: int | None = None) -> None:
        """Probe every ``{pair: minutes}`` on the first ``n`` seeds of the sequence (default:
        the size's seeds) where it has fewer (and the pair's baselines)."""
        seeds = self.sequence[:n] if n else self.seeds
        for pair, minutes in wanted.items():
            for label, policies in self.baselines_of(pair).items():
                had = self.base.get((pair, label))
                if had is None or len(had["seeds"]) < len(seeds):
                    ds, got = self._sweep(pair, policies, seeds)
                    self.base[pair, label] = _values(ds, next(iter(policies)), got, seeds)
            new = sorted(int(m) for m in set(minutes) if len(
                self.fit.get((pair, int(m)), {"seeds": ()})["seeds"]) < len(seeds))
            if new:
                ds, got = self._sweep(pair, FITGPP, seeds, new)
                for m in new:
                    self.fit[pair, m] = _values(ds, "fitgpp", got, seeds, 60.0 * m)

    def baselines_of(self, pair: Pair) -> dict:
        """The baselines a pair is compared with: every one for a pair of the grid, the first
        (strict FIFO) alone for a pair whose knob is varied around the ridge."""
        if pair.variant == "default":
            return self.baselines
        first = next(iter(self.baselines))
        return {first: self.baselines[first]}

    def change(self, pair: Pair, minute: int, key: str, baseline: str = "FIFO") -> Estimate:
        """FitGpp's change of ``key`` against ``baseline`` at ``minute``, paired per seed (on
        the probe's seeds, the first of the baseline's)."""
        fit = self.fit[pair, minute]
        base = self.base[pair, baseline][key][:len(fit["seeds"])]
        return Estimate.of(paired_change(fit[key], base))

    def probed(self, pair: Pair) -> list[int]:
        return sorted(m for p, m in self.fit if p == pair)


def _values(ds, policy: str, got: dict, seeds: tuple, restart: float | None = None) -> dict:
    """Per-seed values of :data:`KEYS` of ``policy`` (at restart cost ``restart`` seconds)
    from a sweep Dataset over ``seeds``, and how its runs' queues grow (``growth``: counts by
    :attr:`~fitgpp.analysis.stability.Stability.growth`)."""
    from fitgpp.studies.steady import cell_stability
    sel = {"policy": policy, **({} if restart is None else {"restart_overhead": restart})}
    out = {"seeds": tuple(seeds)}
    for key in KEYS:
        m = METRICS[key]
        da = ds[m.var].sel(cls=m.cls, **sel)
        out[key] = da.squeeze([d for d in da.dims if d != "seed"], drop=True).to_numpy()
    grows = {}
    for cell, res in got.items():
        knob = dict(cell.knobs).get("restart_overhead")
        if cell.policy == policy and (restart is None or knob == restart):
            grows[cell.seed] = cell_stability(res)[1].growth
    out["growth"] = tuple(grows[s] for s in seeds)   # per seed, in the order of ``seeds``
    return out


def _growth(entry: dict, n: int) -> dict:
    """Counts of :attr:`~fitgpp.analysis.stability.Stability.growth` over the first ``n``
    seeds of a probe or baseline."""
    out = dict.fromkeys(("none", "borderline", "clear", "cannot tell"), 0)
    for g in entry["growth"][:n]:
        out[g] += 1
    return out


# ---------------------------------------------------------------- judging a ridge point
def _matches(prober: Prober, pair: Pair, m: int, baseline: str) -> list:
    """The verdicts of the paper's three numbers at ``m`` (against_paper)."""
    return [against_paper(prober.change(pair, m, c.key, baseline), c) for c in PAPER_CLAIMS]


def status(verdicts, steady: bool, jobs: int) -> tuple[str, str]:
    """``(category, phrase)`` of the paper's three numbers held together
    (:func:`fitgpp.analysis.verdicts.category`), with steadiness: **confirmed** only when
    each is confirmed and every run of both policies is steady; confirmed numbers from runs
    that are not all steady are **undecided**, "matches in a transient, at N jobs"."""
    cat = category(verdicts)
    if cat == CONFIRMED and not steady:
        return UNDECIDED, f"matches in a transient, at {jobs:,} jobs"
    return cat, cat


def _steady(prober: Prober, pair: Pair, m: int, baseline: str) -> tuple[int, int, int]:
    """Steady runs of FitGpp at ``m`` and of the baseline, of the probe's seeds."""
    n = len(prober.fit[pair, m]["seeds"])
    return (_growth(prober.fit[pair, m], n)["none"],
            _growth(prober.base[pair, baseline], n)["none"], n)


def _point_status(prober: Prober, pair: Pair, m: int, baseline: str) -> tuple[str, str]:
    fit, base, n = _steady(prober, pair, m, baseline)
    return status(_matches(prober, pair, m, baseline), fit == base == n, prober.n_jobs)


def _band(prober: Prober, pair: Pair, crossing, baseline: str, max_min: int, schedule=()):
    """Generator: ``(ridge point, its seeds, the band)``. The point is the minute of the
    +18 % crossing's bracket whose mean is closest to +18 % (None: not crossed between the
    first and the last probe). While the three numbers there are undecided, the point gets
    the seeds of the next look of ``schedule`` (adaptive replication; its baseline too); once
    they are confirmed, the minutes on either side are probed on as many seeds, one at a time,
    while all three stay confirmed: the band."""
    t = PAPER["be_median"]
    if crossing is None or None in crossing:   # not crossed within the probes
        return None, 0, []
    point = min(crossing, key=lambda m: abs(prober.change(pair, m, "be_median", baseline).mean - t))
    n = len(prober.fit[pair, point]["seeds"])
    for look in schedule:
        if look <= n or category(_matches(prober, pair, point, baseline)) != UNDECIDED:
            continue
        yield {pair: [point]}, look
        n = look

    def confirmed(m):
        return category(_matches(prober, pair, m, baseline)) == CONFIRMED
    if not confirmed(point):
        return point, n, []
    band, edges = [point], {-1: point, 1: point}
    while edges:
        asks = {d: e + d for d, e in edges.items() if 0 <= e + d <= max_min}
        if not asks:
            break
        yield {pair: list(asks.values())}, n
        edges = {d: m for d, m in asks.items() if confirmed(m)}
        band += list(edges.values())
    return point, n, sorted(band)


@dataclass
class Ridge:
    """What :func:`find` found: every probe (``probes``), the crossings of each target with
    their intervals (``crossings``), the ridge points with the band and their numbers at two
    run lengths (``points``), the plan, the jobs per run of each length, the seeds asked, the
    looks of adaptive replication at the ridge points (``schedule``), the level of every
    interval, and the sweep's cell counts."""
    probes: pd.DataFrame
    crossings: pd.DataFrame
    points: pd.DataFrame
    plan: Plan
    jobs: tuple
    seeds: tuple
    stats: dict
    schedule: tuple = ()
    level: float = 0.95


def find(size: Size, *, cache=None, scheduler=None, baselines=BASELINES) -> Ridge:
    """Find the ridge of every pair of the size's :func:`plan` (see the module docstring).
    With a seed budget (``size.max_seeds``), a ridge point whose three numbers are undecided
    gets more seeds at the looks of :func:`fitgpp.analysis.looks.looks`, and every interval is
    at the level they spend per look (:func:`fitgpp.analysis.looks.look_level`), as a study's
    own cells are."""
    from fitgpp.analysis.looks import look_level, looks
    from fitgpp.analysis.metrics import at_level
    schedule = looks(len(size.seeds), size.budget)
    level = look_level(schedule)
    with at_level(level):
        return _find(size, cache, scheduler, baselines, schedule, level)


def _find(size, cache, scheduler, baselines, schedule, level) -> Ridge:
    p = plan(size)
    prober = Prober(size, size.n_jobs, cache=cache, scheduler=scheduler, baselines=baselines)
    pairs = p.pairs()
    kinds = {"mean": _not_above_mean, "below": _below_interval, "above": _not_above_interval}
    searches = {(pair, b, t, kind): _boundary(prober, pair, fn(t, baseline=b), p.coarse)
                for pair in pairs for b in prober.baselines_of(pair) for t in TARGETS
                for kind, fn in kinds.items()}
    bounds = _drive(prober, searches)
    bands = _drive(prober, {(pair, b): _band(prober, pair, bounds[pair, b, TARGETS[1], "mean"],
                                             b, p.max_min, schedule[1:])
                            for pair in pairs for b in prober.baselines_of(pair)})
    long = Prober(size, size.n_jobs * p.long_factor, cache=cache, scheduler=scheduler,
                  baselines=baselines)
    main = [q for q in pairs if q.variant == "default"]
    long.run(long_minutes(bands, main))
    stats = {k: prober.stats[k] + long.stats[k] for k in prober.stats}
    return Ridge(_probes(prober), _crossings(prober, bounds, p), _points(prober, long, bands),
                 p, (prober.n_jobs, long.n_jobs), prober.seeds, stats, schedule, level)


def long_minutes(bands: dict, pairs) -> dict:
    """``{pair: minutes}`` run at the second run length: the ridge point of every baseline of
    each of ``pairs`` (``bands``: ``{(pair, baseline): (point, seeds, band)}``)."""
    out = {}
    for (pair, _), (point, _, _) in bands.items():
        if pair in pairs and point is not None:
            out.setdefault(pair, set()).add(point)
    return out


def _ids(pair: Pair, baseline: str) -> dict:
    return {"variant": pair.variant, "load": pair.load, "te_fraction": pair.te_fraction,
            "baseline": baseline}


def _probes(prober: Prober) -> pd.DataFrame:
    rows = []
    for (pair, m) in sorted(prober.fit, key=lambda k: (k[0].variant, k[0].load,
                                                        k[0].te_fraction, k[1])):
        for b in prober.baselines_of(pair):
            fit, base, n = _steady(prober, pair, m, b)
            row = {**_ids(pair, b), "minute": m, "seeds": n, "fit_steady": fit,
                   "base_steady": base}
            for key in KEYS:
                e = prober.change(pair, m, key, b)
                row.update({f"change_{key}": e.mean, f"change_{key}_lo": e.low,
                            f"change_{key}_hi": e.high})
            rows.append(row)
    return pd.DataFrame(rows)


def _crossings(prober: Prober, bounds: dict, p: Plan) -> pd.DataFrame:
    """One row per pair, baseline and target: ``at`` (minutes, interpolated; NaN when not
    crossed within the probes) between ``last`` (the last minute whose mean is not above the
    target) and ``first`` (the first above it), ``side`` (``"crosses"``, ``"at or below 0"``, ``"beyond"``),
    ``lo``/``hi`` (the last minute whose interval lies wholly below the target, the first
    whose interval lies wholly above; NaN: at or below 0, or beyond the last probe),
    ``known`` (whether there are intervals at all)."""
    rows = []
    for (pair, b, t, kind), got in bounds.items():
        if kind != "mean":
            continue
        a, z = got
        row = {**_ids(pair, b), "target": t, "max_min": p.max_min,
               "last": math.nan if a is None else a, "first": math.nan if z is None else z}
        if a is None:
            row.update(side="at or below 0", at=0.0)
        elif z is None:
            row.update(side="beyond", at=math.nan)
        else:
            ea, ez = (prober.change(pair, m, "be_median", b).mean for m in (a, z))
            frac = (t - ea) / (ez - ea) if ez != ea else 0.0
            row.update(side="crosses", at=a + (z - a) * min(max(frac, 0.0), 1.0))
        below, above = bounds[pair, b, t, "below"], bounds[pair, b, t, "above"]
        row["known"] = below is not None and above is not None
        row["lo"] = math.nan if below is None or below[0] is None else float(below[0])
        row["hi"] = math.nan if above is None or above[1] is None else float(above[1])
        rows.append(row)
    return pd.DataFrame(rows)


def _at(pr: Prober, pair: Pair, point: int, b: str, label: str) -> dict:
    """The three changes at ``point`` with their verdicts, the status of the three held
    together (:func:`status`), seeds and steady runs, each column prefixed ``label``."""
    fit, base, n = _steady(pr, pair, point, b)
    row = {f"{label}jobs": pr.n_jobs, f"{label}seeds": n, f"{label}fit_steady": fit,
           f"{label}base_steady": base}
    for key, v in zip(KEYS, _matches(pr, pair, point, b)):
        e = v.measured
        row.update({f"{label}change_{key}": e.mean, f"{label}change_{key}_lo": e.low,
                    f"{label}change_{key}_hi": e.high, f"{label}v_{key}": v.phrase})
    row[f"{label}status"], row[f"{label}phrase"] = _point_status(pr, pair, point, b)
    return row


def _points(prober: Prober, long: Prober, bands: dict) -> pd.DataFrame:
    """One row per pair and baseline with a ridge point: the point, its seeds, the band
    (contiguous minutes where all three are confirmed, and of those where every run of both
    policies is steady), and the three changes at both run lengths with their verdicts and
    status and the change between the lengths (paired per seed, on the seeds both ran)."""
    rows = []
    for (pair, b), (point, _, band) in bands.items():
        if point is None:
            continue
        steady = [m for m in band if _point_status(prober, pair, m, b)[0] == CONFIRMED]
        row = {**_ids(pair, b), "minute": point, "band": band, "band_steady": steady,
               "width": len(band), "width_steady": len(steady),
               **_at(prober, pair, point, b, "")}
        if (pair, point) in long.fit:
            row.update(_at(long, pair, point, b, "long_"))
            k = len(long.fit[pair, point]["seeds"])
            for key in KEYS:
                short = paired_change(prober.fit[pair, point][key][:k],
                                      prober.base[pair, b][key][:k])
                d = Estimate.of(paired_change(long.fit[pair, point][key],
                                              long.base[pair, b][key][:k]) - short)
                row.update({f"moved_{key}": d.mean, f"moved_{key}_lo": d.low,
                            f"moved_{key}_hi": d.high})
        rows.append(row)
    return pd.DataFrame(rows)
