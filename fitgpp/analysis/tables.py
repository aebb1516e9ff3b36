"""Tables for people: a few columns that answer the question, significant digits, and
``x [lo, hi]`` cells; the full DataFrame one attribute away.

    t = tables.rq_table(r)     # r: a reproduce.RQResult
    t                          # in Jupyter: an HTML table with a caption and notes
    t.full                     # every column, full precision, for further work
    print(t.to_markdown())

:func:`people_table` formats any DataFrame whose intervals sit in ``<col>_lo`` and
``<col>_hi`` columns (the layout of :func:`fitgpp.studies.reproduce.across_seeds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fitgpp.errors import FitgppError
from fitgpp.analysis.escape import html_text, md_text, tex_text, visible
from fitgpp.analysis.metrics import (CLIP_NOTE, METRICS, MIN_CI_VALUES, UNBOUNDED, brief, cut_interval,
                                     t_interval, value_range)

#: Columns that say which configuration a row is, with their headings.
ID_COLUMNS = {"grace": "grace periods", "te_fraction": "TE share", "grace_scale": "grace scale",
              "model": "workload model", "policy": "policy"}
MIN_SEEDS_FOR_INTERVAL = MIN_CI_VALUES


class TableError(FitgppError):
    """A table was asked for with columns it does not have; the message names them."""


def sig(x, digits: int = 3, *, signed: bool = False) -> str:
    """``x`` to ``digits`` significant digits without exponent between 1e-4 and 1e6
    (``1.3000000000000003`` -> ``1.3``, ``-36.4123`` -> ``-36.4``, ``12345`` -> ``12300``)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.number)):
        return str(x)
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return ("+" if signed and x > 0 else "") + (f"{x:g}" if x else "0")
    mag = math.floor(math.log10(abs(x)))
    if not -4 <= mag < 6:
        return f"{x:+.{digits - 1}e}" if signed else f"{x:.{digits - 1}e}"
    rounded = round(x, digits - 1 - mag)
    dec = max(0, digits - 1 - mag)
    text = f"{rounded:.{dec}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return ("+" if signed and rounded > 0 else "") + text


def cell(x, lo=None, hi=None, digits: int = 3, *, signed: bool = False) -> str:
    """``x [lo, hi]``, or ``x`` alone when the interval is missing."""
    if lo is None or hi is None or any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
        return sig(x, digits, signed=signed)
    return (f"{sig(x, digits, signed=signed)} [{sig(lo, digits, signed=signed)}, "
            f"{sig(hi, digits, signed=signed)}]")


@dataclass
class PeopleTable:
    """Formatted cells (``shown``, strings), the data they came from (``full``), a caption
    and notes. Displays as HTML in Jupyter, as text in a console."""

    shown: pd.DataFrame
    full: pd.DataFrame
    caption: str = ""
    notes: list[str] = field(default_factory=list)

    def to_markdown(self) -> str:
        """The table in Markdown, every heading, cell, caption and note escaped
        (:func:`fitgpp.analysis.escape.md_text`: a ``|`` cannot end a cell, nor ``<`` start HTML)."""
        head = list(self.shown.columns)
        lines = ["| " + " | ".join(map(md_text, head)) + " |",
                 "|" + "|".join("---" if i < self._n_ids() else "---:" for i in range(len(head)))
                 + "|"]
        lines += ["| " + " | ".join(map(md_text, r)) + " |"
                  for r in self.shown.itertuples(index=False)]
        extra = [f"*{md_text(self.caption)}*"] if self.caption else []
        return "\n".join(extra + ([""] if extra else []) + lines
                         + ([""] + [md_text(n) for n in self.notes] if self.notes else []))

    def _n_ids(self) -> int:
        return int(self.shown.attrs.get("id_columns", 0))

    def _repr_html_(self) -> str:
        """The table as notebook HTML: caption, headings, cells and notes escaped
        (:func:`fitgpp.analysis.escape.html_text`), so a label is text, never markup."""
        shown = self.shown.map(html_text)
        shown.columns = [html_text(c) for c in shown.columns]
        sty = shown.style.hide(axis="index")
        if self.caption:
            sty = sty.set_caption(html_text(self.caption))
        sty = sty.set_properties(subset=list(shown.columns[self._n_ids():]),
                                 **{"text-align": "right", "white-space": "nowrap"})
        notes = "".join(f"<p style='font-size:0.85em;margin:2px 0'>{html_text(n)}</p>"
                        for n in self.notes)
        return sty.to_html() + notes

    def __str__(self) -> str:
        """The table as text for a terminal (control characters shown as escapes, so a label
        cannot move the cursor or retitle the window)."""
        shown = self.shown.map(lambda v: visible(v, breaks=False))
        shown.columns = [visible(c, breaks=False) for c in shown.columns]
        body = shown.to_string(index=False)
        return "\n".join(([visible(self.caption)] if self.caption else []) + [body]
                         + [visible(n) for n in self.notes])

    __repr__ = __str__


