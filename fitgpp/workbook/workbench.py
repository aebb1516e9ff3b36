"""The workbench's plain functions: two configurations side by side over several seeds,
each an ad-hoc study run through the sweep's cell cache.

A configuration is a :class:`Values` (a policy, built-in or a researcher's own, with its
field values, and the workload: model, jobs, load, TE share, grace scale, seeds). The
workbench compares the *current* configuration with a *pinned* one (any configuration;
by default FIFO on the current workload). Each becomes a one-policy
:class:`fitgpp.studies.base.Study` (:meth:`Values.study`) and runs with
:meth:`Study.run`, so every cell goes through :func:`fitgpp.sweep.run_sweep` and its
cache: asking again for a configuration already computed simulates nothing, in this
session or the next. The numbers are the metrics declared in :mod:`fitgpp.analysis.metrics`,
each with its interval over the seeds (:func:`fitgpp.analysis.tables.interval_text`) and the
change against the pinned configuration paired per seed
(:func:`fitgpp.analysis.metrics.paired_change`); the two are named by
:func:`fitgpp.figures.plots.config_label` with every field and workload value that differs
between them.

    cur, pin = compare(Values(s=...), Values(policy="fifo"), cache=tmp)
    numbers(cur, pin)          # a DataFrame: both, and the change against the pinned one
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field, replace

import pandas as pd
import xarray as xr

from fitgpp.figures import names, plots
from fitgpp.sim.cluster import DEFAULT_CLUSTER, DEFAULT_LOAD, Cluster
from fitgpp.errors import FitgppError
from fitgpp.analysis.metrics import CLIP_NOTE, METRICS
from fitgpp.sim.policies import registry
from fitgpp.studies.base import QUICK, Outcome, Size, Study
from fitgpp.workbook.views import Arm, metric_rows, slowdown_view

#: Workload fields of :class:`Values` (the rest are the policy and its parameters).
WORKLOAD = ("te_fraction", "load", "grace_scale", "seed", "model", "n_jobs", "n_seeds")
#: Of those, the sweep's workload knobs (``n_jobs`` and ``load`` come with the size).
KNOBS = ("te_fraction", "grace_scale")


class WorkbenchError(FitgppError):
    """A workbench configuration that cannot run as given."""


@dataclass(frozen=True)
class AdhocStudy(Study):
    """A study the workbench declares for one configuration. ``restrict``: draw only the
    demands that fit a node of the cluster (models fitted to big real clusters hold a few
    that fit no node here); else the workload is drawn as every study draws it, so the
    cells are the same cells, cached once."""

    restrict: bool = False

    def experiments(self, size: Size = QUICK) -> dict:
        exps = super().experiments(size)
        if not self.restrict:
            return exps
        return {k: dataclasses.replace(e, workload=dataclasses.replace(
            e.workload, on_unfit="restrict")) for k, e in exps.items()}


_FITS: dict = {}


def fits(model: str, cluster: Cluster) -> bool:
    """Whether every demand of workload model ``model`` fits some node of ``cluster``."""
    from fitgpp.workload import load_model, synthesize
    from fitgpp.workload.synth import SynthesisError
    key = (model, cluster.describe())
    if key not in _FITS:
        try:
            synthesize(load_model(model), n_jobs=1, seed=0, cluster=cluster)
            _FITS[key] = True
        except SynthesisError:
            _FITS[key] = False
    return _FITS[key]


@dataclass(frozen=True)
class Values:
    """One configuration. Times in seconds; ``load`` is the offered GPU load (1 = full).

    ``policy``: a registered name, ``"module:Class"``, a policy class or object; ``params``:
    ``(field, value)`` pairs for it (fields not given keep their defaults; a ``seed`` field,
    RAND's, follows each workload's seed). ``n_seeds`` workloads run: seeds ``seed``,
    ``seed + 1``, ...
    """

    policy: object = "fitgpp"
    params: tuple = ()
    te_fraction: float | None = None   # None: the model's own TE share
    load: float = DEFAULT_LOAD
    grace_scale: float = 1.0
    seed: int = 0
    model: str = "paper-default"
    n_jobs: int = 2000
    n_seeds: int = 1

    def seeds(self) -> tuple[int, ...]:
        if int(self.n_seeds) < 1:
            raise WorkbenchError(f"seeds (count): need at least 1, got {self.n_seeds!r}")
        return tuple(range(int(self.seed), int(self.seed) + int(self.n_seeds)))

    def name(self) -> str:
        """The policy's name in results: its registry name, else its class's label."""
        return registry.label(registry.policy_class(self.policy))

    def policy_params(self) -> dict:
        """The fields ``params`` gives the policy (only fields it has; no ``seed``)."""
        fields = registry.declared(self.policy)
        return {k: v for k, v in dict(self.params).items() if k in fields and k != "seed"}

    def fields(self) -> dict:
        """Every field of the policy (but ``seed``) with the value this configuration runs."""
        return {k: v for k, v in registry.params(registry.resolve(
            self.policy, **self.policy_params())).items() if k != "seed"}

    def workload(self) -> dict:
        return {k: getattr(self, k) for k in WORKLOAD}

    def study(self, cluster: Cluster = DEFAULT_CLUSTER) -> AdhocStudy:
        """This configuration as a one-policy study (its seeds and size: :meth:`size`)."""
        knobs = {k: (float(getattr(self, k)),) for k in KNOBS if getattr(self, k) is not None}
        return AdhocStudy(key="workbench", title="workbench", question="one configuration",
                          policies={self.name(): {"policy": self.policy,
                                                  **self.policy_params()}},
                          knobs=knobs, model=self.model,
                          restrict=not fits(self.model, cluster))

    def size(self, cluster: Cluster = DEFAULT_CLUSTER) -> Size:
        return Size(n_jobs=int(self.n_jobs), seeds=self.seeds(), load=float(self.load),
                    model=self.model, cluster=cluster, workers=0)

    def digest(self) -> str:
        """The sha256 of the policy's code and field values
        (:func:`fitgpp.sim.policies.registry.digest`)."""
        return registry.digest(registry.resolve(self.policy, **self.policy_params()))

    def record(self) -> dict:
        """What a result records: the policy (``module:Class`` if not registered), every
        field of it, and the workload values."""
        policy = registry.resolve(self.policy, **self.policy_params())
        return {"policy": registry.ref(policy), **self.fields(), **self.workload()}


@dataclass
class Side(Arm):
    """One configuration's results: its label, the study's :class:`Outcome` and its
    :class:`Values` (an :class:`fitgpp.workbook.views.Arm` whose runs carry the values)."""

    values: Values | None = None
    _runs: list = field(default_factory=list, repr=False)
    _util: object = field(default=None, repr=False)

    def cell(self, seed: int) -> xr.Dataset:
        """Seed ``seed``'s Dataset as :meth:`runs` gives it."""
        return self.runs()[self.values.seeds().index(seed)]

    def runs(self) -> list[xr.Dataset]:
        """The per-seed simulation Datasets (from the cells, no simulation), with the
        values in ``attrs["workbench"]`` (JSON) and ``attrs["workbench_<name>"]``."""
        if not self._runs:
            c = self.conf
            for seed in self.values.seeds():
                ds = self.outcome.run(c["name"], seed=seed, **c["params"], **c["knobs"]).copy()
                rec = self.values.record() | {"seed": seed}
                ds.attrs["workbench"] = json.dumps(rec, sort_keys=True, default=str)
                for k, x in rec.items():
                    if x is not None:
                        ds.attrs[f"workbench_{k}"] = int(x) if isinstance(x, bool) else x
                self._runs.append(ds)
        return self._runs

    def steadiness(self) -> str:
        """Whether its runs reached a steady state (:func:`fitgpp.analysis.stability.stability` on each
        seed's run): ``"steady state: steady in 2 of 3 seeds; seed 0: not steady: ..."``."""
        from fitgpp.analysis.stability import stability
        judged = [stability(ds) for ds in self.runs()]
        n = len(judged)
        counts = {w: sum(j.verdict == w for j in judged)
                  for w in ("steady", "not steady", "cannot tell")}
        said = ", ".join(f"{w} in {k} of {n} seed{'s' * (n != 1)}" for w, k in counts.items() if k)
        return f"steady state: {said}; seed {self.values.seeds()[0]}: {judged[0].text()}"

    def utilization(self, scales: dict | None = None):
        """Its utilization over time (first seed), titled with its label, on the axis ranges
        ``scales`` (:func:`fitgpp.figures.plots.utilization_extent`; None: its own); built
        once for each."""
        key = json.dumps(scales, sort_keys=True)
        if self._util is None or self._util[0] != key:
            self._util = (key, plots.utilization(
                self.runs()[0], title=f"GPU use and waiting jobs over time, {self.label}",
                **(scales or {})))
        return self._util[1]


