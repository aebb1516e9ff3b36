"""Job-size distributions for the Gittins policy: fit, read, write, and the index itself.

A distribution is a sorted tuple of job sizes in GPU-seconds (whole numbers, >= 0): the
sample the policy knows, never which job has which size. :func:`fit` takes it from the
jobs of a run (each job's GPUs x ticks of work x tick); :func:`read_distribution` and
:func:`write_distribution` read and write Tiresias's file (its ``yarn-gput*.csv``): a CSV
whose header has a ``duration`` column, one whole number per line.

:class:`ExactIndex` is docs/model.md's rule ("Gittins, exactly"); :class:`TiresiasIndex`
is the table Tiresias's simulator builds from the same file (its ``parse_job_dist``),
reproduced for ``mode="tiresias"``.
"""

from __future__ import annotations

import csv
import io
import math
import os
from bisect import bisect_right
from itertools import accumulate

from fitgpp.sim.engine import PolicyError

#: more samples than this is not a distribution file but a mistake (Tiresias ships 1,000)
MAX_SAMPLES = 10_000_000
#: Largest size a file may give [GPU-seconds]: 10**18 (a million GPUs for 30,000 years).
MAX_SIZE = 10**18
#: Largest distribution file read [bytes]: room for MAX_SAMPLES sizes of many digits.
MAX_BYTES = 256 * 2**20


class DistributionError(PolicyError):
    """A job-size distribution that cannot be used; the message names the file and line."""


def fit(eng) -> tuple:
    """The sizes of the run's jobs in GPU-seconds (GPUs per task x tasks x ticks of work x
    tick, rounded up to whole seconds), sorted."""
    return tuple(sorted(math.ceil(eng.dg[i] * eng.tasks[i] * (eng.work[i] * eng.tick))
                        for i in range(eng.n)))


def fit_trace(jobs, tick: float = 60.0) -> tuple:
    """The same sizes from a trace in the SPEC schema (durations rounded up to ticks, at
    least one tick, as the engine does): what ``gittins`` fits when given no file."""
    out = []
    tasks = jobs["tasks"] if "tasks" in jobs else [1] * len(jobs)
    for d, g, k in zip(jobs["duration"], jobs["gpu"], tasks):
        k = 1 if k != k else int(k)
        work = max(1, math.ceil(float(d) / tick))
        out.append(math.ceil(int(g) * k * (work * tick)))
    return tuple(sorted(out))


def read_distribution(path) -> tuple:
    """Tiresias's job-size file: a CSV with a ``duration`` column (other columns are
    ignored, as Tiresias does, however long their text), each a whole number of GPU-seconds
    from 0 to :data:`MAX_SIZE`; sorted sizes. Read as traces are: a regular file only (a FIFO
    or a device is refused unread), at most :data:`MAX_BYTES`, UTF-8."""
    from fitgpp.sim.validate import long_fields, read_text
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)) or not str(path):
        raise DistributionError(f"job-size distribution: expected a file path, got {path!r}"
                                [:300])
    name = os.fspath(path)
    text = read_text(name, "job-size distribution", DistributionError, MAX_BYTES)
    rows = csv.reader(io.StringIO(text, newline=""))
    try:
        with long_fields(text):
            return _sizes(rows, name)
    except csv.Error as exc:
        raise DistributionError(f"{name}: line {rows.line_num + 1}: not a readable CSV ({exc})"
                                [:300]) from None


