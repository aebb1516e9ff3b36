"""The figure check's rules about the printed figure (see :mod:`fitgpp.figures.check`).

``font``
    No text smaller than 7 pt at the printed size (1 Vega px = 1 pt).
``width``
    The chart records a printed width (its preset) and vl-convert draws it that wide
    (:func:`fitgpp.figures.plots.fit_width` lays it out so); :func:`files` checks written files.
``repeated-ticks``
    No two ticks of an axis read the same ("-99.8 %" five times).
``interval-clip``
    An interval is not cut by the axis range unless the subtitle says it is cut.
``flat-zero``
    No line series is zero throughout (it reads as missing data; say so instead).
``off-scale``
    Points are not squeezed into a sliver of an axis by one far-away point (draw that one
    at the edge and say so).
``identical``
    Two figures under different names do not show the same data (:func:`identical`).
``prose``
    The subtitle is a note, not a paragraph (at most :data:`MAX_SUBTITLE` characters).
``label-overlap``
    No two tick labels of one axis, as drawn (the SVG the export writes), touch or overlap
    (:func:`label_overlap`; "5001,000" on a narrow panel).
``aspect``
    A column figure is at most :data:`MAX_ASPECT` times as tall as wide, and no figure is
    taller than :data:`MAX_HEIGHT_IN` in (RQ6 at 3.3 x 12.25 in did not fit a page).
``plot-area``
    The plotting areas cover at least :data:`MIN_PLOT_SHARE` of the figure (a column CDF
    gave its plots 0.7 in of height, the rest to legend and white space).
``narrow-axis``
    A y axis zoomed in on points that differ by less than :data:`NARROW`, drawn without
    intervals, says so (:data:`ZOOM_MARK`): 1.088 to 1.098 looked dramatic.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np

from fitgpp.figures.chart_rules import POSITION, LEGEND_CHANNELS, Problem, _frame, _values
from fitgpp.figures.plots.page import (MAX_ASPECT, MAX_HEIGHT_IN, MAX_SUBTITLE,  # noqa: F401
                                       MIN_PLOT_SHARE, NARROW, ZOOM_MARK, plot_rects, zoom_note)

MIN_PT = 7
TOLERANCE_PT = 1.0


# ------------------------------------------------------------------ fonts and width
def fonts(spec, path="chart") -> list[Problem]:
    """Every font size given anywhere in the spec (config, marks, titles) is >= 7 pt."""
    out = []
    if isinstance(spec, dict):
        for k, v in spec.items():
            if re.search(r"(?i)fontsize$", k) and isinstance(v, (int, float)) and v < MIN_PT:
                out.append(Problem("font", f"{path}.{k}", f"{v:g} pt at the printed size: "
                                   f"text must be at least {MIN_PT} pt"))
            elif k not in ("datasets", "data"):
                out += fonts(v, f"{path}.{k}")
    elif isinstance(spec, list):
        for i, v in enumerate(spec):
            out += fonts(v, f"{path}[{i}]")
    return out


def width(spec) -> list[Problem]:
    """The chart records its printed width and is drawn exactly that wide."""
    meta = (spec.get("usermeta") or {}).get("fitgpp") or {}
    if not meta.get("inches"):
        return [Problem("width", "chart", "no printed width: make it with a size preset")]
    from fitgpp.figures.plots.render import rendered_width
    got, want = rendered_width(spec), meta["inches"] * 72
    if abs(got - want) > TOLERANCE_PT:
        return [Problem("width", "chart", f"drawn {got / 72:.2f} in wide for a "
                        f"{meta['inches']:g} in preset: lay it out with plots.fit_width")]
    return []


def files(folder) -> list[Problem]:
    """Every file of ``folder``'s manifest is as wide as its preset, and no two files of
    one format are byte-identical under different names."""
    from pathlib import Path

    from fitgpp.figures.files import MANIFEST, file_inches
    folder = Path(folder)
    man = json.loads((folder / MANIFEST).read_text())["figures"]
    out, seen = [], {}
    for name, rec in man.items():
        data = (folder / name).read_bytes()
        got = file_inches(data, Path(name).suffix, rec.get("dpi") or 300)
        preset = {"column": 3.3, "full": 7.0}.get(rec.get("preset"))
        if preset is None or abs(got - preset) > TOLERANCE_PT / 72 + 0.005:
            out.append(Problem("width", name, f"file is {got:.2f} in wide, preset "
                               f"{rec.get('preset')!r}"))
        if rec.get("inches") is None or abs(got - rec["inches"]) > 0.005:
            out.append(Problem("width", name, f"manifest says {rec.get('inches')} in, the "
                               f"file is {got:.3f} in"))
        key = (Path(name).suffix, _without_metadata(data))
        if key in seen:
            out.append(Problem("identical", name, f"the same figure as {seen[key]}"))
        seen.setdefault(key, name)
    return out


def _without_metadata(data: bytes) -> bytes:
    import hashlib
    data = re.sub(rb"<metadata>.*?</metadata>", b"", data, flags=re.S)
    return hashlib.sha256(data.split(b"iTXtfitgpp")[0].split(b"/Subject")[0]).digest()


def identical(charts: dict) -> list[Problem]:
    """Figures of ``{name: chart}`` that draw the same data (titles aside) under two names."""
    seen, out = {}, []
    for name, chart in charts.items():
        spec = chart.to_dict() if hasattr(chart, "to_dict") else chart
        data = [v for v in spec.get("datasets", {}).values() if v] + _inline(spec)
        if not data:
            continue          # nothing drawn from data: nothing to compare
        key = json.dumps(data, sort_keys=True)
        if key in seen:
            out.append(Problem("identical", name, f"draws the same data as {seen[key]}: "
                               "write one figure and name both settings in its title"))
        seen.setdefault(key, name)
    return out


def _inline(spec) -> list:
    """The inline ``data.values`` of every view of ``spec``."""
    if isinstance(spec, list):
        return [v for s in spec for v in _inline(s)]
    if not isinstance(spec, dict):
        return []
    own = spec.get("data", {}).get("values") if isinstance(spec.get("data"), dict) else None
    return ([own] if own else []) + [v for k, s in spec.items()
                                     if k not in ("data", "datasets", "config")
                                     for v in _inline(s)]


def prose(titles_: list[str], subtitle: list[str]) -> list[Problem]:
    text = " ".join(subtitle)
    if len(text) > MAX_SUBTITLE:
        return [Problem("prose", "chart", f"subtitle of {len(text)} characters: a figure "
                        "holds a short note; the explanation goes in the text")]
    return []


# ------------------------------------------------------------------ axes
def _nice_ticks(lo: float, hi: float, count: int) -> np.ndarray:
    """d3's ``ticks(lo, hi, count)``: multiples of a 1-2-5 step."""
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        return np.array([lo])
    step = (hi - lo) / max(count, 1)
    power = 10 ** math.floor(math.log10(step))
    err = step / power
    step = power * (10 if err >= 7.07 else 5 if err >= 3.16 else 2 if err >= 1.41 else 1)
    return np.arange(math.ceil(lo / step), math.floor(hi / step) + 1) * step


