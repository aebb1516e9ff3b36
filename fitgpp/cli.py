"""The ``fitgpp`` command line. Each subcommand lives in ``fitgpp/commands/<name>.py``
with ``add_parser(subparsers)`` and ``run(args) -> int``; register it in COMMANDS.

Errors the user can fix (bad trace, bad cluster, bad parameter) print one line
to stderr and exit with status 2, without a traceback and without output files.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from .errors import FitgppError

COMMANDS = ("simulate", "reproduce", "fit", "synth", "sweep")


class UsageError(FitgppError):
    """A user-fixable problem with the command line; printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    parser = argparse.ArgumentParser(prog="fitgpp", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"fitgpp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"fitgpp.commands.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except FitgppError as exc:
        print(f"fitgpp {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"fitgpp {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
