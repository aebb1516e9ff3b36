"""``fitgpp synth MODEL --jobs N --seed K [--load X --nodes N ...] --out TRACE.csv``"""

from __future__ import annotations

import json
from pathlib import Path

from fitgpp.cli.common import (add_cluster_args, add_overwrite, atomic_write, check_out_path,
                               cluster_from_args,
                               int_at_least, number_in, seed_int)
from fitgpp.sim.validate import MAX_GRACE_SCALE, MAX_JOBS, MAX_NODES, MAX_TIME_S


def add_parser(sub) -> None:
    p = sub.add_parser("synth", help="draw a synthetic trace from a workload model",
                       description="Draw a reproducible trace (SPEC schema CSV) from a workload "
                                   "model: a JSON path or a shipped name (see --list).")
    p.add_argument("model", metavar="MODEL", nargs="?",
                   help="model JSON file, or a shipped model name such as paper-default")
    p.add_argument("--list", action="store_true", help="list the shipped models and exit")
    p.add_argument("--jobs", type=int_at_least(1, MAX_JOBS), help="number of jobs")
    p.add_argument("--seed", type=seed_int, default=0, help="seed (default 0)")
    p.add_argument("--load", type=number_in(0, 1e3, lo_open=True),
                   help="offered GPU load as a fraction of the cluster's GPUs (needs a cluster)")
    p.add_argument("--te-fraction", type=float,
                   help="TE share of jobs (default: model's)")
    p.add_argument("--grace-scale", type=number_in(0, MAX_GRACE_SCALE),
                   help="factor on BE grace periods (default 1)")
    p.add_argument("--gang-fraction", type=number_in(0, 1), metavar="F",
                   help="share of BE jobs drawn as multi-node gangs (default: the model's "
                        "tasks distribution, one task if it has none)")
    p.add_argument("--gang-tasks", type=int_at_least(2, MAX_NODES), metavar="K",
                   help="with --gang-fraction: gangs have 2..K tasks, uniformly (default 4)")
    p.add_argument("--restart-overhead", type=number_in(0, MAX_TIME_S), metavar="SECONDS",
                   help="median time a preempted BE job spends reloading its checkpoint "
                        "each time it starts again (default 0)")
    p.add_argument("--restart-sigma", type=number_in(0, 10), metavar="SIGMA",
                   help="log-spread of the lognormal restart overhead (default 0: every BE "
                        "job the same)")
    p.add_argument("--be-8gpu-share", type=number_in(0, 1), metavar="F",
                   help="share of BE jobs that ask for 8 GPUs, the model's other BE sizes "
                        "scaled to the rest (default: the model's)")
    p.add_argument("--on-unfit", choices=("error", "restrict"), default="error",
                   help="demands that fit no node: fail (default) or draw only those that fit")
    add_cluster_args(p, required=False)
    p.add_argument("--out", metavar="TRACE.csv")
    add_overwrite(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from fitgpp.cli.common import UsageError
    from fitgpp.sim.trace import write_trace
    from fitgpp.workload import list_models, load_model, synthesize
    if args.list:
        from fitgpp.workload import models_dir
        for name in list_models():
            m = load_model(name)
            print(f"{name:<36} {m.description}")
        print(f"(in {models_dir()})")
        return 0
    for need, flag in ((args.model, "MODEL"), (args.jobs, "--jobs"), (args.out, "--out")):
        if need is None:
            raise UsageError(f"{flag} is required (or use --list)")
    check_out_path(args.out, args.overwrite)
    cluster = cluster_from_args(args)
    if args.load is not None and cluster is None:
        raise UsageError("--load needs a cluster: give --nodes N (with --node-gpu ...) "
                         "or --cluster FILE.toml")
    model = load_model(args.model)
    from fitgpp.sim.trace import TraceError
    try:
        trace = synthesize(model, n_jobs=args.jobs, seed=args.seed, load=args.load,
                           te_fraction=args.te_fraction, grace_scale=args.grace_scale,
                           cluster=cluster, on_unfit=args.on_unfit,
                           gang_fraction=args.gang_fraction, gang_tasks=args.gang_tasks,
                           restart_overhead=args.restart_overhead,
                           restart_sigma=args.restart_sigma,
                           be_8gpu_share=args.be_8gpu_share)
    except TraceError as exc:  # the draws left the trace schema's bounds
        shown = ", ".join(str(r) for r in exc.rows[:5]) + (" ..." if len(exc.rows) > 5 else "")
        raise UsageError(f"model {model.name!r} with these options draws jobs out of bounds "
                         f"(job ids {shown}, column '{exc.column}': {exc.problem})") from None
    atomic_write(args.out, lambda tmp: write_trace(trace, tmp))
    recipe = args.out + ".source.json"
    atomic_write(recipe, lambda tmp: Path(tmp).write_text(
        json.dumps(trace.source, indent=1, sort_keys=True) + "\n"))
    n_te = int((trace.jobs["cls"] == "TE").sum())
    load = trace.source["offered_load"]
    n_gang = int((trace.jobs["tasks"] > 1).sum()) if "tasks" in trace.jobs else 0
    print(f"{len(trace)} jobs from model {model.name!r} (seed {args.seed}): {n_te} TE, "
          f"{len(trace) - n_te} BE" + (f" ({n_gang} multi-node)" if n_gang else "")
          + f"; arrival rate {trace.source['arrival_rate_per_s'] * 3600:.4g}"
          f" jobs/h" + (f"; offered GPU load {load:.3f}" if load is not None else ""))
    if trace.source["restricted"]:
        print(f"restricted (demands that fit no node, removed): {trace.source['restricted']}")
    print(f"wrote {args.out} and {recipe}")
    return 0
