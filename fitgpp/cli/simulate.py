"""``fitgpp simulate TRACE.csv --policy P ... --out RESULT.nc``"""

from __future__ import annotations

import sys
from pathlib import Path

from fitgpp.sim.policies import POLICIES
from fitgpp.cli.common import (add_cluster_args, add_overwrite, atomic_write, check_out_path,
                               cluster_from_args,
                               max_preemptions_int, one_line_errors, seed_int, tick_seconds)


def add_parser(sub) -> None:
    p = sub.add_parser("simulate", help="simulate a trace under one policy",
                       description="Simulate TRACE.csv (SPEC schema) and write the result "
                                   "Dataset as netCDF.", epilog=_params_epilog())
    p.add_argument("trace", metavar="TRACE.csv")
    p.add_argument("--format", choices=("auto", "spec", "tiresias"), default="auto",
                   help="trace format: spec (fitgpp's schema), tiresias (job_id, num_gpu, "
                        "submit_time, iterations, model_name, duration, interval: every job BE,"
                        " GPUs only, grace 0), or auto (tiresias if the header has num_gpu, "
                        "submit_time and duration and no cls; default)")
    p.add_argument("--policy", default="fitgpp", metavar="NAME|module:Class",
                   help=f"a registered policy ({', '.join(POLICIES)}; default fitgpp) or a "
                        "policy class importable from the current directory or PYTHONPATH")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter of the policy (a field of its dataclass), parsed by the "
                        "field's type; repeat for several, e.g. --param s=8 --param "
                        "max_preemptions=2")
    p.add_argument("--s", type=float, default=None,
                   help="same as --param s=S, for a policy that has s (FitGpp; default 4.0)")
    p.add_argument("--max-preemptions", type=max_preemptions_int, default=None,
                   help="same as --param max_preemptions=P, for a policy that has it (P: "
                        "times a BE job may be preempted; default 3; large = no limit)")
    p.add_argument("--seed", type=seed_int, default=None,
                   help="same as --param seed=N, for a policy that has a seed (RAND; default 0)")
    p.add_argument("--tick", type=tick_seconds, default=60.0,
                   help="tick length in seconds (default 60)")
    p.add_argument("--sample-every", type=tick_seconds, default=None,
                   help="time-series step in seconds (default: at most 2000 samples)")
    add_cluster_args(p)
    p.add_argument("--out", required=True, metavar="RESULT.nc")
    add_overwrite(p)
    p.set_defaults(run=run)
    one_line_errors(p)


def _params_epilog() -> str:
    """The --param names of every registered policy, from their dataclass fields."""
    from fitgpp.sim.policies.registry import choices, declared
    parts = []
    for name, cls in POLICIES.items():
        fields = [f"{k}={d!r}" + (f" ({' | '.join(map(str, choices(cls, k)))})"
                                  if choices(cls, k) else f" ({t.__name__})" if t else "")
                  for k, (t, d) in declared(cls).items()]
        parts.append(f"{name}: {', '.join(fields) or 'none'}")
    return ("policy parameters (--param NAME=VALUE; defaults shown): " + "; ".join(parts)
            + ". A module:Class policy takes the fields of its dataclass.")


#: Flags kept from before --param; each sets the field of that name. A policy without that
#: field refuses the flag (FIFO takes no --max-preemptions): silently ignoring it hid typos.
ALIASES = {"s": "--s", "max_preemptions": "--max-preemptions", "seed": "--seed"}


def policy_class(args):
    """The class --policy names; ``module:Class`` is imported with the current directory on
    sys.path (as ``python -m`` would)."""
    import os
    import sys
    from fitgpp.cli.common import UsageError
    from fitgpp.errors import FitgppError
    from fitgpp.sim.policies.registry import policy_class as find
    if ":" in args.policy and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return find(args.policy)
    except FitgppError as exc:
        raise UsageError(f"--policy {args.policy}: {exc}") from None
    except Exception as exc:  # a bad module name (a relative path) or a module that fails
        raise UsageError(f"--policy {args.policy}: cannot import it "
                         f"({type(exc).__name__}: {exc})"[:300]) from None


