"""A researcher's policy with a field of its own that counts the simulations it runs: FIFO
that leaves a file in ``$FITGPP_TEST_RUNS_DIR`` each time a run binds it, and first sleeps
``$FITGPP_TEST_PAUSE`` seconds, so that cells are still running when a test kills a worker (for
the tests of issue 36, which count what a sweep computes on Dask workers)."""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field

from fitgpp.sim.policies.fifo import StrictFifo

RUNS_DIR = "FITGPP_TEST_RUNS_DIR"
PAUSE = "FITGPP_TEST_PAUSE"


@dataclass(frozen=True)
class Counted(StrictFifo):   # (StrictFifo: no backfill field to inherit)
    tag: int = field(default=0, metadata={"min": 0, "max": 100})
    name = "counted"

    def bind(self, eng) -> None:
        time.sleep(float(os.environ.get(PAUSE, "0")))
        where = os.environ.get(RUNS_DIR)
        if where:
            open(os.path.join(where, f"{self.tag}-{uuid.uuid4().hex}"), "w").close()
        super().bind(eng)
