"""Redraw time of the control panels: a control changed to a value already computed.

The issue's target: a panel redraw on the grid stays at most 0.3 s (no simulation). Builds
``Panel(STUDIES["rq2"], size)`` and ``Panel(STUDIES["rq1"], size)`` and the quickstart
:class:`fitgpp.workbook.widgets.Workbench`, computes once (the cell cache warm: run this twice, or
keep ``$FITGPP_CACHE``), then for each control changes it to another computed value and
back: the first change is printed as "first visit" (its CDF built for the first time; the
trade-off of every P, knob and variant is built in the background once the panel is drawn,
and the benchmark waits for that, as a user reading the panel would),
then ``--repeat`` more changes give the median and max of :attr:`last_seconds` (values a
user has looked at already, as when comparing two settings). The panels' background static copy (fitgpp/workbook/static.py: SVGs drawn by vl-convert
in a thread once the controls rest) is not part of a redraw; its cost is measured apart,
as one full draw of each panel's copy.

    python benchmarks/bench_panel.py [--size quick] [--repeat 7] [--profile PANEL:CONTROL]

``--opens N --panels all --opens-only`` prints that table for every panel of the notebooks;
``--against COMMIT`` adds the same opens of fitgpp as it was at COMMIT, alternating with these
(before and after in one run; the cache holds each version's cells under its own keys);
``--cold rq2`` opens one panel on an empty cache and prints when each of its draws came
(the first from the first seed, issue 26) against the issue's goal for a cold notebook.

``--profile rq2:max_preemptions`` (panel:control) prints the top of a cProfile of those
redraws. ``--opens N`` first opens each panel warm in N fresh processes (the issue's goal: a
warm notebook draws each panel in at most 3 s) and prints the medians of wall and CPU seconds
of ``Panel(study, size)`` alone, imports done before it.
"""

from __future__ import annotations

import argparse
import cProfile
import contextlib
import io
import os
import pstats
import json
import statistics
import subprocess
import sys
import time

import fitgpp.studies.reproduce as R
from fitgpp.workbook.panels import Panel
from fitgpp.workbook.widgets import Values, Workbench


def _visit(owner, widget, values) -> list[float]:
    """``owner.last_seconds`` after setting ``widget`` to each of ``values`` in turn."""
    out = []
    for v in values:
        widget.value = v
        out.append(owner.last_seconds)
    return out


def panel_cases(p: Panel) -> dict:
    """``{control: (widget, two values)}``: the controls a user changes on the grid."""
    cases = {}
    for dim in ("max_preemptions", "s", "policy", "seed"):
        w = p.controls.get(dim)
        opts = [v for _, v in getattr(w, "options", ())]
        if w is None or len(opts) < 2 or w.disabled:
            continue
        other = next(v for v in opts if v != w.value)
        cases[dim] = (w, [other, w.value])
    n = p.controls["seeds"].value
    if n > 1:
        cases["seeds"] = (p.controls["seeds"], [n - 1, n])   # fewer seeds: a new declaration
    return cases


def workbench_cases(wb: Workbench) -> dict:
    """The same controls on the quickstart workbench (pin/unpin: :func:`pin_times`)."""
    return {d: (wb.w[d], vs) for d, vs in (("s", [5.5, 4.0]), ("max_preemptions", [1, 3]),
                                           ("policy", ["lrtp", "fitgpp"]), ("seed", [1, 0]),
                                           ("n_seeds", [1, 2]))}


def measure(owner, cases: dict, repeat: int) -> dict[str, list[float]]:
    """Visit each control's values once (``FIRST``: the first change to the other value:
    its cells are computed, but nothing of it was drawn yet), then time ``repeat`` changes."""
    times = {}
    for name, (w, values) in cases.items():
        FIRST[name, id(owner)] = _visit(owner, w, values)[0]
        times[name] = [t for _ in range(repeat) for t in _visit(owner, w, values)][:repeat]
    return times


FIRST: dict = {}

#: Every study a notebook opens a panel over (notebook 03 opens two).
PANELS = ("rq1", "rq2", "rq2w", "rq3", "rq4", "rq5", "rq6", "rq7", "rq8", "runlen")


def pin_times(wb: Workbench, repeat: int) -> list[float]:
    out = []
    wb.pin(), wb.unpin()                                       # warm
    for _ in range(repeat):
        wb.pin()
        out.append(wb.last_seconds)
        wb.unpin()
        out.append(wb.last_seconds)
    return out[:repeat]


def copy_seconds(p) -> float:
    """One full draw of the panel's static copy (every chart's SVG, none reused)."""
    p.static._svgs.clear()
    t0 = time.perf_counter()
    p.static.html()
    return time.perf_counter() - t0


