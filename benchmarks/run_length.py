"""How the headline numbers move with run length and load, and which runs reach a steady state.

For each offered load and number of jobs, ``paper-default`` traces on the default cluster are
run under FIFO and FitGpp (s=4, P=3). Per cell (medians over the seeds run there) it prints
FIFO's TE p95, FitGpp's BE median, the three changes of FitGpp against FIFO over all jobs and
over the steady window only (jobs submitted between the later of the two runs' warm-up ends
and the last arrival, :mod:`fitgpp.analysis.stability`), how many runs of each policy were steady, and
the verdict on each of the three changes against the paper's (:mod:`fitgpp.analysis.verdicts`:
match, larger, smaller, sign = differs in sign, none = no change). Then the
usable capacity: the highest load at which every FitGpp run of 10,000 jobs or more is steady.

    python benchmarks/run_length.py [--loads 0.5 0.7 0.8 0.9 1.0] [--max-jobs 100000]
                                    [--seeds 3] [--csv rows.csv]

Seeds: ``--seeds`` at up to 10,000 jobs, at most 3 at 40,000 and 2 above (the machine is
shared).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

SIZES = (600, 2000, 10000, 40000, 100000)
LOADS = (0.5, 0.7, 0.8, 0.9, 1.0)
KEYS = (("te_p95", "TE", "slowdown_p95"), ("be_median", "BE", "slowdown_median"),
        ("be_p95", "BE", "slowdown_p95"))


#: Short forms of :func:`fitgpp.analysis.verdicts.against_paper`'s verdicts for the table.
SHORT = {"matches": "match", "same sign, larger": "larger", "same sign, smaller": "smaller",
         "differs in sign": "sign", "no detectable change": "none", "cannot tell": "?",
         "not measured": "n/a", "consistent": "wide", "inconclusive": "near"}


def seeds_at(n: int, seeds: int) -> int:
    return seeds if n <= 10000 else min(seeds, 3) if n <= 40000 else min(seeds, 2)


def run_cell(load: float, n: int, seed: int) -> dict:
    """One trace, both policies: the row of per-run numbers."""
    import fitgpp
    from fitgpp.analysis.metrics import change
    from fitgpp.analysis.stability import stability, window_summary
    from fitgpp.workload import load_model, synthesize
    cluster = fitgpp.DEFAULT_CLUSTER
    trace = synthesize(load_model("paper-default"), n_jobs=n, seed=seed, load=load, cluster=cluster)
    runs = {"fifo": fitgpp.simulate(trace, cluster, "fifo"),
            "fitgpp": fitgpp.simulate(trace, cluster, "fitgpp", s=4.0, max_preemptions=3)}
    st = {k: stability(ds) for k, ds in runs.items()}
    later = max(st.values(), key=lambda r: r.warmup_end)
    full = {k: fitgpp.summarize(ds) for k, ds in runs.items()}
    win = {k: window_summary(ds, later) for k, ds in runs.items()}
    row = {"load": load, "jobs": n, "seed": seed,
           "fifo_te_p95": full["fifo"].loc["TE", "slowdown_p95"],
           "fitgpp_be_median": full["fitgpp"].loc["BE", "slowdown_median"],
           "steady_fifo": st["fifo"].steady, "steady_fitgpp": st["fitgpp"].steady,
           "slope_fitgpp": st["fitgpp"].slope, "window_jobs": int(win["fifo"]["jobs"].sum())}
    for key, cls, col in KEYS:
        row[key] = change(full["fitgpp"].loc[cls, col], full["fifo"].loc[cls, col])
        row[f"win_{key}"] = change(win["fitgpp"].loc[cls, col], win["fifo"].loc[cls, col])
    return row


def cell_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Medians over seeds per (load, jobs), steady counts and the paper verdict (from the
    per-seed changes' intervals: "?" below 3 seeds)."""
    from fitgpp.analysis.verdicts import Estimate, against_paper_all
    g = rows.groupby(["load", "jobs"])
    out = g[["fifo_te_p95", "fitgpp_be_median", "te_p95", "be_median", "be_p95",
             "win_te_p95", "win_be_median", "win_be_p95"]].median()
    out["seeds"] = g.size()
    out["steady_fifo"] = g["steady_fifo"].sum().astype(int)
    out["steady_fitgpp"] = g["steady_fitgpp"].sum().astype(int)
    out["paper"] = [" / ".join(SHORT[v.verdict] for v in against_paper_all(
        {k: Estimate.of(cell[k]) for k, _, _ in KEYS})) for _, cell in g]
    return out


def usable_capacity(rows: pd.DataFrame, min_jobs: int = 10000) -> float:
    """Highest load at which every FitGpp run of ``min_jobs`` jobs or more is steady (and
    every lower load too); NaN when none is."""
    big = rows[rows["jobs"] >= min_jobs]
    ok = big.groupby("load")["steady_fitgpp"].all().sort_index()
    good = np.cumprod(ok.to_numpy()).astype(bool)
    return float(ok.index[good].max()) if good.any() else float("nan")


def print_table(cells: pd.DataFrame) -> None:
    from fitgpp.analysis.metrics import percent
    pc = lambda x: percent(x, 1)  # noqa: E731
    print("| load | jobs | seeds | FIFO TE p95 | FitGpp BE median | change TE p95 / BE median / "
          "BE p95 | same, steady window | steady FIFO / FitGpp | against the paper |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (load, n), r in cells.iterrows():
        print(f"| {load:g} | {n:,} | {r['seeds']} | {r['fifo_te_p95']:.3g} | "
              f"{r['fitgpp_be_median']:.3g} | {pc(r['te_p95'])} / {pc(r['be_median'])} / "
              f"{pc(r['be_p95'])} | {pc(r['win_te_p95'])} / {pc(r['win_be_median'])} / "
              f"{pc(r['win_be_p95'])} | {r['steady_fifo']}/{r['seeds']} / "
              f"{r['steady_fitgpp']}/{r['seeds']} | {r['paper']} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", type=float, nargs="+", default=list(LOADS))
    ap.add_argument("--max-jobs", type=int, default=max(SIZES))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--csv", help="also write the per-run rows here")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = []
    for n in (s for s in SIZES if s <= args.max_jobs):
        for load in args.loads:
            for seed in range(seeds_at(n, args.seeds)):
                rows.append(run_cell(load, n, seed))
    rows = pd.DataFrame(rows)
    if args.csv:
        rows.to_csv(args.csv, index=False)
    print_table(cell_table(rows))
    print(f"\nusable capacity (every FitGpp run of >= 10,000 jobs steady, at this and every "
          f"lower load): {usable_capacity(rows):g}")
    print(f"{len(rows)} traces, {2 * len(rows)} runs in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
