"""Package data of fitgpp: shipped workload models (``*.json``) and real traces (``*/``).

This folder is installed as ``fitgpp.traces`` (see ``[tool.setuptools]`` in pyproject.toml);
code finds it with :func:`fitgpp.workload.models_dir`. What each file is: ``README.md``.
"""
