"""The analysis of a study that declares none (:func:`generic`): what a researcher's own
study gets, re-exported by :mod:`fitgpp.studies.base`."""

from __future__ import annotations

import numpy as np

from fitgpp.analysis.metrics import brief
from fitgpp.studies.size import RQResult


def generic(o) -> RQResult:
    """The analysis of a study that declares none: its table, no figures, and a finding
    computed from the per-seed values: for each brief metric, which configuration is best by
    the paired test (:func:`fitgpp.analysis.verdicts.best_of`: "best" only when it is detectably better
    than every other, ties named, "cannot tell" below 3 seeds), and the change of the
    best-mean configuration against the baseline in the words its interval earns. Its
    ``config`` is left to :meth:`fitgpp.studies.Study.analysis` (the study's configuration)."""
    from fitgpp.analysis.verdicts import Estimate, best_of, change_text
    t = o.table()
    confs = o.configurations()
    parts = []
    for m in brief(o.study.columns):
        if m.name not in t or t[m.name].isna().all():
            continue
        vals = {c["label"]: o.metric_values(c, m) for c in confs}
        best = best_of(vals, title=m.title, better=m.better)
        text = best.sentence.rstrip(".")
        lead = t.loc[t["policy"] == best.ties[0]].iloc[0]
        if f"change_{m.name}" in t and not np.isnan(lead[f"change_{m.name}"]) \
                and lead["policy"] != o.baseline_label():
            e = Estimate.of(o.change(confs[int(lead.name)], m))
            text += (f"; {change_text(e, f'{best.ties[0]} against {o.baseline_label()}', m.better)}")
        parts.append(text)
    st = o.study
    return RQResult(st.key, st.title, st.question, t, {}, finding=". ".join(parts) + ".")
