"""Let xarray ask whether an array is a dask array without importing ``dask.array`` (~0.4-1 s).

Every Variable xarray makes from an array outside its fast path runs
``isinstance(data, array_type("dask"))`` (``xarray/core/variable.py``, ``as_compatible_data``),
and the first such call imports ``dask.array`` (and with it dask's fft, linalg, ... modules)
just to learn the class, whenever dask is installed, as it is with fitgpp. A warm panel makes
its first such Variable when it assembles the sweep's Dataset, and paid the import there
although no array of it ever is a dask array (issue 26). The simulator avoids the question
with Variables made on xarray's fast path (:mod:`fitgpp.sim.run`); the sweep, the studies and
the panels go through xarray's selection, arithmetic and concatenation, which ask it anew.

:func:`defer` puts a stand-in in xarray's table of array modules for ``"dask"``: while
``dask.array`` is not imported its array type is ``()`` -- no object can be a dask array
before the module that defines the class is imported -- and from the moment it is (a user's
``import dask.array``, a chunked ``open_dataset``, a Dask cluster), the stand-in hands over
to xarray's own entry (:class:`xarray.namedarray.pycompat.DuckArrayModule`), so dask arrays
are recognised exactly as before. Its version and module are xarray's own, imported when
asked. An xarray without that table (another layout) is left as it is.
"""

from __future__ import annotations

import sys

MOD = "dask"


def defer() -> bool:
    """Install the stand-in unless xarray already looked dask up (or ``dask.array`` is
    imported, or this xarray keeps no such table). Returns True if it was installed."""
    if "dask.array" in sys.modules:
        return False
    try:
        from xarray.namedarray import pycompat
        table, base = pycompat._cached_duck_array_modules, pycompat.DuckArrayModule
    except (ImportError, AttributeError):
        return False
    if not isinstance(table, dict) or MOD in table:
        return False
    table[MOD] = _stand_in(base, table)
    return True


def _stand_in(base: type, table: dict):
    """An instance of a subclass of xarray's ``DuckArrayModule`` (what its table holds) that
    imports nothing until ``dask.array`` is imported by someone else."""

    class Deferred(base):
        def __init__(self):   # (the base's would import dask.array)
            pass

        def _real(self):
            """xarray's own entry, made now, in the table in place of the stand-in."""
            real = base(MOD)
            if table.get(MOD) is self:
                table[MOD] = real
            return real

        @property
        def type(self):
            if getattr(sys.modules.get("dask.array"), "Array", None) is None:
                return ()   # no dask array exists before its class is defined
            return self._real().type

        module = property(lambda self: self._real().module)
        version = property(lambda self: self._real().version)
        available = property(lambda self: self._real().available)

    return Deferred()