def run(v: Values, cluster: Cluster = DEFAULT_CLUSTER, *, cache=None,
        memo: dict | None = None) -> Outcome:
    """Run (or read from the sweep cache) configuration ``v`` on every seed. ``memo``:
    ``{key: Outcome}`` kept between calls (a repeated configuration is not even read
    again); ``cache``: as for :meth:`Study.run`."""
    study, size = v.study(cluster), v.size(cluster)
    key = json.dumps([registry.ref(registry.policy_class(v.policy)),
                      registry.digest(registry.resolve(v.policy, **v.policy_params())),
                      v.policy_params(), v.workload(), cluster.describe()], default=str)
    if memo is not None and key in memo:
        return memo[key]
    o = study.run(size, cache=cache)
    if memo is not None:
        memo[key] = o
    return o


def differing(a: Values, b: Values) -> list[str]:
    """The policy fields and workload values that differ between ``a`` and ``b``."""
    fa, fb = a.fields(), b.fields()
    out = [k for k in fa if k in fb and fa[k] != fb[k]]
    return out + [k for k in WORKLOAD if getattr(a, k) != getattr(b, k)]


def label(v: Values, varying=()) -> str:
    """``v`` named by :func:`fitgpp.figures.plots.config_label`, with the fields and workload
    values in ``varying``."""
    params = {**v.fields(), **{k: getattr(v, k) for k in WORKLOAD if k in varying}}
    return plots.config_label(v.name(), params, varying)


