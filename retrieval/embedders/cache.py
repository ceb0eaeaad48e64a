"""An embedding cache keyed by model id + the exact encoder input.

An unchanged leaf is never encoded twice: the key is a hash of the model id
and the full input text (breadcrumb included), so any byte of difference, or
another model, misses. SQLite in WAL mode, committed batch by batch, survives
a kill -9: a rerun finds every batch that finished before the kill.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from hichunk.errors import HichunkError
from hichunk.retrieval.embedders.base import Embedder, Progress
from hichunk.retrieval.faults import checkpoint


def cache_key(model_id: str, text: str) -> bytes:
    return hashlib.sha256(model_id.encode("utf-8") + b"\x00" + text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """Vectors by key in one SQLite file (safe for one writer and many readers)."""

    def __init__(self, path: str):
        self.path = path
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self.db = sqlite3.connect(path, timeout=60, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        except sqlite3.Error as exc:
            raise HichunkError(f"cannot open the embedding cache {path}: {exc}") from exc

    def get_many(self, keys: Sequence[bytes], dim: int) -> dict[bytes, np.ndarray]:
        out: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            rows = self.db.execute(f"SELECT key, vec FROM vectors WHERE key IN ({','.join('?' * len(chunk))})", chunk)
            for key, blob in rows:
                vec = np.frombuffer(blob, dtype=np.float32)
                if len(vec) == dim:
                    out[bytes(key)] = vec
        return out

    def put_many(self, items: Iterable[tuple[bytes, np.ndarray]]) -> None:
        rows = [(k, np.ascontiguousarray(v, dtype=np.float32).tobytes()) for k, v in items]
        with self.db:  # one transaction per batch
            self.db.executemany("INSERT OR REPLACE INTO vectors (key, vec) VALUES (?, ?)", rows)

    def __len__(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        self.db.close()


class CachedEmbedder:
    """Wraps an embedder: passages are looked up first, misses encoded in batches and stored."""

    def __init__(self, embedder: Embedder, cache: EmbeddingCache, flush_every: int = 256):
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

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        keys = [cache_key(self.id, t) for t in texts]
        found = self.cache.get_many(keys, self.dim)
        waiting = Counter(k for k in keys if k not in found)  # texts per missing key
        self.last_missed = np.fromiter((k in waiting for k in keys), dtype=bool, count=len(keys))
        missing = list(waiting)
        text_of = {k: t for k, t in zip(keys, texts)}
        self.hits += len(texts) - sum(waiting.values())
        if progress is not None:
            progress(len(texts) - sum(waiting.values()))
        # encode in length order across the whole set; store every flush_every texts
        missing.sort(key=lambda k: (-len(text_of[k]), k))
        for start in range(0, len(missing), self.flush_every):
            part = missing[start : start + self.flush_every]
            started = time.perf_counter()
            vectors = self.embedder.embed_passages([text_of[k] for k in part])
            self.encode_seconds += time.perf_counter() - started
            self.cache.put_many(zip(part, vectors))
            found.update(zip(part, vectors))
            self.encoded += len(part)
            checkpoint("cache-flush")
            if progress is not None:
                progress(sum(waiting[k] for k in part))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, k in enumerate(keys):
            out[i] = found[k]
        return out
