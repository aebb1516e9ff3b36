"""The built-in policies by name: one line per policy module (see the package's docstring)."""

from __future__ import annotations

from fitgpp.sim.policies.dlas import Dlas
from fitgpp.sim.policies.fifo import Fifo
from fitgpp.sim.policies.fitgpp import FitGpp
from fitgpp.sim.policies.gittins import Gittins
from fitgpp.sim.policies.las import Las
from fitgpp.sim.policies.lpjf import Lpjf
from fitgpp.sim.policies.lrtp import Lrtp
from fitgpp.sim.policies.prio import Prio
from fitgpp.sim.policies.rand import Rand
from fitgpp.sim.policies.shortest import Shortest
from fitgpp.sim.policies.shortest_gpu import ShortestGpu
from fitgpp.sim.policies.sjf import Sjf

POLICIES = {
    "fifo": Fifo,
    "prio": Prio,
    "fitgpp": FitGpp,
    "lrtp": Lrtp,
    "rand": Rand,
    "las": Las,
    "sjf": Sjf,
    "lpjf": Lpjf,
    "shortest": Shortest,
    "shortest-gpu": ShortestGpu,
    "dlas": Dlas,
    "gittins": Gittins,
}
