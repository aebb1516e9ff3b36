"""RQ8's searches on whole minutes (:mod:`fitgpp.studies.rq8_ridge` runs them): bisection of
a predicate that holds below a boundary, from coarse probes through the multiples of 5 inside
a bracket to every minute left, the predicates of a crossing and of its interval, and the
driver that runs many searches together, probing each round's requests at once.

A search is a generator: it yields what it needs probed, ``{pair: minutes}`` (on the size's
seeds) or ``({pair: minutes}, n)`` (on the first ``n`` seeds), reads the probes it asked for
from the prober once resumed, and returns its answer. The prober is anything with
``run(wanted, n)`` and ``change(pair, minute, key, baseline) -> Estimate``.
"""

from __future__ import annotations

import math


def _drive(prober, searches: dict) -> dict:
    """Run the generators ``searches`` (``{key: generator}``) together: each yields what it
    needs, ``{pair: minutes}`` (on the size's seeds) or ``({pair: minutes}, n)`` (on the first
    ``n`` seeds of the sequence), and all the requests of a round are probed at once."""
    out, pending = {}, {}
    for key, gen in searches.items():
        try:
            pending[key] = (gen, next(gen))
        except StopIteration as stop:
            out[key] = stop.value
    while pending:
        wanted: dict = {}
        for _, req in pending.values():
            req, n = req if isinstance(req, tuple) else (req, None)
            for pair, minutes in req.items():
                wanted.setdefault(n, {}).setdefault(pair, set()).update(minutes)
        for n, asked in sorted(wanted.items(), key=lambda kv: kv[0] or 0):
            prober.run(asked, n)
        for key, (gen, _) in list(pending.items()):
            try:
                pending[key] = (gen, gen.send(None))
            except StopIteration as stop:
                out[key] = stop.value
                del pending[key]
    return out


def _boundary(prober, pair, holds, coarse):
    """Generator: ``(last minute where holds, first where it does not)`` of a predicate
    that holds below a boundary; None for "at or below the first probe" (first) or "beyond
    the last" (second); None as a whole when it cannot tell (no interval)."""
    yield {pair: coarse}
    seen = {m: holds(prober, pair, m) for m in coarse}
    if any(v is None for v in seen.values()):
        return None
    a, b = _bracket(seen)
    for step in (5, 1):
        while a is not None and b is not None and b - a > step:
            pts = [m for m in range(a + 1, b) if m % step == 0]
            if not pts:
                break
            yield {pair: pts}
            seen.update({m: holds(prober, pair, m) for m in pts})
            a, b = _bracket({m: v for m, v in seen.items() if a <= m <= b})
    return a, b


def _bracket(seen: dict) -> tuple:
    """The last minute that holds before the first that does not (None: none holds, or
    every one holds)."""
    order = sorted(seen)
    first_not = next((m for m in order if not seen[m]), None)
    before = [m for m in order if seen[m] and (first_not is None or m < first_not)]
    return (before[-1] if before else None), first_not


def _not_above_mean(t, key="be_median", baseline="FIFO"):
    def holds(prober, pair, m):
        e = prober.change(pair, m, key, baseline)
        return None if math.isnan(e.mean) else e.mean <= t
    return holds


def _below_interval(t, key="be_median", baseline="FIFO"):
    def holds(prober, pair, m):
        e = prober.change(pair, m, key, baseline)
        return None if not e.known else e.high < t
    return holds


def _not_above_interval(t, key="be_median", baseline="FIFO"):
    def holds(prober, pair, m):
        e = prober.change(pair, m, key, baseline)
        return None if not e.known else not e.low > t
    return holds


