"""Search: rank the pool's leaves (the index's backend), fill the budget, Auto-Merge, assemble the context."""

from __future__ import annotations

import numpy as np

from hichunk.retrieval.search.automerge import MODES, FillOptions, FillResult, Merge, fill_context
from hichunk.retrieval.search.context import Passage, SearchResult, assemble
from hichunk.retrieval.search.query import MAX_QUERY_CHARS, check_query
from hichunk.retrieval.search.ranking import ranked_rows, top_rows
from hichunk.retrieval.search.view import TreeView
from hichunk.tokens import Tokenizer, load_tokenizer


def search_index(index, query: str, options: FillOptions | None = None, tokenizer: Tokenizer | None = None,
                 docs: list[str] | None = None) -> SearchResult:
    """Encode ``query`` and search ``index`` (a ``hichunk.retrieval.index.Index``)."""
    query = check_query(query)
    vector = index.embed_query(query)
    return search_vector(index, vector, query, options, tokenizer, docs)


def search_vector(index, vector: np.ndarray, query: str = "", options: FillOptions | None = None,
                  tokenizer: Tokenizer | None = None, docs: list[str] | None = None) -> SearchResult:
    """Search with an already encoded query: ranking, budget fill, Auto-Merge and assembly.

    ``index`` is anything with ``config``, ``ranked(vector, docs)`` (``(doc, leaf node, score)`` best
    first, exact or approximate) and ``view(doc, tokenizer)``: an ``Index`` or a ``ShardedIndex``."""
    options = options or FillOptions()
    tokenizer = tokenizer or load_tokenizer(index.config.tokenizer or None)
    candidates = index.ranked(np.asarray(vector, dtype=np.float32), docs)

    views: dict[str, TreeView] = {}

    def view(doc: str) -> TreeView:  # the walk asks often; the index's cache is shared across queries
        found = views.get(doc)
        if found is None:
            found = views[doc] = index.view(doc, tokenizer)
        return found

    result = fill_context(candidates, view, options, tokenizer)
    return assemble(query, result, view, options, tokenizer)


__all__ = ["MAX_QUERY_CHARS", "MODES", "FillOptions", "FillResult", "Merge", "Passage", "SearchResult", "TreeView",
           "assemble", "check_query", "fill_context", "ranked_rows", "search_index", "search_vector", "top_rows"]
