"""hichunk: hierarchical chunking and Auto-Merge retrieval for RAG."""

__version__ = "0.1.0"
