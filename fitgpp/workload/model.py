"""The workload model: per class, how jobs arrive, how long they run, what they demand.

A :class:`WorkloadModel` is a small frozen object saved as readable JSON
(``format: "fitgpp-workload"``, ``version: 1``). Per class (TE, BE) it holds

- ``arrival``: a Poisson rate [jobs/s] and, when the source spans two days or more,
  a daily profile (24 hourly factors with mean 1; hour 0 starts at the trace's time 0);
- ``run_time``: a fitted :class:`~fitgpp.workload.dists.Dist` [s] with its AIC and KS;
- ``gpu``: an empirical categorical distribution of GPUs per job;
- ``cpu_mem``: for each GPU count, the empirical (cpu_milli, mem_mib) pairs with weights;
- ``grace_period`` (BE only): a Dist [s]; traces carry none, so usually the documented
  default :data:`DEFAULT_GRACE`;
- ``tasks`` (optional): for each GPU count (per task), the empirical numbers of tasks with
  weights, like ``cpu_mem``. Absent (every shipped model before multi-node jobs, and any
  model fitted to a trace without gangs) means every job is one task. It is conditional on
  the GPUs because gangs are not spread evenly: in Philly only jobs of whole 6- to 8-GPU
  tasks are gangs, and an independent draw would make 4-node gangs of 1-GPU tasks.

plus the TE share (TE rate / total rate) and the provenance (source file, sha256, filters
and mapping, rows, fit statistics, package version). Loading checks every field and raises
:class:`WorkloadModelError` naming the file and the field.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fitgpp.errors import FitgppError
from fitgpp.sim.validate import MAX_CONFIG_BYTES, MAX_TIME_S, loads_json, read_regular
from fitgpp.workload.dists import FAMILIES, Categorical, Dist, param_names

FORMAT = "fitgpp-workload"
VERSION = 1
CLASSES = ("TE", "BE")

#: Default grace period of a BE job [s]: lognormal with median 60 s and sigma 1, truncated at
#: 15 min (5th percentile about 12 s, 95th about 5 min): "seconds to minutes". Real traces
#: record no grace periods, so fitted models use this unless told otherwise.
DEFAULT_GRACE = Dist("lognorm", {"s": 1.0, "loc": 0.0, "scale": 60.0}, 900.0)


#: Sane bounds of a model's numbers (a tampered or corrupt model is refused, naming the field):
#: arrival rates [jobs/s], shape parameters of a distribution, its loc, scale and max [s],
#: demands (integers, like trace resources), cpu_mem and tasks weights (capped, so that every
#: list's sum is finite: 1e308 + 1e308 overflowed and turned 50/50 into always one), and tasks
#: per job (a gang needs one node per task).
RATE_BOUNDS = (1e-9, 1e4)
SHAPE_BOUNDS = (1e-3, 1e3)
MAX_DEMAND = 2**53 - 1
MAX_WEIGHT = 1e15
MAX_TASKS = 2**20


class WorkloadModelError(FitgppError):
    """A model file or model object is malformed; the message names the field."""


@dataclass(frozen=True)
class ClassModel:
    """What the model knows about one job class."""

    rate: float                                  # jobs per second
    daily_profile: tuple[float, ...] | None      # 24 factors, mean 1, or None (flat)
    run_time: Dist                               # seconds
    gpu: Categorical
    cpu_mem: dict                                # {gpu: ((cpu_milli, mem_mib, weight), ...)}
    grace_period: Dist | None = None             # seconds; BE only
    tasks: dict | None = None                    # {gpu: ((tasks, weight), ...)}; None: 1 task

    def to_dict(self) -> dict:
        out = {
            "arrival": {"rate_per_s": self.rate,
                        "daily_profile": list(self.daily_profile) if self.daily_profile else None},
            "run_time": self.run_time.to_dict(),
            "gpu": self.gpu.to_dict(),
            "cpu_mem": {str(g): [list(p) for p in pairs] for g, pairs in self.cpu_mem.items()},
            "grace_period": self.grace_period.to_dict() if self.grace_period else None,
        }
        if self.tasks is not None:  # absent means one task: older files stay byte-identical
            out["tasks"] = {str(g): [list(p) for p in pairs] for g, pairs in self.tasks.items()}
        return out

    def tasks_given_gpu(self, g: int) -> Categorical:
        """Distribution of the number of tasks of a job of ``g`` GPUs per task."""
        if self.tasks is None:
            return Categorical((1,), (1.0,))
        pairs = self.tasks[g]
        tot = sum(w for _, w in pairs)
        return Categorical(tuple(int(k) for k, _ in pairs), tuple(w / tot for _, w in pairs))

    def tasks_marginal(self) -> Categorical:
        """Distribution of the number of tasks of a job, over all GPU counts."""
        acc: dict = {}
        for g, p_g in zip(self.gpu.values, self.gpu.probs):
            c = self.tasks_given_gpu(g)
            for k, p in zip(c.values, c.probs):
                acc[k] = acc.get(k, 0.0) + p_g * p
        ks = sorted(acc)
        return Categorical(tuple(ks), tuple(acc[k] for k in ks))

    def mean_gpus(self) -> float:
        """Mean GPUs of a whole job (GPUs per task x tasks)."""
        return float(sum(p_g * g * self.tasks_given_gpu(g).mean()
                         for g, p_g in zip(self.gpu.values, self.gpu.probs)))

    def mean_gpu_seconds(self) -> float:
        return self.mean_gpus() * self.run_time.mean()


@dataclass(frozen=True)
class WorkloadModel:
    """A statistical model of a workload; draw traces from it with :func:`synthesize`."""

    name: str
    classes: dict                    # {"TE": ClassModel, "BE": ClassModel}
    description: str = ""
    provenance: dict = field(default_factory=dict, compare=False)
    path: str | None = field(default=None, compare=False)        # file it was loaded from
    file_sha256: str | None = field(default=None, compare=False)
    loaded_sha256: str | None = field(default=None, compare=False, repr=False)

    def file_ref(self) -> tuple[str | None, str | None]:
        """(path, file sha256) of the file this model was loaded from, or (None, None)
        when there is none or the object was changed since (``dataclasses.replace``)."""
        if self.path is None or self.loaded_sha256 != self.sha256():
            return None, None
        return self.path, self.file_sha256

    @property
    def te_share(self) -> float:
        """Fraction of arrivals that are TE (TE rate / total rate)."""
        te, be = self.classes["TE"].rate, self.classes["BE"].rate
        return te / (te + be)

    @property
    def rate(self) -> float:
        return self.classes["TE"].rate + self.classes["BE"].rate

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "name": self.name,
                "description": self.description, "te_share": self.te_share,
                "classes": {c: self.classes[c].to_dict() for c in CLASSES},
                "provenance": self.provenance}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, allow_nan=False) + "\n"

    def sha256(self) -> str:
        """sha256 of the canonical JSON text (what :meth:`save` writes)."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    def save(self, path: str | os.PathLike) -> None:
        Path(path).write_text(self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike) -> WorkloadModel:
        p = Path(path)
        if not p.exists():
            raise WorkloadModelError(f"{p}: no such model file")
        data = read_regular(p, "model JSON", WorkloadModelError, MAX_CONFIG_BYTES)
        doc = loads_json(data, str(p), WorkloadModelError)
        m = from_dict(doc, where=str(p))
        return WorkloadModel(m.name, m.classes, m.description, m.provenance,
                             path=str(p.resolve()), file_sha256=hashlib.sha256(data).hexdigest(),
                             loaded_sha256=m.sha256())

    def describe(self) -> str:
        lines = [f"workload model {self.name!r}: TE share {self.te_share:.3f}, "
                 f"{self.rate * 3600:.4g} jobs/h"]
        for c in CLASSES:
            k = self.classes[c]
            fit = k.run_time.fit or {}
            gof = (f" (AIC {fit['aic']:.6g}, KS {fit['ks']:.4f}, n {fit['n']})"
                   if "aic" in fit else "")
            lines.append(f"  {c}: {k.rate * 3600:.4g} jobs/h, run time {k.run_time.describe()}"
                         f"{gof}, mean {k.run_time.mean():.4g} s; GPUs "
                         + ", ".join(f"{v}:{p:.3f}" for v, p in zip(k.gpu.values, k.gpu.probs))
                         + ("" if k.tasks is None else "; tasks " + ", ".join(
                             f"{v}:{p:.4f}" for v, p in zip(*_vp(k.tasks_marginal())))))
        return "\n".join(lines)


