"""The one way fitgpp renders a figure (vl-convert, offline), and quick saves."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections import OrderedDict
from pathlib import Path

from fitgpp.figures.plots.base import DPI, PlotError


# ------------------------------------------------------------------ export
FORMATS = (".png", ".svg", ".pdf")

#: How many charts' unvalidated Vega-Lite dicts :func:`spec_of` keeps.
KEEP = 64
_SPECS: OrderedDict[int, tuple[object, dict]] = OrderedDict()


def spec_of(chart) -> dict:
    """``chart.to_dict(validate=False)``, converted once per chart object (the dict is
    shared: read it, do not change it). A figure's page check keys its answer by this
    dict and the live view shows the same chart from it: converting a chart costs as much
    as building it (0.1-0.4 s each, a warm RQ6 panel draws 9, issue 26)."""
    got = _SPECS.get(id(chart))
    if got is None or got[0] is not chart:
        return remember(chart, chart.to_dict(validate=False))
    _SPECS.move_to_end(id(chart))
    return got[1]


def remember(chart, spec: dict) -> dict:
    """Keep ``spec``, ``chart.to_dict(validate=False)`` just made, for :func:`spec_of`."""
    _SPECS[id(chart)] = (chart, spec)
    _SPECS.move_to_end(id(chart))
    while len(_SPECS) > KEEP:
        _SPECS.popitem(last=False)
    return spec


def render(chart, ext: str, *, dpi: int = DPI, cache=None) -> bytes:
    """The one way fitgpp renders a figure: ``chart`` (or its spec) as ``.png``, ``.svg``
    or ``.pdf`` bytes through vl-convert, offline. PNG is rendered at ``dpi`` (1 px of the
    chart = 1 pt, so scale ``dpi / 72``). ``cache``: a directory of rendered files keyed by
    the sha256 of the spec, format, dpi and vl-convert version; an unchanged figure is read
    from there instead of rendered again (rendering is most of a warm ``fitgpp reproduce``).
    """
    import vl_convert as vlc
    ext = ext.lower()
    if ext not in FORMATS:
        raise PlotError(f"cannot render as {ext}: use one of {', '.join(FORMATS)}")
    spec = chart.to_dict() if hasattr(chart, "to_dict") else chart
    spec = drawable(json.dumps(spec, sort_keys=True))
    hit = None if cache is None else _cached_file(spec, ext, dpi, cache)
    if hit is not None:
        kept = _read_kept(hit, ext)
        if kept is not None:
            return kept
    if ext == ".png":
        data = vlc.vegalite_to_png(spec, scale=1, ppi=dpi)  # ppi scales: dpi / 72 px per pt
    elif ext == ".svg":
        data = vlc.vegalite_to_svg(spec).encode()
    else:
        data = vlc.vegalite_to_pdf(spec)
    if hit is not None:
        keep(hit, data)
    return data


#: How a character vl-convert cannot draw looks in a spec's JSON (written with ``ensure_ascii``):
#: C0 and C1 controls, DEL, surrogates, U+FFFE/U+FFFF, bidi controls; and a backslash before
#: what JavaScript reads as an escape (:func:`_title_text`). A match may be a string that only
#: looks so (an escaped backslash before it): that spec is walked for nothing.
_UNDRAWABLE = re.compile(r"\\u00[0189][0-9a-f]|\\u007f|\x7f|\\[bf]|\\ud[89a-f]|\\ufff[ef]|"
                         r"\\u202[a-e]|\\u206[6-9]|\\\\[xu0-7bfv]")


def drawable(text: str) -> str:
    """The JSON ``text`` of a spec with every string in it (keys and data too) as the renderer
    can draw it (:func:`fitgpp.analysis.escape.chart_text`): vl-convert aborts the process on
    a control character in a title, a legend or an ``aria-label`` drawn from the data (in a
    notebook, the kernel dies), and refuses a lone surrogate. A spec without one is as it was."""
    if not _UNDRAWABLE.search(text):
        return text
    from fitgpp.analysis.escape import chart_text

    def clean(v, where=None):   # where: in an "encoding", or in one of its channels
        if isinstance(v, str):
            return chart_text(v)
        if isinstance(v, list):
            return [clean(x, where) for x in v]
        if not isinstance(v, dict):
            return v
        return {chart_text(k): (clean(x, "channel") if where == "encoding" else
                                _title_text(clean(x)) if where == "channel" and k == "title"
                                else clean(x, "encoding" if k == "encoding" else None))
                for k, x in v.items()}
    return json.dumps(clean(json.loads(text)), sort_keys=True)


def _title_text(title):
    """A channel's ``title`` (text, or a list of lines) with every backslash doubled when one
    starts what JavaScript reads as an escape (``\\x01``, ``\\u0000``, ``\\0``, ``\\b``, ...):
    Vega-Lite writes the title into the expression of each mark's ``aria-label`` without
    escaping it, so ``a\\x01b`` would become a control character there (and vl-convert could
    not draw the figure). In the axis or legend it is drawn with the backslash doubled."""
    if isinstance(title, list):
        return [_title_text(t) for t in title]
    if isinstance(title, str) and re.search(r"\\[xu0-7bfv]", title):
        return title.replace("\\", "\\\\")   # every one: JavaScript pairs them first
    return title


def _read_kept(path: Path, ext: str) -> bytes | None:
    """The rendered file the figure cache holds at ``path``, or None if it holds none that
    is whole (cut short, empty, or a directory in its place: it is rendered again)."""
    data = kept_bytes(path)
    return data if data is not None and whole(data, ext) else None


def kept_bytes(path: Path) -> bytes | None:
    """The bytes of a figure cache's entry ``path``, or None if there is none that can be read:
    missing, a directory, unreadable, or not a regular file (a FIFO put in its place would
    block the reader forever, ``/dev/zero`` would fill the memory: it is drawn again)."""
    from fitgpp.sim.validate import read_regular
    try:
        return read_regular(path, "figure cache entry", OSError, limit=None)
    except OSError:
        return None


def whole(data: bytes, ext: str) -> bool:
    """Whether ``data`` is a complete file of its format, not one cut short: a PNG ends in
    its ``IEND`` chunk, a PDF holds ``%%EOF`` near its end, an SVG parses as XML whose root
    is ``svg``."""
    if ext == ".png":
        return data[:8] == b"\x89PNG\r\n\x1a\n" and data[-12:] == b"\0\0\0\0IEND\xaeB`\x82"
    if ext == ".pdf":
        return data[:5] == b"%PDF-" and b"%%EOF" in data[-1024:]
    import xml.etree.ElementTree as ET
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return False
    return root.tag.rsplit("}", 1)[-1] == "svg"


def keep(path: Path, data: bytes) -> None:
    """Put ``data`` in a cache at ``path`` at once (a temporary file, then a rename); a
    directory in its place is removed first. A cache that cannot be written (a full disk, a
    read-only folder) is gone on without, and leaves no temporary file behind."""
    import shutil
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


def save(chart, path, *, dpi: int = DPI, cache=None) -> Path:
    """Write ``chart`` to ``path`` (``.png``, ``.svg`` or ``.pdf``) as :func:`render` draws
    it. Overwrites ``path`` and embeds nothing: :func:`fitgpp.figures.export.export` is the way
    fitgpp writes figures (never overwrites, checks them, writes the configuration into the
    files and a manifest); this is for a quick look. Returns the path."""
    path = Path(path)
    data = render(chart, path.suffix, dpi=dpi, cache=cache)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


def _cached_file(spec: str, ext: str, dpi: int, cache) -> Path:
    """Where the figure cache keeps ``spec`` (JSON, sorted keys) rendered as ``ext``."""
    import vl_convert as vlc
    key = hashlib.sha256(f"{spec}\0{ext}\0dpi{dpi}\0{vlc.__version__}".encode()).hexdigest()
    return Path(cache) / key[:2] / f"{key}{ext}"


def _spec(chart, formats, dpi: int, cache) -> dict:
    """The chart's Vega-Lite dict, validated against the schema (~0.1 s a chart) unless
    every format of it is in the figure cache already: it was rendered from this exact spec
    before, so it is not validated again (altair builds the same dict either way)."""
    if not hasattr(chart, "to_dict"):
        return chart
    if cache is not None:
        spec = chart.to_dict(validate=False)
        text = json.dumps(spec, sort_keys=True)
        if all(_read_kept(_cached_file(text, ext.lower(), dpi, cache), ext.lower()) is not None
               for ext in formats):
            return spec
    return chart.to_dict()


def save_all(charts: dict, out_dir, formats=FORMATS, **kw) -> list[Path]:
    """Save ``{name: chart}`` as ``out_dir/name.<ext>`` for every format; returns the paths."""
    out = []
    for name, chart in charts.items():
        spec = _spec(chart, formats, kw.get("dpi", DPI), kw.get("cache"))
        for ext in formats:
            out.append(save(spec, Path(out_dir) / f"{name}{ext}", **kw))
    return out




# ------------------------------------------------------------------ laying out at the printed width
def rendered_width(spec: dict) -> float:
    """Width in pt (= Vega px) of ``spec`` as vl-convert draws it (its SVG's width); the
    last few hundred specs measured are remembered (export fits, then checks the width)."""
    return rendered_size(spec)[0]


def rendered_size(spec: dict) -> tuple[float, float]:
    """(width, height) in pt of ``spec`` as vl-convert draws it."""
    return svg_size(rendered_svg(spec))


def rendered_svg(spec: dict) -> bytes:
    """``spec`` drawn as SVG by vl-convert; the last few hundred drawings are remembered
    (the figure check measures the same drawing for several rules)."""
    return _measure(drawable(json.dumps(spec, sort_keys=True)))


def svg_size(svg: bytes) -> tuple[float, float]:
    """(width, height) in pt of an SVG vl-convert drew."""
    import re
    head = re.search(rb"<svg\b[^>]*>", svg)
    if head is None:
        raise PlotError("not an SVG drawing: no <svg> element")
    w, h = (re.search(rb'\b' + k + rb'="([\d.]+)', head.group(0)) for k in (b"width", b"height"))
    if w is None or h is None:
        raise PlotError("the SVG drawing has no width or height")
    return float(w.group(1)), float(h.group(1))


@functools.lru_cache(maxsize=512)
def _measure(text: str) -> bytes:
    import vl_convert as vlc
    return vlc.vegalite_to_svg(text).encode()


def _scaled(spec, k: float):
    """``spec`` with every view width (a number) multiplied by ``k``."""
    if isinstance(spec, list):
        return [_scaled(s, k) for s in spec]
    if not isinstance(spec, dict):
        return spec
    out = {key: (_scaled(v, k) if key not in ("config", "datasets", "usermeta", "data") else v)
           for key, v in spec.items()}
    if isinstance(spec.get("width"), (int, float)) and not isinstance(spec.get("width"), bool):
        out["width"] = max(20.0, round(spec["width"] * k, 2))
    return out


def fit_width(chart, inches: float | None = None, *, tries: int = 5) -> dict:
    """``chart``'s Vega-Lite dict laid out exactly ``inches`` wide (default: the printed
    width its preset recorded): every panel's plotting width is scaled (fonts stay in pt),
    measured as vl-convert renders it, and any last fraction of a point goes to the right
    padding. A chart without a preset is returned as it is."""
    spec = chart.to_dict() if hasattr(chart, "to_dict") else dict(chart)
    meta = (spec.get("usermeta") or {}).get("fitgpp", {})
    inches = inches or meta.get("inches")
    if not inches:
        return spec
    target = round(inches * 72)
    ks, ws = [1.0], [rendered_width(spec)]
    for _ in range(tries):
        if target - 1 < ws[-1] <= target:
            break
        if len(ks) == 1:
            k = 1 + (target - ws[0]) / (0.8 * ws[0])
        else:   # secant on width(k), nearly linear
            slope = (ws[-1] - ws[-2]) / (ks[-1] - ks[-2]) if ks[-1] != ks[-2] else ws[-1]
            k = ks[-1] + (target - 0.5 - ws[-1]) / (slope or ws[-1])
        ks.append(max(0.05, k))
        ws.append(rendered_width(_scaled(spec, ks[-1])))
    best = max((i for i in range(len(ks)) if ws[i] <= target), key=lambda i: ws[i],
               default=None)
    if best is None:
        return _scaled(spec, ks[-1])   # cannot get narrow enough: the figure check says so
    out = _scaled(spec, ks[best])
    extra = target - ws[best]
    pad = out.get("padding", 5)
    pad = pad if isinstance(pad, dict) else {s: pad for s in ("left", "right", "top", "bottom")}
    out["padding"] = {**pad, "right": pad.get("right", 5) + extra}
    out["usermeta"] = {**out.get("usermeta", {}),
                       "fitgpp": {**meta, "inches": inches, "laid_out": True}}
    return out
