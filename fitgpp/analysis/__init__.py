"""Numbers and sentences from results, above the simulator and the workloads:

- :mod:`~fitgpp.analysis.metrics`: every statistic, declared once (``declare(Metric(...))``);
- :mod:`~fitgpp.analysis.stability`: is a run steady, or does its queue grow for as long as it lasts;
- :mod:`~fitgpp.analysis.verdicts`: how a number is judged against the paper, in words;
- :mod:`~fitgpp.analysis.tables`: tables for people (intervals, floors, CSV and LaTeX text);
- :mod:`~fitgpp.analysis.escape`: a label shown as text in HTML, Markdown, LaTeX and figures.
"""
