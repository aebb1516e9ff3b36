"""The on-disk cache of sweep cells: one file per cell, named by its key.

Location: the ``FITGPP_CACHE`` environment variable, else
``$XDG_CACHE_HOME/fitgpp`` (``~/.cache/fitgpp`` when XDG_CACHE_HOME is unset);
cells live under ``<root>/sweep-cells/<key[:2]>/<key>.cell``.

A file is a header line ``fitgpp-sweep-cell/N <sha256 of the payload>`` then
the payload, an ``.npz`` archive of the cell's arrays plus a JSON ``meta``
holding the key and the cell's scalars and strings. Files are written to a temporary name and moved into place
with ``os.replace``, so a crash never leaves a half-written entry under a
valid name; an entry whose checksum, archive or key does not match, or whose
arrays are not what the cell must hold (their length, dtypes, finite values in
range), is reported with a :class:`CacheWarning` and recomputed. An entry that
cannot be written (a directory in its place, a read-only cache) is reported the
same way and the sweep goes on without it.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import math
import os
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from fitgpp.errors import FitgppError
from fitgpp.sim.validate import honour_umask, read_regular
from fitgpp.sweep import derived
from fitgpp.sweep.cell import CELL_FORMAT


class CacheWarning(UserWarning):
    """A cache entry was unreadable or corrupt and will be recomputed."""


class CacheError(FitgppError):
    """The cache location cannot be a cache (it is a file, say)."""


def default_cache_dir() -> Path:
    """``$FITGPP_CACHE``, else ``$XDG_CACHE_HOME/fitgpp``, else ``~/.cache/fitgpp``."""
    env = os.environ.get("FITGPP_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "fitgpp"


class CellCache:
    """Cell results on disk under ``root``; ``get`` returns None for a missing or bad entry."""

    def __init__(self, root: str | os.PathLike | None = None):
        if root is not None and (isinstance(root, bool) or not isinstance(root, (str, os.PathLike))
                                 or not str(root).strip()):
            raise CacheError(f"cache: expected a directory path, got {root!r} (an empty path "
                             "would be the current folder)"[:300])
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()
        if self.root.exists() and not self.root.is_dir():
            raise CacheError(f"cache {self.root}: exists and is not a directory (give a "
                             "directory, or --no-cache)")

    def path(self, key: str) -> Path:
        return self.root / "sweep-cells" / key[:2] / f"{key}.cell"

    def get(self, key: str, n_jobs: int | None = None, *, summarized: bool = True) -> Mapping | None:
        """The entry of ``key``, or None; with ``n_jobs``, an entry of another length is corrupt.
        With its summary beside it (:mod:`fitgpp.sweep.derived`), and ``summarized``, the entry
        is known by it and its arrays are read when first asked; else it is read in full and
        checked, and its summary is kept as values are derived from it."""
        p = self.path(key)
        if not os.path.lexists(p):
            return None
        if summarized:
            s = derived.load(p, key, n_jobs, CELL_FORMAT)
            if s is not None:
                try:
                    _check_names(s.names)
                    return Summarized(self, s, _check_meta(_meta(s.meta, key)))
                except Exception:  # noqa: BLE001 - a summary that does not read: the whole cell
                    pass
        try:  # a regular file only: a FIFO in its place must not block the sweep
            blob = read_regular(p, "sweep cache entry", CacheError, limit=None)
        except CacheError as exc:
            warnings.warn(f"cache entry unreadable: {exc}; recomputing", CacheWarning,
                          stacklevel=2)
            return None
        try:
            out = _check(_decode(blob, key), n_jobs)
        except Exception as exc:  # anything wrong with the bytes means: recompute
            warnings.warn(f"cache entry {p} is corrupt ({exc}); recomputing", CacheWarning,
                          stacklevel=2)
            return None
        out.summary = derived.Summary(p.with_suffix(".sum"), key, out.sha256, len(blob),
                                      len(out.view("te")), out._names, out.meta_json)
        return out

    def put(self, key: str, result: dict) -> derived.Summary | None:
        """Write ``result`` as the entry of ``key``; returns the (empty) summary its derived
        values go to (:mod:`fitgpp.sweep.derived`), None when it could not be written."""
        p = self.path(key)
        blob = _encode(result, key)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{key[:16]}.", suffix=".tmp")
        except OSError as exc:
            warnings.warn(f"cache entry {p} cannot be written ({exc.strerror or exc}); "
                          "going on without it", CacheWarning, stacklevel=2)
            return None
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
                f.flush()
                os.fsync(f.fileno())
            honour_umask(tmp)
            os.replace(tmp, p)
        except OSError as exc:  # e.g. a directory where the entry goes
            Path(tmp).unlink(missing_ok=True)
            warnings.warn(f"cache entry {p} cannot be written ({exc.strerror or exc}); "
                          "going on without it", CacheWarning, stacklevel=2)
            return None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        head = blob[:blob.index(b"\n")].decode("ascii").split(" ")
        return derived.Summary(p.with_suffix(".sum"), key, head[1], len(blob),
                               len(result["te"]) if "te" in result else 0,
                               [k for k, v in result.items() if isinstance(v, np.ndarray)],
                               _meta_json(result, key))


def _encode(result: dict, key: str) -> bytes:
    """Arrays go into the archive; scalars and strings (gpu_util, code, fitgpp, attrs)
    into the JSON ``meta``."""
    arrays = {k: v for k, v in result.items() if isinstance(v, np.ndarray)}
    buf = io.BytesIO()
    np.savez(buf, meta=np.array(_meta_json(result, key)), **arrays)
    payload = buf.getvalue()
    return f"{CELL_FORMAT} {hashlib.sha256(payload).hexdigest()}\n".encode() + payload


def _meta_json(result: dict, key: str) -> str:
    """The JSON ``meta`` of an entry: the result's scalars and strings, and its key."""
    meta = {k: (float(v) if isinstance(v, np.floating) else v) for k, v in result.items()
            if not isinstance(v, np.ndarray)}
    meta["key"] = key
    return json.dumps(meta)


