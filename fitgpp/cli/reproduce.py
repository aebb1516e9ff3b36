"""``fitgpp reproduce [--quick] [--width column|full] --out DIR``: every research question, headless."""

from __future__ import annotations

import time

from fitgpp.cli.common import int_at_least, path_arg, workers_int



def add_parser(sub) -> None:
    p = sub.add_parser("reproduce", help="run every research question and write figures + results.md",
                       description="Run every study of fitgpp.studies.STUDIES (RQ1-RQ8, "
                                   "RQ7's variants, the run-length study), each a declared "
                                   "experiment, through the sweep runner and its cell cache (a "
                                   "second run simulates nothing); "
                                   "write each figure as PNG, SVG and PDF, a CSV per RQ and "
                                   "DIR/results.md.")
    p.add_argument("--quick", action="store_true",
                   help="small runs (600 jobs, 2 seeds; about a minute cold on 2 cores, "
                        "docs/experiments.md) instead of the full size")
    # the keys are checked when the command runs (naming them here would import the studies,
    # and altair with them, to build the parser; a new study would need its key here too)
    p.add_argument("--only", nargs="+", metavar="RQ",
                   help="run only these research questions (rq1, rq2, rq2w, ...: the keys of "
                        "fitgpp.studies.STUDIES)")
    p.add_argument("--width", choices=("column", "full"), default="full",
                   help="printed width the figures are laid out for: a 3.3 in column or the "
                        "full 7 in page width (default: full)")
    p.add_argument("--out", required=True, metavar="DIR", type=path_arg)
    p.add_argument("--workers", type=workers_int, metavar="N",
                   help="Dask workers for the cells not in the cache (0: in this process; default: "
                        "every CPU at full size, in process with --quick)")
    # 1000: fitgpp.studies.size.MAX_SEED_BUDGET (not imported to build the parser)
    p.add_argument("--max-seeds", type=int_at_least(1, 1000), metavar="N",
                   help="seed budget: a configuration whose verdict is undecided gets more seeds "
                        "in rounds (doubling), up to N (default: 30 at the full size, off with "
                        "--quick; at most the seeds asked: off). See docs/verdicts.md")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor keep sweep cells (default: $FITGPP_CACHE or ~/.cache/fitgpp)")
    p.set_defaults(run=run)


def run(args) -> int:
    import dataclasses
    from pathlib import Path

    from fitgpp.cli.common import UsageError
    from fitgpp.studies.reproduce import FULL, QUICK, STUDIES, run_all
    from fitgpp.cli.common import writable_dir
    unknown = [k for k in args.only or () if k not in STUDIES]
    if unknown:
        raise UsageError(f"--only {' '.join(unknown)}: no such research question (there are "
                         f"{', '.join(STUDIES)})")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    size = QUICK if args.quick else FULL
    if args.workers is not None:
        size = dataclasses.replace(size, workers=args.workers)
    if args.max_seeds is not None:
        size = dataclasses.replace(size, max_seeds=args.max_seeds)
    _check_environment(args.no_cache, size.workers)
    made = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create the directory "
                         f"({exc.strerror or exc})") from None
    t = time.perf_counter()
    try:
        writable_dir(out, f"--out {out}")
        from fitgpp.figures.plots import printed_at
        with printed_at(args.width):
            run_all(out, size=size, which=args.only, cache=False if args.no_cache else None,
                    progress=True)
    except BaseException:
        if made and not any(out.iterdir()):  # a failure leaves no empty folder of ours
            out.rmdir()
        raise
    print(f"wrote {out / 'results.md'} and the figures in {time.perf_counter() - t:.0f} s")
    return 0


def _check_environment(no_cache: bool, workers: int | None) -> None:
    """The cache folder and $FITGPP_SCHEDULER (used unless the cells run in this process),
    checked before --out is created."""
    import os

    from fitgpp.cli.sweep import check_address
    if not no_cache:
        from fitgpp.sweep import CellCache
        CellCache()
    address = os.environ.get("FITGPP_SCHEDULER")
    if address and workers != 0:
        check_address(address, "$FITGPP_SCHEDULER")