def _sizes(rows, name: str) -> tuple:
    """The sorted sizes of the CSV ``rows`` of file ``name`` (see :func:`read_distribution`)."""
    header = next(rows, None)
    if header is None:
        raise DistributionError(f"{name}: empty file; a job-size distribution needs a header "
                                "line with a 'duration' column")
    cols = [h.strip() for h in header]
    if "duration" not in cols:
        raise DistributionError(f"{name}: line 1: no 'duration' column in the header "
                                f"{','.join(cols)[:80]!r}")
    k, out = cols.index("duration"), []
    for row in rows:
        line = rows.line_num
        if not row:
            raise DistributionError(f"{name}: line {line}: empty line")
        if len(row) != len(cols):
            raise DistributionError(f"{name}: line {line}: {len(row)} field(s), the header "
                                    f"has {len(cols)}")
        v = row[k].strip()
        if not (v.isascii() and v.isdigit()):
            raise DistributionError(f"{name}: line {line}: duration {v[:40]!r} is not a whole "
                                    "number of GPU-seconds >= 0")
        if len(v.lstrip("0")) > len(str(MAX_SIZE)) or int(v) > MAX_SIZE:
            raise DistributionError(f"{name}: line {line}: duration {v[:40]!r}"
                                    f"{'...' if len(v) > 40 else ''} ({len(v)} digits) is more "
                                    f"than {MAX_SIZE} GPU-seconds")
        out.append(int(v))
        if len(out) > MAX_SAMPLES:
            raise DistributionError(f"{name}: more than {MAX_SAMPLES} sizes")
    if not out:
        raise DistributionError(f"{name}: no sizes (a header and nothing else)")
    return tuple(sorted(out))


def write_distribution(sizes, path) -> None:
    """Write sizes (whole GPU-seconds >= 0) in Tiresias's format, sorted."""
    vals = []
    for k, v in enumerate(sizes):
        if isinstance(v, bool) or not float(v).is_integer() or v < 0:
            raise DistributionError(f"size #{k} is {v!r}: sizes are whole GPU-seconds >= 0")
        vals.append(int(v))
    if not vals:
        raise DistributionError("no sizes to write")
    with open(os.fspath(path), "w", encoding="utf-8", newline="") as f:
        f.write("duration\n" + "".join(f"{v}\n" for v in sorted(vals)))


class ExactIndex:
    """G(b) for b = k x delta: P(b < S <= b + delta) / E[min(S - b, delta); S > b] over the
    sizes S (the conditioning on S > b cancels); 0 when no size exceeds b. Cached per k."""

    def __init__(self, sizes, delta):
        self.s = list(sizes)
        self.pre = [0, *accumulate(self.s)]
        self.delta = delta
        self.cache = {}

    def __call__(self, k: int) -> float:
        g = self.cache.get(k)
        if g is None:
            s, d, n = self.s, self.delta, len(self.s)
            b = k * d
            lo = bisect_right(s, b)
            if lo == n:
                g = 0.0
            else:
                hi = bisect_right(s, b + d)
                c = hi - lo
                g = c / ((self.pre[hi] - self.pre[lo]) - b * c + d * (n - hi))
            self.cache[k] = g
        return g


def quantum(att, delta) -> int:
    """The largest k with k x delta <= att (att, the attained GPU-seconds)."""
    k = math.floor(att / delta)
    while (k + 1) * delta <= att:
        k += 1
    while k > 0 and k * delta > att:
        k -= 1
    return k


class TiresiasIndex:
    """Tiresias's ``gittins`` rank of attained service ``a`` (whole GPU-seconds or seconds),
    as its simulator computes it from the same sizes (docs/model.md, "Gittins, exactly")."""

    def __init__(self, sizes, delta):
        self.data = data = list(sizes)
        n = len(data)
        self.pre = pre = [0, *accumulate(data)]
        top = data[-1] - 1
        gi = []
        for v in data:
            a = v - 1
            idx = bisect_right(data, a)
            nxt = a + delta
            idx_d = n - 1 if nxt > top else bisect_right(data, nxt)
            p = round((idx_d - idx) * 1.0 / (n - idx), 5)
            e = round((pre[idx_d] - pre[idx] + delta * (n - idx_d)) / (n - idx), 5)
            gi.append(round(p * 1000000 / e, 4) if e else 0.0)
        self.gi = gi + [0.0]  # at the largest size itself

    def __call__(self, a: int) -> float:
        if a > self.data[-1]:
            return 0
        return self.gi[bisect_right(self.data, a)]
