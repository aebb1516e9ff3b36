"""What RQ8 costs per cell against RQ2, cold and warm, in one run.

Each study runs at the same size (``--jobs`` per run, ``--seeds`` seeds, in this process) into
an empty cell cache (cold), then again from that cache (warm). Printed per study: cells (RQ8:
its map's, then the ridge's probes, which its analysis runs), the simulation's CPU seconds per
cell of the study's grid (the median of the ``compute_cpu_s`` each cell records), the whole
cold run's CPU seconds per cell (simulation, cache writes and the analysis: table, steadiness,
ledger, the ridge's search, figures), and the warm run's cells simulated and CPU seconds.

    python benchmarks/bench_rq8.py [--jobs 2000] [--seeds 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace


def one(key: str, size) -> dict:
    from fitgpp.studies import STUDIES
    st = STUDIES[key]
    with tempfile.TemporaryDirectory() as cache:
        c0 = time.process_time()
        o = st.run(size, cache=cache)
        r = st.analysis(o)
        cold = time.process_time() - c0
        sim = statistics.median(float(r["compute_cpu_s"]) for r in o.runs.values())
        c0 = time.process_time()
        w = st.run(size, cache=cache)
        st.analysis(w)
        warm = time.process_time() - c0
    ridge = (r.config.get("ridge") or {}).get("cells", {}).get("unique", 0)
    n = o.stats["unique"] + ridge
    return {"cells": f"{o.stats['unique']}+{ridge}" if ridge else str(n), "sim": sim,
            "cold": cold / n, "warm_computed": w.stats["computed"], "warm": warm}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args()
    from fitgpp.studies import QUICK
    size = replace(QUICK, n_jobs=a.jobs, seeds=tuple(range(a.seeds)), workers=0)
    print(f"{a.jobs} jobs per run, {a.seeds} seeds, in this process")
    print(f"{'study':<6}{'cells':>9}{'sim CPU s/cell':>16}{'cold CPU s/cell':>17}"
          f"{'warm: simulated':>17}{'warm CPU s':>12}", flush=True)
    for key in ("rq2", "rq8"):
        r = one(key, size)
        print(f"{key:<6}{r['cells']:>9}{r['sim']:>16.3f}{r['cold']:>17.3f}"
              f"{r['warm_computed']:>17}{r['warm']:>12.2f}", flush=True)


if __name__ == "__main__":
    main()
