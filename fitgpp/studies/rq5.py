"""RQ5: a real trace (Alibaba openb 2023)."""

from __future__ import annotations

from pathlib import Path

from fitgpp.figures import plots
from fitgpp.analysis.metrics import METRICS
from fitgpp.analysis.verdicts import Estimate, change_text, order_against, size_phrase
from fitgpp.studies.base import Outcome, ReproduceError, RQResult, Size, Study, _config
from fitgpp.sim.cluster import DEFAULT_CLUSTER, DEFAULT_LOAD, Cluster
from fitgpp.workload.model import models_dir

#: RQ5's input, shipped with fitgpp (traces/alibaba-gpu-v2023/, see its SOURCE.md)
ALIBABA = models_dir() / "alibaba-gpu-v2023" / "openb_pod_list_default.csv.gz"


def alibaba_trace(path=ALIBABA, *, n_jobs: int | None = None, load: float | None = DEFAULT_LOAD,
                  cluster: Cluster = DEFAULT_CLUSTER, seed: int = 0):
    """The Alibaba openb (2023) pod list through :func:`fitgpp.workload.from_alibaba_v2023`:
    qos LS -> TE, BE -> BE, GPU pods, real arrival times and demands; run times re-drawn
    from the real Philly run times (short ones for TE, long for BE: the Alibaba LS pods are
    long-running services, unlike the paper's TE jobs); BE grace periods from the default
    grace distribution. ``n_jobs``: keep the first N by submit time. ``load``: compress
    (or stretch) the arrival times so the offered GPU load on ``cluster`` is ``load``
    (the trace's 149 days on 6212 GPUs would leave a 128-GPU cluster nearly idle or
    swamped); None keeps the real times."""
    from fitgpp.sim.trace import read_trace
    from fitgpp.workload import from_alibaba_v2023, offered_load
    path = Path(path)
    if not path.is_file():
        raise ReproduceError(f"real trace {path} not found: RQ5 needs the Alibaba GPU v2023 "
                             "pod list (shipped as fitgpp.studies.reproduce.ALIBABA)")
    tr, report = from_alibaba_v2023(path, runtimes="philly", seed=seed)
    jobs = tr.jobs.sort_values(["submit_time", "job_id"], kind="stable")
    if n_jobs is not None:
        jobs = jobs.iloc[:n_jobs]
    jobs = jobs.assign(submit_time=jobs["submit_time"] - jobs["submit_time"].min())
    factor = 1.0
    if load is not None:
        factor = offered_load(jobs, cluster) / load
        jobs = jobs.assign(submit_time=jobs["submit_time"] * factor)
    source = {**tr.source, "adapter": report.to_dict(), "first_n_jobs": n_jobs,
              "time_factor": factor, "target_load": load}
    tr = read_trace(jobs.reset_index(drop=True), cluster=cluster, source=source, drop_invalid=True)
    if tr.dropped is not None and len(tr.dropped):
        tr.source["dropped_fit_no_node"] = int(len(tr.dropped))
    return tr


def real_trace_finding(table, jobs: int, dropped: int) -> str:
    """The finding of RQ5 from its table (one row per policy, one run of one trace): each
    change of FitGpp s=4 against FIFO with the words one run earns
    (:func:`fitgpp.analysis.verdicts.change_text`: "cannot tell", no sign), the size of the trace
    actually run, and the other policies' TE p95 slowdowns (one run each: no order claimed,
    :func:`fitgpp.analysis.verdicts.order_against`)."""
    t = table.set_index("policy")
    fit = t.loc["FitGpp s=4"]
    said = "; ".join(change_text(Estimate.from_row(fit, f"change_{k}", seeds=1),
                                 METRICS[k].title, METRICS[k].better)
                     for k in ("te_p95", "be_median", "be_p95"))
    others = {p: float(t.loc[p, "te_p95"]) for p in t.index if p not in ("FitGpp s=4", "FIFO")}
    return (f"On the real trace {size_phrase(jobs, 1)}, {dropped} dropped (they fit no node), "
            f"FitGpp s=4 against FIFO: {said}. "
            + order_against(others, "FitGpp s=4", float(fit["te_p95"]),
                            title="TE p95 slowdown", group="policy"))


def _rq5(o: Outcome) -> RQResult:
    st = o.study
    tr = o.experiments[None].workload.trace
    table = o.table()
    t = table.set_index("policy")
    fit = t.loc["FitGpp s=4"]
    kept = o.kept()
    charts = {f"{st.key}_slowdown_cdf": plots.slowdown_cdf(kept),
              f"{st.key}_slowdown_bars": plots.slowdown_bars(
                  plots.stats_table(kept, cache=o.cache_dir and o.cache_dir / "intervals"))}
    finding = real_trace_finding(table, len(tr.jobs), tr.source.get("dropped_fit_no_node", 0))
    return RQResult(st.key, st.title, st.question, table, charts, kept, finding,
                    _config(o, trace={k: v for k, v in tr.source.items() if k != "adapter"},
                            n_jobs=len(tr.jobs)))


def _real_trace(size: Size):
    return alibaba_trace(ALIBABA, n_jobs=size.real_jobs, load=size.load, cluster=size.cluster)


RQ5 = Study(
    key="rq5", title="RQ5: a real trace",
    question="A real trace (Alibaba openb 2023): FitGpp s=4 against FIFO, PRIO, LRTP and RAND.",
    policies={"fifo": {}, "prio": {}, "fitgpp": {"s": [4.0]}, "lrtp": {}, "rand": {}},
    trace=_real_trace, one_seed=True, analyze=_rq5)

STUDIES = (RQ5,)
