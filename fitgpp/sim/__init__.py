"""The simulator, the lowest layer: everything a run needs and nothing above it.

- :mod:`~fitgpp.sim.validate`: bounds and checks every value meets where it enters;
- :mod:`~fitgpp.sim.cluster`: nodes and their capacity;
- :mod:`~fitgpp.sim.trace`: the SPEC trace schema, read and checked;
  :mod:`~fitgpp.sim.tiresias`: Tiresias's trace format;
- :mod:`~fitgpp.sim.engine`: the tick engine of docs/model.md (it owns the clock and knows no
  policy);
- :mod:`~fitgpp.sim.policies`: one module per policy, on top of the engine;
- :mod:`~fitgpp.sim.run`: ``simulate`` (trace, cluster, policy in; one Dataset out), ``save``
  and ``load``.

It imports nothing of fitgpp but :mod:`fitgpp.errors` and :mod:`fitgpp._version`; the layers
above are listed in ``docs/architecture.md``.
"""
