"""The rag benchmark's backend on the retrieval package: embedders, ranking, budget fill, Auto-Merge.

Leaves are embedded from ``hichunk.retrieval.inputs.encoder_inputs`` (the exact text
the index would embed); a question ranks the leaves of its own document by
dot product; ``hichunk.retrieval.search`` fills the budget (paper Auto-Merge rule by
default, ``mode="reference"`` for the published code's variant) and writes
the context.
"""

from __future__ import annotations

import sys
from typing import Sequence

import numpy as np
from tqdm import tqdm

from hichunk.errors import HichunkError
from hichunk.tokens import Tokenizer
from hichunk.tree.model import ChunkTree


class RetrievalBackend:
    """``cache_path``: an embedding cache file (``hichunk.kvcache.KVCache``), so a rerun embeds only
    leaves it has not seen (methods that share leaves, or a rerun after adding a method, cost nothing more)."""

    def __init__(self, tokenizer: Tokenizer, embedder: str | None = None, mode: str = "paper", fill: str = "truncate",
                 cache_path: str | None = None):
        try:
            from hichunk.kvcache import KVCache
            from hichunk.retrieval.embedders import CachedEmbedder, load_embedder
        except ImportError:
            raise HichunkError("the rag benchmark needs the retrieval package, which this installation lacks") from None
        self.tokenizer = tokenizer
        self.embedder = load_embedder(embedder)
        if cache_path:
            self.embedder = CachedEmbedder(self.embedder, KVCache(cache_path, "embedding cache"))
        self.mode, self.fill = mode, fill
        self.id = {"embedder": self.embedder.id, "auto_merge_mode": mode, "fill": fill, "tokenizer": tokenizer.name}

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.embed_queries(list(texts))

    def prepare(self, trees: dict[str, ChunkTree], progress: bool) -> dict[str, object]:
        from hichunk.retrieval.inputs import encoder_inputs
        from hichunk.retrieval.search import TreeView

        ids = sorted(trees)
        inputs = {d: encoder_inputs(trees[d]) for d in ids}
        flat = [t for d in ids for t in inputs[d]]
        with tqdm(total=len(flat), desc="embedding leaves", unit="leaf", disable=not progress, file=sys.stderr) as bar:
            vectors = self.embedder.embed_passages(flat, bar.update) if flat else np.zeros((0, 1), np.float32)
        out: dict[str, object] = {}
        row = 0
        for d in ids:
            n = len(inputs[d])
            leaf_ids = [node.id for node in trees[d].leaves()]
            out[d] = (d, vectors[row : row + n], leaf_ids, TreeView.build(d, trees[d], self.tokenizer))
            row += n
        return out

    def rank(self, handle: object, query_vector: np.ndarray, top_k: int) -> list[tuple[int, float]]:
        from hichunk.retrieval.search import top_rows

        _, vectors, leaf_ids, _ = handle
        if not len(leaf_ids):
            return []
        scores = vectors @ query_vector
        return [(leaf_ids[r], float(scores[r])) for r in top_rows(scores, top_k)]

    def context(self, handle: object, query: str, ranking: list[tuple[int, float]], budget: int, auto_merge: bool) -> str:
        from hichunk.retrieval.search import FillOptions, assemble, fill_context

        doc, _, _, view = handle
        options = FillOptions(budget=budget, auto_merge=auto_merge, mode=self.mode, fill=self.fill,
                              max_candidates=max(1, len(ranking)))
        result = fill_context(((doc, leaf, score) for leaf, score in ranking), lambda _d: view, options, self.tokenizer)
        return assemble(query, result, lambda _d: view, options, self.tokenizer).context
