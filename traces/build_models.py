"""Rebuild the shipped workload models in this folder from the real traces.

Run from the repository root:  .venv/bin/python traces/build_models.py [TRACES_DIR]
(TRACES_DIR defaults to this folder, which ships the traces compressed; a folder of the
same layout with plain CSVs gives the same models). Each model records the file it was
fitted from, as a path relative to the repository root, and the sha256 of its CSV content.
Prints the fitted families and goodness of fit (the tables of traces/README.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fitgpp.workload import (WorkloadModel, fit, from_alibaba_v2023, from_philly_chronus,
                             paper_default, paper_wide_te)
from fitgpp.workload.model import from_dict

HERE = Path(__file__).resolve().parent
ALIBABA_CITE = ("Weng et al., \"Beware of Fragmentation: Scheduling GPU-Sharing Workloads with "
                "Fragmentation Gradient Descent\", USENIX ATC '23; data: alibaba/clusterdata "
                "cluster-trace-gpu-v2023 (research or study use)")
PHILLY_CITE = ("Jeon et al., \"Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN "
               "Training Workloads\", USENIX ATC '19 (msr-fiddle/philly-traces, CC BY 4.0); "
               "run times via alibaba/clusterdata cluster-trace-gpu-v2020 analysis (CC BY 4.0), "
               "Weng et al., NSDI '22")
CHRONUS_CITE = ("Gao et al., \"Chronus: A Novel Deadline-aware Scheduler for Deep Learning "
                "Training Jobs\", ACM SoCC '21 (S-Lab-System-Group/ChronusArtifact, MIT); "
                "derived from Philly: Jeon et al., USENIX ATC '19 (CC BY 4.0)")


def _relative(model: WorkloadModel, traces: Path, cite: str) -> WorkloadModel:
    """Record source paths relative to the repository root, and the citation."""
    where = "traces" if traces.resolve() == HERE else str(traces)
    text = json.dumps(model.to_dict()).replace(str(traces.resolve()), where)
    doc = json.loads(text)
    doc["provenance"]["citation"] = cite
    return from_dict(doc)


def _file(traces: Path, folder: str, name: str) -> Path:
    """``traces/folder/name``, or its ``.gz`` copy (as shipped here)."""
    p = traces / folder / name
    return p if p.is_file() else p.with_name(name + ".gz")


def build(traces: Path) -> list[WorkloadModel]:
    ali = _file(traces, "alibaba-gpu-v2023", "openb_pod_list_default.csv")
    models = [paper_default(), paper_wide_te()]
    tr, _ = from_alibaba_v2023(ali, runtimes="philly")
    models.append(_relative(fit(tr, name="alibaba-gpu-v2023", description=(
        "Alibaba GPU v2023 default pod list: arrivals, LS->TE / BE->BE labels, GPU/CPU/memory "
        "demands; run times re-drawn from real Philly run times (TE < 1 h, BE >= 1 h), "
        "because Alibaba's own run against the paper's premise (its BE pods run shorter than its LS pods)")), traces,
        ALIBABA_CITE + "; " + PHILLY_CITE))
    tr, _ = from_alibaba_v2023(ali, runtimes="observed")
    models.append(_relative(fit(tr, name="alibaba-gpu-v2023-observed", description=(
        "Alibaba GPU v2023 default pod list with its observed run times (deletion - "
        "scheduled): BE pods run shorter than LS pods, against the paper's premise")),
        traces, ALIBABA_CITE))
    tr, _ = from_philly_chronus(_file(traces, "philly-chronus-derived", "trace_job_Philly_MIX1.csv"))
    models.append(_relative(fit(tr, name="philly-chronus-mix1", description=(
        "Chronus' Philly-derived MIX1 job list (semi-synthetic; times in minutes): best->BE, "
        "strict->TE; labels are synthetic, so TE and BE run times are alike; jobs of more "
        "than 8 GPUs are gangs of 8-GPU-node tasks")), traces,
        CHRONUS_CITE))
    return models


def report(m: WorkloadModel) -> str:
    out = []
    for c in ("TE", "BE"):
        r = m.classes[c].run_time
        fit_ = r.fit or {}
        params = ", ".join(f"{k}={v:.4g}" for k, v in r.params.items() if k != "loc")
        out.append(f"| {m.name} | {c} | {fit_.get('n', '-')} | {r.family} | {params} | "
                   f"{fit_['aic']:.1f} | {fit_['ks']:.4f} |" if fit_ else
                   f"| {m.name} | {c} | - | {r.family} | {params} | (hand-written) | - |")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    traces = Path(argv[0]) if argv else HERE
    if not traces.is_dir():
        print(f"no traces folder at {traces}; pass its path", file=sys.stderr)
        return 2
    for m in build(traces):
        m.save(HERE / f"{m.name}.json")
        print(report(m))
    tr, rep = from_philly_chronus(_file(traces, "philly-chronus-derived",
                                        "trace_job_Philly_MIX2.csv"))
    print(rep)
    print(report(fit(tr, name="philly-chronus-mix2 (not shipped)")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
