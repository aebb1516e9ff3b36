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
