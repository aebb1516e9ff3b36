"""Where each job's delay goes: its time from submission to completion beyond its run time,
split into parts that add up to it, job by job.

A job's **delay** is ``finish - submit - duration`` (seconds), where ``submit`` is its
submission tick (SPEC: ``floor(submit_time / tick)``, the model's clock) and ``duration`` its
run time as given. It is the sum of (:data:`PARTS`):

- ``queued``: waiting before its first start, ``first_start - submit``;
- ``grace``: in grace periods after preemption signals (``stopped``);
- ``requeued``: waiting again after its preemptions, ``wait - queued`` (the result's
  ``wait`` is all the time spent waiting in a queue);
- ``reload``: running but reloading a checkpoint after preemptions (``reload``, lost
  reloads included);
- ``rounding``: the tick rounding of its run time, ``work - duration``, where ``work =
  max(1, ceil(duration / tick)) * tick`` (SPEC "Time"): from 0 up to one tick. It is the
  same under every policy, so it cancels in a difference between policies on one trace.

These add up exactly, because the simulator defines ``wait = finish - submit - work - reload -
stopped`` (:mod:`fitgpp.sim.run`): ``queued + requeued = wait`` and ``wait + grace + reload +
work = finish - submit``. A job never preempted has ``grace``, ``requeued`` and ``reload`` 0.

:func:`of_jobs` decomposes every job of one run (a :func:`fitgpp.simulate` Dataset, or the
per-job columns a sweep cell keeps, which lack ``stopped``: it is then what the others leave,
and :func:`of_jobs` checks it is a whole number of ticks and not negative). :func:`by_group`
compares two runs of one trace job by job (a preempting policy against one that never
preempts): the BE jobs the first preempted and those it never did, apart, each part's mean
per job in both runs and their difference. :func:`sign_agreement` counts how often two
per-seed quantities have the same sign, with a Clopper-Pearson interval of that share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fitgpp.errors import FitgppError

#: The parts of a job's delay, in the order they are shown: name -> what it is (seconds).
PARTS = {
    "queued": "waiting before its first start",
    "grace": "in grace periods after preemption signals",
    "requeued": "waiting again after its preemptions",
    "reload": "reloading a checkpoint after preemptions",
    "rounding": "the tick rounding of its run time (work - duration)",
}
#: The per-job columns :func:`of_jobs` reads (``stopped`` too when the input has it).
COLUMNS = ("cls", "submit", "duration", "first_start", "finish", "wait", "reload", "preemptions")
#: The two groups of BE jobs :func:`by_group` shows apart.
GROUPS = ("preempted", "never preempted")
#: Level of :func:`sign_agreement`'s interval.
LEVEL = 0.95


class DelayError(FitgppError):
    """The per-job columns of a run do not decompose (a column missing, a part negative or
    not a whole number of ticks, two runs of different jobs)."""


def _col(data, name: str) -> np.ndarray:
    try:
        v = data[name]
    except KeyError:
        raise DelayError(f"the run has no per-job column {name!r} (needed: "
                         f"{', '.join(COLUMNS)})") from None
    return np.asarray(getattr(v, "values", v))


def of_jobs(data, tick: float | None = None) -> pd.DataFrame:
    """Every job's delay and its parts (seconds), indexed by job id: columns ``cls``,
    ``preemptions``, ``delay`` and each of :data:`PARTS`. ``data``: a simulation Dataset (or
    a mapping of per-job columns, ``job`` the ids); ``tick``: seconds, default
    ``data.attrs["tick"]``. ``stopped`` and ``work`` are read when present, else computed
    (see the module docstring)."""
    attrs = getattr(data, "attrs", {})
    tick = float(attrs.get("tick", math.nan) if tick is None else tick)
    if not (math.isfinite(tick) and tick > 0):
        raise DelayError("the tick (seconds) is needed: pass tick=, or a result whose attrs "
                         "hold it")
    submit, duration, first, finish, wait, reload = (
        _col(data, n).astype(float) for n in ("submit", "duration", "first_start", "finish",
                                               "wait", "reload"))
    work = _col(data, "work").astype(float) if "work" in data else \
        np.maximum(1, np.ceil(duration / tick)) * tick
    stopped = _col(data, "stopped").astype(float) if "stopped" in data else \
        finish - submit - work - wait - reload
    parts = {"queued": first - submit, "grace": stopped, "requeued": wait - (first - submit),
             "reload": reload, "rounding": work - duration}
    for name, v in parts.items():
        bad = np.flatnonzero(v < -1e-6 * tick)
        if name != "rounding" and not len(bad):
            bad = np.flatnonzero(np.abs(v / tick - np.round(v / tick)) > 1e-6)
        if len(bad):
            raise DelayError(f"part {name!r} of job #{int(bad[0])} is {v[bad[0]]:g} s: not a "
                             f"whole number of ticks of {tick:g} s at least 0 (columns "
                             "inconsistent)")
    ids = _col(data, "job") if "job" in data else np.arange(len(submit))
    out = pd.DataFrame({"cls": _col(data, "cls"), "preemptions": _col(data, "preemptions"),
                        "delay": finish - submit - duration, **parts},
                       index=pd.Index(ids, name="job"))
    return out


def by_group(run: pd.DataFrame, base: pd.DataFrame, cls: str = "BE") -> pd.DataFrame:
    """The jobs of class ``cls`` of two runs of one trace (each :func:`of_jobs`), job by
    job: one row per group of :data:`GROUPS` (the jobs ``run`` preempted at least once, and
    the others), with ``jobs`` (how many), ``share`` (of the class's jobs) and, for the
    delay and each part, its mean per job in ``run`` (``<part>``), in ``base``
    (``<part>_base``) and their difference (``<part>_diff``), seconds. A group without jobs
    has NaN means."""
    if not run.index.equals(base.index):
        raise DelayError("the two runs hold different jobs: compare runs of one trace")
    mine = (run["cls"] == cls).to_numpy()
    hit = mine & (run["preemptions"] > 0).to_numpy()
    rows = []
    for group, mask in zip(GROUPS, (hit, mine & ~hit)):
        row = {"group": group, "jobs": int(mask.sum()),
               "share": float(mask.sum() / mine.sum()) if mine.any() else math.nan}
        for part in ("delay", *PARTS):
            a = run[part].to_numpy()[mask]
            b = base[part].to_numpy()[mask]
            m_a = float(a.mean()) if len(a) else math.nan
            m_b = float(b.mean()) if len(b) else math.nan
            row.update({part: m_a, f"{part}_base": m_b, f"{part}_diff": m_a - m_b})
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Agreement:
    """How often two per-seed quantities have the same sign: ``agree`` of ``n`` seeds where
    both are non-zero, the share's Clopper-Pearson interval ``low``..``high`` (exact, at
    :data:`LEVEL`), and the misses by direction: ``misses_pos`` where the first is positive
    and the second negative, ``misses_neg`` the other way; ``zero``: seeds left out (a zero)."""
    agree: int
    n: int
    low: float
    high: float
    misses_pos: int
    misses_neg: int
    zero: int

    @property
    def share(self) -> float:
        return self.agree / self.n if self.n else math.nan


def clopper_pearson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a share of ``k`` successes in ``n`` trials
    (``scipy.special.betaincinv``, the beta quantile); (NaN, NaN) without trials."""
    from scipy import special
    if n <= 0:
        return math.nan, math.nan
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, a))
    hi = 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1 - a))
    return lo, hi


def sign_agreement(first, second) -> Agreement:
    """Per-seed signs of ``first`` and ``second`` (equal-length sequences, NaN left out like
    a zero): how often they agree, with its interval (:class:`Agreement`)."""
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape:
        raise DelayError(f"sign_agreement: {a.shape} and {b.shape} values: pair them per seed")
    sa, sb = np.sign(np.nan_to_num(a)), np.sign(np.nan_to_num(b))
    both = (sa != 0) & (sb != 0)
    agree = int((both & (sa == sb)).sum())
    n = int(both.sum())
    lo, hi = clopper_pearson(agree, n)
    return Agreement(agree, n, lo, hi, int((both & (sa > 0) & (sb < 0)).sum()),
                     int((both & (sa < 0) & (sb > 0)).sum()), int((~both).sum()))
