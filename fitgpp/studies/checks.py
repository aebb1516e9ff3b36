"""The checks of a :class:`~fitgpp.studies.base.Study`'s declaration, made when it is declared:
a misspelt knob, a metric that is not declared or a value of the wrong kind is one
:class:`~fitgpp.studies.size.ReproduceError` naming the study and the field, not a
``TypeError`` deep in a sweep or a column silently left out of every table."""

from __future__ import annotations

from collections.abc import Mapping

from fitgpp.studies.size import ReproduceError


def check_study(st) -> None:
    """Refuse a declaration a study cannot run (see the module docstring)."""
    from fitgpp.analysis.metrics import METRICS
    from fitgpp.sweep.checks import KNOBS
    where = f"study {st.key!r}" if isinstance(st.key, str) else "study"
    for name in ("key", "title", "question", "variant_dim"):
        if not isinstance(getattr(st, name), str) or not getattr(st, name):
            raise ReproduceError(f"{where}: {name} must be a non-empty string, got "
                                 f"{getattr(st, name)!r}"[:300])
    for name in ("policies", "knobs", "variants", "captions"):
        if not isinstance(getattr(st, name), Mapping):
            raise ReproduceError(f"{where}: {name} must be a mapping (a dict), got "
                                 f"{getattr(st, name)!r}"[:300])
    unknown = [k for k in st.knobs if k not in KNOBS]
    if unknown:
        raise ReproduceError(f"{where}: knob {str(unknown[0])!r} is not a workload knob; the "
                             f"knobs are {', '.join(KNOBS)}"[:300])
    if isinstance(st.columns, str) or not isinstance(st.columns, (tuple, list)):
        raise ReproduceError(f"{where}: columns must be a tuple of metric names, got "
                             f"{st.columns!r}"[:300])
    unknown = [c for c in st.columns if c not in METRICS]
    if unknown:
        raise ReproduceError(f"{where}: column {str(unknown[0])!r} is not a metric; columns "
                             f"are names in fitgpp.analysis.metrics.METRICS: "
                             f"{', '.join(METRICS)}"[:400])
    for name in ("analyze", "trace"):
        if getattr(st, name) is not None and not callable(getattr(st, name)):
            raise ReproduceError(f"{where}: {name} must be a function or None, got "
                                 f"{getattr(st, name)!r}"[:300])
    bad = [k for k, v in st.variants.items() if not callable(v)]
    if bad:
        raise ReproduceError(f"{where}: variant {str(bad[0])!r} must be a function "
                             "model -> model"[:300])
    if not isinstance(st.baseline, (str, Mapping)):
        raise ReproduceError(f"{where}: baseline must be a policy name or a configuration "
                             f"(a dict), got {st.baseline!r}"[:300])
    if not isinstance(st.one_seed, bool):
        raise ReproduceError(f"{where}: one_seed must be True or False, got {st.one_seed!r}")


def policy_grid(st):
    """The sweep's policy grid of study ``st`` (an :class:`~fitgpp.sweep.Experiment` on a
    stand-in workload), its fields checked by :func:`check_variant_dim`."""
    from fitgpp.sweep import Experiment
    return check_variant_dim(st, {None: Experiment(workload={"model": "paper-default"},
                                                   policies=st.policies)})[None]


def check_variant_dim(st, experiments: dict) -> dict:
    """``experiments`` (``{variant: Experiment}``), unless a policy has a field named like the
    study's dimension of model variants (its values and the variants' would meet in one
    dimension of the results): that is refused, naming the field."""
    exp = next(iter(experiments.values()))
    if st.variants and st.variant_dim in exp.grid_params:
        from fitgpp.sweep import ExperimentError
        raise ExperimentError(f"{st.key}: a policy has a parameter {st.variant_dim!r}, the "
                              "name of the study's dimension of model variants; rename the "
                              "field (or the study's variant_dim)")
    return experiments
