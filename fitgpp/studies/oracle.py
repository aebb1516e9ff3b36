"""The oracle bound in the research questions: SRTF (Tiresias's ``shortest``), which reads
every job's duration, a scheduler no real one can be. On one machine it minimizes the mean
completion time; it ignores the classes, so a policy told which jobs are TE may still beat
it on TE slowdown. A policy's TE and BE slowdowns are put against the oracle's over the same
seeds by :func:`fitgpp.analysis.verdicts.compare` (a direction only when the paired test
finds one)."""

from __future__ import annotations

import numpy as np

from fitgpp.analysis import verdicts

#: The oracle's registry name and label.
ORACLE, LABEL = "shortest", "SRTF"
#: The metrics put against the oracle's.
BOUND = (("te_p95", "TE p95 slowdown"), ("be_p95", "BE p95 slowdown"))


def against_oracle(a_values, oracle_values, *, a: str, title: str) -> str:
    """``title``: how far ``a``'s values (one per seed) are from the oracle's, paired per
    seed: "within d [lo, hi] of the oracle's", then the verdict grammar's own sentence
    (:func:`fitgpp.analysis.verdicts.compare`), which alone says a direction."""
    c = verdicts.compare(a_values, oracle_values, a=a, b=f"the {LABEL} oracle", title=title)
    if c.verdict == "cannot tell":
        return c.sentence
    x, y = (float(np.nanmean(np.asarray(v, dtype=float))) for v in (a_values, oracle_values))
    return (f"{a}'s {title} is within {c.diff:+.3g} [{c.diff_low:+.3g}, {c.diff_high:+.3g}] "
            f"of the {LABEL} oracle's ({x:.3g} against {y:.3g}). {c.sentence}")


def oracle_sentences(values: dict, a: str) -> str:
    """``values``: label -> {metric: per-seed values}, holding ``a`` and :data:`LABEL`; the
    sentences of :func:`against_oracle` for each metric of :data:`BOUND`, joined."""
    if a not in values or LABEL not in values:
        return ""
    return " ".join(against_oracle(values[a][m], values[LABEL][m], a=a, title=t)
                    for m, t in BOUND)


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
