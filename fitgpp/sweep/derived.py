"""Numbers derived from a cached cell, kept beside it, so that a warm sweep need not read it.

A warm panel read every cell of its study in full (300-540 files of up to 1 MB each, hashed and
checked: about 1 of a warm full-size RQ8 panel's 3.4 s, issue 26) to compute the same few numbers
again: each class's statistics, whether the run is steady, a metric of its jobs. They are kept
in a small file beside the cell, ``<key>.sum``::

    fitgpp-cell-summary/1 <sha256 of the body>
    {"key": ..., "code": <CODE's digest>, "payload": <the cell's sha256, as its header says>,
     "size": <the cell file's bytes>, "n": <jobs>, "names": [its arrays], "meta": <its meta>,
     "values": {name: value}}

A summary is used only if its checksum, key and code digest (:func:`code_digest`: the modules
whose code derives a kept value, and numpy's version) hold and the cell file beside it still
starts with the same payload sha256 and has the same size; else it is ignored, the cell is read
in full as before (every array checked) and the summary written anew. Its values were computed
from that payload after that full check, so they are the numbers of the cell the cache holds.
A cell's scalars and strings (its provenance: the run's attrs, code, version) come with the
summary; its first array asked reads the cell in full, with the whole check, and a cell found
damaged then is recomputed (as at lookup, with a :class:`~fitgpp.sweep.cache.CacheWarning`;
:class:`fitgpp.sweep.cache.Summarized`).
Old caches (cells without a summary) are read in full once and get one.

:func:`derived` is how a number is asked for: kept, or computed from the cell and kept. A
summary is written without fsync: a torn one fails its checksum and is written again.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path

import numpy as np

from fitgpp.sim.validate import honour_umask, read_regular

FORMAT = "fitgpp-cell-summary/1"
#: The modules whose code computes a kept value (paths under the package): the per-class
#: statistics, the steadiness of a run, the per-run metrics, how a cell's arrays are decoded.
#: Editing any of them makes every summary stale (it is computed again from its cell).
CODE = ("analysis/metrics.py", "analysis/stability.py", "sweep/derived.py", "sweep/runs.py",
        "sweep/summary.py", "studies/steady.py", "studies/per_run.py")
MAX_BYTES = 1 << 20

_DIGEST: str | None = None


def code_digest() -> str:
    """sha256 over the files of :data:`CODE` and numpy's version (its percentiles)."""
    global _DIGEST
    if _DIGEST is None:
        root = Path(__file__).resolve().parent.parent
        h = hashlib.sha256(f"numpy {np.__version__}\0".encode())
        for name in CODE:
            h.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
        _DIGEST = h.hexdigest()
    return _DIGEST


def derived(res, name: str, fn, pack=None, unpack=None):
    """``fn(res)``, kept in the summary of the cell ``res`` (a cache entry or a result just
    computed) under ``name``: read from it when there, else computed and added. ``pack``
    makes the value numbers, strings, lists, dicts and arrays (:func:`_enc`), ``unpack``
    makes it again; a kept value is the same, type for type, as the one computed."""
    s = getattr(res, "summary", None)
    if s is None:
        return fn(res)
    return s.value(name, lambda: fn(res), pack or (lambda v: v), unpack or (lambda v: v))


class Summary:
    """The summary of one cell (see the module docstring); :meth:`value` adds to it."""

    def __init__(self, path: Path, key: str, payload: str, size: int, n: int, names, meta: str,
                 values: dict | None = None):
        self.path, self.key, self.payload, self.size, self.n = path, key, payload, size, n
        self.names, self.meta, self.values = list(names), meta, dict(values or {})

    def value(self, name: str, make, pack, unpack):
        kept = self.values.get(name, _FORMS)   # (_FORMS: none kept)
        if kept is not _FORMS and name in _FORMS:
            try:
                if _form(kept) == _FORMS[name]:
                    return unpack(_dec(kept))
            except (ValueError, TypeError, KeyError, IndexError, AttributeError,
                    OverflowError, RecursionError):
                pass   # not what this value reads as: computed from the cell instead
        v = make()
        enc = _enc(pack(v))
        _FORMS[name] = _form(enc)
        if kept != enc:
            self.values[name] = enc
            self._write()
        return v

    def _write(self) -> None:
        body = json.dumps({"key": self.key, "code": code_digest(), "payload": self.payload,
                           "size": self.size, "n": self.n, "names": self.names,
                           "meta": self.meta, "values": self.values}).encode()
        blob = f"{FORMAT} {hashlib.sha256(body).hexdigest()}\n".encode() + body
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.key[:16]}.",
                                       suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            honour_umask(tmp)
            os.replace(tmp, self.path)
        except OSError:   # a read-only cache: the sweep reads the cell in full next time
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)


