"""Ranked candidates for a query vector: ``(document, leaf node, score)``, best first, made lazily.

This is what Auto-Merge walks (``hichunk.retrieval.search.fill_context``), whatever the backend:

* ``ExactRanker``: dot products with every live leaf (or with the leaves of the documents asked for),
  ranked in growing blocks (``hichunk.retrieval.search.ranking``).
* ``AnnRanker``: the HNSW graph (``ann``), searched with a candidate list of ``EXPANSION`` x k, proposes
  ``OVERSAMPLE`` x k candidates, which are scored exactly from the float32 vectors and ranked; k starts at ``FIRST_BLOCK`` and grows when the walk
  asks for more. Scores are exact dot products; only the candidate set is approximate.

Both order ties the same way: by document id, then leaf order (the pool's row order), so the two
backends, and several shards merged (``sharded``), give the same ranking when the candidates agree.
A query limited to some documents whose leaves are few (at most ``EXACT_BELOW`` rows, or
``EXACT_SHARE`` of the index) is answered exactly by either backend: scanning them costs less than
a filtered graph search, and is exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from hichunk.errors import HichunkError
from hichunk.retrieval.index.ann import EXPANSION, OVERSAMPLE, Fetch, Graph
from hichunk.retrieval.index.store import Pool
from hichunk.retrieval.search.ranking import GROWTH, ranked_rows

Candidate = tuple[str, int, float]  # (document id, leaf node id, score)

FIRST_BLOCK = 128  # leaves ranked by the first graph search (k of recall@k)
EXACT_BELOW = 20_000  # a query limited to documents with at most this many leaves scans them exactly
EXACT_SHARE = 0.1  # ... or to at most this share of the index's leaves


def _slots(names: list[str], docs: list[str]) -> np.ndarray:
    known = {name: slot for slot, name in enumerate(names)}
    missing = [d for d in docs if d not in known]
    if missing:
        raise HichunkError(f"no document {missing[0]!r} in the index")
    return np.array(sorted({known[d] for d in docs}), dtype=np.int32)


def _exact(names: list[str], row_doc: np.ndarray, row_node: np.ndarray, vectors: np.ndarray,
           vector: np.ndarray) -> Iterator[Candidate]:
    """All given rows by exact score; ties by row (rows come in document, then leaf order)."""
    if not len(row_doc):  # no leaves at all (an empty index has no vector dimension either)
        return
    scores = vectors @ vector
    for row in ranked_rows(scores):
        yield names[row_doc[row]], int(row_node[row]), float(scores[row])


class ExactRanker:
    """Exact search over a pool gathered in memory."""

    def __init__(self, pool: Pool):
        self.pool = pool

    def ranked(self, vector: np.ndarray, docs: list[str] | None = None) -> Iterator[Candidate]:
        vectors, row_doc, row_node, names = self.pool
        if docs is None:
            return _exact(names, row_doc, row_node, vectors, vector)
        rows = np.flatnonzero(np.isin(row_doc, _slots(names, docs)))
        return _exact(names, row_doc[rows], row_node[rows], vectors[rows], vector)


@dataclass
class KeyTable:
    """Every live leaf, in pool order (documents by id, then leaf order), with its graph key.

    ``fetch(positions)`` returns the float32 vectors of those entries (read from the segments of an
    index directory, which need not be in memory)."""

    keys: np.ndarray  # uint64 graph key per entry
    slots: np.ndarray  # int32 document slot in ``names``
    nodes: np.ndarray  # int32 tree node id
    names: list[str]
    fetch: Fetch
    dim: int

    def __post_init__(self) -> None:
        self._by_key = np.argsort(self.keys, kind="stable")
        self.sorted_keys = self.keys[self._by_key]

    def __len__(self) -> int:
        return len(self.keys)

    def positions(self, keys: np.ndarray) -> np.ndarray:
        """Entry positions of graph ``keys`` (which must be live keys)."""
        at = np.searchsorted(self.sorted_keys, keys)
        if len(keys) and (at.max() >= len(self.sorted_keys) or not np.array_equal(self.sorted_keys[at], keys)):
            raise HichunkError("the ANN graph returned a key the index does not hold; reopen the index")
        return self._by_key[at]


class AnnRanker:
    """Graph candidates re-scored exactly, in blocks that grow when the walk asks for more.

    ``expansion``: the graph search's candidate list, per leaf of the first block (recall against
    latency; docs/guides/scaling.md gives measured pairs)."""

    def __init__(self, graph: Graph, table: KeyTable, expansion: int = EXPANSION):
        self.graph, self.table, self.expansion = graph, table, expansion

    def ranked(self, vector: np.ndarray, docs: list[str] | None = None) -> Iterator[Candidate]:
        table = self.table
        allowed = None
        if docs is not None:
            allowed = np.isin(table.slots, _slots(table.names, docs))
            n_allowed = int(allowed.sum())
            if n_allowed <= max(EXACT_BELOW, EXACT_SHARE * len(table)):
                rows = np.flatnonzero(allowed)
                return _exact(table.names, table.slots[rows], table.nodes[rows], table.fetch(rows), vector)
        return self._graph_ranked(vector, allowed)

    def _graph_ranked(self, vector: np.ndarray, allowed: np.ndarray | None) -> Iterator[Candidate]:
        table, n = self.table, len(self.table)
        spread = n / max(int(allowed.sum()), 1) if allowed is not None else 1.0
        seen: set[int] = set()
        k = FIRST_BLOCK
        while True:
            count = int(np.ceil(OVERSAMPLE * k * spread))
            pos = table.positions(np.sort(self.graph.search(vector, count, int(self.expansion * FIRST_BLOCK * spread))))
            if allowed is not None:
                pos = pos[allowed[pos]]
            scores = table.fetch(pos) @ vector
            order = np.lexsort((table.nodes[pos], table.slots[pos], -scores))
            everything = count >= n
            for i in order if everything else order[:k]:
                p = int(pos[i])
                if p not in seen:
                    seen.add(p)
                    yield table.names[table.slots[p]], int(table.nodes[p]), float(scores[i])
            if everything:
                return
            k *= GROWTH
