"""A fitted workload model against the trace it was fitted to."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from fitgpp.figures.plots.axes import _log_scale, coincident
from fitgpp.figures.plots.base import Preset, PlotError, _finish, _panel, preset


# ------------------------------------------------------------------ fitted vs empirical
def _interarrival(jobs: pd.DataFrame) -> np.ndarray:
    return np.diff(np.sort(jobs["submit_time"].to_numpy(float)))


QUANTITY_TITLES = {"duration": "run time (s)", "interarrival": "inter-arrival (s)",
                   "gpu": "GPUs per job", "grace_period": "grace period (s)"}


def distribution_fit(empirical, synthetic, *, columns=("duration", "interarrival", "gpu",
                                                        "grace_period"),
                     points: int = 150, size: str | Preset | None = None,
                     title: str = "Fitted workload model against the trace it was fitted to"
                     ) -> alt.Chart:
    """ECDFs of a real trace (solid) against a trace synthesized from the fitted model (dashed),
    per class, one panel per quantity, each with its own log axis and title.
    ``empirical``/``synthetic``: Traces or trace DataFrames."""
    p = preset(size)
    sources = {"empirical": empirical, "fitted model": synthetic}
    q = np.linspace(0, 1, points)
    rows = []
    for name, tr in sources.items():
        jobs = getattr(tr, "jobs", tr)
        for c in ("TE", "BE"):
            sub = jobs[jobs["cls"] == c]
            for col in columns:
                if col == "grace_period" and c == "TE":
                    continue
                x = _interarrival(sub) if col == "interarrival" else sub[col].to_numpy(float)
                x = x[np.isfinite(x) & (x > 0)]
                if len(x):
                    rows.append(pd.DataFrame({"source": name, "class": c, "quantity": col,
                                              "value": np.quantile(x, q), "fraction": q}))
    if not rows:
        raise PlotError(f"no positive values in columns {list(columns)} of either trace")
    df = pd.concat(rows, ignore_index=True)
    ncols = 4 if p.name == "full" else 2
    width = _panel(p, ncols, axis_px=48, gap=12)
    color = alt.Color("source:N", scale=alt.Scale(domain=list(sources),
                                                 range=["#000000", "#D55E00"]), title="source")
    dash = alt.StrokeDash("source:N", scale=alt.Scale(domain=list(sources),
                                                      range=[[1, 0], [5, 3]]), title="source")
    panels = []
    for (c, col), g in df.groupby(["class", "quantity"], sort=False):
        panels.append(alt.Chart(g).mark_line(interpolate="step-after", clip=True).encode(
            x=alt.X("value:Q", **_log_scale(g["value"], width, p,
                                           title=f"{c} {QUANTITY_TITLES.get(col, col)}")),
            y=alt.Y("fraction:Q", title="CDF", scale=alt.Scale(domain=[0, 1])),
            color=color, strokeDash=dash).properties(width=width, height=round(width * 0.7)))
    notes = coincident(df, "source", ["value", "fraction"], ["class", "quantity"])
    return _finish(alt.concat(*panels, columns=ncols), p, title, notes)