def d3_format(v: float, fmt: str | None) -> str:
    """``v`` as d3-format writes it for the formats fitgpp uses (``+.1%``, ``.2~%``,
    ``~g``, ``.3g``, none)."""
    m = re.fullmatch(r"([+]?)(?:\.(\d+))?(~?)([%gfe]?)", fmt or "")
    if not m or not fmt:
        return f"{v:.12g}"
    sign, prec, trim, kind = m.groups()
    if kind == "%":
        s = f"{v * 100:{sign}.{int(prec or 6)}f}"
        s = s.rstrip("0").rstrip(".") if trim and "." in s else s
        return s + "%"
    return f"{v:{sign}.{int(prec or 6)}{kind or 'g'}}"


def repeated_ticks(units, datasets) -> list[Problem]:
    out, seen = [], set()
    for u in units:
        for ch in POSITION:
            e = u.encoding.get(ch)
            if not isinstance(e, dict) or e.get("type") != "quantitative" \
                    or (e.get("scale") or {}).get("type") == "log" or (u.view, ch) in seen:
                continue
            seen.add((u.view, ch))
            axis = e.get("axis") or {}
            v = _values(_frame(datasets, u.data), e)
            v = v[np.isfinite(v)]
            ticks = axis.get("values") or (_nice_ticks(v.min(), v.max(), 5) if len(v) else [])
            labels = [d3_format(t, axis.get("format")) for t in ticks]
            dup = sorted({lb for lb in labels if labels.count(lb) > 1})
            if dup:
                out.append(Problem("repeated-ticks", u.view, f"{ch} ticks read {', '.join(dup)} "
                                   "more than once: give the format more decimals"))
    return out


