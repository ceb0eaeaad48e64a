"""hichunk: hierarchical chunking and Auto-Merge retrieval for RAG.

    import hichunk

    tree = hichunk.chunk("report.md")                  # a path, a string of text, or a loaded Document
    index = hichunk.Index.create("./idx")              # or hichunk.Index.open("./idx")
    index.add_paths(["docs/"])
    result = index.search("how do I ...?", hichunk.FillOptions(budget=4096))

Names are loaded on first use, so ``import hichunk.tree`` alone stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    "chunk": "hichunk.api",
    "ChunkOptions": "hichunk.chunkers",
    "ChunkTree": "hichunk.tree",
    "Document": "hichunk.document",
    "load_document": "hichunk.document",
    "parse_document": "hichunk.document",
    "HichunkError": "hichunk.errors",
    "Index": "hichunk.retrieval",
    "IndexConfig": "hichunk.retrieval",
    "ShardedIndex": "hichunk.retrieval",
    "FillOptions": "hichunk.retrieval",
    "SearchResult": "hichunk.retrieval",
    "Passage": "hichunk.retrieval",
}

__all__ = ["ChunkOptions", "ChunkTree", "Document", "FillOptions", "HichunkError", "Index", "IndexConfig", "Passage",
           "SearchResult", "ShardedIndex", "chunk", "load_document", "parse_document"]

if TYPE_CHECKING:
    from hichunk.api import chunk
    from hichunk.chunkers import ChunkOptions
    from hichunk.document import Document, load_document, parse_document
    from hichunk.errors import HichunkError
    from hichunk.retrieval import FillOptions, Index, IndexConfig, Passage, SearchResult, ShardedIndex
    from hichunk.tree import ChunkTree


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hichunk' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
