"""The ``fitgpp`` command line. Each subcommand lives in ``fitgpp/cli/<name>.py``
with ``add_parser(subparsers)`` and ``run(args) -> int``; register it in COMMANDS.

Errors the user can fix (bad trace, bad cluster, bad parameter) print one line
to stderr and exit with status 2, without a traceback and without output files.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys

from fitgpp.errors import FitgppError

COMMANDS = ("simulate", "reproduce", "fit", "synth", "sweep")


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line on stderr, exit status 2 (``--help`` still shows the usage)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


class _Version(argparse.Action):
    """``--version``, looked up only when asked for (it lives beside the simulator)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from fitgpp._version import __version__
        print(f"fitgpp {__version__}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="fitgpp", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=OneLineParser)
    for name in COMMANDS:
        importlib.import_module(f"fitgpp.cli.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage error (2) or --help/--version (0)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        with one_line_warnings(args.command):
            return int(args.run(args) or 0)
    except FitgppError as exc:
        text = " ".join(str(exc).split())  # one line, whatever the message holds
        print(f"fitgpp {args.command}: error: {text}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"fitgpp {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # the last net: a file the command could not read or write
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"fitgpp {args.command}: error: {where}{exc.strerror or exc}"[:2000],
              file=sys.stderr)
        return 2


@contextlib.contextmanager
def one_line_warnings(command: str):
    """Say as one line on stderr, once each, what the user's input means for the run: a
    policy parameter given by its old name (``--param demotion=...``, a sweep file's
    ``demotion = [...]``), used as the new one; a Tiresias trace that Tiresias's simulator
    reads otherwise. Other warnings are shown as Python shows them."""
    import warnings

    from fitgpp.sim.policies.modes import FieldRenamed
    from fitgpp.sim.tiresias import TiresiasWarning
    ours, show = (FieldRenamed, TiresiasWarning), warnings.showwarning

    def one_line(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, ours):
            print(f"fitgpp {command}: warning: {message}", file=sys.stderr)
        else:
            show(message, category, filename, lineno, file, line)
    with warnings.catch_warnings():
        for category in ours:
            warnings.simplefilter("default", category)
        warnings.showwarning = one_line
        yield


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