def _vp(c: Categorical):
    return c.values, c.probs


# ---- validation -----------------------------------------------------------------------------

class _Where:
    def __init__(self, where: str):
        self.where = where

    def fail(self, path: str, problem: str):
        raise WorkloadModelError(f"{self.where}: field '{path}': {problem}")

    def get(self, d, key, path, kind=None):
        if not isinstance(d, dict):
            self.fail(path.rsplit(".", 1)[0] if "." in path else path, "expected an object")
        if key not in d:
            self.fail(path, "missing")
        v = d[key]
        if kind is not None and not isinstance(v, kind):
            self.fail(path, f"expected {_kind_name(kind)}, got {type(v).__name__} {v!r}"[:200])
        return v

    def number(self, v, path, *, positive=False, nonneg=False, allow_none=False, lo=None,
               hi=None):
        if v is None and allow_none:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            self.fail(path, f"expected a finite number, got {v!r}"[:200])
        if positive and v <= 0:
            self.fail(path, f"must be > 0, got {v!r}")
        if nonneg and v < 0:
            self.fail(path, f"must be >= 0, got {v!r}")
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            self.fail(path, f"must be in [{lo if lo is not None else '-inf'}, "
                            f"{hi if hi is not None else 'inf'}] (a sane bound), got {v!r}")
        return float(v)

    def integer(self, v, path, *, nonneg=True):
        if isinstance(v, bool) or not isinstance(v, int) or (nonneg and v < 0) \
                or v > MAX_DEMAND:
            self.fail(path, f"expected an integer >= 0 and < 2**53, got {v!r}"[:200])
        return v


