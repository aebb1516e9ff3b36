"""What a written figure file is: its name (:func:`stem`: what differs from the defaults, in
letters, digits, ``-`` and ``_``), the manifest beside it (read, and written merged under a
lock), and a file's printed width read from its own bytes (PNG pixels and resolution, SVG
``width``, PDF page box)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import struct
from pathlib import Path

from fitgpp.errors import FitgppError
from fitgpp.figures.plots.base import DPI


MANIFEST = "manifest.json"


class ExportError(FitgppError):
    """A figure cannot be exported as asked; the message names the file or parameter."""


# ------------------------------------------------------------------ names
def differs(config: dict, defaults: dict | None) -> dict:
    """The entries of ``config`` whose value is not the one in ``defaults`` (all, if None)."""
    if defaults is None:
        return {}
    return {k: v for k, v in config.items()
            if k not in defaults or _jsonable(defaults[k]) != _jsonable(v)}


def _jsonable(v):
    """``v`` as plain JSON values (anything else as its text); a NaN or an infinity as the
    text ``"nan"``, ``"inf"``, ``"-inf"``: JSON has no such number, and a manifest must read
    back as JSON anywhere."""
    return _finite(json.loads(json.dumps(v, default=str, sort_keys=True)))


def _finite(v):
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_finite(x) for x in v]
    return v


def _token(v) -> str:
    """A value in a file name: letters, digits and ``-`` only; a number's point is ``p`` and
    its minus sign ``m`` (``0.9`` -> ``0p9``, ``-1.5`` -> ``m1p5``, ``1e-05`` -> ``1em05``)."""
    if isinstance(v, bool) or v is None:
        v = str(v).lower()
    elif isinstance(v, (int, float)):
        v = f"{v:.6g}".replace("+", "").replace("-", "m").replace(".", "p")
    text = re.sub(r"(?<=\d)\.(?=\d)", "p", str(v))     # "0.9" as text too
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-") or "none"


def _pair(key: str, value) -> str:
    """``load0p9``, ``n-seeds5``, ``model-paper-wide-te``: the key (``_`` as ``-``) and its
    value, a ``-`` between them unless the value starts with a digit the key does not end in."""
    k, v = _token(key), _token(value)
    return f"{k}{v}" if v[0].isdigit() and not k[-1].isdigit() else f"{k}-{v}"


#: What a figure's name may hold: letters, digits, ``-`` and ``_`` (no dot: the one dot of a
#: file name is its extension's; no ``=``: both trouble LaTeX's ``\\includegraphics``).
NAME = re.compile(r"[A-Za-z0-9_-]+")


def stem(name: str, config: dict, defaults: dict | None, *, limit: int = 80) -> str:
    """``name`` plus ``__`` and a :func:`_pair` for each parameter that differs from
    ``defaults``, joined by ``_`` (``util__load1p3_model-paper-wide-te``); a hash of them
    (``cfg-<10 hex digits>``) when that is longer than ``limit``."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ExportError(f"figure name {name!r}: use letters, digits, _ and - only (a file "
                          "name LaTeX's \\includegraphics reads as it is)")
    diff = differs(config, defaults)
    if not diff:
        return name
    tail = "_".join(_pair(k, v) for k, v in sorted(diff.items()))
    if len(tail) > limit:
        digest = hashlib.sha256(json.dumps(_jsonable(diff), sort_keys=True).encode()).hexdigest()
        tail = f"cfg-{digest[:10]}"
    return f"{name}__{tail}"


def _free_stem(out: Path, base: str, formats, overwrite: bool) -> str:
    if overwrite:
        return base
    k, s = 1, base
    # a dangling symbolic link takes its name too: writing there would fail half-way
    while any(os.path.lexists(out / f"{s}{ext}") for ext in formats):
        k += 1
        s = f"{base}-{k}"
    return s


def file_inches(data: bytes, ext: str, dpi: int = DPI) -> float:
    """Printed width of a rendered figure in inches: a PNG's pixel width / ``dpi``
    (its own ``pHYs`` resolution when it has one), an SVG's ``width`` and a PDF's first
    page width in points / 72."""
    ext = ext.lower() if ext.startswith(".") else f".{ext.lower()}"
    if ext == ".png":
        width = struct.unpack(">I", data[16:20])[0]
        i = data.find(b"pHYs")
        if i > 0:
            ppm, _, unit = struct.unpack(">IIB", data[i + 4:i + 13])
            if unit == 1 and ppm:
                dpi = ppm * 0.0254
        return width / dpi
    if ext == ".svg":
        m = re.search(rb'<svg\b[^>]*\bwidth="([\d.]+)(pt|px)?"', data)
        return float(m.group(1)) / 72
    if ext == ".pdf":
        m = re.search(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]",
                      data)
        return (float(m.group(3)) - float(m.group(1))) / 72
    raise ExportError(f"cannot measure a {ext} file")


def _read_manifest(path: Path) -> dict:
    """The manifest already in the folder (an empty one if there is none), checked to be
    what :func:`export` writes before anything is written beside it."""
    from fitgpp.sim.validate import loads_json, read_regular
    if not os.path.lexists(path):
        return {"figures": {}}
    manifest = loads_json(read_regular(path, "figure manifest", ExportError, limit=None),
                          str(path), ExportError)
    if not isinstance(manifest, dict) or not isinstance(manifest.setdefault("figures", {}), dict):
        raise ExportError(f"{path}: not a figure manifest (a JSON object whose 'figures' is "
                          "an object); move it away or fix it")
    return manifest


def save_manifest(path: Path, manifest: dict) -> None:
    """Replace the manifest at ``path`` at once (never a half-written one), merged with what
    another writer recorded there since it was read: under a lock on the folder, the
    entries on disk that ``manifest`` lacks are kept (two exports into one folder at once
    both end up listed)."""
    import fcntl
    held = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            on_disk = _read_manifest(path)
        except ExportError:
            on_disk = {}
        merged = {**on_disk, **manifest}
        for key in ("figures", "tables"):
            if isinstance(on_disk.get(key), dict) or key in manifest:
                merged[key] = {**(on_disk.get(key) or {}), **(manifest.get(key) or {})}
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(merged, indent=1, sort_keys=True, allow_nan=False) + "\n")
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    finally:
        os.close(held)  # (closing releases the lock)
