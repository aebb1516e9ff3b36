"""``paper-default``: the workbook's default workload, written by hand in the paper's spirit.

The paper gives no distributions, only their shape: TE jobs are short experiments on few
GPUs that users watch; BE jobs are long, heavy-tailed throughput work; a preempted BE job
gets a grace period of seconds to minutes. The numbers below are this project's choices,
made so that on :data:`fitgpp.DEFAULT_CLUSTER` (16 nodes x 8 GPUs, 96000 mCPU, 786432 MiB):

- TE run time: lognormal, median 10 min, sigma 0.8 (p95 about 37 min), truncated at 2 h.
  GPUs: 1 (70 %) or 2 (30 %).
- BE run time: lognormal, median 2 h, sigma 1.2 (mean about 4 h, p95 about 14 h),
  truncated at 3 days: the heavy tail of Philly's run times (median 20 min, mean 4 h over
  all jobs) without its multi-week outliers. GPUs: 1 (40 %), 2 (25 %), 4 (20 %), 8 (15 %).
- CPU and memory per GPU: half the jobs take 8000 mCPU and 48 GiB per GPU, half a full
  per-GPU share of a node (12000 mCPU, 96 GiB), so GPUs stay the binding resource and
  every demand fits a default node.
- Grace period (BE): the documented default, lognormal median 60 s, sigma 1, up to 15 min.
- TE share 0.3 of jobs (by count TE dominates neither queue; by GPU time it is ~1 %).
- Arrival rate: 14 jobs/h in total, which offers a GPU load of about 0.9 on the default
  cluster; flat over the day (no profile). Use ``load=`` to set the load exactly: the
  studies, the notebooks and the workbench draw it at :data:`fitgpp.DEFAULT_LOAD` (0.8),
  because at 0.9 FIFO's queue, and FitGpp's BE slowdown, grow for as long as the run
  lasts (the run-length study, ``docs/run-length.md``); 0.8 is the highest load at which
  both stay bounded on the default cluster.

``paper-wide-te`` is the same but for TE jobs of 4 or 8 GPUs (half each): a TE job then
rarely finds room left by fragmentation, so it must preempt, and the threshold ``s``
(which BE jobs are small enough to be victims) has something to trade (RQ2).
"""

from __future__ import annotations

import dataclasses

from fitgpp._version import __version__
from fitgpp.workload.dists import Categorical, Dist
from fitgpp.workload.model import DEFAULT_GRACE, ClassModel, WorkloadModel

_TOTAL_RATE = 14.0 / 3600.0   # jobs per second
_TE_SHARE = 0.3


def _cpu_mem(gpus) -> dict:
    return {g: ((8000 * g, 49152 * g, 1.0), (12000 * g, 98304 * g, 1.0)) for g in gpus}


def paper_default() -> WorkloadModel:
    te = ClassModel(
        rate=_TOTAL_RATE * _TE_SHARE, daily_profile=None,
        run_time=Dist("lognorm", {"s": 0.8, "loc": 0.0, "scale": 600.0}, 7200.0),
        gpu=Categorical((1, 2), (0.7, 0.3)), cpu_mem=_cpu_mem((1, 2)))
    be = ClassModel(
        rate=_TOTAL_RATE * (1 - _TE_SHARE), daily_profile=None,
        run_time=Dist("lognorm", {"s": 1.2, "loc": 0.0, "scale": 7200.0}, 259200.0),
        gpu=Categorical((1, 2, 4, 8), (0.4, 0.25, 0.2, 0.15)), cpu_mem=_cpu_mem((1, 2, 4, 8)),
        grace_period=DEFAULT_GRACE)
    prov = {"source": {"kind": "hand-written",
                       "how": "fitgpp.workload.paper.paper_default(); see its docstring and "
                              "traces/README.md for how each number was chosen"},
            "fitgpp_version": __version__}
    return WorkloadModel("paper-default", {"TE": te, "BE": be},
                         "TE: minutes on 1-2 GPUs; BE: hours with a heavy tail on 1-8 GPUs; "
                         "grace periods of seconds to minutes; TE share 0.3 (OpML '19 spirit)",
                         prov)


def paper_wide_te() -> WorkloadModel:
    """``paper-default`` with TE jobs of 4 or 8 GPUs (50 % each); everything else unchanged."""
    base = paper_default()
    te = dataclasses.replace(base.classes["TE"], gpu=Categorical((4, 8), (0.5, 0.5)),
                             cpu_mem=_cpu_mem((4, 8)))
    prov = {**base.provenance, "source": {
        "kind": "hand-written",
        "how": "fitgpp.workload.paper.paper_wide_te(): paper-default with TE jobs of 4 or 8 "
               "GPUs, so that TE jobs must preempt (RQ2's trade-off in s)"}}
    return dataclasses.replace(base, name="paper-wide-te", classes={**base.classes, "TE": te},
                               description="paper-default with TE jobs of 4 or 8 GPUs (50/50): "
                                           "TE jobs rarely find room without preempting",
                               provenance=prov)
