"""Queries that arrive together are encoded together (dynamic batching for a server).

Encoding one query costs nearly as much as encoding a batch of eight (the
offline default embedder: ~40 ms alone, ~7 ms each in a batch of eight on two
cores), so when many threads ask at once, ``QueryBatcher`` lets one of them
(the leader) encode every waiting query in one call while the others wait for
their row. When the leader has its own vector it hands the lead to the oldest
waiting caller, so nobody serves others for long. The encoder runs in one
thread at a time, as the embedders require.

A vector encoded in a batch equals the one encoded alone within float32
rounding (embedders are batch-invariant to cosine 0.9999; the offline default
differs by ~2e-7 per component), so a ranking can differ only where two
scores tie to that precision.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

MAX_BATCH = 32


class _Slot:
    __slots__ = ("text", "done", "lead", "vector", "error")

    def __init__(self, text: str):
        self.text = text
        self.done = threading.Event()
        self.lead = False  # woken to lead, not with a result
        self.vector: np.ndarray | None = None
        self.error: BaseException | None = None


class QueryBatcher:
    """``batcher(query) -> vector``, safe to call from many threads; ``encode(texts) -> rows`` runs one call at a time."""

    def __init__(self, encode: Callable[[Sequence[str]], np.ndarray], max_batch: int = MAX_BATCH):
        self._encode = encode
        self.max_batch = max(1, int(max_batch))
        self._lock = threading.Lock()
        self._pending: list[_Slot] = []
        self._busy = False
        self.batches = 0  # encoder calls made
        self.encoded = 0  # queries encoded

    def __call__(self, text: str) -> np.ndarray:
        slot = _Slot(text)
        with self._lock:
            self._pending.append(slot)
            leading = not self._busy
            self._busy = True
        if not leading:
            slot.done.wait()
            if not slot.lead:
                return self._result(slot)
        while slot.vector is None and slot.error is None:
            with self._lock:
                batch, self._pending = self._pending[: self.max_batch], self._pending[self.max_batch :]
            self._run(batch)
        with self._lock:  # hand the lead on, or free the encoder
            if self._pending:
                heir = self._pending[0]
                heir.lead = True
                heir.done.set()
            else:
                self._busy = False
        return self._result(slot)

    def _run(self, batch: list[_Slot]) -> None:
        try:
            vectors = self._encode([s.text for s in batch])
            for s, v in zip(batch, vectors):
                s.vector = v
        except BaseException as exc:  # every caller in the batch gets the error
            for s in batch:
                s.error = exc
        self.batches += 1
        self.encoded += len(batch)
        for s in batch:
            s.lead = False
            s.done.set()

    @staticmethod
    def _result(slot: _Slot) -> np.ndarray:
        if slot.error is not None:
            raise slot.error
        return slot.vector
