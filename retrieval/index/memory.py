"""An index store that lives in memory: the same commits as an index directory, nothing written to disk.

For pools that are built, searched and dropped within one run (benchmarks,
notebooks, tests). Trees are kept as the objects given; a commit swaps in new
dictionaries at once, so a failure while staging leaves the store as it was.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

import numpy as np

from hichunk.kvcache import MEMORY
from hichunk.retrieval.index.ann import Graph, backend
from hichunk.retrieval.index.candidates import KeyTable
from hichunk.retrieval.index.config import IndexConfig
from hichunk.retrieval.index.store import Staged, gather_pool
from hichunk.tree.model import ChunkTree


class MemoryStore:
    """Documents, trees and leaf vectors in dictionaries; the embedding cache at ``cache_path`` (in memory by default)."""

    def __init__(self, config: IndexConfig, cache_path: str = MEMORY):
        self.config = config
        self.cache_path = cache_path
        self.docs: dict[str, dict] = {}
        self.generation = 0
        self.embedder_id: str | None = None
        self._trees: dict[str, ChunkTree] = {}
        self._rows: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def tree(self, doc: str) -> ChunkTree:
        return self._trees[doc]

    def rows(self, doc: str) -> tuple[np.ndarray, np.ndarray]:
        return self._rows[doc]

    def key_table(self) -> KeyTable:
        """Every live leaf in pool order; its graph key is its pool row."""
        pool = gather_pool(self)
        keys = np.arange(len(pool.row_node), dtype=np.uint64)
        return KeyTable(keys, pool.row_doc, pool.row_node, pool.names, lambda pos: pool.vectors[pos],
                        pool.vectors.shape[1])

    def ann_graph(self, table: KeyTable) -> Graph:
        """A graph (or lists) of the live rows, built now (an in-memory index builds one per commit, when first searched)."""
        return backend(self.config.search)[0].build(table.keys, table.fetch(np.arange(len(table))), None, table.dim)

    def writing(self) -> AbstractContextManager[None]:
        return nullcontext()

    def write(self, staged: list[Staged]) -> list[Staged]:
        return list(staged)

    def commit(self, written: list[list[Staged]], removed: set[str], embedder_id: str | None) -> None:
        docs, trees, rows = dict(self.docs), dict(self._trees), dict(self._rows)
        for doc in removed:
            for table in (docs, trees, rows):
                table.pop(doc, None)
        for s in (s for batch in written for s in batch):
            docs[s.doc] = {"source": s.source, "sha256": s.sha256, "leaves": int(len(s.nodes))}
            trees[s.doc] = s.tree
            rows[s.doc] = (np.asarray(s.vectors, dtype=np.float32), np.asarray(s.nodes, dtype=np.int32))
        self.docs, self._trees, self._rows = docs, trees, rows
        self.embedder_id = embedder_id or self.embedder_id
        self.generation += 1