def load(cell: Path, key: str, n_jobs: int | None, head: str) -> Summary | None:
    """The summary beside the cell file ``cell`` if it holds (see the module docstring),
    else None. ``head``: the header a cell of this format starts with."""
    try:
        blob = read_regular(cell.with_suffix(".sum"), "cell summary", OSError, limit=MAX_BYTES)
        end = blob.index(b"\n")
        tag, digest = blob[:end].decode("ascii").split(" ")
        body = memoryview(blob)[end + 1:]
        if tag != FORMAT or hashlib.sha256(body).hexdigest() != digest:
            return None
        d = json.loads(bytes(body))
        if not _well_formed(d):
            return None
        if d["key"] != key or d["code"] != code_digest() or \
                (n_jobs is not None and d["n"] != n_jobs):
            return None
        fd = os.open(cell, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            st, first = os.fstat(fd), os.pread(fd, 256, 0)
        finally:
            os.close(fd)
        if not (stat.S_ISREG(st.st_mode) and st.st_size == d["size"]
                and first.startswith(f"{head} {d['payload']}\n".encode())):
            return None
        return Summary(cell.with_suffix(".sum"), key, d["payload"], d["size"], d["n"],
                       d["names"], d["meta"], d["values"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None   # missing, torn, stale, nested too deep or of another cell: read in full


def _well_formed(d) -> bool:
    """Whether the body ``d`` of a summary has every field of the type a reader takes."""
    return (isinstance(d, dict) and all(isinstance(d.get(k), str) for k in ("key", "code",
                                                                             "payload", "meta"))
            and all(type(d.get(k)) is int and d[k] >= 0 for k in ("size", "n"))
            and isinstance(d.get("names"), list) and all(isinstance(x, str) for x in d["names"])
            and isinstance(d.get("values"), dict))


class Kept(dict):
    """A cell result just computed (a plain dict) with the :class:`Summary` its values go to."""

    summary: Summary | None = None


# ---------------------------------------------------------------- values as JSON, exactly
#: The form (:func:`_form`) of each kept value, from the first one computed in this process:
#: a kept value of another form (a type, dtype, shape or key that is not what its reader
#: takes) is not used; the value is computed from the cell and kept anew. The first value of
#: each name is computed so (one cell read in full), never taken from a summary.
_FORMS: dict[str, tuple] = {}


def _form(v):
    """The form of an encoded value (:func:`_enc`): its types, array dtypes and shapes, and
    keys, all the way down (int and float alike: a number); ValueError for what
    :func:`_enc` never writes."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return type(v).__name__
    if type(v) in (int, float):
        return "number"
    if not isinstance(v, dict) or len(v) not in (1, 2, 3):
        raise ValueError(f"not a kept value: {str(v)[:40]}")
    if "nd" in v:
        return ("nd", str(np.dtype(v["nd"])), tuple(v["shape"]))
    if "np" in v:
        return ("np", str(np.dtype(v["np"])))
    if "map" in v:
        return ("map", tuple(sorted((k, _form(x)) for k, x in v["map"])))
    tag = "tuple" if "tuple" in v else "list"
    return (tag, tuple(_form(x) for x in v[tag]))


def _enc(v):
    """``v`` as JSON, every type tagged so that :func:`_dec` gives it back exactly (a float
    is written as Python's repr, which reads back to the same float; NaN and inf as Python's
    JSON writes them)."""
    if isinstance(v, np.ndarray):
        return {"nd": v.dtype.str, "shape": list(v.shape), "v": v.ravel().tolist()}
    if isinstance(v, np.generic):
        return {"np": v.dtype.str, "v": v.item()}
    if isinstance(v, dict):
        return {"map": [[k, _enc(x)] for k, x in v.items()]}
    if isinstance(v, (list, tuple)):
        return {"tuple" if isinstance(v, tuple) else "list": [_enc(x) for x in v]}
    if v is None or type(v) in (bool, int, float, str):
        return v
    raise TypeError(f"a kept value cannot hold a {type(v).__name__}")


def _dec(v):
    if not isinstance(v, dict):
        return v
    if "nd" in v:
        return np.array(v["v"], dtype=np.dtype(v["nd"])).reshape(v["shape"])
    if "np" in v:
        return np.dtype(v["np"]).type(v["v"])
    if "map" in v:
        return {k: _dec(x) for k, x in v["map"]}
    if "tuple" in v:
        return tuple(_dec(x) for x in v["tuple"])
    return [_dec(x) for x in v["list"]]
