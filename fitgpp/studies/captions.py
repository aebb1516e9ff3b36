"""What a study's figure is called in a paper: its caption. A study declares the captions of
its own figures (:attr:`fitgpp.studies.Study.captions`, by the part of the figure's name after
the study's key); the figures several studies draw share :data:`CAPTIONS`. A caption is never
made up from a figure's name ("Map load80."): a figure with none declared is captioned by the
title it draws, and a figure without either is an error.

    caption(STUDIES["rq3"], "rq3_long_be_jobs")    # the study's own caption
    declared(study, "rq8_map_load80")              # RQ8's "map" caption: one per load

Captions say what a figure shows, as a paper would; what to click in a notebook is said
beside the live chart, never in a caption or a figure's title.
"""

from __future__ import annotations

from fitgpp.errors import FitgppError

#: Captions of the figures several studies draw (and a panel's own two), by the part of the
#: figure's name after the study key.
CAPTIONS = {
    "slowdown_cdf": "Slowdown distribution per job class, one line per policy (first seed).",
    "slowdown_bars": "Median and p95 slowdown per policy and class: mean over the seeds, with "
                     "its 95 % interval from 3 seeds on.",
    "utilization_fitgpp": "FitGpp s=4 over time (first seed): share of GPUs running, in grace "
                          "periods and reserved for TE jobs; waiting jobs per class.",
    "utilization_fifo": "FIFO over time (first seed), as above.",
    "node_timeline": "The first nodes over the start of the FitGpp run: jobs, preemption "
                     "signals and grace periods.",
    "selected_tradeoff": "TE p95 against BE median and p95 slowdown at the selected settings, "
                         "one point per configuration (mean over the seeds).",
    "selected_slowdown_cdf": "Slowdown distribution per job class of the selected "
                             "configuration and the study's baseline, on the selected seed.",
}


class CaptionError(FitgppError):
    """A figure has no caption: neither its study nor :data:`CAPTIONS` declares one and it
    draws no title; the message names the figure and where to declare it."""


def declared(study, name: str) -> str | None:
    """The caption ``study`` declares for its figure ``name`` (``rq2_s_tradeoff_P3``), or the
    shared one of :data:`CAPTIONS`; None when there is none. A figure drawn once per value of
    a dimension (``rq8_map_load80``, ``rq6_paper-default_slowdowns``) takes the caption of the
    longest declared name it starts with (``map``; ``paper-default_slowdowns`` before
    ``paper-default``)."""
    part = name.removeprefix(f"{study.key}_")
    if part.startswith("s_tradeoff_P"):
        ps = part.removeprefix("s_tradeoff_P").split("_")
        return (f"TE p95 against BE median and p95 slowdown, FitGpp one point per s at "
                f"P={' and '.join(ps)}, other policies as single points (mean over the seeds).")
    if part == "slowdown_bars" and study.trace is not None:   # one trace: no seeds to span
        return ("Median and p95 slowdown per policy and class, with 95 % bootstrap intervals "
                "over the jobs (one real trace, so no interval over seeds).")
    own = dict(study.captions)
    if part in own:
        return own[part]
    starts = [k for k in own if part.startswith(f"{k}_")]
    if starts:
        return own[max(starts, key=len)]
    return CAPTIONS.get(part)


def caption(study, name: str, chart=None) -> str:
    """The caption of figure ``name`` of ``study``: :func:`declared`, else the title ``chart``
    draws (a researcher's own figure); :class:`CaptionError` when there is neither."""
    got = declared(study, name)
    if got:
        return got
    title = _title(chart) if chart is not None else ""
    if title:
        return title
    raise CaptionError(f"figure {name!r} of study {study.key!r} has no caption: declare one in "
                       f"the study's captions (key {name.removeprefix(study.key + '_')!r})")


def _title(chart) -> str:
    """The text of the title ``chart`` (an Altair chart or its dict) draws, "" without one."""
    import altair as alt
    t = chart.get("title") if isinstance(chart, dict) else getattr(chart, "title", None)
    if isinstance(t, alt.SchemaBase):
        t = t.to_dict(validate=False)
    if isinstance(t, dict):
        t = t.get("text")
    if isinstance(t, list):
        t = " ".join(map(str, t))
    return t if isinstance(t, str) else ""