def _meta(text: str, key: str) -> dict:
    """The scalars and strings of an entry from its JSON ``meta`` (which names its key)."""
    meta = json.loads(text)
    if meta.pop("key", None) != key:
        raise ValueError("entry belongs to another key")
    meta["gpu_util"] = np.float64(meta["gpu_util"])
    return meta


def _decode(blob: bytes, key: str) -> dict:
    end = blob.find(b"\n")
    parts = blob[:max(end, 0)].decode("ascii", "replace").split(" ")
    if end < 0 or len(parts) != 2 or parts[0] != CELL_FORMAT:
        raise ValueError("bad header")
    # the payload in place (a cell of a long run is several MB: a copy of it cost as much
    # as its checksum, issue 26); the archive is read with the header line before it, as
    # zip readers read an archive with data prepended
    whole = memoryview(blob)
    if hashlib.sha256(whole[end + 1:]).hexdigest() != parts[1]:
        raise ValueError("checksum mismatch")
    z = np.lib.npyio.NpzFile(io.BytesIO(blob), allow_pickle=False)
    text = str(z["meta"])
    out = _Entry(z, _meta(text, key), whole)
    out.sha256, out.meta_json = parts[1], text
    return out


class _Entry(Mapping):
    """A cell read from the cache: its scalars at once, each array when first used (the
    metrics of a sweep read 4 of the ~20 arrays; the rest only for the cells a figure shows).
    The check of an entry (:func:`_check`) reads every array in place (:meth:`view`); an
    array is copied out only when used."""

    #: Where the values derived from it are kept (:mod:`fitgpp.sweep.derived`), once checked.
    summary = None

    def __init__(self, npz, meta: dict, payload: memoryview | None = None):
        self._z, self._meta, self._arrays, self._payload = npz, meta, {}, payload
        self._views: dict = {}
        self._names = [k for k in npz.files if k != "meta"]

    def view(self, k):
        """Array ``k`` read-only, in place in the entry's bytes (what :func:`_check` reads)."""
        if k in self._meta or k in self._arrays:
            return self[k]
        if k not in self._views:
            if k not in self._names:
                raise KeyError(k)
            self._views[k] = _member(self._z, k, self._payload, copy=False)
        return self._views[k]

    def __getitem__(self, k):
        if k in self._meta:
            return self._meta[k]
        if k not in self._arrays:
            if k not in self._names:
                raise KeyError(k)
            view = self._views.pop(k, None)
            self._arrays[k] = view.copy(order="K") if view is not None else \
                _member(self._z, k, self._payload)
        return self._arrays[k]

    def __contains__(self, k) -> bool:   # (Mapping's would read the array)
        return k in self._meta or k in self._names

    def __iter__(self):
        return iter([*self._names, *self._meta])

    def __len__(self) -> int:
        return len(self._names) + len(self._meta)