def policy_params(args, cls=None) -> dict:
    """Parameters for the policy from --param NAME=VALUE (typed by the dataclass field) and the
    alias flags --s, --max-preemptions, --seed. A field's old name (LAS's ``demotion``, ...)
    sets the new one, with a warning (:mod:`fitgpp.sim.policies.modes`)."""
    from fitgpp.cli.common import UsageError
    from fitgpp.errors import FitgppError
    from fitgpp.sim.policies.modes import current_name
    from fitgpp.sim.policies.registry import declared, parse_value
    cls = cls if cls is not None else policy_class(args)
    fields = declared(cls)
    params: dict = {}
    for text in args.param:
        name, eq, value = text.partition("=")
        name = name.strip()
        if not eq or not name:
            raise UsageError(f"--param {text!r}: expected NAME=VALUE")
        name = current_name(cls, name, "--param: ")
        if name in params:
            raise UsageError(f"--param {name} given twice")
        try:
            params[name] = _storable(name, parse_value(cls, name, value))
        except FitgppError as exc:
            raise UsageError(f"--param {text}: {exc}"[:300]) from None
        except RecursionError:
            raise UsageError(f"--param {name}: JSON nested too deeply") from None
    for name, flag in ALIASES.items():
        v = getattr(args, name)
        if v is None:
            continue
        if name not in fields:
            raise UsageError(f"{flag}: policy {args.policy} has no parameter {name} (its "
                             f"parameters: {', '.join(fields) or 'none'})")
        if name in params:
            raise UsageError(f"{flag} and --param {name}=... both given; give one")
        params[name] = v
    return params


def _storable(name: str, value):
    """A parameter value a result can record in netCDF: integers within int32 (a seed within
    uint32), as the sweep configuration bounds them too."""
    from fitgpp.sim.validate import MAX_PREEMPTIONS, MAX_SEED, check_int
    if isinstance(value, int) and not isinstance(value, bool):
        if name == "seed":
            check_int(value, "seed", 0, MAX_SEED)
        else:
            check_int(value, name, -MAX_PREEMPTIONS, MAX_PREEMPTIONS)
    return value


def run(args) -> int:
    from fitgpp.sim.run import save, simulate
    from fitgpp.analysis.metrics import summarize
    from fitgpp.cli.common import UsageError
    if Path(args.out).resolve() == Path(args.trace).resolve():
        raise UsageError(f"--out {args.out} is the input trace; choose another file")
    check_out_path(args.out, args.overwrite)
    cls = policy_class(args)
    params = policy_params(args, cls)
    cluster = cluster_from_args(args)
    trace = _read(args, cluster)
    if args.sample_every is not None:
        check_samples(trace, args.sample_every)
    if _terminal():
        from tqdm import tqdm
        # a progress bar on a terminal (tqdm turns itself off when stderr is not a TTY, so
        # it is not even imported then: 10-20 ms of a small run)
        with tqdm(total=len(trace), unit="job", desc="simulate", disable=None,
                  leave=False) as bar:
            ds = simulate(trace, cluster, cls, tick=args.tick, sample_every=args.sample_every,
                          progress=lambda done: bar.update(done - bar.n), **params)
    else:
        ds = simulate(trace, cluster, cls, tick=args.tick, sample_every=args.sample_every,
                      **params)
    from fitgpp.analysis.stability import judge
    judge(ds)   # the steady-state verdict goes into the file and the summary
    atomic_write(args.out, lambda tmp: save(ds, tmp))
    print(format_summary(ds, summarize(ds)), file=sys.stdout)
    print(f"wrote {args.out}")
    return 0


def _terminal() -> bool:
    """Whether stderr is a terminal (where tqdm, with ``disable=None``, draws its bar)."""
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _read(args, cluster):
    """The trace, from the SPEC schema or (``--format tiresias``, or detected) Tiresias's."""
    from fitgpp.sim import tiresias
    from fitgpp.sim.trace import read_trace
    fmt = tiresias.detect_format(args.trace) if args.format == "auto" else args.format
    if fmt == "spec":
        return read_trace(args.trace, cluster=cluster)
    return tiresias.read_tiresias(args.trace, cluster=cluster)


#: Most time samples --sample-every may ask for (5 series of float64: 400 MB).
MAX_SAMPLES = 10_000_000


def check_samples(trace, sample_every: float) -> None:
    """Refuse a --sample-every that gives more than MAX_SAMPLES samples even if every job
    ran at once (the run can only be longer)."""
    from fitgpp.cli.common import UsageError
    jobs = trace.jobs
    least_end = float((jobs["submit_time"] + jobs["duration"]).max()) if len(jobs) else 0.0
    if least_end / sample_every > MAX_SAMPLES:
        raise UsageError(f"--sample-every {sample_every:g}: this trace runs at least "
                         f"{least_end:.4g} s, which gives more than {MAX_SAMPLES} samples; "
                         "choose a longer step (or leave it out for at most 2000)")


def format_summary(ds, table) -> str:
    from fitgpp.sim.run import format_table
    lines = [f"policy {ds.attrs['policy']} {ds.attrs['policy_params']} on "
             f"{ds.attrs['cluster_description']}, tick {ds.attrs['tick']:g} s"]
    lines += format_table(table)
    lines.append(f"GPU utilization {ds.attrs['gpu_util_mean']:.3f}")
    from fitgpp.analysis.stability import summary_line
    lines.append(summary_line(ds))
    return "\n".join(lines)
