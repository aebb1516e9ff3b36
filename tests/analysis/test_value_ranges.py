"""Every quantity fitgpp prints an interval of declares the range its values keep
(:func:`fitgpp.analysis.metrics.value_range`), and the ranges are right: no value of a run falls
outside its quantity's range, and none is narrower than the quantity (issue 35: RQ6's net was
cut at -100 % as if it were a change; the GPU utilization had no top)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fitgpp.analysis.metrics import (CHANGE_RANGE, METRICS, NET_RANGE, cut_interval,
                                     value_range)


def test_the_gpu_utilization_is_at_most_1_and_an_interval_past_it_is_cut_and_marked():
    assert value_range("gpu_util") == value_range("gpu_util_hi") == (0.0, 1.0)
    iv = cut_interval(0.99, 0.97, 1.01, value_range("gpu_util"))
    assert (iv.high, iv.clipped_high) == (1.0, True) and iv.text() == "0.99 [0.97, 1*]"


def test_a_net_of_changes_has_no_floor_but_a_change_has():
    assert NET_RANGE == (-math.inf, 2.0) and value_range("net_0_lo") == NET_RANGE
    assert value_range("change_te_p95") == CHANGE_RANGE
    assert cut_interval(-3.92, -8.0, 0.15, value_range("net")).clipped is False


def test_every_declared_metric_of_a_run_lies_in_its_range():
    """A small study over every declared metric: each value of its table (means and each
    seed's changes) lies in the quantity's declared range."""
    from fitgpp.studies.base import Study
    from fitgpp.studies.size import Size
    st = Study(key="ranges", title="ranges", question="q",
               policies={"fifo": {}, "fitgpp": {}, "rand": {}}, model="paper-wide-te",
               columns=tuple(METRICS))
    o = st.run(Size(n_jobs=150, seeds=(0, 1, 2)), cache=False)
    t = o.table()
    checked = 0
    for c in t.columns:
        if not pd.api.types.is_float_dtype(t[c]) or c.endswith(("_lo", "_hi")):
            continue
        lo, hi = value_range(c)
        x = t[c].dropna().to_numpy()
        assert ((x >= lo - 1e-12) & (x <= hi + 1e-12)).all(), (c, x.min(), x.max(), (lo, hi))
        checked += (lo, hi) != (-math.inf, math.inf)
    assert checked >= len([m for m in METRICS.values() if m.lowest is not None])
    for conf in o.configurations():
        for name, m in METRICS.items():
            if m.vs_baseline and m.cls:
                ch = o.change(conf, m)
                assert (np.asarray(ch)[~np.isnan(ch)] >= CHANGE_RANGE[0]).all(), (name, ch)