def interval_clip(units, datasets, subtitle: str) -> list[Problem]:
    """Intervals (a mark with y and y2 / x and x2) cut by a fixed domain, or drawn from
    columns that cut them (``lo_c`` shorter than ``lo``), without the subtitle saying so."""
    out, said = [], "cut" in subtitle.lower() or "clip" in subtitle.lower()
    for u in units:
        if u.mark.get("type") not in ("rule", "errorbar"):
            continue       # bars and areas from a baseline are not intervals
        df = _frame(datasets, u.data)
        for ch in POSITION:
            e, e2 = u.encoding.get(ch), u.encoding.get(ch + "2")
            if not isinstance(e, dict) or not isinstance(e2, dict):
                continue
            v = np.concatenate([_values(df, e), _values(df, e2)])
            v = v[np.isfinite(v)]
            dom = (e.get("scale") or {}).get("domain")
            beyond = isinstance(dom, list) and len(v) and (v.min() < dom[0] or v.max() > dom[1])
            shortened = any(f in df and raw in df and
                            (np.abs(df[f].astype(float) - df[raw].astype(float)) > 1e-12).any()
                            for f, raw in ((e.get("field"), "lo"), (e2.get("field"), "hi"))
                            if f not in ("lo", "hi"))
            if (beyond or shortened) and not said:
                out.append(Problem("interval-clip", u.path, f"intervals on {ch} are cut (by the "
                                   "axis range or in the data): widen the axis or say so"))
    return out


def flat_zero(units, datasets) -> list[Problem]:
    out = []
    for u in units:
        if u.mark.get("type") not in ("line", "area"):
            continue
        df, y = _frame(datasets, u.data), u.encoding.get("y") or {}
        series = next((u.encoding[c]["field"] for c in LEGEND_CHANNELS
                       if isinstance(u.encoding.get(c), dict) and "field" in u.encoding[c]), None)
        if y.get("field") not in df or series not in df:
            continue
        for s, g in df.groupby(series):
            if (g[y["field"]].astype(float).fillna(0) == 0).all():
                out.append(Problem("flat-zero", u.path, f"series {s!r} is zero throughout: "
                                   "leave it out and say so"))
    return out


