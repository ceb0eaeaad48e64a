"""An embedding cache keyed by model id + the exact encoder input.

An unchanged leaf is never encoded twice: the key is a hash of the model id
and the full input text (breadcrumb included), so any byte of difference, or
another model, misses. Vectors are float32 bytes in a ``hichunk.kvcache.KVCache``
(its failure policy applies), committed batch by batch, so a rerun after a
kill -9 finds every batch that finished before the kill.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Sequence

import numpy as np

from hichunk.kvcache import KVCache
from hichunk.retrieval.embedders.base import Embedder, Progress
from hichunk.retrieval.faults import checkpoint


def cache_key(model_id: str, text: str) -> bytes:
    return hashlib.sha256(model_id.encode("utf-8") + b"\x00" + text.encode("utf-8", "surrogatepass")).digest()


class CachedEmbedder:
    """Wraps an embedder: passages are looked up first, misses encoded in batches and stored."""

    def __init__(self, embedder: Embedder, cache: KVCache, flush_every: int = 256):
        self.embedder = embedder
        self.cache = cache
        self.id, self.dim = embedder.id, embedder.dim
        self.flush_every = flush_every
        self.hits = 0
        self.encoded = 0
        self.encode_seconds = 0.0  # time spent inside the wrapped embedder
        self.last_missed = np.zeros(0, dtype=bool)  # per text of the last call: not found in the cache

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.embed_queries(texts)

    def lookup(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The cached vectors of those ``keys`` that are present (and of this embedder's size)."""
        found: dict[bytes, np.ndarray] = {}
        for key, blob in self.cache.get_many(keys).items():
            vector = np.frombuffer(blob, dtype=np.float32)
            if len(vector) == self.dim:
                found[key] = vector
        return found

    def store(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Keep vectors computed elsewhere (e.g. by Ray workers) under their keys, in one transaction."""
        self.cache.put_many((k, np.ascontiguousarray(v, dtype=np.float32).tobytes()) for k, v in zip(keys, vectors))

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        keys = [cache_key(self.id, t) for t in texts]
        found = self.lookup(keys)
        waiting = Counter(k for k in keys if k not in found)  # texts per missing key
        self.last_missed = np.fromiter((k in waiting for k in keys), dtype=bool, count=len(keys))
        missing = list(waiting)  # in order of first appearance
        text_of = {k: t for k, t in zip(keys, texts)}
        self.hits += len(texts) - sum(waiting.values())
        if progress is not None:
            progress(len(texts) - sum(waiting.values()))
        # encode in length order across the whole set (ties in input order, as BatchedEmbedder does);
        # store every flush_every texts
        missing.sort(key=lambda k: -len(text_of[k]))
        for start in range(0, len(missing), self.flush_every):
            part = missing[start : start + self.flush_every]
            started = time.perf_counter()
            if progress is None:
                vectors = self.embedder.embed_passages([text_of[k] for k in part])
            else:  # the wrapped embedder reports its batches; texts repeated in the input count at the end
                vectors = self.embedder.embed_passages([text_of[k] for k in part], progress)
            self.encode_seconds += time.perf_counter() - started
            self.store(part, vectors)
            found.update(zip(part, vectors))
            self.encoded += len(part)
            checkpoint("cache-flush")
            if progress is not None:
                progress(sum(waiting[k] for k in part) - len(part))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, k in enumerate(keys):
            out[i] = found[k]
        return out
