"""What a written figure file is: the manifest beside it (read, and written merged under a
lock), and a file's printed width read from its own bytes (PNG pixels and resolution, SVG
``width``, PDF page box)."""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path

from fitgpp.errors import FitgppError
from fitgpp.figures.plots.base import DPI


MANIFEST = "manifest.json"


class ExportError(FitgppError):
    """A figure cannot be exported as asked; the message names the file or parameter."""


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
