"""What every embedder offers, and the batching they share.

Vectors are float32 and L2-normalised, so a dot product is a cosine. Texts
are sorted by length before batching (padding dominates the cost of a
transformer batch) and put back in input order afterwards. Batches are
budgeted by size: a batch holds ``batch_size`` texts of up to
``BUDGET_CHARS_PER_TEXT`` characters, more texts when they are shorter (up to
four times as many), fewer when they are longer, so each batch costs about
the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

Progress = Callable[[int], None]  # called with the number of texts just encoded
BUDGET_CHARS_PER_TEXT = 1024  # a batch's padded size: batch_size x this many characters


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors. ``id`` names the model and settings exactly (it keys the cache)."""

    id: str
    dim: int

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised; passage instruction applied."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised; query instruction applied."""
        ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class BatchedEmbedder:
    """Length-sorted batching around a backend's ``_encode(texts, is_query)``.

    Subclasses set ``id``, ``dim`` and ``query_prefix``/``passage_prefix``
    (instructions some models need) and implement ``_encode`` for one batch.
    """

    id: str = ""
    dim: int = 0
    query_prefix: str = ""
    passage_prefix: str = ""

    def __init__(self, batch_size: int = 32):
        self.batch_size = max(1, int(batch_size))

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        raise NotImplementedError

    def plan_batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """Indexes of texts of these lengths, longest first, cut into size-budgeted batches."""
        order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
        budget, most = self.batch_size * BUDGET_CHARS_PER_TEXT, 4 * self.batch_size
        out: list[list[int]] = []
        for i in order:  # the first text of a batch is its longest: it sets the padded width
            if not out or len(out[-1]) >= most or (len(out[-1]) + 1) * max(lengths[out[-1][0]], 1) > budget:
                out.append([])
            out[-1].append(i)
        return out

    def _run(self, texts: Sequence[str], is_query: bool, progress: Progress | None) -> np.ndarray:
        prefix = self.query_prefix if is_query else self.passage_prefix
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for rows in self.plan_batches([len(prefix) + len(t) for t in texts]):
            out[rows] = normalise(self._encode([prefix + texts[i] for i in rows], is_query))
            if progress is not None:
                progress(len(rows))
        return out

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        return self._run(texts, False, progress)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, True, None)
