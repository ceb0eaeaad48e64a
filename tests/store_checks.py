"""Shared by the vector-store integration tests (LangChain, LlamaIndex, Haystack): a corpus whose leaves never
tie, dense hash vectors, and what "the same result as ``Index.search``" means."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import HashEmbedder

from hichunk.retrieval.index import Index, IndexConfig
from hichunk.retrieval.search import FillOptions

TOPICS = ["kites and wind", "bread and ovens", "rivers and boats", "stars and telescopes", "bees and honey"]


def corpus() -> dict[str, str]:
    """Markdown documents with sections of distinct words (no two leaves alike, so no score ties)."""
    rng = np.random.default_rng(3)
    docs = {}
    for d, topic in enumerate(TOPICS[:3]):
        parts = [f"# All about {topic}\n\nAn overview of {topic} for doc {d}.\n"]
        for s in range(3):
            parts.append(f"\n## Part {s} of {topic.split()[0]}\n\n")
            for p in range(2):
                words = " ".join(f"w{int(x)}" for x in rng.integers(0, 400, 40))
                parts.append(f"Paragraph {p} in part {s} of {topic}: {words}.\n\n")
        docs[f"doc{d}.md"] = "".join(parts)
    return docs


OPTIONS = {"method": "structure", "leaf_tokens": 40}
QUERIES = ["kites wind part 1", "w17 w200 w33 ovens", "boats rivers paragraph 0 w5"]
FILLS = [FillOptions(budget=150), FillOptions(budget=600), FillOptions(budget=400, mode="reference"),
         FillOptions(budget=300, auto_merge=False)]


class DenseHashEmbedder(HashEmbedder):
    """Every word a fixed random direction: dense vectors whose scores differ far beyond float rounding, so
    a store's ranking (its own float arithmetic) is the index's ranking."""

    id = "test-dense-hash-64"

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        import hashlib
        import re

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
                out[row] += np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            out[row, 0] += 1e-3
        return out


def hash_vectors(texts: list[str]) -> np.ndarray:
    rows = DenseHashEmbedder().embed_passages(texts)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def reference_index(trees, texts_of) -> Index:
    """A hichunk Index holding the same trees with the same leaf vectors (``texts_of(source, tree)`` embedded)."""
    index = Index.memory(IndexConfig(**OPTIONS), embedder=DenseHashEmbedder())
    index.add_trees([(source, tree, hash_vectors(texts_of(source, tree))) for source, tree in trees])
    return index


def same_result(got, want) -> None:
    assert got.context == want.context
    assert [(p.doc, p.node, p.merged, p.truncated) for p in got.passages] == \
        [(p.doc, p.node, p.merged, p.truncated) for p in want.passages]
    assert [p.score for p in got.passages] == pytest.approx([p.score for p in want.passages], abs=1e-5)


def raw_text(tree, leaf) -> str:
    """A leaf's exact raw text."""
    from hichunk.tree.spans import raw_span

    return tree.text[slice(*raw_span(tree, leaf))]


def write_book(path):
    """A three-chapter PDF (headings, several pages) at ``path``."""
    pytest.importorskip("reportlab")
    from pdf_writer import build_book

    path.write_bytes(build_book(chapters=3, chinese=False).data)
    return path


def check_pages(leaves_meta_text, pages: list[str], joiner: str = "\n\f\n") -> None:
    """Each leaf's text lies on the pages its metadata names (and the tree covers every page); ``joiner`` is
    what stands between pages in the text that was chunked."""
    assert leaves_meta_text
    seen = set()
    for text, meta in leaves_meta_text:
        first, last = meta["page_start"], meta["page_end"]
        assert 1 <= first <= last <= len(pages)
        joined = joiner.join(pages[first - 1 : last])
        assert text in joined
        seen |= set(range(first, last + 1))
    assert seen == set(range(1, len(pages) + 1))
