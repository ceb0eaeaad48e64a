"""hichunk's budget fill and Auto-Merge over the ranking of any vector store.

A framework's vector store (LlamaIndex, LangChain, Milvus, Qdrant, ...) holds the leaves and answers
top-k queries; a docstore holds the chunk trees. ``ranked_blocks`` turns repeated top-k answers with a
growing k into the lazy, best-first ``(document, leaf node, score)`` ranking the walk reads, ordered the
way an ``Index`` orders its own rows (score, then document id, then leaf order), and ``search_ranked``
runs the same fill and assembly ``Index.search`` runs. Given the same ranking, the context is the one
``Index.search`` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from hichunk.retrieval.search.automerge import FillOptions, fill_context
from hichunk.retrieval.search.context import SearchResult, assemble
from hichunk.retrieval.search.ranking import FIRST_BLOCK, GROWTH
from hichunk.retrieval.search.view import TreeView
from hichunk.tokens import Tokenizer, load_tokenizer
from hichunk.tree.model import ChunkTree

Hit = tuple[str, int, float]  # (document id, leaf node id, score as the store gives it)


def similarity_order(hits: Sequence[Hit]) -> list[Hit]:
    """Hits best first with ties by document id then leaf order; scores made "higher is better".

    Stores answer with similarities (higher first) or distances (lower first); the order they return
    tells which, and a distance becomes its negative so every score reads like a dot product."""
    if len(hits) > 1 and hits[0][2] < hits[-1][2]:  # ascending: distances
        hits = [(doc, node, -score) for doc, node, score in hits]
    return sorted(hits, key=lambda h: (-h[2], h[0], h[1]))


def ranked_blocks(top_k: Callable[[int], Sequence[Hit]], first: int = FIRST_BLOCK, growth: int = GROWTH,
                  limit: int = 1 << 20) -> Iterator[Hit]:
    """The best-first ranking from ``top_k(k)`` answers: k grows by ``growth`` when the walk asks for more
    than a block held; a hit is given once; the ranking ends when a store returns fewer than k."""
    seen: set[tuple[str, int]] = set()
    k = first
    while True:
        hits = list(top_k(k))
        for doc, node, score in similarity_order(hits):
            if (doc, node) not in seen:
                seen.add((doc, node))
                yield doc, node, score
        if len(hits) < k or k >= limit:
            return
        k *= growth


class TreeViews:
    """Search views of the trees a docstore holds, made once per (document, tokenizer)."""

    def __init__(self, load: Callable[[str], ChunkTree]):
        self.load = load
        self._views: dict[tuple[str, str], TreeView] = {}

    def __call__(self, doc: str, tokenizer: Tokenizer | None = None) -> TreeView:
        key = (doc, getattr(tokenizer, "name", ""))
        if key not in self._views:
            self._views[key] = TreeView.build(doc, self.load(doc), tokenizer)
        return self._views[key]


def search_ranked(query: str, candidates: Iterator[Hit], views: TreeViews, options: FillOptions | None = None,
                  tokenizer: Tokenizer | None = None) -> SearchResult:
    """Budget fill with Auto-Merge over ``candidates`` (best first) and context assembly, as ``Index.search``."""
    options = options or FillOptions()
    tokenizer = tokenizer or load_tokenizer(None)

    def view(doc: str) -> TreeView:
        return views(doc, tokenizer)

    return assemble(query, fill_context(candidates, view, options, tokenizer), view, options, tokenizer)
