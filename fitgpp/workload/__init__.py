"""Workload models: fit distributions to a trace, ship them, synthesize reproducible traces.

    from fitgpp.workload import load_model, synthesize, fit
    m = load_model("paper-default")
    t = synthesize(m, n_jobs=2000, seed=0, load=fitgpp.DEFAULT_LOAD, cluster=fitgpp.DEFAULT_CLUSTER)

See ``docs/workloads.md``.
"""

from fitgpp.workload.adapters import AdapterReport, from_alibaba_v2023, from_philly_chronus, read_format
from fitgpp.workload.dists import FAMILIES, Categorical, Dist, FitError, fit_best
from fitgpp.workload.fit import fit
from fitgpp.workload.model import (DEFAULT_GRACE, ClassModel, WorkloadModel, WorkloadModelError, list_models,
                                   load_model, models_dir)
from fitgpp.workload.paper import paper_default, paper_wide_te
from fitgpp.workload.synth import STREAMS, SynthesisError, from_recipe, offered_load, synthesize

__all__ = [
    "AdapterReport", "Categorical", "ClassModel", "DEFAULT_GRACE", "Dist", "FAMILIES",
    "FitError", "STREAMS", "SynthesisError", "WorkloadModel", "WorkloadModelError", "fit",
    "fit_best", "from_alibaba_v2023", "from_philly_chronus", "from_recipe", "list_models",
    "load_model", "models_dir", "offered_load", "paper_default", "paper_wide_te", "read_format", "synthesize",
]