def off_scale(units, datasets) -> list[Problem]:
    """Points of a view squeezed into a tenth of the axis by a point far away."""
    out, seen = [], set()
    for u in units:
        e = u.encoding.get("x")
        if u.mark.get("type") not in ("point", "circle", "square") or not isinstance(e, dict) \
                or e.get("type") != "quantitative" or u.view in seen:
            continue
        seen.add(u.view)
        v = _values(_frame(datasets, u.data), e)
        scale = e.get("scale") or {}
        log = scale.get("type") == "log"
        v = np.unique(v[np.isfinite(v) & ((v > 0) if log else True)])
        if len(v) < 4:
            continue
        dom = scale.get("domain") if isinstance(scale.get("domain"), list) else [v.min(), v.max()]
        f = (lambda t: np.log10(t)) if log else (lambda t: t)
        pos = (f(v) - f(dom[0])) / ((f(dom[1]) - f(dom[0])) or 1)
        gaps = np.diff(pos)
        i = int(np.argmax(gaps))
        left, right = pos[:i + 1], pos[i + 1:]
        crowd, far = (left, right) if len(left) >= len(right) else (right, left)
        # a few far points against a crowd (not two groups of dodged points at two x values)
        if gaps[i] > 0.6 and len(crowd) >= 3 and len(far) <= max(1, len(crowd) // 3) \
                and np.ptp(crowd) < 0.1:
            out.append(Problem("off-scale", u.view, f"{len(crowd)} points share "
                               f"{np.ptp(crowd):.0%} of the x axis while another lies far "
                               "away: draw it at the edge, marked off-scale"))
    return out


# ------------------------------------------------------------------ labels as drawn
#: Advance widths of Helvetica's characters in em (digits and the signs ticks use);
#: anything else counts as 0.6 em, wider than most letters.
_EM = {**{c: 0.556 for c in "0123456789+$"}, ",": 0.278, ".": 0.278, " ": 0.278,
       "\u2212": 0.584, "-": 0.333, "%": 0.889, "\u2009": 0.167, "\u202f": 0.167}
_TRANSLATE = re.compile(r"translate\(\s*([-\d.e]+)[ ,]+([-\d.e]+)\s*\)")


def _text_width(text: str, size: float) -> float:
    return size * sum(_EM.get(c, 0.6) for c in text)


def label_overlap(svg: bytes) -> list[Problem]:
    """Tick labels of one axis that touch or overlap where vl-convert drew them: within
    each group of axis labels, neighbours along the axis closer than 1 pt (horizontal
    labels, by their advance widths and anchors) or than 0.8 of the font size (vertical)."""
    import xml.etree.ElementTree as ET
    probs = []
    for g in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}g"):
        if "role-axis-label" not in (g.get("class") or ""):
            continue
        spans = []
        for t in g.findall("{http://www.w3.org/2000/svg}text"):
            m = _TRANSLATE.search(t.get("transform") or "")
            if m is None or not (t.text or "").strip() or "rotate" in (t.get("transform") or ""):
                continue
            size = float((t.get("font-size") or "10").rstrip("px"))
            x, y, w = float(m.group(1)), float(m.group(2)), _text_width(t.text, size)
            start = {"middle": x - w / 2, "end": x - w}.get(t.get("text-anchor"), x)
            spans.append((t.text, x, y, start, start + w, size))
        xs, ys = {round(s[1], 1) for s in spans}, {round(s[2], 1) for s in spans}
        if len(spans) < 2:
            continue
        if len(ys) == 1:       # a horizontal axis: labels side by side
            spans.sort(key=lambda s: s[3])
            for a, b in zip(spans, spans[1:]):
                if b[3] - a[4] < 1.0:
                    probs.append(Problem("label-overlap", "axis", f"tick labels {a[0]!r} and "
                                         f"{b[0]!r} overlap ({b[3] - a[4]:.1f} pt apart)"))
                    break
        elif len(xs) == 1 or all(t.get("text-anchor") == "end" for t in g):   # vertical
            spans.sort(key=lambda s: s[2])
            for a, b in zip(spans, spans[1:]):
                if b[2] - a[2] < 0.8 * max(a[5], b[5]):
                    probs.append(Problem("label-overlap", "axis", f"tick labels {a[0]!r} and "
                                         f"{b[0]!r} overlap ({b[2] - a[2]:.1f} pt apart)"))
                    break
    return probs


# ------------------------------------------------------------------ the page: aspect and plot area