def people_table(df: pd.DataFrame, columns, *, ids=None, digits: int = 3,
                 caption: str = "", seeds: str | None = "seeds", percent=()) -> PeopleTable:
    """Format ``df`` for reading.

    ``columns``: ``{column: heading}`` (or a list) of the values to show; each becomes
    ``x [lo, hi]`` when ``<column>_lo``/``_hi`` exist. Columns named ``change_*`` get a
    sign. ``percent``: columns holding fractions (:func:`fitgpp.analysis.metrics.change`), shown in
    percent (``-0.175`` as ``-17.5``; give them a heading ending in ``(%)``). The lower
    interval is cut at its quantity's range and each cut bound marked ``*``
    (:func:`fitgpp.analysis.metrics.cut_interval`: a slowdown at least 1, a change at least -100 %).
    ``ids``: ``{column: heading}`` of the columns that name a row (shown as they
    are). ``seeds``: the column counting the values behind each interval; a row with fewer
    than 3 shows no interval (a Student-t interval from 2 values means little), and a note
    says so.
    """
    columns = dict(columns) if isinstance(columns, dict) else {c: c for c in columns}
    ids = {} if ids is None else (dict(ids) if isinstance(ids, dict) else {c: c for c in ids})
    missing = [c for c in [*ids, *columns] if c not in df.columns]
    if missing:
        raise TableError(f"table has no column(s) {missing}; it has {list(df.columns)}")
    few = (df[seeds] < MIN_SEEDS_FOR_INTERVAL).to_numpy() if seeds in df.columns else \
        np.zeros(len(df), bool)
    shown = pd.DataFrame({ids[c]: df[c].map(lambda v: sig(v, digits)).to_numpy()
                          for c in ids})
    bad = [c for c in percent if c not in columns]
    if bad:
        raise TableError(f"percent column(s) {bad} are not among the columns shown "
                         f"{list(columns)}")
    cut = False    # whether some bound was cut at its range (and marked *)
    for c, head in columns.items():
        k = 100.0 if c in percent else 1.0
        x = df[c].to_numpy()      # numbers, or cells already written as text
        lo, hi = (None if n not in df else df[n].to_numpy(float) for n in (f"{c}_lo", f"{c}_hi"))
        fmt = (lambda v, k=k, c=c: sig(v if k == 1 else k * v, digits,
                                       signed=c.startswith("change_")))
        cells = []
        for i, (v, f) in enumerate(zip(x, few)):
            if lo is None or hi is None or f:
                cells.append(fmt(v))
                continue
            iv = cut_interval(v, lo[i], hi[i], value_range(c))
            cut |= iv.clipped
            cells.append(iv.text(fmt=fmt))
        shown[head] = cells
    shown.attrs["id_columns"] = len(ids)
    shown.attrs["sources"] = {**{h: c for c, h in ids.items()},
                              **{h: c for c, h in columns.items()}}   # heading -> column
    notes = []
    if any(f"{c}_lo" in df for c in columns):
        notes.append("Cells: value [95 % interval].")
    if cut:
        notes.append(CLIP_NOTE[0].upper() + CLIP_NOTE[1:] + ".")
    if few.any():
        n = sorted(set(df.loc[few, seeds].astype(int)))
        notes.append(f"No interval where fewer than {MIN_SEEDS_FOR_INTERVAL} seeds stand "
                     f"behind a value (here {', '.join(map(str, n))}): too few for one.")
    return PeopleTable(shown, df.copy(), caption, notes)


