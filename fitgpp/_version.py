"""The package version, in one place: from the installed distribution's metadata."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("fitgpp")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"
