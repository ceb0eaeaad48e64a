"""A deterministic fake embedder for tests where the real model adds nothing but time."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from hichunk.chunkers import ChunkOptions
from hichunk.document import Document
from hichunk.retrieval.chunking import get_chunker
from hichunk.retrieval.embedders import BatchedEmbedder
from hichunk.tree import ChunkTree

_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashEmbedder(BatchedEmbedder):
    """Bag of hashed words (and single CJK characters): texts sharing words get close vectors.

    Fully deterministic and independent of batch neighbours, so tests can compare
    exact vectors; ``calls`` counts the texts encoded.
    """

    id = "test-hash-64"
    dim = 64

    def __init__(self, batch_size: int = 16):
        super().__init__(batch_size)
        self.calls = 0

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        self.calls += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _TOKEN.findall(text.lower()):
                for piece in ([word] if word.isascii() else list(word)):
                    h = int.from_bytes(hashlib.blake2b(piece.encode(), digest_size=4).digest(), "little")
                    out[row, h % self.dim] += 1.0 if h & 1 << 31 else -1.0
            out[row, 0] += 1e-3  # never all zero
        return out


def chunk_document(doc: Document, method: str, options: ChunkOptions | None = None) -> ChunkTree:
    """Chunk by method name; the semantic chunker embeds with a ``HashEmbedder``."""
    return get_chunker(method, options, embedder=HashEmbedder()).chunk(doc)


class SlowHashEmbedder(HashEmbedder):
    """A ``HashEmbedder`` that takes ``delay`` seconds per batch, so a build lasts long enough to be disturbed."""

    def __init__(self, batch_size: int = 16, delay: float = 0.3):
        super().__init__(batch_size)
        self.delay = delay

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        import time

        time.sleep(self.delay)
        return super()._encode(texts, is_query)
