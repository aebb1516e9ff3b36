"""What a control panel and the workbench show of a configuration against its baseline.

Both compare one configuration of an :class:`fitgpp.studies.base.Outcome` (an :class:`Arm`)
with another over the same seeds: a research question's panel the selected cell with the
study's baseline, the workbench the current configuration with the pinned one (each an
ad-hoc study, :class:`fitgpp.workbook.workbench.AdhocStudy`). The rows of numbers
(:func:`metric_rows`) and the slowdown CDFs (:func:`slowdown_view`) are built here once for
both; :func:`tradeoff_view` is the panel's s trade-off at the selected ``P``, knobs and
variant.

    cur, base = Arm("FitGpp s=4", o, conf), Arm("FIFO", o, o.baseline(conf))
    metric_rows(cur, base, brief())       # a DataFrame: both, and the change of cur
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import altair as alt
import numpy as np
import pandas as pd
import xarray as xr

from fitgpp.errors import FitgppError
from fitgpp.figures import names, plots
from fitgpp.analysis.metrics import CHANGE_RANGE, brief, paired_change, percent, value_range
from fitgpp.studies.base import Outcome, label_of
from fitgpp.studies.captions import CAPTIONS, caption  # noqa: F401  (the panel's captions)
from fitgpp.analysis.tables import interval_text


def specs(o_or_study) -> list:
    """The policy classes a study (or an Outcome's study) runs: where its fields' names are
    declared (:mod:`fitgpp.figures.names`)."""
    st = getattr(o_or_study, "study", o_or_study)
    return [g.cls for g in st.grid().policies]


def model_matters(study, size) -> bool:
    """Whether choosing another workload model changes what ``study`` runs at ``size``: not
    for a trace, nor when its variants each load their own model (RQ6, RQ7: the "workload"
    dimension), where a model control would re-run the same cells."""
    if study.trace is not None:
        return False
    from fitgpp.workload import list_models
    now = study.model or size.model
    other = next(m for m in list_models() if m != now)
    exps = study.experiments(size).values()
    alt_ = study.replace(model=other).experiments(size).values()
    return [e.to_dict() for e in exps] != [e.to_dict() for e in alt_]


@dataclass
class Arm:
    """One configuration's results: its ``label``, the :class:`Outcome` it is in and its
    configuration there (as :meth:`Outcome.configurations` gives them; None: the first)."""

    label: str
    outcome: Outcome
    conf: dict | None = field(default=None)

    def __post_init__(self):
        if self.conf is None:
            self.conf = self.outcome.configurations()[0]

    def seeds(self) -> tuple[int, ...]:
        return self.outcome.study.seeds(self.outcome.size)

    def metric(self, m) -> np.ndarray:
        """Per-seed values of metric ``m`` (a :class:`fitgpp.analysis.metrics.Metric`)."""
        return self.outcome.metric_values(self.conf, m)

    def cell(self, seed: int) -> xr.Dataset:
        """The simulation Dataset of seed ``seed`` (from the cells, no simulation)."""
        c = self.conf
        return self.outcome.run(c["name"], seed=seed, variant=c["variant"], **c["params"],
                                **c["knobs"])

    def same_as(self, other: Arm) -> bool:
        return self.outcome is other.outcome and self.conf == other.conf


def _num(x) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"   # no 1.8e+04


def metric_rows(cur: Arm, base: Arm | None, metrics, *, names: tuple | None = None,
                row=lambda m: m.label, base_name: str | None = None) -> pd.DataFrame:
    """One row per metric of ``metrics``: ``cur``'s mean over its seeds with its interval
    (:func:`fitgpp.analysis.tables.interval_text`, cut at the metric's range and marked ``*``), ``base``'s, and the change of ``cur`` against
    ``base`` paired per seed (``–`` where it means nothing: the same configuration, other
    seeds, or a metric whose change means nothing, e.g. preemptions against FIFO).

    ``names``: the two columns (default: the arms' labels); ``row``: a metric's row name;
    ``base_name``: when ``base`` is None, still give its column (``–``) under this name.
    """
    a, b = names or (cur.label, base.label if base is not None else base_name)
    same = base is not None and (base.same_as(cur) or base.seeds() != cur.seeds())
    rows = {}
    for m in metrics:
        x = cur.metric(m)
        r = {a: interval_text(x, _num, value_range=value_range(m.name))}
        if base is not None or b is not None:
            y = base.metric(m) if base is not None else np.full_like(x, np.nan)
            r[b] = interval_text(y, _num, value_range=value_range(m.name))
            r[f"change vs {b}"] = ("–" if base is None or same or not m.vs_baseline else
                                   interval_text(paired_change(x, y), percent,
                                                 value_range=CHANGE_RANGE))
        rows[row(m)] = r
    return pd.DataFrame.from_dict(rows, orient="index")


def slowdown_view(arms, seed: int, title: str) -> alt.Chart:
    """Slowdown CDFs per class of ``arms`` (one line each, the first of equal labels) on
    seed ``seed``."""
    runs = {}
    for arm in arms:
        if arm is not None and arm.label not in runs:
            runs[arm.label] = arm.cell(seed)
    return plots.slowdown_cdf(runs, title=title)


def tradeoff_view(o: Outcome, sel: dict, table: pd.DataFrame | None = None, *,
                  pick: str = "pick", live: bool = True) -> alt.Chart:
    """TE p95 against BE median and p95 slowdown, one point per configuration at the
    selected ``P``, knobs and variant; clicking a point selects it (``pick``: ``family``
    and ``s``). ``table``: ``o.table()``, if already computed. ``live``: the title says what
    a click does (on screen); an exported figure says nothing of clicks (``False``)."""
    st = o.study
    t = o.table() if table is None else table
    keep = np.ones(len(t), bool)
    for k in st.knobs:
        keep &= t[k].to_numpy() == float(sel[k])
    if st.variants:
        keep &= t[st.variant_dim].to_numpy() == sel[st.variant_dim]
    if "max_preemptions" in sel and t["P"].notna().any():
        keep &= (t["P"].isna() | (t["P"] == sel["max_preemptions"]) | (t["family"] != "FitGpp")
                 ).to_numpy()
    sub = t[keep].copy()
    # at one P (the title says which) P names no point: its token is dropped from the labels,
    # and nothing else (a field of a researcher's policy after it, "patience=5", is kept)
    sub["policy"] = [re.sub(r" P=\S+", "", p) for p in sub["policy"]]
    at = [names.phrase("max_preemptions", sel["max_preemptions"])] if len(st.dimensions(o.size).get(
        "max_preemptions", ())) > 1 and "max_preemptions" in sel else []
    at += [names.phrase(k, float(sel[k])) for k in st.knobs]
    at += [f"{sel[st.variant_dim]} grace" if st.variant_dim == "grace" else
           str(sel[st.variant_dim])] if st.variants else []
    what = f" at {', '.join(at)}" if at else ""
    # the title given here, not set afterwards: that dropped the subtitle and its notes
    # ("FIFO off the scale (TE p95 56.8), drawn at the edge.")
    click = " (click a point: its slowdown distributions appear below)" if live else ""
    chart = plots.s_tradeoff(sub, title=f"TE against BE slowdown{what}{click}")
    selection = alt.selection_point(name=pick, fields=["family", "s"], on="click")
    inner = chart.spec
    for i, layer in enumerate(inner.layer):
        if getattr(layer.mark, "type", layer.mark) == "point":
            inner.layer[i] = layer.add_params(selection)
    # built again so that altair lifts the layer's selection to the chart's top, as its
    # to_dict does: alt.JupyterChart looks for selections only there, and without it a
    # click on a point reached no observer (notebook 03 in Chromium, from 1a7b211 on,
    # when the title stopped being set through .properties(), which also rebuilt it)
    return chart.copy(deep=False)


def finding_html(text: str) -> str:
    """A finding's Markdown as the panel's HTML: paragraphs, bold (two asterisks each side),
    code (one backtick each side) and list items (a line starting with a dash and a space,
    nested by two spaces), a backslash escape as the character it escapes, the rest escaped
    (10's finding is a headline and a list; shown as raw text it would read as one paragraph
    again)."""
    import html
    import re

    def inline(x: str) -> str:
        # a backslash-escaped character (fitgpp.analysis.escape.md_inert) is that character,
        # as an entity the bold and code below cannot take for markup
        x = re.sub(r"\\(&(?:lt|gt|amp|quot|#x27);|[!-/:-@\[-`{-~])",
                   lambda m: f"&#{ord(html.unescape(m.group(1)))};", html.escape(x))
        x = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", x)
        return re.sub(r"`(.+?)`", r"<code>\1</code>", x)
    out, depth = [], 0
    for line in text.splitlines():
        m = re.match(r"( *)- (.*)", line)
        want = len(m.group(1)) // 2 + 1 if m else 0
        out += ["<ul>"] * max(0, want - depth) + ["</ul>"] * max(0, depth - want)
        depth = want
        if m:
            out.append(f"<li>{inline(m.group(2))}</li>")
        elif line.strip():
            out.append(f"<p>{inline(line)}</p>")
    return "".join(out + ["</ul>"] * depth)


class PanelError(FitgppError):
    """A panel value that the study cannot take (e.g. a value added to a dimension it lacks)."""


# ------------------------------------------------------------------ a panel's selection
def conf_of(o: Outcome, sel: dict) -> dict:
    """The configuration (as :meth:`Outcome.configurations` gives them) that ``sel`` picks:
    ``policy`` (a name), its parameters, the knobs and the variant."""
    st = o.study
    variant = sel.get(st.variant_dim) if st.variants else None
    knobs = {k: float(sel[k]) for k in st.knobs}
    for conf in o.configurations():
        if conf["name"] != sel["policy"] or conf["variant"] != variant or conf["knobs"] != knobs:
            continue
        if all(conf["params"][k] == sel[k] for k in o.params()
               if k in conf["params"] and k in sel):
            return conf
    raise PanelError(f"{st.key}: no computed configuration at {sel}")


def arms(o: Outcome, sel: dict) -> tuple[Arm, Arm | None]:
    """The configuration ``sel`` picks and the study's baseline at its knobs and variant."""
    conf = conf_of(o, sel)
    base = o.baseline(conf)
    return Arm(conf["label"], o, conf), None if base is None else Arm(base["label"], o, base)


def selection_numbers(o: Outcome, sel: dict) -> pd.DataFrame:
    """The selected configuration's numbers over the seeds (each metric of
    :data:`fitgpp.analysis.metrics.METRICS` the study's tables show), the baseline's at the same
    knobs, and the change against it (paired per seed): :func:`fitgpp.workbook.views.metric_rows`."""
    name = o.baseline_label()
    out = metric_rows(*arms(o, sel), brief(o.study.columns), names=("selected", name),
                      row=lambda m: m.title, base_name=name)
    out.index.name = "metric"
    return out


def label(o: Outcome, sel: dict) -> str:
    conf = conf_of(o, sel)
    exp = next(iter(o.experiments.values()))
    return label_of(conf["name"], conf["params"], exp)


def cell_view(o: Outcome, sel: dict) -> alt.Chart:
    """Slowdown CDFs of the selected cell (seed ``sel['seed']``) beside the study's
    baseline on the same workload, from the cells' stored per-job results (no simulation)."""
    cur, base = arms(o, sel)
    seed, variant, knobs = int(sel["seed"]), cur.conf["variant"], cur.conf["knobs"]
    shown = dict.fromkeys(a.label for a in (cur, base) if a is not None)
    return slowdown_view((cur, base), seed, f"{', '.join(shown)}: seed {seed}" + "".join(
        f", {names.phrase(k, v)}" for k, v in knobs.items())
        + (f", {variant}" if variant is not None else ""))


def _nearest(values, v):
    """The value of ``values`` closest to ``v`` (the first, for values that are not numbers)."""
    try:
        return min(values, key=lambda x: abs(x - v))
    except TypeError:
        return values[0]


def progress_text(done: int, total: int, first: int, seconds: float) -> str:
    """What a panel says while its cells compute: how many are done and, once some were
    simulated here (``done > first``, ``first`` being those the cache gave at the start), the
    time left at the pace so far."""
    text = f"{done:,} of {total:,} cells"
    if done <= first or seconds <= 0 or done >= total:
        return text
    left = (total - done) * seconds / (done - first)
    when = f"{left:.0f} s" if left < 90 else f"{left / 60:.0f} min"
    return f"{text}, about {when} left at the pace so far"


def partial_note(k: int, n: int) -> str:
    """What a panel says while it is drawn from ``k`` of its ``n`` seeds, the rest computing
    (:meth:`fitgpp.workbook.panels.Panel.declare`)."""
    from fitgpp.analysis.metrics import MIN_CI_VALUES
    few = (f"with {k} seed{'s' if k != 1 else ''} there is no interval over the seeds (it needs "
           f"{MIN_CI_VALUES} or more), so what is judged from one says \"cannot tell\" until "
           "then" if k < MIN_CI_VALUES else "the intervals are those of these seeds")
    return ('<p class="fitgpp-partial" style="background:#fff3cd;padding:4px 8px;'
            f'border-left:4px solid #e0a800"><b>Drawn from {k} of {n} seeds</b> while the '
            f"{'other seed computes' if n - k == 1 else f'other {n - k} seeds compute'} (the bar "
            f"above counts the cells): {few}. The numbers, charts and finding will update when "
            f"all {n} seeds are in.</p>")
