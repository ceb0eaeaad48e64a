"""The index: chunk trees, leaf vectors and metadata, in a crash-safe directory or in memory.

``index.Index`` is the facade; ``config`` holds its settings, ``ingest`` turns
documents and trees into leaf vectors (``distributed``: the same on Ray),
``disk``, ``memory`` and ``lance`` (a LanceDB database) keep the committed state (``store`` is their shared
contract), ``candidates`` ranks leaves for a query (exact, or through the
``ann`` graph), ``sharded`` searches several indexes as one, ``reports`` says
what a write did.
"""

from hichunk.retrieval.index.config import DEFAULT_METHOD, IndexConfig
from hichunk.retrieval.index.index import Index, doc_id_for
from hichunk.retrieval.index.reports import DocReport, UpdateReport
from hichunk.retrieval.index.sharded import ShardedIndex

__all__ = ["DEFAULT_METHOD", "DocReport", "Index", "IndexConfig", "ShardedIndex", "UpdateReport", "doc_id_for"]