def report(name: str, owner, times: dict[str, list[float]]) -> None:
    for control, ts in times.items():
        first = FIRST.get((control, id(owner)))
        print(f"{name:10} {control:16} median {statistics.median(ts):6.3f} s  "
              f"max {max(ts):6.3f} s  (n={len(ts)})"
              + (f"  first visit {first:6.3f} s" if first is not None else ""))


OPEN = """
import json, os, sys, time
import fitgpp.studies.reproduce as R
from fitgpp.workbook.panels import SIZES, Panel
study = R.STUDIES[sys.argv[1]]
if sys.argv[1] in ("runlen", "rq8"):    # as notebooks 10 and 11 open them
    study = study.at_size(SIZES[sys.argv[2]])
t, c = time.perf_counter(), time.process_time()
Panel(study, sys.argv[2], cache=os.environ.get("FITGPP_CACHE"))
print(json.dumps([time.perf_counter() - t, time.process_time() - c]))
"""


COLD = """
import json, os, sys, tempfile, time
import fitgpp.studies.reproduce as R
from fitgpp.workbook import static
from fitgpp.workbook.panels import Panel


class Handle:   # as in a notebook: the first draw is drawn as a picture (SVGs) before it counts
    def __init__(self, obj):
        self.obj = obj

    def update(self, obj, **kw):
        self.obj = obj


static.in_kernel = lambda: True
static._display = lambda obj, **kw: Handle(obj)
t, c = time.perf_counter(), time.process_time()
p = Panel(R.STUDIES[sys.argv[1]], sys.argv[2], cache=os.environ["FITGPP_CACHE"])
wall, cpu = time.perf_counter() - t, time.process_time() - c
sim = sum(float(r["compute_cpu_s"]) for r in {id(r): r for r in p.o.runs.values()}.values())
print(json.dumps({"wall": wall, "cpu": cpu, "sim_cpu": sim, "cells": p.o.stats["computed"],
                  "draws": getattr(p, "draw_times", [[wall, len(p.o.study.seeds(p.size))]])}))
"""


def cold_open(key: str, size: str) -> dict:
    """Open ``Panel(STUDIES[key], size)`` once in a fresh process on an empty cache, as in a
    notebook (its first draw shown as a picture): the wall
    time of each draw (seconds since the constructor started, and the seeds it showed), the
    CPU seconds the cells' simulations took, and how many cells were simulated."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="fitgpp-cold-") as tmp:
        out = subprocess.run([sys.executable, "-c", COLD, key, size], check=True,
                             capture_output=True, text=True,
                             env={**os.environ, "FITGPP_CACHE": tmp}).stdout
    return json.loads(out.splitlines()[-1])


def open_times(key: str, size: str, n: int, trees: dict | None = None) -> dict:
    """``{tree: (median wall s, median CPU s)}`` of building ``Panel(STUDIES[key], size)``
    in ``n`` fresh processes per tree (``trees``: ``{tag: directory holding fitgpp/}``,
    ``""`` for this one; their runs alternate, so both see the same load), its cells
    already cached (one build per tree before, not counted, makes sure)."""
    import fitgpp
    here = str(os.path.dirname(os.path.dirname(fitgpp.__file__)))   # the fitgpp imported here
    trees = trees or {"": None}
    runs: dict = {tag: [] for tag in trees}
    for _ in range(n + 1):
        for tag, tree in trees.items():
            # run in the tree: ``python -c`` puts its working directory first on sys.path
            # (from a checkout, the checkout's fitgpp would win over PYTHONPATH's)
            out = subprocess.run([sys.executable, "-c", OPEN, key, size], check=True,
                                 capture_output=True, text=True, cwd=tree or here,
                                 env={**os.environ, "PYTHONPATH": tree or here}).stdout
            runs[tag].append(json.loads(out.splitlines()[-1]))
    return {tag: (statistics.median(r[0] for r in got[1:]),
                  statistics.median(r[1] for r in got[1:])) for tag, got in runs.items()}


def _checkout(commit: str) -> str:
    """A directory holding fitgpp/ as it was at ``commit``: bench_simulator.py's own."""
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_simulator import _checkout as checkout
    return checkout(commit)