def _kind_name(kind) -> str:
    names = {dict: "an object", list: "a list", str: "a string"}
    if isinstance(kind, tuple):
        return " or ".join(names.get(k, k.__name__) for k in kind)
    return names.get(kind, kind.__name__)


def _dist(w: _Where, d, path: str) -> Dist:
    if not isinstance(d, dict):
        w.fail(path, "expected an object with family, params, max")
    fam = w.get(d, "family", f"{path}.family", str)
    if fam not in FAMILIES:
        w.fail(f"{path}.family", f"unknown family {fam!r} (allowed: {', '.join(FAMILIES)})")
    params = w.get(d, "params", f"{path}.params", dict)
    names = param_names(fam)
    for n in names:
        lo, hi = ((0.0, MAX_TIME_S) if n == "loc" else (None, MAX_TIME_S) if n == "scale"
                  else SHAPE_BOUNDS)
        w.number(w.get(params, n, f"{path}.params.{n}"), f"{path}.params.{n}",
                 positive=(n != "loc"), lo=lo, hi=hi)
    extra = sorted(set(params) - set(names))
    if extra:
        w.fail(f"{path}.params", f"unknown parameter(s) {', '.join(extra)} for {fam} "
               f"(expected {', '.join(names)})")
    mx = w.number(d.get("max"), f"{path}.max", positive=True, allow_none=True, hi=MAX_TIME_S)
    fit = d.get("fit")
    if fit is not None and not isinstance(fit, dict):
        w.fail(f"{path}.fit", "expected an object or null")
    return Dist(fam, {n: float(params[n]) for n in names}, mx, fit)


def _probs(w: _Where, probs, path: str) -> tuple[float, ...]:
    out = tuple(w.number(p, f"{path}[{i}]", nonneg=True) for i, p in enumerate(probs))
    if not out or abs(sum(out) - 1.0) > 1e-6:
        w.fail(path, f"probabilities must sum to 1, got {sum(out):.6g}")
    return out


