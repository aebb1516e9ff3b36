"""Paper figures for simulation results, in Altair, laid out at their printed width.

Every chart function takes Datasets (from :func:`fitgpp.simulate`) or small tidy
DataFrames and returns an ``alt.Chart`` laid out for a printed width (``size``: a
:data:`PRESETS` name, or the one of the enclosing :func:`printed_at`);
:func:`fitgpp.figures.export.export` writes it as PNG, SVG or PDF exactly that wide. Times on
axes are in hours, slowdowns are unitless ((finish - submit) / work).

Policies keep one colour (Okabe-Ito, colour-blind safe), one point shape and one dash
pattern each (:mod:`fitgpp.figures.plots.style`), so the figures still read in greyscale.

One module per concept: ``base`` (printed sizes, captions), ``axes`` (log ticks,
coinciding series), ``style`` (labels and styles of policies), ``slowdown``,
``tradeoff``, ``cellmap``, ``cluster``, ``workload``, ``lines`` (the charts), ``render`` (files).
"""

from __future__ import annotations

from fitgpp.figures.plots import theme  # noqa: F401  (registers and enables the paper theme)
from fitgpp.figures.plots.axes import _log_domain, _log_scale, _ticks_fit, coincident, log_ticks
from fitgpp.figures.plots.base import (CLASS_NAMES, COLUMN_WIDTH, DPI, POLICY_STYLE, PRESETS,
                                       THEME, PlotError, Preset, _finish, _panel, _wrap, at_width,
                                       natural_key, preset, printed_at)
from fitgpp.figures.plots.cellmap import change_map
from fitgpp.figures.plots.cluster import (node_timeline, segments, segments_of, utilization,
                                          utilization_extent)
from fitgpp.figures.plots.lines import metric_lines
from fitgpp.figures.plots.render import FORMATS, fit_width, render, save, save_all
from fitgpp.figures.plots.slowdown import (_cached_interval, bootstrap_stats, slowdown_bars,
                                           slowdown_cdf, stats_table)
from fitgpp.figures.plots.style import (FAMILIES, _as_runs, _family, _hours, _styles,
                                        config_label, family, policy_label, policy_styles,
                                        run_labels)
from fitgpp.figures.plots.theme import paper_theme
from fitgpp.figures.plots.tradeoff import _LABEL_OFFSETS, _place_labels, s_tradeoff, tradeoff_table
from fitgpp.figures.plots.workload import QUANTITY_TITLES, distribution_fit

__all__ = ["CLASS_NAMES", "COLUMN_WIDTH", "DPI", "FAMILIES", "FORMATS", "POLICY_STYLE",
           "PRESETS", "QUANTITY_TITLES", "at_width", "change_map",
           "THEME", "PlotError",
           "Preset", "bootstrap_stats", "coincident", "config_label", "distribution_fit",
           "family", "fit_width", "log_ticks", "metric_lines", "natural_key", "node_timeline",
           "paper_theme", "policy_label", "policy_styles", "preset", "printed_at", "render",
           "run_labels",
           "s_tradeoff", "save", "save_all", "segments", "segments_of", "slowdown_bars",
           "slowdown_cdf", "stats_table", "tradeoff_table", "utilization",
           "utilization_extent"]
