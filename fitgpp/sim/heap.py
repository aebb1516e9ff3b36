"""The engine's waiting BE jobs: a removal from the middle of a binary heap (``heapq`` has
none), and the two kinds of container the engine keeps them in."""

from __future__ import annotations

import heapq


def heap_remove(h: list, k: int) -> None:
    """Remove ``h[k]`` from the heap ``h`` (a ``heapq`` list) in O(log n): the last element
    takes its slot and moves up or down to where it belongs. (``remove`` then ``heapify``
    is O(n): each out-of-order start of a class-neutral policy cost O(waiting jobs).)"""
    last = h.pop()
    if k == len(h):
        return
    while k:  # up while it beats its parent
        p = (k - 1) >> 1
        if h[p] <= last:
            break
        h[k] = h[p]
        k = p
    n = len(h)
    while True:  # down while a child beats it (never after a move up)
        c = 2 * k + 1
        if c >= n:
            break
        if c + 1 < n and h[c + 1] < h[c]:
            c += 1
        if last <= h[c]:
            break
        h[k] = h[c]
        k = c
    h[k] = last


def push_waiting(h, i: int) -> None:
    """Job ``i`` joins the waiting BE jobs ``h``: a heap of indices, or a dict for a policy
    that starts them in its own order (``Policy.waiting_any_order``)."""
    if type(h) is dict:
        h[i] = None
    else:
        heapq.heappush(h, i)


def remove_waiting(h, i: int) -> None:
    """Waiting BE job ``i`` leaves ``h`` (see :func:`push_waiting`): a pop at the head of a
    heap (the FIFO and two-queue case), else a removal from its middle; from a dict, O(1)
    (a heap's removal finds the job first, O(waiting jobs) in C). KeyError or ValueError
    if ``i`` is not waiting."""
    if type(h) is dict:
        del h[i]
    elif h[0] == i:
        heapq.heappop(h)
    else:
        heap_remove(h, h.index(i))
