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
    one panel per quantity (each with its own log axis and title), TE and BE in colours.
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
    # one panel per quantity, TE and BE in it by colour, the trace and the model by dash:
    # a panel per class and quantity (seven) printed 6.1 in tall on a 3.3 in column
    df["series"] = df["class"] + " " + df["source"]
    order = [f"{c} {src}" for c in ("TE", "BE") for src in sources if f"{c} {src}" in
             set(df["series"])]
    hue = {"TE": "#CC79A7", "BE": "#0072B2"}
    color = alt.Color("series:N", title="class and source", sort=order, scale=alt.Scale(
        domain=order, range=[hue[o.split()[0]] for o in order]))
    dash = alt.StrokeDash("series:N", title="class and source", sort=order, scale=alt.Scale(
        domain=order, range=[[1, 0] if o.endswith("empirical") else [5, 3] for o in order]))
    quantities = list(dict.fromkeys(df["quantity"]))
    ncols = min(len(quantities), 4 if p.name == "full" else 2)
    width = _panel(p, ncols, axis_px=48, gap=12)
    panels = []
    for col in quantities:
        g = df[df["quantity"] == col]
        panels.append(alt.Chart(g).mark_line(interpolate="step-after", clip=True).encode(
            x=alt.X("value:Q", **_log_scale(g["value"], width, p,
                                           title=QUANTITY_TITLES.get(col, col))),
            y=alt.Y("fraction:Q", title="CDF", scale=alt.Scale(domain=[0, 1])),
            color=color, strokeDash=dash).properties(width=width, height=110 if p.name == "full" else 78))
    notes = coincident(df, "series", ["value", "fraction"], ["quantity"])
    return _finish(alt.concat(*panels, columns=ncols), p, title, notes, legend=order)
