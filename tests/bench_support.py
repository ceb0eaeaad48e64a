"""Test helpers for the benchmark runners: a lexical retrieval backend, a chunker that fails on demand."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from hichunk.chunkers.base import ChunkOptions
from hichunk.chunkers.structure import StructureChunker
from hichunk.errors import HichunkError
from hichunk.tree.model import ChunkTree

_WORD = re.compile(r"\w+")


class LexicalBackend:
    """Bag-of-words vectors over a fixed vocabulary; plain fill, or whole sections with Auto-Merge.

    Auto-Merge here is deliberately simple (a ranked leaf brings its whole own-text
    chunk when it fits): enough to make +AM differ from plain filling in tests.
    """

    id = {"embedder": "lexical-test"}

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.vocab: dict[str, int] = {}

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(4096, dtype=np.float32)
        for w in _WORD.findall(text.lower()):
            v[hash(w) % 4096] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts])

    def prepare(self, trees: dict[str, ChunkTree], progress: bool) -> dict[str, object]:
        out = {}
        for d, tree in trees.items():
            leaves = tree.leaves()
            vecs = np.stack([self._vec(tree.clean_text(leaf)) for leaf in leaves])
            out[d] = (tree, vecs, [leaf.id for leaf in leaves])
        return out

    def rank(self, handle, query_vector, top_k):
        _, vecs, ids = handle
        scores = vecs @ query_vector
        order = sorted(range(len(ids)), key=lambda i: (-scores[i], i))[:top_k]
        return [(ids[i], float(scores[i])) for i in order]

    def context(self, handle, query, ranking, budget, auto_merge):
        tree, _, _ = handle
        parts, used, taken = [], 0, set()
        for leaf_id, _ in ranking:
            node = tree.nodes[leaf_id]
            if auto_merge and node.parent is not None and tree.nodes[node.parent].kind == "chunk":
                node = tree.nodes[node.parent]
            if node.id in taken:
                continue
            text = tree.clean_text(node)
            n = self.tokenizer.count(text)
            if used + n > budget:
                continue
            parts.append(text)
            used += n
            taken.add(node.id)
        return "\n\n".join(parts)


class FlakyChunker(StructureChunker):
    """The structure chunker, failing on documents whose text contains 'FAIL-ME'."""

    name = "flaky"

    def __init__(self, options: ChunkOptions):
        super().__init__(ChunkOptions(leaf_tokens=options.leaf_tokens, merge_over_chunk=options.merge_over_chunk, hints="use",
                                      tokenizer=options.tokenizer))

    def chunk(self, doc):
        if "FAIL-ME" in doc.text:
            raise HichunkError("this document always fails")
        return super().chunk(doc)


def breadcrumb_inputs(tree: ChunkTree) -> list[str]:
    """Encoder inputs for tests: heading path, blank line, leaf text."""
    return [" > ".join(tree.breadcrumb(leaf)) + "\n\n" + tree.clean_text(leaf).strip() for leaf in tree.leaves()]


class JitteryChunker:
    """Fixed-size windows whose size changes on every call: a method that is not deterministic."""

    name = "jittery"
    calls = 0

    def __init__(self, options: ChunkOptions):
        self.options = options

    def chunk(self, doc):
        from hichunk.chunkers.fixed import FixedChunker

        JitteryChunker.calls += 1
        size = 24 + 8 * (JitteryChunker.calls % 3)
        return FixedChunker(ChunkOptions(leaf_tokens=size, tokenizer=self.options.tokenizer)).chunk(doc)
