"""What an adapter kept and dropped: its error, its report, and the filter that drops source
rows step by step, each with its reason (see :mod:`fitgpp.workload.adapters`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from fitgpp.errors import FitgppError


class AdapterError(FitgppError):
    """A trace file cannot be adapted (missing file or column, bad option)."""


@dataclass
class AdapterReport:
    """What an adapter read, kept, dropped (reason -> count) and changed (notes); ``split``
    counts the multi-node jobs by how their GPUs were split into tasks
    (``"20 GPUs -> 3 tasks x 7 GPUs"`` -> jobs)."""

    format: str
    path: str
    sha256: str
    rows_in: int
    rows_out: int = 0
    dropped: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    options: dict = field(default_factory=dict)
    gangs: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {"format": self.format, "path": self.path, "sha256": self.sha256,
               "rows_in": self.rows_in, "rows_out": self.rows_out,
               "dropped": dict(self.dropped), "notes": list(self.notes),
               "options": dict(self.options)}
        if self.gangs:  # absent when no job was split, so older reports read the same
            out["gangs"] = dict(self.gangs)
        return out

    def __str__(self) -> str:
        lines = [f"{self.format}: {Path(self.path).name}: read {self.rows_in} rows, "
                 f"kept {self.rows_out}, dropped {self.rows_in - self.rows_out}"]
        lines += [f"  dropped {n:>6}  {why}" for why, n in self.dropped.items()]
        lines += [f"  gang    {n:>6}  {how}" for how, n in self.gangs.items()]
        lines += [f"  note: {s}" for s in self.notes]
        return "\n".join(lines)


class _Filter:
    """Drops rows step by step, remembering each row's reason and the counts."""

    def __init__(self, df: pd.DataFrame, report: AdapterReport):
        self.df, self.report = df, report
        self.keep = np.ones(len(df), dtype=bool)
        self.reason = np.full(len(df), "", dtype=object)

    def drop(self, mask, why: str) -> None:
        mask = np.asarray(mask, dtype=bool) & self.keep
        if mask.any():
            self.keep &= ~mask
            self.reason[mask] = why
            self.report.dropped[why] = int(mask.sum())

    def dropped(self) -> pd.DataFrame:
        out = self.df.loc[~self.keep].copy()
        out.insert(0, "row", np.flatnonzero(~self.keep))
        out["reason"] = self.reason[~self.keep]
        return out.reset_index(drop=True)


def _whole(df: pd.DataFrame, column: str, path) -> pd.Series:
    """``column`` as numbers; a fractional value is refused, naming the file and its lines
    (casting would truncate it silently)."""
    v = pd.to_numeric(df[column], errors="coerce")
    frac = (v.notna() & (v != np.floor(v))).to_numpy()
    if frac.any():
        raise AdapterError(f"{_at_lines(path, df.attrs['lines'][frac])}, column "
                           f"'{column}': not a whole number ({float(v[frac].iloc[0]):g})")
    return v


def _nothing_left(flt, path) -> None:
    if not flt.keep.any():
        why = "; ".join(f"{n} {w}" for w, n in flt.report.dropped.items())
        raise AdapterError(f"{path}: no row is left to adapt (dropped: {why})")



def _at_lines(path, lines) -> str:
    """``"PATH: lines 2, 3, 5"``: where in the source file, the first five lines shown."""
    shown = ", ".join(str(n) for n in lines[:5]) + (" and more" if len(lines) > 5 else "")
    return f"{path}: line{'s' if len(lines) > 1 else ''} {shown}"
