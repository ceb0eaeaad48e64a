"""The persistent index: chunk trees, leaf vectors and metadata in one directory."""

from hichunk.retrieval.index.store import DEFAULT_METHOD, DocReport, Index, IndexConfig, UpdateReport, doc_id_for

__all__ = ["DEFAULT_METHOD", "DocReport", "Index", "IndexConfig", "UpdateReport", "doc_id_for"]
