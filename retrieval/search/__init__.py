"""Search: rank the pool's leaves by dot product, fill the budget, Auto-Merge, assemble the context."""

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
    """Search with an already encoded query: ranking, budget fill, Auto-Merge and assembly."""
    options = options or FillOptions()
    tokenizer = tokenizer or load_tokenizer(index.config.tokenizer or None)
    vectors, row_doc, row_node, names = index.pool()
    rows = None
    if docs is not None:
        slots = [names.index(d) for d in docs if d in index.docs]
        missing = [d for d in docs if d not in index.docs]
        if missing:
            from hichunk.errors import HichunkError

            raise HichunkError(f"no document {missing[0]!r} in the index")
        rows = np.flatnonzero(np.isin(row_doc, slots))
    scores = vectors @ vector if rows is None else vectors[rows] @ vector
    real = (lambda r: r) if rows is None else (lambda r: int(rows[r]))

    def candidates():
        for r in ranked_rows(scores):
            row = real(r)
            yield names[row_doc[row]], int(row_node[row]), float(scores[r])

    views: dict[str, TreeView] = {}

    def view(doc: str) -> TreeView:  # the walk asks often; the index's cache is shared across queries
        found = views.get(doc)
        if found is None:
            found = views[doc] = index.view(doc, tokenizer)
        return found

    result = fill_context(candidates(), view, options, tokenizer)
    return assemble(query, result, view, options, tokenizer)


__all__ = ["MAX_QUERY_CHARS", "MODES", "FillOptions", "FillResult", "Merge", "Passage", "SearchResult", "TreeView",
           "assemble", "check_query", "fill_context", "ranked_rows", "search_index", "search_vector", "top_rows"]
