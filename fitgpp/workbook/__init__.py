"""The workbook's widgets, above the studies: what a notebook shows.

- :mod:`~fitgpp.workbook.panels`: a study's interactive panel (controls, numbers, charts);
- :mod:`~fitgpp.workbook.views`: the numbers and charts a panel or the workbench shows;
- :mod:`~fitgpp.workbook.panel_export`: "Export this view";
- :mod:`~fitgpp.workbook.live`, :mod:`~fitgpp.workbook.static`: charts that follow their
  controls, and the static copy a saved notebook keeps;
- :mod:`~fitgpp.workbook.widgets`, :mod:`~fitgpp.workbook.workbench`: the quickstart workbench.
"""
