"""``fitgpp reproduce``: run the research questions of :mod:`fitgpp.studies`, write the report.

Each question is declared once, in its module of :mod:`fitgpp.studies` (``rq1`` ... ``rq7``,
then ``runlen``, the run-length study; :data:`STUDIES` lists every key); the notebooks run the same declarations, so notebook and command cannot disagree. This module
runs them (:func:`run_all`), exports their figures through :mod:`fitgpp.figures.export`'s figure
path, and writes ``results.md``: the headline against the paper (each number's verdict by
:mod:`fitgpp.analysis.verdicts`, then its run length and steadiness), one line per question,
then each question's table (the metrics declared in :mod:`fitgpp.analysis.metrics`, with their
changes against the study's baseline) and figures. The names the notebooks and older code
use (``Study``, ``Size``, ``QUICK``, ``STUDIES``, ``rq1`` ...) are re-exported from here.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from fitgpp.figures import plots
from fitgpp._version import __version__
from fitgpp.analysis.metrics import CI_NOTE, METRICS, brief, change, percent
from fitgpp.analysis.tables import safe_csv
from fitgpp.analysis.escape import md_alt, md_code, md_inert, md_text
from fitgpp.studies import STUDIES, Study
from fitgpp.studies.base import (FULL, NAMES, QUICK, Outcome, ReproduceError, RQResult, Size, _fmt,
                                 label_of, shared)
from fitgpp.studies.keys import keyed
from fitgpp.studies.rq1 import HEADLINE
from fitgpp.studies.steady import steady_markdown
from fitgpp.analysis.verdicts import (CLIP_NOTE, PAPER, PAPER_CLAIMS, Estimate, against_paper,
                                      against_paper_row, paper_summary)
from fitgpp.studies.rq2 import P_VALUES, S_VALUES
from fitgpp.studies.rq3 import GRACE_SCALES
from fitgpp.studies.rq4 import GRACE_SHAPES, TE_FRACTIONS, grace_variant
from fitgpp.studies.rq5 import ALIBABA, alibaba_trace

RQ1, RQ3 = STUDIES["rq1"], STUDIES["rq3"]
#: Names re-exported for the notebooks and older code (the declarations live in fitgpp.studies).
__all__ = ["ALIBABA", "FULL", "GRACE_SCALES", "GRACE_SHAPES", "NAMES", "Outcome", "PAPER",
           "P_VALUES", "QUICK", "RQ1", "RQ3", "RQResult", "RQS", "ReproduceError", "STUDIES",
           "S_VALUES", "Size", "Study", "TE_FRACTIONS", "alibaba_trace", "grace_variant",
           "headline_table", "label_of", "run_all", "write_results"]


def _study_fn(study: Study):
    def run(size: Size = QUICK, **kw) -> RQResult:
        return study.result(size, **kw)
    run.__name__ = study.key
    run.__doc__ = f"{study.title}. {study.question} (``STUDIES[{study.key!r}].result``)"
    return run


rq1, rq2w, rq3, rq4, rq5, rq6 = (_study_fn(STUDIES[k])
                                 for k in ("rq1", "rq2w", "rq3", "rq4", "rq5", "rq6"))


def rq2(size: Size = QUICK, s_values=S_VALUES, p_values=P_VALUES, *, model: str | None = None,
        **kw) -> RQResult:
    """RQ2 over ``s_values`` x ``p_values``; ``model="paper-wide-te"`` is RQ2w."""
    study = STUDIES["rq2w"] if model == "paper-wide-te" else STUDIES["rq2"]
    if model is not None and model != (study.model or size.model):
        study = study.replace(model=model, key="rq2w", title=f"RQ2 on {model}: the threshold s")
    pols = {**study.policies, "fitgpp": {"s": [float(s) for s in s_values],
                                         "max_preemptions": [int(p) for p in p_values]}}
    return study.replace(policies=pols).result(size, **kw)


#: ``{key: function(size)}``, the research questions as the notebooks call them.
RQS = {**{k: _study_fn(s) for k, s in STUDIES.items()}, "rq2": rq2}

# ---------------------------------------------------------------- the report
def headline_table(r1: RQResult) -> str:
    """The paper's three numbers against FitGpp s=4's, each with its verdict from its interval
    by :func:`fitgpp.analysis.verdicts.against_paper`, then the one-line summary. When RQ1 ran
    FIFO with EASY backfilling too (``datasets["fifo_readings"]``), its changes against that
    reading stand beside, with their verdicts and summary: the paper does not say which FIFO."""
    row = r1.table.set_index("policy").loc[HEADLINE]
    easy = _reading(r1, "easy")
    level = getattr(r1.rounds, "level", 0.95)    # seed rounds judge at a level of their own
    lines = [f"| metric (change vs FIFO) | paper | ours: FitGpp s=4, mean [{100 * level:.4g} % CI] "
             "| verdict |"
             + (" against EASY FIFO | verdict |" if easy else ""),
             "|---|---|---|---|" + ("---|---|" if easy else "")]
    said, said_easy = [], []
    for c in PAPER_CLAIMS:
        v = against_paper(Estimate.from_row(row, f"change_{c.key}"), c)
        said.append(v)
        line = (f"| {c.title} | {percent(c.change)} | "
                f"{_fmt(*(row[f'change_{c.key}{x}'] for x in ('', '_lo', '_hi')), True)} | "
                f"{v.phrase} |")
        if easy:
            e = against_paper(easy[c.key], c)
            said_easy.append(e)
            line += f" {_fmt(e.measured.mean, e.measured.low, e.measured.high, True)} | {e.phrase} |"
        lines.append(line)
    if not easy:
        return "\n".join(lines + ["", paper_summary(said)])
    return "\n".join(lines + ["", "Against strict FIFO (no backfilling, our reading of the "
                               f"paper's FIFO and every other change's baseline): "
                               f"{paper_summary(said)} Against FIFO with EASY backfilling: "
                               f"{paper_summary(said_easy)}"])


def _reading(r1: RQResult, backfill: str) -> dict | None:
    """``{metric: Estimate}`` of FitGpp s=4's changes against FIFO's reading ``backfill``, as
    RQ1 keeps them (:func:`fitgpp.studies.rq1.against_readings`); None when it did not run."""
    t = r1.datasets.get("fifo_readings") if isinstance(r1.datasets, dict) else None
    if not isinstance(t, pd.DataFrame) or t.empty or backfill not in set(t["backfill"]):
        return None
    return {r["metric"]: Estimate(r["change"], r["change_lo"], r["change_hi"], int(r["seeds"]),
                                  tuple(r["values"]) if "values" in r else ())
            for _, r in t[t["backfill"] == backfill].iterrows()}


def run_length_note(r1: RQResult) -> str:
    """How long the headline's runs were and whether they reached a steady state: a change
    against a baseline whose queue grows for the whole run is a function of the run length
    (see the run-length study, ``runlen``)."""
    if r1.steadiness is None:
        return "Steady state: not judged."
    st = r1.steadiness.set_index("policy")
    parts = [f"{p} {int(st.loc[p, 'steady'])} of {int(st.loc[p, 'seeds'])} runs steady"
             for p in ("FIFO", HEADLINE) if p in st.index]
    jobs = int(r1.steadiness["jobs"].iloc[0])
    steady = all(st.loc[p, "steady"] == st.loc[p, "seeds"] for p in ("FIFO", HEADLINE)
                 if p in st.index)
    return (f"Run length: {jobs:,} jobs per run; {', '.join(parts)}. "
            + ("Both were judged steady: no growth of the queue was detectable, so these "
               "changes are not shown to grow with the run through a queue that never settles. "
               "That is not convergence: a short run still starts on an empty cluster, and the "
               "run-length study shows how far these numbers move with the number of jobs."
               if steady else
               "A run that is not steady has a queue that grows for the whole run: these "
               "changes move with the number of jobs simulated (see the run-length study)."))


def _rq8_note(results: dict) -> list[str]:
    """Where the paper's BE cost appears, from RQ8 when it ran (:func:`fitgpp.studies.rq8.
    headline_context`)."""
    from fitgpp.studies.rq8 import headline_context
    if "rq8" in results:
        return [headline_context(results["rq8"])]
    return ["Where the paper's BE cost appears (with a restart cost, on wide TE jobs) is RQ8's "
            "question; it was not run here."]


def tradeoff_note(r1: RQResult, r2: RQResult) -> list[str]:
    """Where the paper's headline sits on our s/P trade-off (RQ2's FitGpp settings)."""
    t1 = r1.table.set_index("policy")
    te_fifo, te_fit = t1.loc["FIFO", "te_p95"], t1.loc["FitGpp s=4", "te_p95"]
    fit = r2.table[r2.table["family"] == "FitGpp"].copy()
    # shortfall: how many points the worst of the three misses the paper by (<= 0: meets)
    fit["shortfall"] = np.max([fit[f"change_{k}"] - PAPER[k] for k in PAPER], axis=0)
    fit = fit.sort_values("shortfall")
    fit["verdicts"] = [" / ".join(v.phrase for v in against_paper_row(r))
                       for _, r in fit.iterrows()]
    lines = ["## Where the headline sits on the s/P trade-off", "",
             f"A TE p95 slowdown cannot fall below 1, so the largest possible TE p95 cut against "
             f"FIFO is 1 - 1/{te_fifo:.3g} = {percent(-change(1.0, te_fifo), sign=False)} on this "
             f"workload (FitGpp s=4 reaches a TE p95 of {te_fit:.3g}); the paper's "
             f"{percent(PAPER['te_p95'])} needs FIFO's TE p95 to be at least "
             f"{1 / (1 + PAPER['te_p95']):.1f}. FitGpp settings from RQ2, closest to the headline "
             "first (shortfall = percentage points by which the worst of the three is above the "
             "paper's; <= 0 is at least as low on all three, which is not the paper's trade-off "
             "when a BE change has the other sign: the last column gives the verdicts):", "",
             "| setting | TE p95 vs FIFO | BE median vs FIFO | BE p95 vs FIFO | shortfall | "
             "against the paper (TE p95 / BE median / BE p95) |",
             "|---|---|---|---|---|---|"]
    for _, r in fit.head(6).iterrows():
        lines.append(f"| {md_text(r['policy'])} | {percent(r['change_te_p95'])} | "
                     f"{percent(r['change_be_median'])} | {percent(r['change_be_p95'])} | "
                     f"{100 * r['shortfall']:+.1f} | {r['verdicts']} |")
    shown = [n for n in r2.charts if n.startswith(f"{r2.key}_s_tradeoff_P")][:1] + \
        [n for n in r2.charts if n.endswith("_change_vs_s")]
    lines += ["", "Figures: " + ", ".join(md_code(f"{n}.png") for n in shown) + "."]
    return lines


def _md_table(table: pd.DataFrame, id_cols, cols: list[str] | None = None,
              fractions=(), *, extra=(), baseline: str = "FIFO") -> str:
    """``id_cols`` (a list, or ``{column: heading}``: the keys of the rows) then ``cols``
    (default: the brief metrics of :data:`fitgpp.analysis.metrics.METRICS` and those in
    ``extra``, then their changes against the baseline) with intervals, headed by the
    metrics' titles; ``change_*`` columns and ``fractions`` in percent."""
    id_cols = dict(id_cols) if isinstance(id_cols, dict) else {c: c for c in id_cols}
    if cols is None:
        shown = [m for m in brief(extra) if m.name in table.columns]
        cols = [m.name for m in shown] + [f"change_{m.name}" for m in shown
                                          if f"change_{m.name}" in table.columns]
    heads = {m.name: m.title for m in METRICS.values()}
    heads.update({f"change_{m.name}": f"{m.label} vs {baseline}" for m in METRICS.values()})
    head = list(id_cols.values()) + [heads.get(c, c) for c in cols]
    # the range of each column (fitgpp.analysis.metrics.value_range): a slowdown at least 1, a change
    # at least -100 %, a count or share at least 0; every cut bound marked *
    seeds = "seeds" in table and "seeds" not in id_cols   # what every row's numbers rest on
    head[len(id_cols):len(id_cols)] = ["seeds"] * seeds
    lines = ["| " + " | ".join(map(md_text, head)) + " |", "|" + "---|" * len(head)]
    for _, r in table.iterrows():
        cells = [f"{r[c]:g}" if isinstance(r[c], float) else md_text(r[c]) for c in id_cols]
        cells += [f"{int(r['seeds'])}"] if seeds else []
        cells += [_fmt(r[c], r[f"{c}_lo"], r[f"{c}_hi"], c.startswith("change_") or c in fractions,
                       name=c) for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def size_name(size: Size) -> str:
    """``"quick"`` or ``"full"`` when ``size`` is that size, wherever its cells ran (its
    ``workers`` change no number), else ``"custom"``."""
    import dataclasses
    for name, known in (("quick", QUICK), ("full", FULL)):
        if dataclasses.replace(size, workers=known.workers) == known:
            return name
    return "custom"


def write_results(results: dict, out: Path, size: Size, seconds: float, figures: list,
                  not_run: dict | None = None, pngs: dict | None = None) -> Path:
    """``out/results.md``; ``figures``: the files written, ``pngs``: ``{chart name: its PNG}``
    (default: the PNGs of ``figures`` by their names)."""
    out = Path(out)
    md = [f"# fitgpp reproduce: results ({size_name(size)} size)", "",
          f"fitgpp {__version__}; {seconds:.0f} s; seeds {list(size.seeds)}; workload model "
          f"{md_code(size.model)}, {size.n_jobs} jobs per seed, offered load {size.load:g}, "
          f"cluster {size.cluster.describe()}, tick 60 s, P = 3 unless stated"
          + (f"; seed budget {size.budget}: undecided configurations get more seeds in rounds"
             if size.budget > len(size.seeds) else "") + ".",
          f"Means over seeds; {CI_NOTE}; a study whose seeds were added in rounds states the "
          f"level of its intervals in its section, and every table gives each row's seeds. "
          f"Changes against FIFO are paired per seed and shown in "
          f"percent. {CLIP_NOTE}. Verdicts follow the grammar of `fitgpp.analysis.verdicts` "
          "(docs/verdicts.md, \"How findings are worded\"); every count of cells or settings "
          "says how many are confirmed, contradicted and undecided.", ""]
    if "rq1" in results:
        md += ["## Headline: FitGpp (s = 4) against FIFO", "", headline_table(results["rq1"]), "",
               run_length_note(results["rq1"]), "", *_rq8_note(results), ""]
    if "rq1" in results and "rq2" in results:
        md += tradeoff_note(results["rq1"], results["rq2"]) + [""]
    md += ["## One line per research question", ""]
    for r in results.values():
        md.append(f"- **{md_text(r.title)}** — {md_inert(r.finding)}")
    for key, why in (not_run or {}).items():
        md.append(f"- **{md_text(key.upper())}** — NOT RUN: {md_text(why)}")
    md.append("")
    # figures embedded by paths relative to results.md, so the report moves as one directory
    import os
    pngs = pngs if pngs is not None else {Path(p).stem: p for p in figures
                                          if Path(p).suffix == ".png"}
    rel = {n: Path(os.path.relpath(p, out)).as_posix() for n, p in pngs.items()}
    for key, r in results.items():
        # every key of the rows (the variant, each knob, the policy): no two rows read the same
        t, keys = keyed(r.table, STUDIES.get(key), r.config.get("knobs"))
        table = (_md_table(t, keys, extra=r.columns, baseline=r.baseline)
                 if r.report_columns is None else _md_table(t, keys, *r.report_columns[1:]))
        md += [f"## {md_text(r.title)}", "", md_text(r.question), "",
               *([md_inert(r.details), ""] if r.details else []),
               *([md_inert(r.rounds.text()), ""] if r.rounds is not None else []),
               "Configuration: " + md_code(json.dumps(r.config, default=str)), "", table, "",
               *([steady_markdown(r.steadiness), ""] if r.steadiness is not None else [])]
        for n, chart in r.charts.items():
            if n in rel:
                title = _chart_title(chart, n)
                md += [f"![{md_alt(' '.join(title) if isinstance(title, list) else title)}]"
                       f"({rel[n]})", ""]
            else:
                md += [f"Figure {md_code(n)} (no PNG exported)", ""]
    md += ["## Files", ""] + [f"- [{Path(p).name}]({Path(os.path.relpath(p, out)).as_posix()})"
                              for p in figures]
    text = "\n".join(md) + "\n"
    for prefix in {str(out.resolve()), str(out)}:   # no machine-specific paths in the report
        text = text.replace(prefix + os.sep, "").replace(prefix, ".")
    path = out / "results.md"
    path.write_text(text)
    return path


def _chart_title(chart, default: str):
    """The title of ``chart`` (an Altair chart or its dict) as its Vega-Lite dict gives it
    (its text, when it is a title object; ``default`` when it has none), read from the
    chart's own ``title``: no spec is built for it."""
    import altair as alt
    t = chart.get("title", default) if isinstance(chart, dict) else getattr(chart, "title",
                                                                            alt.Undefined)
    if t is alt.Undefined:
        return default
    if isinstance(t, alt.SchemaBase):
        t = t.to_dict(validate=False)
    return t.get("text", default) if isinstance(t, dict) else t


def _export(r: RQResult, out: Path, formats, cache, refused: dict) -> dict[str, list[Path]]:
    """Every chart of ``r`` through :func:`fitgpp.figures.export.export` (the figure check, the
    study's configuration embedded, its caption and the manifest, never overwriting):
    ``{name: paths}``, the PNG first; a chart the check refuses goes into ``refused``
    (``{name: why}``) and is not written."""
    from fitgpp.figures.export import FiguresRefused, export
    from fitgpp.studies.captions import declared
    order = sorted(formats, key=lambda f: f != ".png")
    study = STUDIES.get(r.key)
    out_paths = {}
    for name, chart in r.charts.items():
        # the study's caption (else the title the figure draws: the figure check refuses one
        # with neither, with the others written)
        said = declared(study, name) if study is not None else None
        try:
            out_paths[name] = export({name: chart}, out, config={"study": r.key, **r.config},
                                     formats=order, cache=cache, partial=True,
                                     captions={name: said} if said else None)
        except FiguresRefused as exc:
            refused.update(exc.refused)
    return out_paths


def run_all(out, *, size: Size = QUICK, which=None, formats=plots.FORMATS, log=print,
            cache=None, progress=False, scheduler=None, sizes: dict | None = None) -> dict:
    """Run the research questions ``which`` (default all) through the sweep and its cache
    (``cache``: a directory, None for the default, False for none) where the one rule of
    :func:`fitgpp.sweep.run_sweep` says (``scheduler``: a Dask scheduler's address, default
    ``$FITGPP_SCHEDULER``, at every size; else as ``size.workers`` says, on a local cluster
    started only if some cell must be computed and closed at the end), each at ``size`` or at
    the size ``sizes`` gives for its key (the docs' reproduction page runs RQ8 smaller, said
    there; each study's section states its own jobs and seeds), export every chart in
    every format under ``out`` through :func:`fitgpp.figures.export.export` (checked, with its
    configuration, in the manifest; each chart's layout and rendered files are cached too,
    beside the cells), write ``out/results.md``; return ``{key: RQResult}`` (each with
    ``stats``: cells, cached, computed)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    results, figures, pngs, not_run, refused = {}, [], {}, {}, {}
    from fitgpp.sweep import cache_dir_for
    root = cache_dir_for(cache)
    figure_cache = None if root is None else root / "figures"
    scheduler = scheduler or os.environ.get("FITGPP_SCHEDULER") or None
    started = None   # the session's local cluster, if it is started here: closed at the end
    if scheduler is None and size.workers != 0:
        scheduler = shared(size.workers)
        started = scheduler if scheduler.cluster is None else None
    for key in dict.fromkeys(which or STUDIES):  # a key given twice runs once
        t = time.perf_counter()
        if key == "rq5" and which is None and not ALIBABA.is_file():
            # asked for everything, and RQ5's input is not on this machine: say so, go on
            not_run[key] = (f"its input {ALIBABA} is missing (the Alibaba GPU v2023 trace "
                            "shipped with fitgpp: reinstall it)")
            log(f"RQ5 not run: {not_run[key]}")
            continue
        r = STUDIES[key].result((sizes or {}).get(key, size), cache=cache, scheduler=scheduler,
                                progress=progress)
        results[key] = r
        written = _export(r, out, formats, figure_cache, refused)
        figures += [p for ps in written.values() for p in ps]
        pngs.update({n: ps[0] for n, ps in written.items() if ps and ps[0].suffix == ".png"})
        (out / f"{key}.csv").write_text(safe_csv(r.table))
        s = r.stats
        log(f"{r.title}: {time.perf_counter() - t:.1f} s, {s['unique']} cells "
            f"({s['computed']} simulated, {s['cached']} from the cache) — {r.finding}")
    if started is not None:   # closed now, in order, not as the interpreter exits
        started.close()
    write_results(results, out, size, time.perf_counter() - t0, figures, not_run, pngs)
    if refused:   # everything else is written, results.md says which figure is missing
        from fitgpp.figures.export import FiguresRefused
        raise FiguresRefused(refused, figures)
    return results
