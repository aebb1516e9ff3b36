"""Content digests that key the sweep cache: a trace's jobs and a workload model."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def trace_digest(trace) -> str:
    """sha256 of a trace's jobs (columns, dtypes and values), whatever it was read from."""
    import pandas as pd
    jobs = trace.jobs
    h = hashlib.sha256(json.dumps([[str(c), str(t)] for c, t in jobs.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(jobs, index=False).to_numpy().tobytes())
    return h.hexdigest()


def model_digest(model, ref) -> str:
    """sha256 of the model's content: its canonical JSON when it can say, else the
    bytes of the file ``ref`` names."""
    v = getattr(model, "sha256", None)
    v = v() if callable(v) else v
    if isinstance(v, str) and v:
        return v
    return hashlib.sha256(Path(ref).read_bytes()).hexdigest()