def report_cold(key: str, size: str) -> None:
    """The issue's goal for a cold notebook: its first panel drawn within 1.5 x its
    simulation CPU-seconds divided by the cores it uses, plus 5 s."""
    from fitgpp.sweep.runner import dask_pays, machine_workers
    cores = machine_workers()
    load = os.getloadavg()[0]
    r = cold_open(key, size)
    used = cores if dask_pays(r["cells"], cores) else 1     # in this process: one core
    goal = 1.5 * r["sim_cpu"] / used + 5
    print(f"{key} cold at {size} size (empty cache, fresh process; load average {load:.2f}): "
          f"{r['cells']} cells simulated, {r['sim_cpu']:.1f} CPU-s of simulation on {used} "
          f"core(s) of {cores}; constructor {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU")
    for i, (t, seeds) in enumerate(r["draws"]):
        print(f"  draw {i + 1}: at {t:.1f} s, from {seeds} seed(s)")
    first = r["draws"][0][0]
    print(f"  first draw {first:.1f} s; goal 1.5 x {r['sim_cpu']:.1f} / {used} + 5 = {goal:.1f} s: "
          f"{'met' if first <= goal else 'NOT met'} (ratio {first / goal:.2f})")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="quick", choices=["quick", "full"])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--profile", default=None, help="panel:control, e.g. rq2:max_preemptions")
    ap.add_argument("--opens", type=int, default=0, help="warm opens per panel, fresh processes")
    ap.add_argument("--panels", default="rq2,rq1",
                    help=f"the panels --opens opens, comma-separated, or 'all' ({','.join(PANELS)})")
    ap.add_argument("--opens-only", action="store_true", help="stop after the --opens table")
    ap.add_argument("--against", metavar="COMMIT", default=None,
                    help="--opens also at COMMIT (its fitgpp/ from git archive), alternating")
    ap.add_argument("--cold", default=None, metavar="PANEL",
                    help="open this panel once on an empty cache, print its draws, and stop")
    args = ap.parse_args(argv)
    if args.cold:
        return report_cold(args.cold, args.size)
    cache = os.environ.get("FITGPP_CACHE")
    print(f"cache {cache or '(default)'}, size {args.size}, {args.repeat} redraws per control, "
          f"load average {os.getloadavg()[0]:.2f}")
    keys = PANELS if args.panels == "all" else args.panels.split(",")
    trees = {"": None}
    if args.against:   # its runs first, each panel's alternating with this tree's
        trees = {args.against: _checkout(args.against), "": None}
    if args.opens:
        print(f"warm open of Panel(study, {args.size!r}) alone (imports done before), fresh "
              f"process each, median of {args.opens}; goal: at most 3 s")
        print(f"{'panel':8} " + (f"{'at ' + args.against[:10]:>16}  " if args.against else "")
              + f"{'wall s':>7} {'CPU s':>7}  goal")
    for key in keys if args.opens else ():
        got = open_times(key, args.size, args.opens, trees)
        wall, cpu = got[""]
        then = (f"{got[args.against][0]:7.2f} {got[args.against][1]:7.2f}   "
                if args.against else "")
        print(f"{key:8} {then}{wall:7.2f} {cpu:7.2f}  {'met' if wall <= 3 else 'NOT met'}",
              flush=True)
    if args.opens_only:
        return
    owners = {}
    for key in ("rq2", "rq1"):
        t0 = time.perf_counter()
        owners[key] = Panel(R.STUDIES[key], args.size, cache=cache)
        built = time.perf_counter() - t0
        owners[key].prebuilding.join()   # a user reads the panel before changing P
        print(f"{key}: built and computed in {built:.1f} s; the other trade-offs built in "
              f"the background by {time.perf_counter() - t0:.1f} s")
    with contextlib.redirect_stdout(io.StringIO()):
        owners["workbench"] = Workbench(Values(n_seeds=2), cache=cache)
    results = {}
    for key, owner in owners.items():
        cases = panel_cases(owner) if key != "workbench" else workbench_cases(owner)
        with contextlib.redirect_stdout(io.StringIO()):   # outside a kernel the
            results[key] = measure(owner, cases, args.repeat)   # workbench prints its text
            if key == "workbench":
                results[key]["pin/unpin"] = pin_times(owner, args.repeat)
        report(key, owner, results[key])
    for key in ("rq2", "rq1"):
        print(f"{key:10} static copy (all SVGs, background) {copy_seconds(owners[key]):.2f} s")
    if args.profile:
        key, control = args.profile.split(":")
        owner = owners[key]
        cases = panel_cases(owner) if key != "workbench" else workbench_cases(owner)
        prof = cProfile.Profile()
        with contextlib.redirect_stdout(io.StringIO()):
            prof.enable()
            measure(owner, {control: cases[control]}, args.repeat)
            prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(35)
        print(s.getvalue())


if __name__ == "__main__":
    main()