def _class(w: _Where, c, d, name: str) -> ClassModel:
    arr = w.get(d, "arrival", f"{name}.arrival", dict)
    rate = w.number(w.get(arr, "rate_per_s", f"{name}.arrival.rate_per_s"),
                    f"{name}.arrival.rate_per_s", positive=True, lo=RATE_BOUNDS[0],
                    hi=RATE_BOUNDS[1])
    prof = w.get(arr, "daily_profile", f"{name}.arrival.daily_profile", (list, type(None)))
    if prof is not None:
        if len(prof) != 24:
            w.fail(f"{name}.arrival.daily_profile", f"expected 24 hourly factors, got {len(prof)}")
        prof = tuple(w.number(v, f"{name}.arrival.daily_profile[{i}]", nonneg=True)
                     for i, v in enumerate(prof))
        if abs(np.mean(prof) - 1.0) > 1e-6:
            w.fail(f"{name}.arrival.daily_profile", f"factors must have mean 1, got "
                   f"{np.mean(prof):.6g}")
    run = _dist(w, w.get(d, "run_time", f"{name}.run_time"), f"{name}.run_time")
    g = w.get(d, "gpu", f"{name}.gpu", dict)
    vals = w.get(g, "values", f"{name}.gpu.values", list)
    vals = tuple(w.integer(v, f"{name}.gpu.values[{i}]") for i, v in enumerate(vals))
    probs = w.get(g, "probs", f"{name}.gpu.probs", list)
    if len(probs) != len(vals) or not vals:
        w.fail(f"{name}.gpu", f"values ({len(vals)}) and probs ({len(probs)}) must be "
               "non-empty lists of the same length")
    if len(set(vals)) != len(vals):
        w.fail(f"{name}.gpu.values", "duplicate values")
    gpu = Categorical(vals, _probs(w, probs, f"{name}.gpu.probs"))
    cm = w.get(d, "cpu_mem", f"{name}.cpu_mem", dict)

    def cpu_mem_row(v, p, at):
        row = (w.integer(p[0], at + "[0]"), w.integer(p[1], at + "[1]"),
               w.number(p[2], at + "[2]", positive=True, hi=MAX_WEIGHT))
        if v == 0 and p[0] == 0 and p[1] == 0:
            w.fail(at, "a job with 0 GPUs must demand some CPU or memory")
        return row

    cpu_mem = _per_gpu(w, cm, vals, f"{name}.cpu_mem", ("cpu_milli", "mem_mib", "weight"),
                       cpu_mem_row)
    gp = w.get(d, "grace_period", f"{name}.grace_period", (dict, type(None)))
    if c == "BE" and gp is None:
        w.fail(f"{name}.grace_period", "BE jobs need a grace-period distribution")
    grace = _dist(w, gp, f"{name}.grace_period") if gp is not None else None
    return ClassModel(rate, prof, run, gpu, cpu_mem, grace, _tasks(w, d.get("tasks"), vals, name))


def _per_gpu(w: _Where, obj: dict, vals, where: str, names: tuple, parse, check=None) -> dict:
    """``{gpu: (row, ...)}`` from ``obj`` = ``{gpu: [[names...], ...]}``: a non-empty list for
    every GPU count of ``vals`` and none other. ``parse(v, entry, at)`` checks and returns one
    row; ``check(v, rows, at)``, if given, checks the rows of one GPU count together."""
    out = {}
    for v in vals:
        pairs = w.get(obj, str(v), f"{where}.{v}", list)
        if not pairs:
            w.fail(f"{where}.{v}", f"no ({', '.join(names)}) entries")
        rows = []
        for i, p in enumerate(pairs):
            at = f"{where}.{v}[{i}]"
            if not isinstance(p, list) or len(p) != len(names):
                w.fail(at, f"expected [{', '.join(names)}], got {p!r}")
            rows.append(parse(v, p, at))
        if check is not None:
            check(v, rows, f"{where}.{v}")
        out[v] = tuple(rows)
    extra = sorted(set(obj) - {str(v) for v in vals})
    if extra:
        w.fail(where, f"entries for GPU counts not in gpu.values: {', '.join(extra)}")
    return out


