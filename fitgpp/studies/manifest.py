"""What ran, as a study's configuration records it (``RQResult.config``, and through it every
exported figure, table and ``manifest.json``): enough to say what each number came from.

    record(o)                    # the grid as swept, the size, the seeds, every configuration
    configuration(o, conf)       # one configuration: its policy, code digest and own fields

A configuration names its policy by its registry name, or ``module:Class`` for a researcher's
own, with the sha256 of its code and field values (:func:`fitgpp.sim.policies.registry.digest`,
the digest a cell of the cache and a simulation Dataset carry), and lists the fields *that
policy* has with the values it ran: FitGpp's ``s`` and ``max_preemptions``, a researcher's
``lookahead``, and nothing for FIFO. The grid's dimensions are recorded as swept (RQ2's
``max_preemptions``: 1, 3 and 10), the tick as the experiment ran it. The package version and
the git state (commit, modified files) are added to each file by :func:`fitgpp.figures.export.
export` when it is written.

Nothing here imports :mod:`fitgpp.studies.base` (which calls it): an outcome is read through
its attributes.
"""

from __future__ import annotations

import json

from fitgpp._version import __version__
from fitgpp.sim.policies import registry


def configuration(o, conf: dict) -> dict:
    """The policy configuration ``conf`` of outcome ``o`` (as :meth:`Outcome.configurations`
    gives it) runs: ``label``, ``name``, ``policy`` (registry name or ``module:Class``),
    ``digest`` (code and field values) and ``fields`` (every field of that policy but
    ``seed``, with the value it ran). Its knobs and variant are the outcome's dimensions."""
    exp = next(iter(o.experiments.values()))
    grid = next(g for g in exp.policies if g.name == conf["name"])
    policy = registry.resolve(grid.policy, **conf["params"])
    return {"label": conf["label"], "name": conf["name"], "policy": registry.ref(policy),
            "digest": registry.digest(policy),
            "fields": {k: v for k, v in registry.params(policy).items() if k != "seed"}}


def record(o) -> dict:
    """What outcome ``o`` ran: the study, the workload (model or trace), jobs, load, seeds,
    cluster and tick, the grid's ``dimensions`` as swept (every field of every policy, the
    knobs, the variants, the seeds), the declared policy table (classes as ``module:Class``)
    and the record of each policy configuration (:func:`configuration`; once, whatever the
    knobs and variants it ran at: RQ8's 108 cells of the grid are 6 configurations)."""
    st = o.study
    exp = next(iter(o.experiments.values()))
    confs = {json.dumps([c["name"], c["params"]], sort_keys=True, default=str): c
             for c in o.configurations()}
    return {"study": st.key,
            "model": "(real trace)" if st.trace else (st.model or o.size.model),
            "n_jobs": o.size.n_jobs, "seeds": list(st.seeds(o.size)), "load": o.size.load,
            "cluster": o.size.cluster.describe(), "tick_s": float(exp.tick),
            "dimensions": {k: list(v) for k, v in st.dimensions(o.size).items()},
            "policies": {g.name: g.to_dict() for g in exp.policies},
            "configurations": [configuration(o, c) for c in confs.values()],
            "fitgpp_version": __version__}
