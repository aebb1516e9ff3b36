"""Distributions of a workload model: parametric (scipy.stats families) and categorical.

Every parametric family is fitted by maximum likelihood with ``scipy.stats.<family>.fit``
and the location fixed at 0 (``floc=0``): run times and grace periods are positive
quantities starting at zero, and a free location makes the MLE unstable on heavy tails.
Families are compared by AIC = 2k - 2 log L, where k counts the free parameters (the
shapes plus the scale; the fixed location is not counted). The Kolmogorov-Smirnov
statistic of each fitted family against the data is kept beside its AIC.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from fitgpp.errors import FitgppError

#: Candidate families for run times, in the order they are tried (ties go to the first).
FAMILIES: tuple[str, ...] = ("lognorm", "weibull_min", "gamma", "expon", "fisk")


class FitError(FitgppError):
    """Data that cannot be fitted (too few values, values <= 0, no family fits)."""


def _family(name: str):
    if name not in FAMILIES:
        raise FitgppError(f"unknown distribution family {name!r} (allowed: {', '.join(FAMILIES)})")
    # scipy.stats costs about 0.9 s to import; deferred to the first draw or fit, so that
    # importing the package (notebooks, ``import fitgpp.studies``) does not pay for it.
    from scipy import stats

    return getattr(stats, name)


#: The shape parameters of each family, as ``scipy.stats.<family>.shapes`` names them (a test
#: checks they agree): loading a model reads its parameters by these names, and importing
#: scipy.stats for them cost every warm panel about 0.6 s (issue 26).
SHAPES: dict[str, tuple[str, ...]] = {"lognorm": ("s",), "weibull_min": ("c",), "gamma": ("a",),
                                      "expon": (), "fisk": ("c",)}


def param_names(family: str) -> list[str]:
    """The scipy parameter names of ``family``: its shapes, then loc and scale."""
    if family not in FAMILIES:
        _family(family)     # says which families there are
    return [*SHAPES[family], "loc", "scale"]


@dataclass(frozen=True)
class Dist:
    """A scipy.stats family with named parameters, optionally truncated to ``(0, max]``.

    Sampling draws ``u ~ U(0, F(max))`` and returns ``ppf(u)`` (inverse-CDF sampling of the
    truncated distribution), so it uses exactly one uniform per value. ``fit`` holds the
    fit statistics when the distribution was fitted (n, aic, ks, method, candidates).
    """

    family: str
    params: dict
    max: float | None = None
    fit: dict | None = field(default=None, compare=False)

    def frozen(self):
        names = param_names(self.family)
        return _family(self.family)(**{k: self.params[k] for k in names})

    def rvs(self, n: int, rng: np.random.Generator) -> np.ndarray:
        d = self.frozen()
        top = 1.0 if self.max is None else float(d.cdf(self.max))
        u = rng.random(n) * top
        x = d.ppf(u)
        # ppf(0) can be 0 (the support's edge); keep values strictly positive.
        return np.maximum(x, np.finfo(float).tiny)

    def mean(self) -> float:
        d = self.frozen()
        if self.max is None:
            return float(d.mean())
        return float(d.expect(lambda x: x, lb=0.0, ub=self.max, conditional=True))

    def median(self) -> float:
        d = self.frozen()
        if self.max is None:
            return float(d.median())
        return float(d.ppf(0.5 * d.cdf(self.max)))

    def to_dict(self) -> dict:
        out = {"family": self.family, "params": dict(self.params), "max": self.max}
        if self.fit is not None:
            out["fit"] = self.fit
        return out

    def describe(self) -> str:
        p = ", ".join(f"{k}={v:.4g}" for k, v in self.params.items())
        return f"{self.family}({p})" + (f" truncated at {self.max:g}" if self.max else "")


@dataclass(frozen=True)
class Categorical:
    """An empirical categorical distribution over integer ``values``."""

    values: tuple[int, ...]
    probs: tuple[float, ...]

    def rvs(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.rvs_from(rng.random(n))

    def rvs_from(self, u: np.ndarray) -> np.ndarray:
        """The values for given uniforms ``u`` in [0, 1) (inverse-CDF)."""
        return np.asarray(self.values, dtype=np.int64)[_pick(np.asarray(self.probs), u)]

    def mean(self) -> float:
        return float(np.dot(self.values, self.probs))

    def to_dict(self) -> dict:
        return {"values": list(self.values), "probs": list(self.probs)}

    @classmethod
    def from_values(cls, x) -> Categorical:
        vals, counts = np.unique(np.asarray(x, dtype=np.int64), return_counts=True)
        return cls(tuple(int(v) for v in vals), tuple(float(c / counts.sum()) for c in counts))


def _pick(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Index drawn for each uniform ``u`` by inverting the cumulative ``probs``."""
    cum = np.cumsum(probs)
    cum /= cum[-1]
    return np.minimum(np.searchsorted(cum, u, side="right"), len(probs) - 1)


def _fit_one(family: str, x: np.ndarray) -> dict:
    fam = _family(family)
    params = fam.fit(x, floc=0)
    names = param_names(family)
    d = fam(*params)
    loglik = float(np.sum(d.logpdf(x)))
    k = len(names) - 1  # loc is fixed
    aic = 2 * k - 2 * loglik if math.isfinite(loglik) else math.inf
    from scipy import stats

    ks = float(stats.kstest(x, d.cdf).statistic)
    return {"family": family, "params": {n: float(v) for n, v in zip(names, params)},
            "aic": aic, "ks": ks}


def fit_best(x, families: tuple[str, ...] = FAMILIES, *, what: str = "values",
             truncate: bool = True) -> Dist:
    """Fit every family to ``x`` (MLE, ``floc=0``) and return the one with the lowest AIC.

    The result is truncated at ``max(x)`` when ``truncate`` (synthesis then never draws a
    value longer than any seen). ``Dist.fit`` records n, the method, and every candidate's
    parameters, AIC and KS statistic.
    """
    x = np.asarray(x, dtype=float)
    if x.size < 10:
        raise FitError(f"{what}: need at least 10 values to fit a distribution, got {x.size}")
    if not np.all(np.isfinite(x)) or np.any(x <= 0):
        raise FitError(f"{what}: values must be finite and > 0 to fit")
    cands = []
    for fam in families:
        try:
            cands.append(_fit_one(fam, x))
        except (ValueError, RuntimeError, FloatingPointError) as exc:  # pragma: no cover
            cands.append({"family": fam, "params": None, "aic": math.inf, "ks": math.inf,
                          "error": str(exc)})
    ok = [c for c in cands if math.isfinite(c["aic"])]
    if not ok:
        raise FitError(f"{what}: no family could be fitted ({', '.join(families)})")
    best = min(ok, key=lambda c: c["aic"])
    fit = {"n": int(x.size), "method": "scipy.stats MLE, loc fixed at 0 (floc=0); "
           "chosen by lowest AIC (k = shapes + scale)",
           "aic": best["aic"], "ks": best["ks"], "candidates": cands}
    return Dist(best["family"], best["params"], float(x.max()) if truncate else None, fit)
