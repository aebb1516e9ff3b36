"""``fitgpp sweep CONFIG.toml --out SWEEP.nc [--workers N] [--scheduler ADDRESS] [--no-cache]``"""

from __future__ import annotations

import re
import sys

from fitgpp.cli.common import add_overwrite, atomic_write, check_out_path, path_arg, workers_int


def add_parser(sub) -> None:
    p = sub.add_parser(
        "sweep", help="run a parameter sweep (policies x parameters x workloads x seeds)",
        description="Run every cell of the experiment CONFIG.toml as a Dask task, cache each "
                    "cell, and write one Dataset as netCDF. See docs/experiments.md.")
    p.add_argument("config", metavar="CONFIG.toml", type=path_arg)
    p.add_argument("--out", required=True, metavar="SWEEP.nc", type=path_arg)
    add_overwrite(p)
    p.add_argument("--workers", type=workers_int, default=None,
                   help="local Dask workers (default: one per CPU; 0 = run in this process); "
                        "not with --scheduler or $FITGPP_SCHEDULER")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="address of an existing Dask scheduler, e.g. tcp://10.0.0.5:8786 "
                        "(default: $FITGPP_SCHEDULER; else a local cluster is started; see "
                        "docs/cluster.md)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--cache", metavar="DIR", default=None, type=path_arg,
                   help="cache directory (default: $FITGPP_CACHE, else ~/.cache/fitgpp)")
    g.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


_ADDRESS = re.compile(r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)"
                      r":(\d{1,5})/?")


def check_address(address: str, what: str = "--scheduler") -> None:
    """A Dask scheduler address: ``[protocol://]host:port``."""
    from fitgpp.cli.common import UsageError
    m = _ADDRESS.fullmatch(address)
    if not m or not 0 < int(m.group(1)) < 65536:
        raise UsageError(f"{what} {address!r}: not a Dask scheduler address "
                         "([tcp://]HOST:PORT, e.g. tcp://10.0.0.5:8786)"[:300])


def run(args) -> int:
    from fitgpp.sim.run import save
    from fitgpp.sweep import format_table, load_experiment, run_sweep
    from fitgpp.sweep.cell import DrawError
    check_out_path(args.out, args.overwrite)
    if args.scheduler is not None:
        check_address(args.scheduler)
    # a policy given as "module:Class" is imported from beside the TOML file or from here
    import os
    from pathlib import Path
    for d in (os.getcwd(), str(Path(args.config).resolve().parent)):
        if d not in sys.path:
            sys.path.insert(0, d)
    exp = load_experiment(args.config)
    stats: dict = {}
    try:
        ds = run_sweep(exp, workers=args.workers, scheduler=args.scheduler,
                       cache=False if args.no_cache else args.cache, progress=not args.quiet,
                       stats=stats)
    except DrawError as exc:
        raise DrawError(f"{Path(args.config).name}: {exc}") from None
    table = format_table(ds)  # everything that can fail runs before the file is written
    atomic_write(args.out, lambda tmp: save(ds, tmp))
    print(table)
    print(f"{stats['unique']} cells ({stats['computed']} computed, {stats['cached']} from cache) "
          f"in {stats['seconds']:.1f} s; wrote {args.out}", file=sys.stdout)
    return 0
