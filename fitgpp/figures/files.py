"""What a written figure file is: the manifest's name beside it, and a file's printed width read
from its own bytes (PNG pixels and resolution, SVG ``width``, PDF page box)."""

from __future__ import annotations

import re
import struct

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