def _tasks(w: _Where, tk, vals, name: str) -> dict | None:
    """The optional ``tasks`` field: {gpu: [[tasks, weight], ...]} for every GPU count."""
    if tk is None:
        return None
    if not isinstance(tk, dict):
        w.fail(f"{name}.tasks", "expected an object {gpu: [[tasks, weight], ...]} or null")

    def row(v, p, at):
        k = w.integer(p[0], at + "[0]")
        if not 1 <= k <= MAX_TASKS:
            w.fail(at + "[0]", f"a job has at least 1 task and at most {MAX_TASKS}, got {k}")
        return k, w.number(p[1], at + "[1]", positive=True, hi=MAX_WEIGHT)

    def distinct(v, rows, at):
        if len({k for k, _ in rows}) != len(rows):
            w.fail(at, "a number of tasks is listed twice")

    return _per_gpu(w, tk, vals, f"{name}.tasks", ("tasks", "weight"), row, distinct)


def from_dict(doc, where: str = "<model>") -> WorkloadModel:
    """Build and validate a model from its JSON document; errors name ``where`` and the field."""
    w = _Where(where)
    if not isinstance(doc, dict):
        raise WorkloadModelError(f"{where}: expected a JSON object at the top level")
    fmt = w.get(doc, "format", "format", str)
    if fmt != FORMAT:
        w.fail("format", f"expected {FORMAT!r}, got {fmt!r}")
    ver = w.get(doc, "version", "version")
    if ver != VERSION:
        w.fail("version", f"unsupported version {ver!r} (this fitgpp reads {VERSION})")
    name = w.get(doc, "name", "name", str)
    if not name:
        w.fail("name", "empty")
    desc = doc.get("description", "")
    if not isinstance(desc, str):
        w.fail("description", "expected a string")
    classes = w.get(doc, "classes", "classes", dict)
    extra = sorted(set(classes) - set(CLASSES))
    if extra:
        w.fail("classes", f"unknown class(es) {', '.join(extra)} (expected TE and BE)")
    cm = {c: _class(w, c, w.get(classes, c, f"classes.{c}", dict), f"classes.{c}")
          for c in CLASSES}
    prov = doc.get("provenance", {})
    if not isinstance(prov, dict):
        w.fail("provenance", "expected an object")
    m = WorkloadModel(name, cm, desc, prov)
    if "te_share" in doc:
        ts = w.number(doc["te_share"], "te_share")
        if abs(ts - m.te_share) > 1e-6:
            w.fail("te_share", f"{ts:.6g} disagrees with the class rates, which give "
                   f"{m.te_share:.6g} (TE rate / total rate)")
    return m


# ---- shipped models -------------------------------------------------------------------------

def models_dir() -> Path:
    """Where the shipped models and real traces live: the package data ``fitgpp.traces``,
    which is the repository's top-level ``traces/`` folder (mapped into the package by
    ``pyproject.toml``, so editable and wheel installs both find it). From a checkout on
    ``sys.path`` without an install, ``<checkout>/traces``."""
    from importlib import resources
    try:
        return Path(str(resources.files("fitgpp.traces")))
    except ModuleNotFoundError:  # a source tree used without installing it
        return Path(__file__).resolve().parents[2] / "traces"


def list_models() -> list[str]:
    """Names of the shipped models (the JSON files in :func:`models_dir`)."""
    d = models_dir()
    return sorted(p.stem for p in d.glob("*.json")) if d.is_dir() else []


def load_model(name_or_path: str | os.PathLike | WorkloadModel) -> WorkloadModel:
    """A shipped model by name (see :func:`list_models`) or a model JSON file by path."""
    if isinstance(name_or_path, WorkloadModel):
        return name_or_path
    text = str(name_or_path)
    p = Path(text)
    if p.suffix == ".json" or os.sep in text or p.exists():
        return WorkloadModel.load(p)
    shipped = models_dir() / f"{text}.json"
    if shipped.is_file():
        return WorkloadModel.load(shipped)
    names = list_models()
    raise WorkloadModelError(f"no model file or shipped model named {text!r} (shipped: "
                             f"{', '.join(names) if names else f'none found in {models_dir()}'})")
