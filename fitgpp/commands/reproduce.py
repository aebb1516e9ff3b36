"""``fitgpp reproduce [--quick] --out DIR``: every research question, headless."""

from __future__ import annotations

import time

from .common import int_at_least



def add_parser(sub) -> None:
    p = sub.add_parser("reproduce", help="run every research question and write figures + results.md",
                       description="Run RQ1-RQ6, each a declared experiment, through the sweep "
                                   "runner and its cell cache (a second run simulates nothing); "
                                   "write each figure as PNG, SVG and PDF, a CSV per RQ and "
                                   "DIR/results.md.")
    p.add_argument("--quick", action="store_true",
                   help="small runs (600 jobs, 2 seeds; well under a minute) instead of the full size")
    # the keys are checked when the command runs (naming them here would import the studies,
    # and altair with them, to build the parser; a new study would need its key here too)
    p.add_argument("--only", nargs="+", metavar="RQ",
                   help="run only these research questions (rq1, rq2, rq2w, ...: the keys of "
                        "fitgpp.reproduce.STUDIES)")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--workers", type=int_at_least(0), metavar="N",
                   help="Dask workers for the cells not in the cache (0: in this process; default: "
                        "every CPU at full size, in process with --quick)")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor keep sweep cells (default: $FITGPP_CACHE or ~/.cache/fitgpp)")
    p.set_defaults(run=run)


def run(args) -> int:
    import dataclasses
    from pathlib import Path

    from ..cli import UsageError
    from ..reproduce import FULL, QUICK, STUDIES, run_all
    from .common import writable_dir
    unknown = [k for k in args.only or () if k not in STUDIES]
    if unknown:
        raise UsageError(f"--only {' '.join(unknown)}: no such research question (there are "
                         f"{', '.join(STUDIES)})")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create the directory "
                         f"({exc.strerror or exc})") from None
    writable_dir(out, f"--out {out}")
    size = QUICK if args.quick else FULL
    if args.workers is not None:
        size = dataclasses.replace(size, workers=args.workers)
    t = time.perf_counter()
    run_all(out, size=size, which=args.only, cache=False if args.no_cache else None,
            progress=True)
    print(f"wrote {out / 'results.md'} and the figures in {time.perf_counter() - t:.0f} s")
    return 0