class Summarized(Mapping):
    """A cached cell known by its summary (:mod:`fitgpp.sweep.derived`): its scalars and
    strings at once; its arrays read (with the whole check of :meth:`CellCache.get`) when the
    first one is asked. ``recompute()``, set by the sweep, gives the cell's result again when
    the cell is found damaged or gone then."""

    def __init__(self, cache, summary: derived.Summary, meta: dict):
        self._cache, self.summary, self._meta = cache, summary, meta
        self._full = None
        self.recompute = None

    def whole(self):
        """The cell read in full (:meth:`fitgpp.sweep.cache.CellCache.get`), or recomputed."""
        if self._full is None:
            s = self.summary
            got = self._cache.get(s.key, s.n, summarized=False)
            if got is None:
                if self.recompute is None:
                    raise CacheError(f"cache entry {self._cache.path(s.key)} is damaged or gone; "
                                     "run the sweep again to recompute it")
                if not os.path.lexists(self._cache.path(s.key)):
                    warnings.warn(f"cache entry {self._cache.path(s.key)} is gone; recomputing",
                                  CacheWarning, stacklevel=3)
                got = self.recompute()
            self._full = got
        return self._full

    def view(self, k):
        if k in self._meta:
            return self._meta[k]
        w = self.whole()
        return getattr(w, "view", w.__getitem__)(k)

    def __getitem__(self, k):
        if k in self._meta:
            return self._meta[k]
        if k not in self.summary.names:
            raise KeyError(k)
        return self.whole()[k]

    def __contains__(self, k) -> bool:
        return k in self._meta or k in self.summary.names

    def __iter__(self):
        return iter([*self.summary.names, *self._meta])

    def __len__(self) -> int:
        return len(self.summary.names) + len(self._meta)


def _member(npz, name: str, payload: memoryview | None, copy: bool = True) -> np.ndarray:
    """Array ``name`` of the archive ``npz`` (of the bytes ``payload``), as ``npz[name]``
    gives it (a writeable copy; with ``copy=False`` a read-only view of ``payload``):
    read in place from the stored (uncompressed) member, its
    header parsed once for all the entries that share it. A warm panel reads 300-540
    cells of about 23 arrays each, and numpy's member reading (a zip stream, a CRC, the
    header through ``ast.literal_eval``) took 3.5 ms of a cell's 8 (issue 26); the payload's
    sha256 is checked before, so the CRC checked nothing more."""
    import zipfile
    info = npz.zip.getinfo(f"{name}.npy") if payload is not None else None
    if info is None or info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 1:
        return npz[name]
    at = info.header_offset
    if bytes(payload[at:at + 4]) != b"PK\x03\x04":
        raise ValueError(f"{name}: bad member header")
    name_len, extra_len = int.from_bytes(payload[at + 26:at + 28], "little"), \
        int.from_bytes(payload[at + 28:at + 30], "little")
    data = payload[at + 30 + name_len + extra_len:][:info.file_size]
    if len(data) != info.file_size or bytes(data[:6]) != b"\x93NUMPY":
        raise ValueError(f"{name}: truncated or not an array")
    width = 2 if data[6] == 1 else 4
    size = int.from_bytes(data[8:8 + width], "little")
    shape, fortran, dtype = _npy_header(bytes(data[:8 + width + size]))
    count = math.prod(shape)
    flat = np.frombuffer(data, dtype, count=count, offset=8 + width + size)
    flat = flat.copy() if copy else flat
    return flat.reshape(shape[::-1]).transpose() if fortran else flat.reshape(shape)


@functools.lru_cache(maxsize=256)
def _npy_header(head: bytes) -> tuple:
    """``(shape, fortran_order, dtype)`` of an .npy header, parsed by numpy (kept: the
    cells of one sweep share a handful of headers)."""
    fp = io.BytesIO(head)
    version = np.lib.format.read_magic(fp)
    read = {(1, 0): np.lib.format.read_array_header_1_0,
            (2, 0): np.lib.format.read_array_header_2_0}.get(version)
    if read is None:
        raise ValueError(f"npy version {version}")
    shape, fortran, dtype = read(fp)
    if dtype.hasobject:
        raise ValueError("object arrays cannot be loaded")
    return shape, fortran, dtype


