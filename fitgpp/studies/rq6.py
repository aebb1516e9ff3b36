"""RQ6, beyond the paper: what does preemption cost when restarts are not free?

The declaration: PRIO (the baseline, never preempts), FitGpp at several ``s``, LRTP and RAND
on three workloads (the variants, dimension ``workload``), the BE restart overhead a swept
knob. The per-run numbers, findings and figures are :mod:`fitgpp.studies.restart_cost`'s; notebook 07
and ``fitgpp reproduce`` run this same declaration.
"""

from __future__ import annotations

from fitgpp.studies import restart_cost as rc
from fitgpp.studies.base import RQResult, Study, _config


def study(overheads=rc.REPRODUCE_OVERHEADS, workloads=rc.WORKLOADS):
    """RQ6 as a :class:`fitgpp.studies.Study` for ``fitgpp reproduce``: the workloads are
    its variants (dimension ``workload``), the overheads its swept knob (default
    :data:`fitgpp.studies.restart_cost.REPRODUCE_OVERHEADS`: 0, 10, 30, 60 min); ``n_jobs``, seeds and load come from the
    reproduce size. Its analysis is :func:`analyze`."""
    from fitgpp.workload import load_model
    if 0 not in overheads or any(not (isinstance(x, (int, float)) and x >= 0)
                                 for x in overheads):
        raise rc.RestartCostError(f"overheads are seconds >= 0 and must include 0 (the "
                                  f"free-restart baseline), got {tuple(overheads)!r}")

    def variant(name):
        def make(_base):
            return load_model(name)
        make.workload = name
        return make

    fitgpp_s = sorted({p["s"] for _, n, p in rc.POLICIES if n == "fitgpp"})
    minutes = ", ".join(f"{x / 60:g}" for x in overheads)
    question = (f"{rc.QUESTION} Every BE job reloads its checkpoint for a restart "
                f"overhead of {minutes} min each time it restarts after a preemption; FitGpp "
                f"(s = {', '.join(f'{x:g}' for x in fitgpp_s)}), LRTP and RAND against PRIO (TE "
                f"first, never preempts) on {', '.join(f'`{w}`' for w in workloads)}. TE gain "
                "= -change(TE p95, PRIO's), BE p95 cost = change(BE p95, PRIO's), paired per "
                "seed (same workload and overhead); preempting stops paying off where the "
                "interval over seeds of the net, gain minus cost, lies below 0.")
    return Study(key="rq6", title=rc.TITLE, question=question,
                 policies={"prio": {}, "fitgpp": {"s": fitgpp_s}, "lrtp": {}, "rand": {}},
                 knobs={"restart_overhead": tuple(float(x) for x in overheads)},
                 variants={w: variant(w) for w in workloads}, variant_dim="workload",
                 baseline="prio", columns=("reload_gpu_h", "reload_share"), analyze=analyze,
                 captions=rc.captions(workloads))


def analyze(o):
    """A :class:`fitgpp.studies.Outcome` of :func:`study` -> its ``RQResult``: the
    across-seed table of this module, the charts, the finding (:func:`fitgpp.studies.restart_cost.summary`) and, as
    ``details``, FitGpp against LRTP and RAND, the findings table and the rules of its verdict
    columns (:func:`fitgpp.studies.restart_cost.details`)."""
    runs = rc.runs_of(o)
    table = rc.across_seeds(runs)
    found = rc.findings_table(table)
    seeds = rc.per_seed_at_max(runs)
    r = RQResult(o.study.key, o.study.title, o.study.question, table, rc.charts(table), {},
                 rc.summary(found, seeds), _config(o, model="per workload (see workload)"))
    r.details = rc.details(found, seeds)
    r.datasets = {"findings": found}
    r.report_columns = (["workload", "overhead_min", "policy"],
                        ["te_p95", "be_median", "be_p95", "preemptions_per_be", "reload_gpu_h",
                         "te_gain", "be_p95_cost"], rc.FRACTIONS)
    return r


RQ6 = study()
STUDIES = (RQ6,)
