"""Retrieval: embedders, a persistent index, greedy budget fill with Auto-Merge.

    from hichunk.retrieval import Index, IndexConfig, FillOptions

    index = Index.create("./idx", IndexConfig())          # or Index.open("./idx"), or Index.memory(IndexConfig())
    index.add_paths(["docs/"])                            # or index.add_trees([(doc_id, tree), ...])
    result = index.search("how do I ...?", FillOptions(budget=4096))
    print(result.context)
    for p in result.passages:
        print(p.doc, p.path, (p.start, p.end), p.score, p.merged)
"""

from hichunk.retrieval.embedders import DEFAULT_EMBEDDER, load_embedder
from hichunk.retrieval.index import DEFAULT_METHOD, Index, IndexConfig, ShardedIndex, UpdateReport
from hichunk.retrieval.inputs import encoder_inputs
from hichunk.retrieval.search import FillOptions, Passage, SearchResult

__all__ = ["DEFAULT_EMBEDDER", "DEFAULT_METHOD", "FillOptions", "Index", "IndexConfig", "Passage", "SearchResult",
           "ShardedIndex", "UpdateReport", "encoder_inputs", "load_embedder"]
