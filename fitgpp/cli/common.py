"""Argument helpers shared by subcommands."""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path

from fitgpp.errors import FitgppError
from fitgpp.sim.cluster import Cluster, ClusterError
from fitgpp.sim.validate import (MAX_PREEMPTIONS, MAX_SEED, MAX_TIME_S, MAX_WORKERS, MIN_TICK_S,
                                 honour_umask)


class UsageError(FitgppError):
    """A user-fixable problem with the command line; printed as one line, exit status 2."""


def int_at_least(minimum: int, maximum: int | None = None):
    """An argparse ``type`` accepting integers >= ``minimum`` (and <= ``maximum``)."""
    want = f"an integer >= {minimum}" + (f" and <= {maximum}" if maximum is not None else "")

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {want}, got {text!r}"[:200]) from None
        if v < minimum or (maximum is not None and v > maximum):
            raise argparse.ArgumentTypeError(f"expected {want}, got {v}"[:200])
        return v
    parse.__name__ = want.removeprefix("an ")
    return parse


def number_in(lo: float, hi: float, lo_open: bool = False):
    """An argparse ``type`` accepting finite numbers in ``[lo, hi]`` (``(lo, hi]``)."""
    want = f"a number in {'(' if lo_open else '['}{lo:g}, {hi:g}]"

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {want}, got {text!r}"[:200]) from None
        if not math.isfinite(v) or v > hi or (v <= lo if lo_open else v < lo):
            raise argparse.ArgumentTypeError(f"expected {want}, got {text}"[:200])
        return v
    parse.__name__ = want.removeprefix("a ")
    return parse


def path_arg(text: str) -> str:
    """An argparse ``type`` for a file or directory: an empty path is refused (it would
    mean the current directory without saying so)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a path, got {text!r}")
    return text


positive_int = int_at_least(1)
#: Dask workers of a local cluster (0: in this process)
workers_int = int_at_least(0, MAX_WORKERS)
#: P: a BE job's preemption limit (int32, so that results hold it in any file format)
max_preemptions_int = int_at_least(1, MAX_PREEMPTIONS)
#: seeds: stored in results and recipes; uint32
seed_int = int_at_least(0, MAX_SEED)
#: tick length [s]: ticks of every trace time (<= MAX_TIME_S) fit in int64 with room
tick_seconds = number_in(MIN_TICK_S, MAX_TIME_S)


def add_cluster_args(p: argparse.ArgumentParser, required: bool = True) -> None:
    g = p.add_argument_group("cluster (homogeneous nodes, or --cluster FILE.toml)")
    g.add_argument("--nodes", type=positive_int, help="number of nodes")
    # per-node sizes default to None so that giving one with --cluster can be refused
    g.add_argument("--node-gpu", type=int, help="GPUs per node (default 8)")
    g.add_argument("--node-cpu-milli", type=int, help="CPU millicores per node (default 96000)")
    g.add_argument("--node-mem-mib", type=int, help="memory MiB per node (default 786432)")
    g.add_argument("--cluster", metavar="FILE.toml", help="node groups from a TOML file")
    p.set_defaults(_cluster_required=required)


def cluster_from_args(args) -> Cluster | None:
    sizes = {"--node-gpu": args.node_gpu, "--node-cpu-milli": args.node_cpu_milli,
             "--node-mem-mib": args.node_mem_mib}
    given = [k for k, v in sizes.items() if v is not None]
    if args.cluster and args.nodes:
        raise UsageError("give either --cluster FILE.toml or --nodes N, not both")
    if args.cluster:
        if given:
            raise UsageError(f"{', '.join(given)}: only used with --nodes N (the --cluster "
                             "file sets node sizes)")
        return Cluster.from_toml(args.cluster)
    if args.nodes:
        gpu, cpu, mem = (v if v is not None else d
                         for v, d in zip(sizes.values(), (8, 96_000, 786_432)))
        try:
            return Cluster.homogeneous(args.nodes, gpu, cpu, mem)
        except ClusterError as exc:  # name the flags, not the TOML fields
            msg = str(exc).replace("node group: ", "")
            for flag, f in (("--node-gpu", "gpu"), ("--node-cpu-milli", "cpu_milli"),
                            ("--node-mem-mib", "mem_mib")):
                msg = msg.replace(f"field '{f}'", flag)
            raise UsageError(msg) from None
    if given:
        raise UsageError(f"{', '.join(given)}: only used with --nodes N")
    if args._cluster_required:
        raise UsageError("no cluster: give --nodes N (with --node-gpu ...) or --cluster FILE.toml")
    return None


def atomic_write(path: str | os.PathLike, write) -> None:
    """Call ``write(tmp_path)`` then move the file into place, so no half-written output is
    left; the file gets the mode the umask gives a new file. An unwritable place is a
    UsageError naming the path."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
    except OSError as exc:
        raise UsageError(f"cannot write {path} ({exc.strerror or exc})") from None
    try:
        write(tmp)
        honour_umask(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"cannot write {path} ({exc.strerror or exc})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: Help of ``--overwrite``: the commands that write one file keep an existing one unless
#: asked, as the exports do (they take the next free name instead).
OVERWRITE_HELP = "replace --out if it exists (without this, an existing file is kept and " \
                 "the command stops before running)"


def add_overwrite(p) -> None:
    p.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)


def check_out_path(path: str, overwrite: bool = False) -> None:
    """Refuse ``--out path`` before anything runs: empty, a directory, not a regular file,
    in a folder that does not exist or cannot be written, or an existing file without
    ``overwrite`` (nothing fitgpp writes replaces a file unasked)."""
    if not str(path).strip():
        raise UsageError(f"--out {path!r}: empty; give a file name")
    if Path(path).is_dir():
        raise UsageError(f"--out {path}: is a directory; give a file name")
    if Path(path).exists() and not Path(path).is_file():
        raise UsageError(f"--out {path}: exists and is not a regular file")
    if Path(path).exists() and not overwrite:
        raise UsageError(f"--out {path}: exists; pass --overwrite to replace it, or choose "
                         "another name")
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise UsageError(f"--out {path}: directory {parent} does not exist")
    writable_dir(parent, f"--out {path}")


def writable_dir(directory: Path, what: str) -> None:
    """Refuse ``directory`` unless a file can be created in it (tried, not guessed from
    permission bits: root passes those everywhere, /proc and read-only mounts still refuse)."""
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise UsageError(f"{what}: cannot write in {directory} ({exc.strerror or exc})") from None


def one_line_errors(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make ``parser``'s own usage errors (bad choice, bad type, missing argument) one line
    on stderr with exit status 2, like every other user-fixable error; ``--help`` still
    shows the usage."""
    def error(message: str):
        parser.exit(2, f"{parser.prog}: error: {message} (see --help)\n")
    parser.error = error
    return parser