def aspect(svg: bytes, preset: str | None) -> list[Problem]:
    """A column figure at most :data:`MAX_ASPECT` times as tall as wide; none taller than
    :data:`MAX_HEIGHT_IN` in (``svg``: the figure as drawn)."""
    from fitgpp.figures.plots.render import svg_size
    w, h = svg_size(svg)
    out = []
    if preset == "column" and h > MAX_ASPECT * w + TOLERANCE_PT:
        out.append(Problem("aspect", "chart", f"{w / 72:.2f} x {h / 72:.2f} in: a column figure "
                           f"is at most {MAX_ASPECT:g}x as tall as wide ({MAX_ASPECT * w / 72:.2f}"
                           " in): lower the panels, share axes, put panels side by side"))
    if h > MAX_HEIGHT_IN * 72 + TOLERANCE_PT:
        out.append(Problem("aspect", "chart", f"{h / 72:.2f} in tall: no figure is taller "
                           f"than {MAX_HEIGHT_IN:g} in"))
    return out


def plot_area(svg: bytes) -> list[Problem]:
    """The plotting areas cover at least :data:`MIN_PLOT_SHARE` of the figure."""
    from fitgpp.figures.plots.render import svg_size
    w, h = svg_size(svg)
    share = sum(a * b for a, b in plot_rects(svg)) / (w * h or 1)
    if share < MIN_PLOT_SHARE:
        return [Problem("plot-area", "chart", f"the plots cover {share:.0%} of the figure "
                        f"({w / 72:.2f} x {h / 72:.2f} in), at least {MIN_PLOT_SHARE:.0%} is "
                        "needed: less legend, notes and white space, or taller plots")]
    return []


# ------------------------------------------------------------------ zoomed axes


def narrow_axis(units, datasets, text: str) -> list[Problem]:
    """A linear y axis that does not start at zero, drawn without intervals, whose points
    differ by less than :data:`NARROW` of their size, is marked :data:`ZOOM_MARK` in
    ``text`` (every title and note of the chart) or in its own title. (An axis narrower
    than the intervals it draws cuts them: rule ``interval-clip``.)"""
    said = ZOOM_MARK in text.lower()
    views: dict[str, dict] = {}
    intervals: set[str] = set()   # views that draw an interval (a y/y2 layer, whatever its scale)
    for u in units:
        e = u.encoding.get("y")
        if not isinstance(e, dict) or e.get("type") != "quantitative" or "field" not in e:
            continue
        df = _frame(datasets, u.data)
        if isinstance(u.encoding.get("y2"), dict):
            if np.isfinite(_values(df, e)).any():
                intervals.add(u.view)
            continue
        scale = e.get("scale") or {}
        if scale.get("type") == "log" or scale.get("zero") is not False:
            continue
        v = views.setdefault(u.view, {"points": [], "title": _axis_title(e)})
        if u.mark.get("type") in ("point", "circle", "square", "line"):
            p = _values(df, e)
            v["points"] += list(p[np.isfinite(p)])
    out = []
    for view, v in views.items():
        pts = np.asarray(v["points"], float)
        if len(np.unique(pts)) < 2 or view in intervals or said \
                or ZOOM_MARK in v["title"].lower():
            continue
        spread = float(np.ptp(pts)) / float(np.max(np.abs(pts)))
        if spread < NARROW:
            out.append(Problem("narrow-axis", view, f"the y axis zooms in on points "
                               f"{pts.min():.4g} to {pts.max():.4g} ({spread:.1%} apart) with no "
                               f"interval drawn: mark it ({zoom_note(spread)!r}) or draw "
                               "the intervals"))
    return out


def _axis_title(e: dict) -> str:
    t = e.get("title", (e.get("axis") or {}).get("title") if isinstance(e.get("axis"), dict)
              else None)
    return " ".join(t) if isinstance(t, list) else str(t or "")