def labels(current: Values, pinned: Values | None) -> tuple[str, str | None]:
    """The names of the two configurations, each naming what differs between them
    (``FitGpp s=5.5 P=1`` and ``FitGpp s=5.5 P=3``); the pinned one says so when
    nothing differs."""
    if pinned is None:
        return label(current), None
    diff = differing(current, pinned)
    a, b = label(current, diff), label(pinned, diff)
    return a, (b if b != a else f"{b} (pinned)")


def compare(current: Values, pinned: Values | None, cluster: Cluster = DEFAULT_CLUSTER, *,
            cache=None, memo: dict | None = None) -> tuple[Side, Side | None]:
    """Both configurations run (through the cache) and labelled."""
    a, b = labels(current, pinned)
    cur = _side(current, a, cluster, cache, memo)
    return cur, None if pinned is None else _side(pinned, b, cluster, cache, memo)


def _side(v: Values, label: str, cluster: Cluster, cache, memo: dict | None) -> Side:
    """The :class:`Side` of ``v`` (kept in ``memo`` with its runs and charts)."""
    o = run(v, cluster, cache=cache, memo=memo)
    if memo is None:
        return Side(label, o, values=v)
    key = ("side", id(o), label)
    if key not in memo or memo[key].outcome is not o:
        memo[key] = Side(label, o, values=v)
    return memo[key]


def shown(o: Outcome) -> list:
    """The declared metrics a workbench result gives."""
    return [m for m in METRICS.values()
            if (m.var is not None and m.var in o.grid) or m.per_run is not None
            or m.cls is not None]


def numbers(cur: Side, pin: Side | None) -> pd.DataFrame:
    """Each metric's mean over the seeds with its interval, for both configurations, and
    the current one's change against the pinned one (paired per seed, when both ran the
    same seeds and the metric's change means something): :func:`fitgpp.workbook.views.metric_rows`,
    as a research question's panel builds them."""
    return metric_rows(cur, pin, shown(cur.outcome))


def charts(cur: Side, pin: Side | None) -> dict:
    """The slowdown CDFs of both (first seed) and each one's utilization over time (on
    shared scales when both are drawn)."""
    # side by side, both on the same time and waiting-jobs scales (0-20 beside 0-40 misled)
    scales = None if pin is None else plots.utilization_extent(cur.runs()[0], pin.runs()[0])
    out = {"utilization": cur.utilization(scales)}
    if pin is not None:
        out["utilization_pinned"] = pin.utilization(scales)
    seed = cur.values.seed
    return {"slowdown_cdf": slowdown_view((cur, pin), seed, "Slowdown of jobs: cumulative "
                                          f"distribution per class, seed {seed}"), **out}


