"""Retrieval: embedders, a persistent index, greedy budget fill with Auto-Merge.

    from hichunk.retrieval import Index, IndexConfig, FillOptions

    index = Index.create("./idx", IndexConfig())          # or Index.open("./idx"), or Index.memory(IndexConfig())
    index.add_paths(["docs/"])                            # or index.add_trees([(doc_id, tree), ...])
    result = index.search("how do I ...?", FillOptions(budget=4096))
    print(result.context)
    for p in result.passages:
        print(p.doc, p.path, (p.start, p.end), p.score, p.merged)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# name -> module; imported on first use so that `hichunk.retrieval.embedders` (e.g. for the CLI's
# defaults) does not pull in the whole index.
_EXPORTS = {
    "DEFAULT_EMBEDDER": "hichunk.retrieval.embedders", "load_embedder": "hichunk.retrieval.embedders",
    "DEFAULT_METHOD": "hichunk.retrieval.index", "Index": "hichunk.retrieval.index",
    "IndexConfig": "hichunk.retrieval.index", "ShardedIndex": "hichunk.retrieval.index",
    "UpdateReport": "hichunk.retrieval.index", "encoder_inputs": "hichunk.retrieval.inputs",
    "FillOptions": "hichunk.retrieval.search", "Passage": "hichunk.retrieval.search",
    "SearchResult": "hichunk.retrieval.search",
}


if TYPE_CHECKING:  # what type checkers and the API docs (griffe reads imports statically) resolve
    from hichunk.retrieval.embedders import DEFAULT_EMBEDDER, load_embedder
    from hichunk.retrieval.index import DEFAULT_METHOD, Index, IndexConfig, ShardedIndex, UpdateReport
    from hichunk.retrieval.inputs import encoder_inputs
    from hichunk.retrieval.search import FillOptions, Passage, SearchResult


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


__all__ = ["DEFAULT_EMBEDDER", "DEFAULT_METHOD", "FillOptions", "Index", "IndexConfig", "Passage", "SearchResult",
           "ShardedIndex", "UpdateReport", "encoder_inputs", "load_embedder"]
