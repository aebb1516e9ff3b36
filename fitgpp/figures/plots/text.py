"""How wide tick labels are drawn, so charts can choose ticks that do not collide (used by the
axes here and by the figure check, :mod:`fitgpp.figures.chart_rules`)."""

from __future__ import annotations

import math


def _label(v: float, fmt: str | None) -> str:
    if fmt == ",d":
        return f"{v:,.0f}"
    if fmt in ("~s", "s"):
        for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(v) >= div:
                return f"{v / div:g}{suf}"
    return f"{v:g}"


def label_clash(ticks, lo: float, hi: float, px: float, font: float, *, fmt=None,
                gap: float = 3.0, log: bool = True) -> tuple[str, str, float] | None:
    """The first pair of neighbouring tick labels of a horizontal log axis (``log=False``:
    linear) ``px`` long that come closer than ``gap`` px, as ``(label, label, space)``;
    None if none do.

    Labels are taken as 0.6 em per character; the first and last label, when their tick
    sits at the axis end, are pushed inside it as Vega does (``labelFlush``)."""
    spans = []
    for t in ticks:
        if not lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9):
            continue
        pos = (px * math.log(t / lo) / math.log(hi / lo) if log else
               px * (t - lo) / (hi - lo))
        text = _label(t, fmt)
        w = 0.6 * font * len(text)
        start = pos if pos <= 1 else pos - w if pos >= px - 1 else pos - w / 2
        spans.append((text, start, start + w))
    for (l0, _, e0), (l1, s1, _) in zip(spans, spans[1:]):
        if s1 - e0 < gap:
            return l0, l1, s1 - e0
    return None
