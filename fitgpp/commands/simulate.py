"""``fitgpp simulate TRACE.csv --policy P ... --out RESULT.nc``"""

from __future__ import annotations

import sys
from pathlib import Path

from ..policies import POLICIES
from ..simulate import format_table
from .common import (add_cluster_args, atomic_write, check_out_path, cluster_from_args,
                     max_preemptions_int, one_line_errors, seed_int, tick_seconds)


def add_parser(sub) -> None:
    p = sub.add_parser("simulate", help="simulate a trace under one policy",
                       description="Simulate TRACE.csv (SPEC schema) and write the result "
                                   "Dataset as netCDF.")
    p.add_argument("trace", metavar="TRACE.csv")
    p.add_argument("--policy", choices=list(POLICIES), default="fitgpp")
    p.add_argument("--s", type=float, default=4.0, help="FitGpp threshold s (default 4.0)")
    p.add_argument("--max-preemptions", type=max_preemptions_int, default=3,
                   help="P: times a BE job may be preempted (default 3; large = no limit)")
    p.add_argument("--seed", type=seed_int, default=0, help="RAND's seed (default 0)")
    p.add_argument("--tick", type=tick_seconds, default=60.0,
                   help="tick length in seconds (default 60)")
    p.add_argument("--sample-every", type=tick_seconds, default=None,
                   help="time-series step in seconds (default: at most 2000 samples)")
    add_cluster_args(p)
    p.add_argument("--out", required=True, metavar="RESULT.nc")
    p.set_defaults(run=run)
    one_line_errors(p)


def policy_params(args) -> dict:
    name = args.policy
    params = {}
    if name == "fitgpp":
        params["s"] = args.s
    if name in ("fitgpp", "lrtp", "rand"):
        params["max_preemptions"] = args.max_preemptions
    if name == "rand":
        params["seed"] = args.seed
    return params


def run(args) -> int:
    from ..simulate import save, simulate, summarize
    from ..cli import UsageError
    from ..trace import read_trace
    check_out_path(args.out)
    if Path(args.out).resolve() == Path(args.trace).resolve():
        raise UsageError(f"--out {args.out} is the input trace; choose another file")
    cluster = cluster_from_args(args)
    trace = read_trace(args.trace, cluster=cluster)
    from tqdm import tqdm
    # a progress bar on a terminal (tqdm turns itself off when stderr is not a TTY)
    with tqdm(total=len(trace), unit="job", desc="simulate", disable=None, leave=False) as bar:
        ds = simulate(trace, cluster, args.policy, tick=args.tick,
                      sample_every=args.sample_every,
                      progress=lambda done: bar.update(done - bar.n), **policy_params(args))
    atomic_write(args.out, lambda tmp: save(ds, tmp))
    print(format_summary(ds, summarize(ds)), file=sys.stdout)
    print(f"wrote {args.out}")
    return 0


def format_summary(ds, table) -> str:
    lines = [f"policy {ds.attrs['policy']} {ds.attrs['policy_params']} on "
             f"{ds.attrs['cluster_description']}, tick {ds.attrs['tick']:g} s"]
    lines += format_table(table)
    lines.append(f"GPU utilization {ds.attrs['gpu_util_mean']:.3f}")
    return "\n".join(lines)