def in_words(v: Values) -> str:
    """What :meth:`Values.record` holds, as the summary writes it: ``policy fitgpp, s=4,
    P=3, TE share 0.3, load 0.8, grace scale 1, seed 0, workload model paper-default,
    2,000 jobs, 5 seeds`` (:mod:`fitgpp.figures.names`; the record itself is in the
    results' attrs)."""
    rec = v.record()
    specs = [v.policy]
    return ", ".join([f"policy {rec.pop('policy')}"] + [
        names.phrase(k, x, specs) for k, x in rec.items() if x is not None])


def summary_parts(cur: Side, pin: Side | None) -> tuple[list[str], pd.DataFrame]:
    """What the workbench says: both configurations, the seeds and their steadiness (lines),
    and the numbers table (:func:`numbers`)."""
    n = len(cur.values.seeds())
    how = ("mean [95 % interval]" if n >= 3 else
           "mean (range; an interval needs 3 seeds)" if n == 2 else "one seed: no interval")
    lines = [f"{cur.label}: {in_words(cur.values)}"]
    if pin is not None:
        lines.append(f"{pin.label} (pinned): {in_words(pin.values)}")
    s = cur.values.seeds()
    lines.append(f"over {n} seed{'s' * (n > 1)} ({s[0]}-{s[-1]}), {how}; GPU utilization is "
                 "the time mean from the first submission to the last finish")
    table = numbers(cur, pin)
    lines += [f"{side.label}: {side.steadiness()}" for side in (cur, pin) if side is not None]
    return lines, table


def summary_text(cur: Side, pin: Side | None, parts=None) -> str:
    """What the workbench says, as text: both configurations, the seeds, the numbers table;
    ``parts``: :func:`summary_parts`, if made already."""
    lines, table = parts or summary_parts(cur, pin)
    text = "\n".join(lines) + "\n" + table.to_string()
    return text + ("\n" + CLIP_NOTE if "*" in table.to_string() else "")


def summary_html(cur: Side, pin: Side | None, parts=None) -> str:
    """:func:`summary_text` as HTML (its lines as paragraphs, the numbers as a table whose
    cells wrap in a narrow notebook); ``parts``: :func:`summary_parts`, if made already."""
    import html
    lines, table = parts or summary_parts(cur, pin)
    note = f"<p><small>{html.escape(CLIP_NOTE)}</small></p>" if "*" in table.to_string() else ""
    return (f'<p style="line-height: 1.4">{"<br>".join(html.escape(x) for x in lines)}</p>'
            + table.to_html(classes="fitgpp-numbers") + note)


def export_config(cur: Side, pin: Side | None, cluster: Cluster) -> tuple[dict, dict]:
    """What an export records, and the defaults its file names are told against: the
    current configuration (flat: file names carry each value that differs from the
    workbench as it opens), ``vs``, the pinned one's label (in file names when it is not
    FIFO), ``pinned``, the pinned configuration complete, ``labels``, both names as drawn,
    and ``digests``, both policies' code digests (these three in the files and the
    manifest, not in file names)."""
    both = {"pinned": None if pin is None else pin.values.record(),
            "labels": {"current": cur.label, "pinned": None if pin is None else pin.label},
            "digests": {"current": cur.values.digest(),
                        "pinned": None if pin is None else pin.values.digest()}}
    config = {**cur.values.record(), "cluster": cluster.describe(),
              "vs": None if pin is None else pin.label, **both}
    first = opening(Values())
    defaults = {**first.record(), "cluster": DEFAULT_CLUSTER.describe(),
                "vs": labels(first, replace(first, policy="fifo", params=()))[1], **both}
    return config, defaults


def opening(v: Values) -> Values:
    """``v`` as the workbench opens it: the model's own TE share (to the 0.05 step of its
    control) when none is given, a registered policy by its lower-case name."""
    from fitgpp.sim.policies import POLICIES
    from fitgpp.workload import load_model
    if v.te_fraction is None:
        v = replace(v, te_fraction=round(round(load_model(v.model).te_share / 0.05) * 0.05, 9))
    if isinstance(v.policy, str) and v.policy.lower() in POLICIES:
        v = replace(v, policy=v.policy.lower())
    return v