def floor(column: str) -> float | None:
    """The least value metric ``column`` can take, as its declaration states
    (:attr:`fitgpp.analysis.metrics.Metric.lowest`: 1 for a slowdown), else None."""
    m = METRICS.get(column)
    return m.lowest if m is not None else None


def rq_columns(extra=(), baseline: str = "FIFO") -> dict[str, str]:
    """The columns that answer a research question, with their headings: the brief metrics
    of :data:`fitgpp.analysis.metrics.METRICS` (and those named in ``extra``), then their changes
    against ``baseline`` (fractions, shown in percent by :func:`rq_table`)."""
    shown = brief(extra)
    cols = {m.name: m.title for m in shown}
    cols.update({f"change_{m.name}": f"{m.label} vs {baseline} (%)" for m in shown
                 if m.vs_baseline})
    return cols


def rq_table(result, *, digits: int = 3) -> PeopleTable:
    """The columns of a research question's table that answer it (see :func:`rq_columns`),
    its configuration columns first; ``.full`` holds every column."""
    t = result.table
    ids = {c: h for c, h in ID_COLUMNS.items() if c in t.columns}
    ids.update({c: c for c in getattr(result, "id_columns", ()) if c in t.columns})
    cols = {c: h for c, h in rq_columns(getattr(result, "columns", ()),
                                          getattr(result, "baseline", "FIFO")).items()
            if c in t.columns}
    extra = [c for c in t.columns if c.endswith("_seed0")]   # per-question extras (RQ3)
    cols.update({c: c.replace("_seed0", " (seed 0)").replace("_", " ") for c in extra})
    return people_table(t, cols, ids=ids, digits=digits, caption=result.title,
                        percent=[c for c in cols if c.startswith("change_")])


def interval_text(x: np.ndarray, fmt, *, floor: float | None = None,
                  value_range: tuple[float, float] | None = None) -> str:
    """``mean [lo, hi]`` (95 % Student-t) from 3 or more values, ``mean (range lo to hi)``
    from two, the value alone (``(1 seed)``) from one; ``fmt`` formats a number. The interval
    is cut at ``value_range`` (or at ``floor`` from below: 1 for a slowdown) by
    :func:`fitgpp.analysis.metrics.cut_interval`, each cut bound marked ``*``."""
    m, lo, hi = t_interval(x)
    if np.isnan(m):
        return "–"
    if len(x) >= MIN_CI_VALUES:
        rng = value_range or ((floor, np.inf) if floor is not None else UNBOUNDED)
        return cut_interval(m, lo, hi, rng).text(fmt=fmt)
    if len(x) == 1:   # the caption says there is one run
        return fmt(m)
    lo, hi = fmt(np.min(x)), fmt(np.max(x))
    return f"{fmt(m)} (same on both seeds)" if lo == hi and len(x) == 2 else \
        f"{fmt(m)} (range {lo} to {hi})"


def summary_table(ds, *, digits: int = 3) -> PeopleTable:
    """:func:`fitgpp.summarize` of one result, for people."""
    from fitgpp.analysis.metrics import summarize
    t = summarize(ds).reset_index()
    return people_table(t, {"jobs": "jobs", "slowdown_median": "median slowdown",
                            "slowdown_p95": "p95 slowdown", "preemptions": "preemptions",
                            "preemptions_per_job": "preemptions per job"},
                        ids={"class": "class"}, digits=digits, seeds=None)


# ------------------------------------------------------------------ files
#: ``text`` for LaTeX (:func:`fitgpp.analysis.escape.tex_text`: ``5 %`` -> ``5 \\%``).
tex_escape = tex_text


