"""Figures, above the sweeps: charts and the files they become.

- :mod:`~fitgpp.figures.plots`: the Altair charts, laid out at their printed width;
- :mod:`~fitgpp.figures.chart_rules`, :mod:`~fitgpp.figures.print_rules`: what a figure for a
  paper must satisfy, on its spec and at its printed size; :mod:`~fitgpp.figures.check` runs
  them all;
- :mod:`~fitgpp.figures.files`, :mod:`~fitgpp.figures.export`: PNG, SVG and PDF files (and
  tables) written with their configuration and a manifest.
"""
