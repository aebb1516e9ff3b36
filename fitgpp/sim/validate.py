"""Bounds and safe reading shared by every place where values and files enter fitgpp.

The bounds keep every quantity the simulator derives inside int64 with room to spare and
every value a result stores inside what netCDF can hold; each error message states the
bound it enforces. Readers accept only regular files (a FIFO, a device or a directory
given as a file is refused at once, never read), configuration-sized files up to
:data:`MAX_CONFIG_BYTES`, and JSON nested at most as deep as the interpreter can parse.
"""

from __future__ import annotations

import contextlib
import json
import math
import numbers
import os
import stat
from pathlib import Path

from fitgpp.errors import FitgppError

#: Largest time a trace or model may hold [s] (about 317 years): with ticks of at least
#: MIN_TICK_S every time is at most 1e13 ticks < 2**44, leaving int64 a factor of 2**19.
MAX_TIME_S = 1e10
#: Shortest tick [s] (a millisecond).
MIN_TICK_S = 1e-3
#: Largest per-job preemption limit P (int32; anything this large means "no limit").
MAX_PREEMPTIONS = 2**31 - 1
#: Largest seed (seeds are stored in results; uint32 keeps every file format happy).
MAX_SEED = 2**32 - 1
#: Most nodes in one node group, and the largest capacity of a node in any resource.
MAX_NODES = 2**20
MAX_NODE_RESOURCE = 2**40
#: Most jobs one synthesis may draw (about 10 GB of simulator state at this size).
MAX_JOBS = 10_000_000
#: Largest factor on grace periods.
MAX_GRACE_SCALE = 1e6
#: Most cells one sweep may run, and most points of its result grid (policies x every swept
#: parameter's values x swept knobs x seeds); counted from the declared lists first.
MAX_CELLS = 100_000
#: Most Dask workers any command starts.
MAX_WORKERS = 1024
#: Size limit of configuration, cluster and model files.
MAX_CONFIG_BYTES = 16 * 2**20


def check_int(value, what: str, lo: int, hi: int, error=FitgppError) -> int:
    """``value`` as an int in ``[lo, hi]``; ``error`` names ``what`` and the bound otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise error(f"{what} must be an integer in [{lo}, {hi}], got {value!r}"[:300])
    if not lo <= value <= hi:
        raise error(f"{what} must be an integer in [{lo}, {hi}], got {value}"[:300])
    return int(value)


def check_number(value, what: str, lo: float, hi: float, *, lo_open: bool = False,
                 error=FitgppError) -> float:
    """``value`` as a finite float in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``)."""
    bounds = f"{'(' if lo_open else '['}{lo:g}, {hi:g}]"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error(f"{what} must be a number in {bounds}, got {value!r}"[:300])
    v = float(value)
    if not math.isfinite(v) or v > hi or (v <= lo if lo_open else v < lo):
        raise error(f"{what} must be a number in {bounds}, got {value!r}"[:300])
    return v


def check_tick(tick, what: str = "tick", error=FitgppError) -> float:
    """A tick length in seconds, in ``[MIN_TICK_S, MAX_TIME_S]``."""
    return check_number(tick, f"{what} (seconds)", MIN_TICK_S, MAX_TIME_S, error=error)


def _open_regular(path, what: str, error) -> tuple[int, os.stat_result]:
    """A descriptor of ``path``, opened without blocking, and its status, if it is a regular
    file: a FIFO, a device, a socket or a directory is refused without reading (or waiting
    on) it."""
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)) or not str(path):
        raise error(f"{what}: expected a file path, got {path!r}"[:300])
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise error(f"{p}: no such file ({what})") from None
    except IsADirectoryError:
        raise error(f"{p}: is a directory, not a regular file ({what})") from None
    except OSError as exc:
        raise error(f"{p}: cannot read ({exc.strerror or exc}; {what})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise error(f"{p}: is a directory, not a regular file ({what})")
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{p}: not a regular file but a FIFO, device or socket ({what})")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def regular_file(path, what: str, error=FitgppError) -> None:
    """Refuse ``path`` with ``error`` unless it is a regular file, without reading it: for a
    reader that opens the file itself (netCDF's), which a FIFO would block forever."""
    os.close(_open_regular(path, what, error)[0])


def read_regular(path, what: str, error=FitgppError, limit: int | None = MAX_CONFIG_BYTES) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes.

    Opened without blocking and checked on the open descriptor, so a FIFO, a device, a
    socket or a directory is refused without reading (or waiting on) it.
    """
    fd, st = _open_regular(path, what, error)
    p = Path(path)
    try:
        if limit is not None and st.st_size > limit:
            raise error(f"{p}: {st.st_size} bytes, more than the {limit} bytes allowed ({what})")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read() if limit is None else f.read(limit + 1)
    except OSError as exc:
        raise error(f"{p}: cannot read ({exc.strerror or exc}; {what})") from None
    finally:
        os.close(fd)
    if limit is not None and len(data) > limit:
        raise error(f"{p}: more than the {limit} bytes allowed ({what})")
    return data


def read_text(path, what: str, error=FitgppError, limit: int | None = MAX_CONFIG_BYTES) -> str:
    """:func:`read_regular` decoded as UTF-8; an undecodable byte is named with its offset."""
    data = read_regular(path, what, error, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not a UTF-8 text file (byte {exc.start}: "
                    f"{data[exc.start:exc.start + 1]!r})") from None



@contextlib.contextmanager
def long_fields(text: str):
    """While the block runs, :mod:`csv` reads a field as long as ``text`` (its default limit,
    131,072 characters, refused a trace or distribution file whose unused text columns are
    long, say a 1 MiB ``model_name``); the file's size bound is the only bound."""
    import csv
    old = csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
    try:
        yield
    finally:
        csv.field_size_limit(old)


def read_toml(path, what: str, error=FitgppError) -> dict:
    """A TOML document from a regular UTF-8 file of at most :data:`MAX_CONFIG_BYTES`; a
    syntax error, or nesting deeper than the parser can take, is one line naming the file."""
    import tomllib
    text = read_text(path, what, error, MAX_CONFIG_BYTES)
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise error(f"{path}: not valid TOML (nested too deeply)") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML ({exc})") from None

def loads_json(text, where: str, error=FitgppError):
    """``json.loads`` whose every failure (syntax, nesting too deep, wrong type) is ``error``."""
    try:
        return json.loads(text)
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply") from None
    except (TypeError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError included
        raise error(f"{where}: not valid JSON ({' '.join(str(exc).split())})"[:300]) from None


def umask_mode(base: int = 0o666) -> int:
    """``base`` with the process umask applied: the mode ``open()`` would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return base & ~mask


def honour_umask(path) -> None:
    """Give ``path`` (a temporary file from ``mkstemp``, mode 0600) the mode of a normal new file."""
    os.chmod(path, umask_mode())
