"""The SRTF oracle in the research questions (Tiresias's ``shortest``): it reads every job's
remaining time, which no real scheduler can. What it is a bound of, and what not: on one
machine, shortest remaining time first minimizes the mean completion time (flow time) of
all jobs; it bounds no one class's tail (TE p95, BE p95), and on a cluster of several nodes,
with multi-GPU jobs and gangs, it bounds nothing at all. It ignores the classes, so a policy
told which jobs are TE may beat it on TE slowdown, and often does. A policy's TE and BE
slowdowns are put against the oracle's over the same seeds by
:func:`fitgpp.analysis.verdicts.compare`, and named plainly: "lower (higher) than the SRTF
oracle's by d [lo, hi]" only when the paired interval excludes 0."""

from __future__ import annotations

import numpy as np

from fitgpp.analysis import verdicts

#: The oracle's registry name and label.
ORACLE, LABEL = "shortest", "SRTF"
#: The metrics put against the oracle's.
BOUND = (("te_p95", "TE p95 slowdown"), ("be_p95", "BE p95 slowdown"))
#: What the oracle is, said once before a comparison with it.
WHAT = (f"The {LABEL} oracle (shortest remaining time first, reading every job's duration) "
        "minimizes the mean completion time of all jobs on one machine; it is no bound of one "
        "class's tail, nor of anything on a cluster of several nodes with gangs, so a policy "
        "may beat it there.")


def against_oracle(a_values, oracle_values, *, a: str, title: str) -> str:
    """``title`` of ``a`` (one value per seed) against the oracle's, paired per seed: "lower"
    or "higher than the SRTF oracle's by d [lo, hi]" when the paired interval excludes 0
    (:func:`fitgpp.analysis.verdicts.compare`), "cannot be told from" when it includes 0,
    the grammar's "cannot tell" below 3 seeds; the means and the test's p-value beside."""
    c = verdicts.compare(a_values, oracle_values, a=a, b=f"the {LABEL} oracle", title=title)
    if c.verdict == "cannot tell":
        return c.sentence
    x, y = (float(np.nanmean(np.asarray(v, dtype=float))) for v in (a_values, oracle_values))
    test = f"{x:.3g} against {y:.3g}; paired over {c.seeds} seeds, p = {c.pvalue:.2g}"
    if c.verdict == "no detectable difference":
        return (f"{a}'s {title} cannot be told from the {LABEL} oracle's: the paired "
                f"difference {c.diff:+.3g} [{c.diff_low:+.3g}, {c.diff_high:+.3g}] includes 0 "
                f"({test}).")
    word = "lower" if c.diff < 0 else "higher"
    lo, hi = sorted((abs(c.diff_low), abs(c.diff_high)))
    return (f"{a}'s {title} is {word} than the {LABEL} oracle's by {abs(c.diff):.3g} "
            f"[{lo:.3g}, {hi:.3g}] ({test}).")


def oracle_sentences(values: dict, a: str) -> str:
    """``values``: label -> {metric: per-seed values}, holding ``a`` and :data:`LABEL`; what
    the oracle is (:data:`WHAT`), then the sentences of :func:`against_oracle` for each
    metric of :data:`BOUND`, joined."""
    if a not in values or LABEL not in values:
        return ""
    return " ".join([WHAT, *(against_oracle(values[a][m], values[LABEL][m], a=a, title=t)
                             for m, t in BOUND)])


def oracle_counts(runs, a: str, metric: str = "te_p95") -> tuple[str, list[str]]:
    """RQ7's per-seed ``runs`` (columns workload, overhead_min, policy, seed and the
    metrics): ``a`` against the oracle in each workload and overhead. Returns a sentence
    counting the paired verdicts on ``metric`` and every sentence of :func:`against_oracle`
    (both metrics of :data:`BOUND`)."""
    counts, lines = {}, []
    for (w, ro), g in runs.groupby(["workload", "overhead_min"], sort=False):
        by = {p: d.sort_values("seed") for p, d in g.groupby("policy", sort=False)}
        if a not in by or LABEL not in by:
            continue
        for m, t in BOUND:
            lines.append(against_oracle(by[a][m], by[LABEL][m], a=a,
                                        title=f"{w}, {ro:g} min restarts, {t}"))
            if m == metric:
                v = verdicts.compare(by[a][m], by[LABEL][m], a=a, b=LABEL, title=t).verdict
                counts[v] = counts.get(v, 0) + 1
    if not counts:
        return "", lines
    names = {"worse": "above the oracle's", "better": "below it",
             "no detectable difference": "no detectable difference",
             "cannot tell": "too few seeds to tell"}
    said = ", ".join(f"{names[k]} in {n}" for k, n in counts.items())
    title = dict(BOUND)[metric]
    return (f"{a}'s {title} against the {LABEL} oracle (knows every duration), over "
            f"{sum(counts.values())} workload and overhead cells: {said}."), lines
