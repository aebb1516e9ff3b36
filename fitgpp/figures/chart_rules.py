"""The rules about a chart's spec (``chart.to_dict()``), and how a spec is read for them; the
check that runs every rule is :mod:`fitgpp.figures.check`.

Each rule names a fault seen in this project's figures:

``caption``
    The chart has a title (a caption), and neither it nor any axis or legend title is a
    variable name (``rq2_s_tradeoff_P1``, ``te_p95``).
``axis-title``
    Every drawn x/y axis has a title (layers sharing an axis may give it once).
``legend-title``
    Every legend (colour, shape, dash, ...) has a title.
``numeric-order``
    Labels that differ only in numbers (``1, 3, 10``; ``s=4, s=16``) are ordered by
    number, not as text ("1, 10, 3").
``clip``
    A mark whose values reach past a fixed scale domain is clipped (``clip: true``); no
    value a log scale cannot show (<= 0).
``coincide``
    Two series drawn with identical values are said to coincide in a title or subtitle
    (naming both), so a reader does not look for a missing line.
``log-labels``
    A log axis has explicit tick values whose labels do not overlap at the chart's width.

The rules about the printed figure (fonts, width, repeated tick labels, cut intervals,
series flat at zero, off-scale points, identical figures, prose) are in
:mod:`fitgpp.figures.print_rules`.

The check reads data from the spec's inline ``datasets``; transforms are ignored (a
filtered layer is checked on its unfiltered data, which can only over-report).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fitgpp.errors import FitgppError
from fitgpp.figures.plots.text import label_clash

RULES = ("caption", "axis-title", "legend-title", "numeric-order", "clip", "coincide",
         "log-labels", "font", "width", "repeated-ticks", "interval-clip", "flat-zero",
         "off-scale", "identical", "prose", "aspect", "plot-area", "narrow-axis")
LEGEND_CHANNELS = ("color", "fill", "stroke", "shape", "strokeDash", "size", "opacity")
POSITION = ("x", "y")
_VARIABLE = re.compile(r"^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)+$")   # snake_case: a variable name
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class FigureError(FitgppError):
    """A chart failed the paper-ready check; the message lists each problem and where."""


@dataclass(frozen=True)
class Problem:
    rule: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.where}: {self.message}"


# ------------------------------------------------------------------ walking the spec
@dataclass
class _Unit:
    """One mark with everything it inherits: encoding, data name, width, facet fields."""

    path: str
    mark: dict
    encoding: dict
    data: str | None
    width: float | None
    facets: tuple[str, ...]
    view: str        # path of the layer (or unit) that shares axes with it


def _mark(spec) -> dict:
    m = spec["mark"]
    return {"type": m} if isinstance(m, str) else dict(m)


def _units(spec, path="chart", enc=None, data=None, width=None, facets=(), view=None):
    enc = {**(enc or {}), **spec.get("encoding", {})}
    if isinstance(spec.get("data"), dict) and "name" in spec["data"]:
        data = spec["data"]["name"]
    w = spec.get("width")
    width = w if isinstance(w, (int, float)) else width
    if "facet" in spec and "spec" in spec:
        f = spec["facet"]
        fields = tuple(v["field"] for v in (f.values() if "field" not in f else [f])
                       if isinstance(v, dict) and "field" in v)
        yield from _units(spec["spec"], f"{path}.spec", enc, data, width, facets + fields, None)
        return
    for ch in ("row", "column", "facet"):   # encoding-level facets (alt.Chart(...).encode(column=))
        if isinstance(enc.get(ch), dict) and "field" in enc[ch]:
            facets = facets + (enc[ch]["field"],)
    if "mark" in spec:
        yield _Unit(path, _mark(spec), enc, data, width, facets, view or path)
        return
    if "layer" in spec:
        for i, s in enumerate(spec["layer"]):
            yield from _units(s, f"{path}.layer[{i}]", enc, data, width, facets, view or path)
    for key in ("vconcat", "hconcat", "concat"):
        for i, s in enumerate(spec.get(key, [])):
            yield from _units(s, f"{path}.{key}[{i}]", None, data, None, facets, None)


def _titles(spec) -> list[str]:
    """Every chart title and subtitle text in the spec, at any level."""
    out = []
    if isinstance(spec, dict):
        t = spec.get("title")
        if isinstance(t, str):
            out.append(t)
        elif isinstance(t, dict):
            for k in ("text", "subtitle"):
                v = t.get(k)
                out += [v] if isinstance(v, str) else list(v or [])
        for k, v in spec.items():
            if k in ("layer", "vconcat", "hconcat", "concat", "spec"):
                for s in (v if isinstance(v, list) else [v]):
                    out += _titles(s)
    return out


def _title_of(ch: dict) -> str | None:
    t = ch.get("title", (ch.get("axis") or {}).get("title") if isinstance(ch.get("axis"), dict)
               else None)
    if isinstance(ch.get("legend"), dict) and "title" in ch["legend"]:
        t = ch["legend"]["title"]
    if isinstance(t, list):
        t = " ".join(t)
    return t if t else None


def _frame(datasets: dict, name: str | None) -> pd.DataFrame:
    return pd.DataFrame(datasets.get(name, [])) if name else pd.DataFrame()


# ------------------------------------------------------------------ the rules
def _caption(spec) -> list[Problem]:
    t = spec.get("title")
    text = t if isinstance(t, str) else (t or {}).get("text") if isinstance(t, dict) else None
    text = " ".join(text) if isinstance(text, list) else text
    if not text:
        return [Problem("caption", "chart", "no title: give the chart a caption that says "
                        "what it shows")]
    if _VARIABLE.match(text.strip()):
        return [Problem("caption", "chart", f"title {text!r} is a variable name, not a caption")]
    return []


def _axis_titles(units) -> list[Problem]:
    probs, views = [], {}
    for u in units:
        for ch in POSITION:
            e = u.encoding.get(ch)
            if not isinstance(e, dict) or e.get("axis", {}) is None:
                continue
            views.setdefault((u.view, ch), []).append(_title_of(e))
    fields = {}                 # stacked panels share an x axis titled under the last one
    for u in units:
        for ch in POSITION:
            e = u.encoding.get(ch)
            if isinstance(e, dict) and _title_of(e):
                fields.setdefault((ch, e.get("field")), True)
    shared = {(u.view, ch) for u in units for ch in POSITION
              if isinstance(u.encoding.get(ch), dict)
              and (ch, u.encoding[ch].get("field")) in fields}
    for (view, ch), titles in views.items():
        given = [t for t in titles if t]
        if not given and (view, ch) not in shared:
            probs.append(Problem("axis-title", view, f"the {ch} axis has no title"))
        for t in given:
            if _VARIABLE.match(t.strip()):
                probs.append(Problem("caption", view, f"{ch} axis title {t!r} is a variable name"))
    return probs


def _legend_titles(units) -> list[Problem]:
    probs = []
    for u in units:
        named = {}
        for ch in LEGEND_CHANNELS:
            e = u.encoding.get(ch)
            if isinstance(e, dict) and "field" in e and e.get("legend", {}) is not None:
                named.setdefault(e["field"], []).append((ch, _title_of(e)))
        for field, chans in named.items():   # channels on one field merge into one legend
            if not any(t for _, t in chans):
                probs.append(Problem("legend-title", u.path, f"the legend of {field!r} "
                                     f"({', '.join(c for c, _ in chans)}) has no title"))
            for _, t in chans:
                if t and _VARIABLE.match(t.strip()):
                    probs.append(Problem("caption", u.path, f"legend title {t!r} is a variable name"))
    return probs


def _number_key(label: str) -> tuple[str, tuple[float, ...]]:
    return _NUMBER.sub("#", label), tuple(float(x) for x in _NUMBER.findall(label))


def _order_problems(order: list[str], where: str, what: str) -> list[Problem]:
    groups: dict[str, list[tuple[float, ...]]] = {}
    for lb in order:
        tpl, nums = _number_key(str(lb))
        if nums:
            groups.setdefault(tpl, []).append(nums)
    out = []
    for tpl, nums in groups.items():
        if nums != sorted(nums):
            shown = [lb for lb in order if _number_key(str(lb))[0] == tpl]
            out.append(Problem("numeric-order", where, f"{what} reads {', '.join(map(str, shown))}: "
                               "order it by number"))
    return out


def _numeric_order(units, datasets) -> list[Problem]:
    probs, seen = [], set()
    for u in units:
        df = _frame(datasets, u.data)
        for ch, e in u.encoding.items():
            if ch not in POSITION + LEGEND_CHANNELS or not isinstance(e, dict) \
                    or e.get("type") not in ("nominal", "ordinal") \
                    or "field" not in e:
                continue
            scale = e.get("scale") or {}
            if isinstance(scale.get("domain"), list):
                order = [str(v) for v in scale["domain"]]
            elif isinstance(e.get("sort"), list):
                order = [str(v) for v in e["sort"]]
            elif e["field"] in df:
                order = sorted({str(v) for v in df[e["field"]].dropna()})   # Vega's default
            else:
                continue
            key = (u.view, ch, tuple(order))
            if key not in seen:
                seen.add(key)
                probs += _order_problems(order, u.path, f"{ch} {e['field']!r}")
    return probs


def _values(df: pd.DataFrame, e: dict) -> np.ndarray:
    if "field" in e and e["field"] in df:
        return pd.to_numeric(df[e["field"]], errors="coerce").to_numpy(float)
    if isinstance(e.get("datum"), (int, float)):
        return np.array([float(e["datum"])])
    return np.array([])


def _clip(units, datasets) -> list[Problem]:
    probs = []
    for u in units:
        df = _frame(datasets, u.data)
        for ch in POSITION:
            e = u.encoding.get(ch)
            if not isinstance(e, dict) or e.get("type") != "quantitative":
                continue
            v = np.concatenate([_values(df, e), _values(df, u.encoding.get(ch + "2") or {})])
            v = v[np.isfinite(v)]
            if not len(v):
                continue
            scale = e.get("scale") or {}
            if scale.get("type") == "log" and (v <= 0).any():
                probs.append(Problem("clip", u.path, f"{ch} is on a log scale but has values "
                                     f"<= 0 (min {v.min():.3g})"))
            dom = scale.get("domain") if isinstance(scale.get("domain"), list) else [None, None]
            lo = scale.get("domainMin", dom[0])
            hi = scale.get("domainMax", dom[1])
            outside = ((lo is not None and (v < lo).any()) or (hi is not None and (v > hi).any()))
            if outside and not u.mark.get("clip"):
                probs.append(Problem("clip", u.path, f"{u.mark['type']} values on {ch} span "
                                     f"[{v.min():.3g}, {v.max():.3g}] past the domain [{lo}, {hi}] "
                                     "and the mark is not clipped (clip: true)"))
    return probs


def _coincide(units, datasets, titles) -> list[Problem]:
    """Series equal in every layer of a view (and every panel) must be said to coincide."""
    text = " ".join(titles).lower()
    views: dict[tuple, dict] = {}     # (view, series field, panel) -> {series: [curve, ...]}
    for u in units:
        x, y = u.encoding.get("x"), u.encoding.get("y")
        series = next((u.encoding[c]["field"] for c in LEGEND_CHANNELS
                       if isinstance(u.encoding.get(c), dict) and "field" in u.encoding[c]
                       and u.encoding[c].get("legend", {}) is not None), None)
        if series is None or not isinstance(x, dict) or not isinstance(y, dict):
            continue
        df = _frame(datasets, u.data)
        cols = [c.get("field") for c in (x, y)]
        if not all(c in df for c in cols + [series]):
            continue
        cols += [u.encoding[c]["field"] for c in ("x2", "y2")          # intervals count too
                 if isinstance(u.encoding.get(c), dict) and u.encoding[c].get("field") in df]
        panels = [f for f in u.facets if f in df]
        for key, g in (df.groupby(panels, sort=False) if panels else [((), df)]):
            curves = views.setdefault((u.view, series, str(key)), {})
            for s_, c in g.groupby(series, sort=False):
                curves.setdefault(str(s_), []).append(
                    c[cols].astype(str).sort_values(cols).to_numpy().tolist())
    probs, seen = [], set()
    for (view, _, _), curves in views.items():
        names = list(curves)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if curves[a] == curves[b] and (a, b) not in seen:
                    seen.add((a, b))
                    if not ("coincide" in text and _named(a, text) and _named(b, text)):
                        probs.append(Problem("coincide", view, f"series {a!r} and {b!r} have "
                                             "identical values: say so in the subtitle "
                                             "(\"... coincide\")"))
    return probs


def _named(label: str, text: str) -> bool:
    """Whether ``text`` (lower case) names series ``label``: whole, or its last word after
    the words before it (``fitgpp s=1, s=4 and s=8`` names ``FitGpp s=4``,
    :func:`fitgpp.figures.plots.axes.joined`)."""
    low = label.lower()
    head, _, last = low.rpartition(" ")
    return low in text or bool(head) and head in text and re.search(
        rf"(?<![\w=.]){re.escape(last)}(?![\w=.])", text) is not None


def _log_labels(units, datasets, font: float) -> list[Problem]:
    probs, seen = [], set()
    for u in units:
        for ch in POSITION:
            e = u.encoding.get(ch)
            if not isinstance(e, dict) or (e.get("scale") or {}).get("type") != "log" \
                    or e.get("axis", {}) is None or (u.view, ch) in seen:
                continue
            seen.add((u.view, ch))
            axis = e.get("axis") or {}
            ticks = axis.get("values")
            if not ticks:
                probs.append(Problem("log-labels", u.view, f"log {ch} axis without explicit tick "
                                     "values: the default log ticks (10, 20, 30, ...) collide"))
                continue
            if ch == "y":
                continue   # labels stacked vertically: one line each, far apart at these heights
            df = _frame(datasets, u.data)
            v = np.concatenate([_values(df, e), _values(df, u.encoding.get("x2") or {}),
                                np.asarray(ticks, float)])
            v = v[np.isfinite(v) & (v > 0)]
            scale = e.get("scale") or {}
            dom = scale.get("domain") if isinstance(scale.get("domain"), list) else [None, None]
            lo = scale.get("domainMin", dom[0] if dom[0] is not None else v.min())
            hi = scale.get("domainMax", dom[1] if dom[1] is not None else v.max())
            width = u.width or 200
            if hi <= lo:
                continue
            size = axis.get("labelFontSize", font)
            clash = label_clash(ticks, lo, hi, width, size, fmt=axis.get("format"))
            if clash:
                probs.append(Problem("log-labels", u.view, f"tick labels {clash[0]!r} and "
                                     f"{clash[1]!r} are {clash[2]:.0f} px apart at {width:g} px "
                                     "wide: they collide"))
    return probs
