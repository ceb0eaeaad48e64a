"""What an index keeps, wherever it keeps it: committed documents with their trees and leaf vectors.

``DirectoryStore`` (``disk.py``) keeps them in crash-safe files, ``MemoryStore``
(``memory.py``) in memory, ``LanceStore`` (``lance.py``) in a LanceDB database
(embedded in the index directory, or by URI); a store that can search itself
(``ranked(vector, docs)``, as ``LanceStore``) is the index's ranker. The ``Index`` facade works on either through this
contract: it stages new versions (``Staged``), has the store write them
(``write``: files a commit will refer to, invisible until then) and commits
any number of written batches, removals included, in one step.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from hichunk.retrieval.index.config import IndexConfig
from hichunk.tree.model import ChunkTree

if TYPE_CHECKING:
    from hichunk.retrieval.index.ann import Graph
    from hichunk.retrieval.index.candidates import KeyTable


@dataclass
class Staged:
    """One document's new version, ready to commit: its tree and one vector per leaf, in leaf order."""

    doc: str
    tree: ChunkTree
    vectors: np.ndarray  # (leaves, dim) float32, L2-normalised
    nodes: np.ndarray  # the tree node id of each row
    source: str
    sha256: str


Written = Any  # what ``Store.write`` returns and ``Store.commit`` takes; each store's own


class Pool(NamedTuple):
    """Every live leaf of an index: one row each, documents in id order."""

    vectors: np.ndarray  # (rows, dim) float32
    row_doc: np.ndarray  # row -> slot in ``names``
    row_node: np.ndarray  # row -> tree node id
    names: list[str]  # document ids, sorted


class Store(Protocol):
    config: IndexConfig
    cache_path: str  # where the embedding cache lives (":memory:" for none on disk)

    @property
    def docs(self) -> dict[str, dict]:
        """Committed documents: id -> {"source", "sha256", "leaves", ...}."""
        ...

    @property
    def generation(self) -> int:
        """Changes whenever the committed state does (caches of trees and vectors key on it)."""
        ...

    @property
    def embedder_id(self) -> str | None:
        """The id of the embedder the vectors were made with (None before the first commit)."""
        ...

    def tree(self, doc: str) -> ChunkTree: ...

    def rows(self, doc: str) -> tuple[np.ndarray, np.ndarray]:
        """(vectors, node ids) of a committed document's leaves."""
        ...

    def writing(self) -> AbstractContextManager[None]:
        """Hold the store for one writer and see the latest committed state; commits happen inside."""
        ...

    def write(self, staged: list[Staged]) -> Written:
        """Keep ``staged`` for a later commit (a directory writes its immutable files now); nothing is visible yet."""
        ...

    def commit(self, written: list[Written], removed: set[str], embedder_id: str | None) -> None:
        """Make the ``written`` batches and the removal of ``removed`` visible at once (all or nothing)."""
        ...

    def key_table(self) -> KeyTable:
        """Search "ann" or "ivf": every live leaf with its graph key, document and node, and a way to read its vector."""
        ...

    def ann_graph(self, table: KeyTable) -> Graph:
        """Search "ann" or "ivf": the graph (or lists) of exactly ``table``'s keys (the committed one, checked, or
        one built now)."""
        ...


def gather_pool(store: Store) -> Pool:
    """All committed leaf vectors in one matrix, documents in id order."""
    names = sorted(store.docs)
    parts = [store.rows(doc) for doc in names]
    dim = next((v.shape[1] for v, _ in parts if v.ndim == 2), 0)
    n = sum(len(nodes) for _, nodes in parts)
    vectors = np.zeros((n, dim), dtype=np.float32)
    row_node = np.zeros(n, dtype=np.int32)
    row_doc = np.zeros(n, dtype=np.int32)
    row = 0
    for slot, (vec, nodes) in enumerate(parts):
        vectors[row : row + len(nodes)] = vec
        row_node[row : row + len(nodes)] = nodes
        row_doc[row : row + len(nodes)] = slot
        row += len(nodes)
    return Pool(vectors, row_doc, row_node, names)
