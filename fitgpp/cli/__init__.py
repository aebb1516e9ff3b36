"""The command line, the top layer: ``fitgpp COMMAND``, one module per subcommand
(:mod:`fitgpp.cli.simulate`, ``synth``, ``fit``, ``sweep``, ``reproduce``), the parser and
``main`` in :mod:`fitgpp.cli.main`, shared argument helpers in :mod:`fitgpp.cli.common`."""

from fitgpp.cli.main import COMMANDS, build_parser, main

__all__ = ["COMMANDS", "build_parser", "main"]
