"""Query latency: hichunk's search against LlamaIndex's AutoMergingRetriever on the same trees and vectors.

    python -m hichunk.integrations.automerge_speed --corpus DIR [--limit 30] [--queries 200] [--budget 4096]

hichunk's whole search (query encoding, ranking, budget fill with Auto-Merge,
context) is timed against LlamaIndex's ``AutoMergingRetriever`` over the same
chunk trees (``HiChunkNodeParser``), the same leaf vectors and the same query
encoder, retrieving ``budget / leaf size`` leaves; the two are called in turn
on each query, alternating which goes first. Queries are 6-10 words taken from
random leaves, seeded. ``--corpus`` is read as ``hichunk.bench.perf.chunk_speed``
reads it (``python -m hichunk.bench.perf.chunk_speed --queries N`` runs this).
Prints p50 (95% bootstrap interval) and p95 per side and the median paired ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from hichunk.bench.perf.chunk_speed import load_corpus, markdown_table
from hichunk.bench.perf.index_speed import INDEX_DOCS, sources
from hichunk.bench.stats import bootstrap_ci


def _ms(values) -> str:
    value, low, high = bootstrap_ci(np.asarray(values) * 1000)
    return f"{value:.1f} [{low:.1f}-{high:.1f}]"


class _Embedding:
    """A LlamaIndex embedding model around a hichunk embedder (the same query encoder on both sides)."""

    def __new__(cls, embedder):
        from llama_index.core.embeddings import BaseEmbedding

        class HichunkEmbedding(BaseEmbedding):
            def _get_query_embedding(self, query: str) -> list[float]:
                return embedder.embed_queries([query])[0].tolist()

            async def _aget_query_embedding(self, query: str) -> list[float]:
                return self._get_query_embedding(query)

            def _get_text_embedding(self, text: str) -> list[float]:
                return embedder.embed_passages([text])[0].tolist()

        return HichunkEmbedding(model_name=embedder.id)


def make_queries(trees, n: int, seed: int = 0) -> list[str]:
    """``n`` queries of 6-10 words taken from random leaves of the trees."""
    rng = np.random.default_rng(seed)
    leaves = [(t, leaf) for t in trees for leaf in t.leaves() if len(t.clean_text(leaf).split()) >= 10]
    out = []
    for _ in range(n):
        tree, leaf = leaves[int(rng.integers(len(leaves)))]
        words = tree.clean_text(leaf).split()
        k = int(rng.integers(6, 11))
        first = int(rng.integers(0, len(words) - k + 1))
        out.append(" ".join(words[first : first + k]))
    return out


def queries(docs, method: str, size: int, n: int, budget: int = 4096) -> list[dict]:
    """Per-query latency of hichunk's search and of LlamaIndex's AutoMergingRetriever (p50, p95)."""
    from llama_index.core import Document as LlamaDocument
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.node_parser import get_leaf_nodes
    from llama_index.core.retrievers import AutoMergingRetriever

    from hichunk.integrations.llama_index import HiChunkNodeParser
    from hichunk.retrieval.index import Index, IndexConfig
    from hichunk.retrieval.search import FillOptions

    index = Index.memory(IndexConfig(method=method, leaf_tokens=size))
    index.add(sources(docs))
    embedder = index.embedder.embedder
    parser = HiChunkNodeParser(method=method, leaf_tokens=size, format="markdown")
    nodes = parser.get_nodes_from_documents([LlamaDocument(text=text, id_=name) for name, _, text in docs])
    leaves = get_leaf_nodes(nodes)
    for node, vector in zip(leaves, embedder.embed_passages([n.get_content() for n in leaves])):
        node.embedding = vector.tolist()
    storage = StorageContext.from_defaults()
    storage.docstore.add_documents(nodes)
    vectors = VectorStoreIndex(leaves, storage_context=storage, embed_model=_Embedding(embedder))
    llama = AutoMergingRetriever(vectors.as_retriever(similarity_top_k=max(1, budget // size)), storage, verbose=False)
    options = FillOptions(budget=budget)
    ways = {"hichunk Index.search": lambda q: index.search(q, options), "LlamaIndex AutoMergingRetriever": llama.retrieve}
    qs = make_queries([index.tree(d) for d in index.docs], n)
    for call in ways.values():
        call("warm up")
    times: dict[str, list[float]] = {w: [] for w in ways}
    names = list(ways)
    for i, q in enumerate(qs):
        for name in names[i % 2:] + names[: i % 2]:
            t0 = time.perf_counter()
            ways[name](q)
            times[name].append(time.perf_counter() - t0)
    base = np.asarray(times[names[0]])
    rows = []
    for name in names:
        t = np.asarray(times[name])
        ratio, rlo, rhi = bootstrap_ci(t / base)
        rows.append({"search": name, "queries": len(t), "leaves": len(leaves), "p50 ms": _ms(t),
                     "p95 ms": f"{np.percentile(t, 95) * 1000:.1f}", "x hichunk (paired)": f"{ratio:.2f} [{rlo:.2f}-{rhi:.2f}]"})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hichunk.integrations.automerge_speed", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, metavar="DIR", help="a folder of documents, or a built corpus")
    ap.add_argument("--split", default="dev", help="split of a built corpus (default: dev)")
    ap.add_argument("--glob", default="**/*.md,**/*.txt", help="files taken from a folder (comma-separated patterns)")
    ap.add_argument("--limit", type=int, default=INDEX_DOCS, help=f"documents indexed (default: {INDEX_DOCS})")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--budget", type=int, default=4096)
    ap.add_argument("--method", default="structure", help="chunking method (default: structure)")
    ap.add_argument("--size", type=int, default=200, help="leaf size in tokens (default: 200)")
    ap.add_argument("--json", metavar="FILE", help="write the rows as JSON too")
    args = ap.parse_args(argv)
    docs = sorted(load_corpus(args.corpus, args.split, args.glob, None), key=lambda d: d[0])[: args.limit]
    rows = queries(docs, args.method, args.size, args.queries, args.budget)
    print(f"\nqueries, budget {args.budget}, {len(docs)} documents (load average {os.getloadavg()[0]:.1f})\n")
    print(markdown_table(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
