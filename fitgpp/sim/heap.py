"""A removal from the middle of a binary heap (``heapq`` has none)."""

from __future__ import annotations


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