def _check(out: dict, n_jobs: int | None) -> dict:
    """Raise ValueError unless ``out`` holds what :func:`~fitgpp.sweep.cell.compute_cell`
    returns (:func:`~fitgpp.sweep.runs.reduce_run`): per-job 1-D arrays of one length
    (``n_jobs`` when known), numbers where numbers belong (whole-valued floats may be stored
    as int32), time series and node intervals of consistent lengths, everything finite;
    slowdowns >= 1, waits and preemption counts >= 0, a utilization in [0, 1], strings."""
    from fitgpp.sweep.runs import JOB_VARS, TIME_VARS
    get = getattr(out, "view", out.__getitem__)   # an entry's arrays in place, not copied
    n = len(get("te")) if n_jobs is None else n_jobs
    if n == 0:
        raise ValueError("no jobs")

    def arrays(names, length, what):
        for k in names:
            a = get(k)
            if not isinstance(a, np.ndarray) or a.ndim != 1 or len(a) != length:
                raise ValueError(f"{k}: shape {getattr(a, 'shape', None)}, expected ({length},)"
                                 f" like the {what}")
            if k == "te":
                if a.dtype.kind != "b":
                    raise ValueError(f"{k}: dtype {a.dtype}")
                continue
            if a.dtype.kind not in ("i" if k in ("job_id", "preemptions") else "if"):
                raise ValueError(f"{k}: dtype {a.dtype}")
            if not np.isfinite(a).all():
                raise ValueError(f"{k}: non-finite values")

    arrays(("te", "job_id", *JOB_VARS), n, "jobs")
    arrays(("time", *(f"series_{k}" for k in TIME_VARS)), len(get("time")), "time axis")
    if "segment_job" in out:
        arrays(("segment_job", "segment_node", "segment_start", "segment_end", "segment_kind"),
               len(get("segment_job")), "segments")
    if (get("slowdown") < 1).any() or (get("wait") < 0).any() or (get("preemptions") < 0).any() \
            or (get("tasks") < 1).any() or (get("reload") < 0).any() or (get("gpu") < 0).any():
        raise ValueError("values out of range")
    _check_meta(out)
    return out


def _check_names(names) -> None:
    """Raise ValueError unless ``names`` (the arrays a summary says its cell holds) are the
    arrays a cell holds: each one :func:`_check` reads, the segments all or none, no other."""
    from fitgpp.sweep.runs import JOB_VARS, TIME_VARS
    need = {"te", "job_id", *JOB_VARS, "time", *(f"series_{k}" for k in TIME_VARS)}
    segments = {"segment_job", "segment_node", "segment_start", "segment_end", "segment_kind"}
    if set(names) not in (need, need | segments) or len(set(names)) != len(names):
        raise ValueError("the summary's arrays are not a cell's")


def _check_meta(out):
    """Raise ValueError unless the scalars and strings of an entry (its JSON ``meta``, also
    what its summary serves) are what every reader takes: a utilization in [0, 1]; strings;
    ``dtypes``, ``attrs``, ``units`` JSON objects; ``ledger`` a JSON object giving each part of
    the capacity ledger and the capacity (:mod:`fitgpp.sim.ledger`) as ``[GPU-hours, GPU-ticks]``,
    finite and >= 0, the parts adding up to the capacity. Returns ``out``."""
    from fitgpp.sim.ledger import PARTS
    u = out["gpu_util"]
    if not (np.isfinite(u) and 0 <= u <= 1 + 1e-9):
        raise ValueError(f"gpu_util {u!r}")
    for k in ("code", "fitgpp", "dtypes", "attrs", "units", "ledger"):
        if k not in out or not isinstance(out[k], (str, np.str_)):
            raise ValueError(f"{k}: missing or not a string")
    for k in ("dtypes", "attrs", "units", "ledger"):
        if not isinstance(json.loads(str(out[k])), dict):
            raise ValueError(f"{k}: not a JSON object")
    led = json.loads(str(out["ledger"]))
    names = [f"ledger_{p}" for p in (*PARTS, "capacity")]
    if sorted(led) != sorted(names):
        raise ValueError(f"ledger: parts {sorted(led)[:12]}, expected {names}")
    for k, v in led.items():
        if not (isinstance(v, list) and len(v) == 2 and all(type(x) in (int, float) for x in v)
                and type(v[1]) is int and all(math.isfinite(x) and x >= 0 for x in v)):
            raise ValueError(f"ledger: {k} is {str(v)[:40]}, not [GPU-hours, GPU-ticks]")
    if sum(led[k][1] for k in names[:-1]) != led[names[-1]][1]:
        raise ValueError("ledger: the parts do not add up to the capacity")
    return out
