"""Exact ranking by dot product, produced lazily in growing blocks.

A query rarely needs more than a few dozen leaves to fill its budget, so the
full sort of a large pool is avoided: the top k are picked with a partition
(O(n)), sorted, and k grows only when the walk asks for more. Ties are broken
by row index, so the order is total and the same whatever the block sizes.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

FIRST_BLOCK = 64
GROWTH = 4


def top_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """Row indexes of the ``k`` best scores, best first, ties by smaller row."""
    n = len(scores)
    if k >= n:
        candidates = np.arange(n)
    else:
        kth = np.partition(scores, n - k)[n - k]  # the k-th largest value
        candidates = np.flatnonzero(scores >= kth)
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order][:k]


def ranked_rows(scores: np.ndarray, first_block: int = FIRST_BLOCK) -> Iterator[int]:
    """All rows by descending score (ties by row), computed block by block as they are consumed."""
    done = 0
    k = first_block
    while done < len(scores):
        rows = top_rows(scores, k)
        for row in rows[done:]:
            yield int(row)
        done = len(rows)
        k *= GROWTH