def to_latex(t: PeopleTable) -> str:
    """``t`` as a booktabs table (``\\toprule``, ``\\midrule``, ``\\bottomrule``): the cells as
    shown on screen, escaped; the naming columns left-aligned, the numbers right-aligned;
    the caption as ``\\caption`` and the notes below the rule. Needs ``\\usepackage{booktabs}``."""
    n_ids = t._n_ids()
    align = "".join("l" if i < n_ids else "r" for i in range(len(t.shown.columns)))
    row = lambda cells: " & ".join(tex_escape(c) for c in cells) + r" \\"  # noqa: E731
    lines = [r"\begin{table}", r"\centering"]
    if t.caption:
        lines.append(rf"\caption{{{tex_escape(t.caption)}}}")
    lines += [rf"\begin{{tabular}}{{{align}}}", r"\toprule", row(t.shown.columns), r"\midrule"]
    lines += [row(r) for r in t.shown.itertuples(index=False)]
    lines += [r"\bottomrule", r"\end{tabular}"]
    lines += [rf"\par\smallskip{{\footnotesize {tex_escape(n)}}}" for n in t.notes]
    return "\n".join(lines + [r"\end{table}"]) + "\n"


#: What a spreadsheet reads as the start of a formula in a text cell (OWASP's list).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _defused(v):
    """A text cell a spreadsheet would run as a formula (``=HYPERLINK(...)``, ``+1+cmd|...``)
    with a ``'`` in front, which shows it as text; any other value as it is (numbers,
    and text that is a plain number such as ``-1.5``, stay what they are)."""
    if not isinstance(v, str) or not v.startswith(FORMULA_START):
        return v
    try:
        float(v)
        return v
    except ValueError:
        return "'" + v


def safe_csv(df: pd.DataFrame) -> str:
    """``df`` as CSV (no index, CRLF rows) with every text cell and heading that a
    spreadsheet would read as a formula defused (:func:`_defused`); numeric columns are
    written as they are."""
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object or pd.api.types.is_string_dtype(out[c]):
            out[c] = out[c].map(_defused)
    out.columns = [_defused(c) for c in out.columns]
    # RFC 4180's CRLF rows: a cell holding a bare CR is then quoted (with "\n" rows it is
    # not, and a reader would split the row there)
    return out.to_csv(index=False, lineterminator="\r\n")


def to_csv(t: PeopleTable) -> str:
    """``t.full`` (every column, full precision: floats written as Python's ``repr``, so
    they read back equal) as CSV: each interval bound (``<col>_lo``, ``<col>_hi``) cut at its
    quantity's range by :func:`fitgpp.analysis.metrics.cut_interval` and marked in a column
    ``<col>_lo_cut`` / ``<col>_hi_cut`` (True where cut), added only where a bound was cut;
    text cells that would be spreadsheet formulas defused (:func:`safe_csv`)."""
    return safe_csv(cut_bounds(t.full))


def cut_bounds(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every interval (``<col>``, ``<col>_lo``, ``<col>_hi``) cut at its range
    (:func:`fitgpp.analysis.metrics.cut_interval`), a boolean ``<col>_lo_cut``/``<col>_hi_cut``
    beside each bound that was cut somewhere."""
    out = df.copy()
    for c in [c for c in df.columns if f"{c}_lo" in df and f"{c}_hi" in df]:
        try:
            x, lo, hi = (df[n].to_numpy(float) for n in (c, f"{c}_lo", f"{c}_hi"))
        except (TypeError, ValueError):
            continue
        ivs = [cut_interval(*v, value_range(c)) for v in zip(x, lo, hi)]
        for side in ("lo", "hi"):
            flags = [getattr(iv, f"clipped_{'low' if side == 'lo' else 'high'}") for iv in ivs]
            if any(flags):
                out[f"{c}_{side}"] = [getattr(iv, "low" if side == "lo" else "high") for iv in ivs]
                out.insert(out.columns.get_loc(f"{c}_{side}") + 1, f"{c}_{side}_cut", flags)
    return out


