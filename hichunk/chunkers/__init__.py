"""Chunkers: one entry point per method, all returning a ChunkTree."""

from __future__ import annotations

import importlib

from hichunk.chunkers.base import Chunker, ChunkOptions
from hichunk.document.model import Document
from hichunk.errors import HichunkError
from hichunk.tree.model import ChunkTree

DEFAULT_METHOD = "hichunk"  # the split-point model; everywhere: library, CLI, index

# method -> "module:class"; imported on use so cheap methods stay cheap.
METHODS: dict[str, str] = {
    "structure": "hichunk.chunkers.structure:StructureChunker",
    "fixed": "hichunk.chunkers.fixed:FixedChunker",
    "recursive": "hichunk.chunkers.recursive:RecursiveChunker",
    "cdc": "hichunk.chunkers.cdc:CDCChunker",
    "hichunk": "hichunk.chunkers.hichunk:HichunkChunker",
    "semantic": "hichunk.chunkers.semantic:SemanticChunker",
}

# Methods whose chunker takes progress=True: a bar on stderr while one long document is chunked.
PROGRESS_METHODS = ("hichunk", "semantic")


def check_method(method: str) -> str:
    """``method`` when it names a chunker (see ``METHODS``), else HichunkError; imports nothing."""
    if method not in METHODS:
        raise HichunkError(f"unknown chunking method {method!r} (choose from {', '.join(METHODS)})")
    return method


def get_chunker(method: str, options: ChunkOptions | None = None, **extra) -> Chunker:
    """The chunker for a method name (see ``METHODS``); ``extra`` goes to chunkers that take more
    (``hichunk``: model, engine settings, prediction cache, trace callback, progress)."""
    module, cls = METHODS[check_method(method)].split(":")
    return getattr(importlib.import_module(module), cls)(options or ChunkOptions(), **extra)


def chunk_document(doc: Document, method: str = DEFAULT_METHOD, options: ChunkOptions | None = None, **extra) -> ChunkTree:
    """Chunk a loaded document with the named method."""
    return get_chunker(method, options, **extra).chunk(doc)


__all__ = ["DEFAULT_METHOD", "METHODS", "PROGRESS_METHODS", "ChunkOptions", "Chunker", "check_method", "chunk_document", "get_chunker"]
