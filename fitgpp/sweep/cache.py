"""The on-disk cache of sweep cells: one file per cell, named by its key.

Location: the ``FITGPP_CACHE`` environment variable, else
``$XDG_CACHE_HOME/fitgpp`` (``~/.cache/fitgpp`` when XDG_CACHE_HOME is unset);
cells live under ``<root>/sweep-cells/<key[:2]>/<key>.cell``.

A file is a header line ``fitgpp-sweep-cell/1 <sha256 of the payload>`` then
the payload, an ``.npz`` archive of the cell's arrays plus a JSON ``meta``
holding the key and the cell's scalars and strings. Files are written to a temporary name and moved into place
with ``os.replace``, so a crash never leaves a half-written entry under a
valid name; an entry whose checksum, archive or key does not match is
reported with a :class:`CacheWarning` and recomputed.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .cell import CELL_FORMAT


class CacheWarning(UserWarning):
    """A cache entry was unreadable or corrupt and will be recomputed."""


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
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()

    def path(self, key: str) -> Path:
        return self.root / "sweep-cells" / key[:2] / f"{key}.cell"

    def get(self, key: str) -> Mapping | None:
        p = self.path(key)
        try:
            blob = p.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            warnings.warn(f"cache entry {p} unreadable ({exc}); recomputing", CacheWarning,
                          stacklevel=2)
            return None
        try:
            return _decode(blob, key)
        except Exception as exc:  # anything wrong with the bytes means: recompute
            warnings.warn(f"cache entry {p} is corrupt ({exc}); recomputing", CacheWarning,
                          stacklevel=2)
            return None

    def put(self, key: str, result: dict) -> None:
        p = self.path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        blob = _encode(result, key)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{key[:16]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, p)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _encode(result: dict, key: str) -> bytes:
    """Arrays go into the archive; scalars and strings (gpu_util, code, fitgpp, attrs)
    into the JSON ``meta``."""
    arrays = {k: v for k, v in result.items() if isinstance(v, np.ndarray)}
    meta = {k: (float(v) if isinstance(v, np.floating) else v) for k, v in result.items()
            if k not in arrays}
    meta["key"] = key
    buf = io.BytesIO()
    np.savez(buf, meta=np.array(json.dumps(meta)), **arrays)
    payload = buf.getvalue()
    return f"{CELL_FORMAT} {hashlib.sha256(payload).hexdigest()}\n".encode() + payload


def _decode(blob: bytes, key: str) -> dict:
    head, sep, payload = blob.partition(b"\n")
    parts = head.decode("ascii", "replace").split(" ")
    if not sep or len(parts) != 2 or parts[0] != CELL_FORMAT:
        raise ValueError("bad header")
    if hashlib.sha256(payload).hexdigest() != parts[1]:
        raise ValueError("checksum mismatch")
    z = np.load(io.BytesIO(payload), allow_pickle=False)
    meta = json.loads(str(z["meta"]))
    if meta.pop("key", None) != key:
        raise ValueError("entry belongs to another key")
    meta["gpu_util"] = np.float64(meta["gpu_util"])
    return _Entry(z, meta)


class _Entry(Mapping):
    """A cell read from the cache: its scalars at once, each array when first used (the
    metrics of a sweep read 4 of the ~20 arrays; the rest only for the cells a figure shows)."""

    def __init__(self, npz, meta: dict):
        self._z, self._meta, self._arrays = npz, meta, {}
        self._names = [k for k in npz.files if k != "meta"]

    def __getitem__(self, k):
        if k in self._meta:
            return self._meta[k]
        if k not in self._arrays:
            if k not in self._names:
                raise KeyError(k)
            self._arrays[k] = self._z[k]
        return self._arrays[k]

    def __iter__(self):
        return iter([*self._names, *self._meta])

    def __len__(self) -> int:
        return len(self._names) + len(self._meta)
