"""heap_remove keeps the heap a heap and takes out exactly the element asked for."""

import heapq
import random

import pytest

from fitgpp.sim.heap import heap_remove


@pytest.mark.parametrize("seed", range(30))
def test_heap_remove_any_slot(seed):
    rng = random.Random(seed)
    h = []
    for _ in range(rng.randint(1, 200)):
        heapq.heappush(h, rng.randint(0, 50))  # repeated values too
    want = sorted(h)
    while h:
        k = rng.randrange(len(h))
        want.remove(h[k])
        heap_remove(h, k)
        assert all(h[(j - 1) // 2] <= h[j] for j in range(1, len(h)))
        assert sorted(h) == want


def test_heap_remove_last_and_only():
    h = [3]
    heap_remove(h, 0)
    assert h == []
    h = [1, 2, 3]
    heap_remove(h, 2)
    assert h == [1, 2]


def test_waiting_dict_and_heap_take_the_same_jobs():
    from fitgpp.sim.heap import push_waiting, remove_waiting
    rng = random.Random(7)
    h, d = [], {}
    for i in range(300):
        push_waiting(h, i)
        push_waiting(d, i)
    for i in rng.sample(range(300), 200):
        remove_waiting(h, i)
        remove_waiting(d, i)
        assert sorted(h) == sorted(d) and h[0] == min(d)
    with pytest.raises(KeyError):
        remove_waiting(d, -1)
    with pytest.raises(ValueError):
        remove_waiting(h, -1)


def test_las_keeps_waiting_be_as_a_dict_and_fifo_as_a_heap():
    import numpy as np
    from fitgpp.sim.engine import Engine
    from fitgpp.sim.policies.fifo import Fifo
    from fitgpp.sim.policies.las import Las
    jobs = {k: np.array(v) for k, v in {
        "job_id": [0, 1], "submit": [0, 0], "te": [False, False], "gpu": [1, 1],
        "cpu_milli": [1, 1], "mem_mib": [1, 1], "work": [1, 1], "gp": [0, 0]}.items()}
    cap = np.array([[8, 100, 100]])
    assert type(Engine(jobs, cap, Las()).waiting_be) is dict
    assert type(Engine(jobs, cap, Fifo()).waiting_be) is list
