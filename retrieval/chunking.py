"""Chunkers by name with their retrieval-side part: the semantic chunker embeds sentences.

``hichunk.chunkers`` sits below this layer and cannot load an embedder, so callers that
chunk by method name (the index, the benchmarks, the CLI, ``hichunk.chunk``) come here.
"""

from __future__ import annotations

from hichunk.chunkers import Chunker, ChunkOptions
from hichunk.chunkers import get_chunker as _core_get_chunker
from hichunk.retrieval.embedders import Embedder, load_embedder


def get_chunker(method: str, options: ChunkOptions | None = None, embedder: Embedder | None = None,
                **extra) -> Chunker:
    """The chunker for ``method``; ``semantic`` embeds with ``embedder`` (default: the offline default embedder)."""
    if method == "semantic":
        extra["embedder"] = embedder if embedder is not None else load_embedder(None)
    return _core_get_chunker(method, options, **extra)
