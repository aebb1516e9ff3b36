"""``fitgpp fit TRACE --format {spec,alibaba-v2023,philly-chronus} --out MODEL.json``"""

from __future__ import annotations

from fitgpp.sim.validate import MAX_TIME_S
from fitgpp.cli.common import (add_cluster_args, add_overwrite, atomic_write, check_out_path,
                               cluster_from_args,
                               int_at_least, number_in, seed_int)

#: fitgpp.workload.adapters.FORMATS, named here so that building the parser does not import
#: scipy (tests/cli/test_workload_cli.py checks the two agree)
FORMATS = ("spec", "alibaba-v2023", "philly-chronus")


def add_parser(sub) -> None:
    p = sub.add_parser("fit", help="fit a workload model to a trace",
                       description="Read TRACE (SPEC schema or a real trace format), fit a "
                                   "workload model (run-time family by AIC, empirical demands, "
                                   "arrival rates) and write it as JSON.")
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--format", choices=FORMATS, default="spec",
                   help="input format (default spec: the simulator's CSV schema)")
    p.add_argument("--out", required=True, metavar="MODEL.json")
    add_overwrite(p)
    p.add_argument("--name", help="model name (default: from the source)")
    p.add_argument("--description", default="", help="free text stored in the model")
    p.add_argument("--runtimes", choices=("observed", "philly"), default=None,
                   help="real formats: keep the trace's run times (default) or re-draw them "
                        "from philly-runtime (TE < --split s, BE >= --split s)")
    p.add_argument("--philly-runtime", metavar="CSV",
                   help="philly_runtime.csv, plain or compressed (default: ../philly-runtime/ "
                        "beside the trace, else the copy shipped with fitgpp)")
    p.add_argument("--split", type=number_in(0, MAX_TIME_S, lo_open=True), default=None,
                   help="TE/BE run-time split in seconds for --runtimes philly (default 3600)")
    p.add_argument("--other-qos", choices=("drop", "TE", "BE"), default=None,
                   help="alibaba-v2023: Burstable/Guaranteed pods (default drop)")
    p.add_argument("--sharing", choices=("whole", "drop"), default=None,
                   help="alibaba-v2023: GPU-sharing pods count as 1 GPU (default) or are dropped")
    p.add_argument("--max-gpu", type=int_at_least(1, 2**31 - 1), default=None,
                   help="real formats: drop jobs asking more GPUs than this (default: 8 for "
                        "alibaba-v2023; none for philly-chronus, which splits a job larger "
                        "than a node into a gang of tasks)")
    p.add_argument("--seed", type=seed_int, default=None,
                   help="real formats: seed for grace periods and re-drawn run times (default 0)")
    p.add_argument("--grace", choices=("default", "fit"), default="default",
                   help="model grace periods: documented default (default) or fitted to the "
                        "trace's BE grace periods (spec format only)")
    add_cluster_args(p, required=False)
    p.set_defaults(run=run)


def _options(args) -> dict:
    from fitgpp.cli.common import UsageError
    opts = {"runtimes": args.runtimes, "philly_runtime": args.philly_runtime,
            "split": args.split, "other_qos": args.other_qos, "sharing": args.sharing,
            "max_gpu": args.max_gpu, "seed": args.seed}
    opts = {k: v for k, v in opts.items() if v is not None}
    if args.format == "spec" and opts:
        raise UsageError(f"--format spec takes no adapter options (got "
                         f"{', '.join('--' + k.replace('_', '-') for k in opts)})")
    cluster = cluster_from_args(args)
    if cluster is not None:
        if args.format != "philly-chronus":
            raise UsageError("--nodes/--cluster apply to --format philly-chronus only (the "
                             "node size that splits large jobs into gangs)")
        opts["cluster"] = cluster
    if args.format == "philly-chronus":
        for k in ("other_qos", "sharing"):
            if k in opts:
                raise UsageError(f"--{k.replace('_', '-')} applies to --format alibaba-v2023 only")
    if args.runtimes != "philly":
        for k in ("split", "philly_runtime"):
            if k in opts:
                raise UsageError(f"--{k.replace('_', '-')} applies to --runtimes philly only")
    if args.grace == "fit" and args.format != "spec":
        raise UsageError("--grace fit needs grace periods in the trace: use --format spec")
    return opts


def run(args) -> int:
    from fitgpp.workload import fit
    from fitgpp.workload.adapters import read_format
    check_out_path(args.out, args.overwrite)
    trace, report = read_format(args.trace, args.format, **_options(args))
    model = fit(trace, name=args.name, description=args.description, grace=args.grace)
    atomic_write(args.out, lambda tmp: model.save(tmp))
    print(report)
    print(model.describe())
    print(f"wrote {args.out}")
    return 0
