"""Stores side by side: evidence recall through every route, and search latency and build rate per store.

    python -m hichunk.integrations.store_bench recall --data BENCH --budgets 2000,3000,4000
    python -m hichunk.integrations.store_bench speed --sizes 10000,100000 --queries 200

``recall``: the benchmark's documents are chunked once (HC200, as ``hichunk bench rag``) and their
leaves embedded once; the same trees and vectors then go into every route: a hichunk ``Index`` in
memory (the reference), an index on the LanceDB store (``store="embedded"``), LangChain
(``HiChunkVectorStoreRetriever`` over ``langchain-qdrant``, Qdrant's embedded mode), LlamaIndex
(``HiChunkAutoMergeRetriever`` over ``llama-index-vector-stores-qdrant``) and Haystack
(``HiChunkAutoMergeRetriever`` over ``qdrant-haystack``'s ``QdrantEmbeddingRetriever``). Each question
ranks its own document's leaves (a filter in each store; the HiCBench protocol, top 128) and fills each
budget with Auto-Merge; the evidence recall of each route is printed with a 95% bootstrap interval and its paired
difference against the ``Index``, and the count of questions whose context differs.

``speed``: synthetic indexes of N leaves (real chunk trees of generated manuals, reused under new
document ids; random unit vectors, so the embedder is left out) are written to each store in one
commit (leaves/s), then searched with ``n`` random query vectors (ranking, budget fill with
Auto-Merge, assembly; T = 4096): p50 and p95 per store and size, in one run, side by side.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np
from tqdm import tqdm

from hichunk.bench.stats import bootstrap_ci, mean_ci, paired_diff_ci

ROUTES = ("index", "lancedb", "langchain-qdrant", "llamaindex-qdrant", "haystack-qdrant")
STORES = ("directory", "directory-ann", "lancedb")


# -- recall ------------------------------------------------------------------------------------

def _trees_and_vectors(args):
    from hichunk.bench.data.hicbench_format import load_dataset
    from hichunk.bench.runners.chunk import TreeCache, chunk_all
    from hichunk.bench.runners.methods import parse_method
    from hichunk.retrieval import Index, IndexConfig
    from hichunk.tokens import load_tokenizer

    dataset = load_dataset(args.data, args.name)
    tokenizer = load_tokenizer(None)
    spec = parse_method("HC200+AM")
    questions = list(dataset.qas)[: args.limit or None]
    needed = sorted({q.doc_id for q in questions})
    docs = {d: dataset.docs[d].parse() for d in needed}
    cache = TreeCache(args.trees) if args.trees else None
    chunked = chunk_all(docs, spec, tokenizer, "fail", True, cache)
    trees = {d: c.tree for d, c in sorted(chunked.items())}
    config = IndexConfig(method=spec.chunker, leaf_tokens=spec.leaf_tokens, merge_over_chunk=spec.merge_over_chunk,
                         hints=spec.hints, tokenizer=tokenizer.name)
    reference = Index.memory(config, cache=args.embeddings)
    reference.add_trees(sorted(trees.items()), progress=True)
    vectors = {d: reference.store.rows(d)[0] for d in trees}
    return dataset, questions, trees, vectors, reference, config, tokenizer


def _lancedb_route(folder, trees, vectors, config, embedder):
    from dataclasses import replace

    from hichunk.retrieval import Index

    index = Index.create(os.path.join(folder, "lance-idx"), replace(config, store="embedded"), embedder=embedder)
    index.add_trees([(d, t, vectors[d]) for d, t in trees.items()])
    return lambda q, qv, doc, fill: index.search(q, fill, docs=[doc])


def _langchain_route(folder, trees, vectors, embedder):
    import json

    from langchain_core.stores import InMemoryStore
    from langchain_qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient
    from qdrant_client.models import (
        Distance,
        FieldCondition,
        Filter,
        MatchValue,
        PointStruct,
        VectorParams,
    )

    from hichunk.integrations.common import node_metadata, node_uuid
    from hichunk.integrations.langchain import HiChunkEmbeddings, HiChunkVectorStoreRetriever, tree_key
    from hichunk.tree.export import to_dict

    client = QdrantClient(path=os.path.join(folder, "qdrant-lc"))
    dim = next(iter(vectors.values())).shape[1]
    client.create_collection("leaves", vectors_config=VectorParams(size=dim, distance=Distance.COSINE))
    docstore = InMemoryStore()
    for doc, tree in tqdm(trees.items(), desc="langchain: leaves -> qdrant", unit="doc", file=sys.stderr):
        points = []
        for leaf, vector in zip(tree.leaves(), vectors[doc]):  # the payload langchain-qdrant writes and reads
            meta = node_metadata(tree, leaf, doc)
            points.append(PointStruct(id=node_uuid(meta["id"]), vector=vector.tolist(),
                                      payload={"page_content": tree.text[meta["start_index"] : meta["end_index"]],
                                               "metadata": meta}))
        client.upsert("leaves", points=points)
        docstore.mset([(tree_key(doc), json.dumps(to_dict(tree), ensure_ascii=False))])
    store = QdrantVectorStore(client=client, collection_name="leaves", embedding=HiChunkEmbeddings(embedder))
    retriever = HiChunkVectorStoreRetriever(vectorstore=store, docstore=docstore)

    def search(q, qv, doc, fill):
        retriever.options = fill
        retriever.search_kwargs = {"filter": Filter(must=[FieldCondition(key="metadata.source",
                                                                         match=MatchValue(value=doc))])}
        return retriever.search(q)

    return search


def _llamaindex_route(folder, trees, vectors, embedder):
    from llama_index.core import Document, StorageContext, VectorStoreIndex
    from llama_index.core.vector_stores import MetadataFilter, MetadataFilters
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient

    from hichunk.integrations.llama_index import HiChunkAutoMergeRetriever, HiChunkEmbedding, HiChunkNodeParser

    parser = HiChunkNodeParser(uuid_ids=True)
    storage = StorageContext.from_defaults(vector_store=QdrantVectorStore(
        client=QdrantClient(path=os.path.join(folder, "qdrant-li")), collection_name="leaves"))
    leaves = []
    for doc, tree in tqdm(trees.items(), desc="llamaindex: nodes", unit="doc", file=sys.stderr):
        nodes = parser.tree_nodes(Document(text="", id_=doc), tree, doc)
        storage.docstore.add_documents(nodes)
        mine = [n for n in nodes if n.metadata["kind"] == "leaf"]
        for node, vector in zip(mine, vectors[doc]):
            node.embedding = vector.tolist()
        leaves += mine
    model = HiChunkEmbedding()
    model._embedder = embedder
    index = VectorStoreIndex(leaves, storage_context=storage, embed_model=model, show_progress=True)

    def search(q, qv, doc, fill):
        filters = MetadataFilters(filters=[MetadataFilter(key="source", value=doc)])
        return HiChunkAutoMergeRetriever(index.as_retriever(filters=filters), storage.docstore, fill).search(q)

    return search


def _haystack_route(folder, trees, vectors):
    from dataclasses import replace

    from haystack_integrations.components.retrievers.qdrant import QdrantEmbeddingRetriever
    from haystack_integrations.document_stores.qdrant import QdrantDocumentStore

    from hichunk.integrations.haystack import HiChunkAutoMergeRetriever, HiChunkDocumentSplitter

    dim = next(iter(vectors.values())).shape[1]
    store = QdrantDocumentStore(path=os.path.join(folder, "qdrant-hs"), embedding_dim=dim, similarity="cosine",
                                recreate_index=True, progress_bar=False)
    splitter = HiChunkDocumentSplitter()  # only makes documents of the trees: no model is loaded
    for doc, tree in tqdm(trees.items(), desc="haystack: leaves -> qdrant", unit="doc", file=sys.stderr):
        leaves, tree_document = splitter.tree_documents(tree, doc)
        by_node = {leaf.id: vector for leaf, vector in zip(tree.leaves(), vectors[doc])}
        leaves = [replace(leaf, embedding=by_node[leaf.meta["node_id"]].tolist()) for leaf in leaves]
        store.write_documents([*leaves, tree_document])
    retriever = HiChunkAutoMergeRetriever(QdrantEmbeddingRetriever(store))

    def search(q, qv, doc, fill):
        retriever.options = fill
        return retriever.search(qv.tolist(), q, {"field": "meta.source", "operator": "==", "value": doc})

    return search


def cmd_recall(args) -> int:
    from hichunk.bench.metrics.evidence import EvidenceScorer
    from hichunk.retrieval import FillOptions
    from hichunk.retrieval.search import search_vector

    dataset, questions, trees, vectors, reference, config, tokenizer = _trees_and_vectors(args)
    embedder = reference.embedder.embedder  # the model behind the cache
    qvecs = reference.embedder.embed_queries([q.input for q in questions])
    folder = tempfile.mkdtemp(prefix="store-bench-")
    routes = {"index": lambda q, qv, doc, fill: search_vector(reference, qv, q, fill, tokenizer, [doc])}
    makers = {"lancedb": lambda: _lancedb_route(folder, trees, vectors, config, embedder),
              "langchain-qdrant": lambda: _langchain_route(folder, trees, vectors, embedder),
              "llamaindex-qdrant": lambda: _llamaindex_route(folder, trees, vectors, embedder),
              "haystack-qdrant": lambda: _haystack_route(folder, trees, vectors)}
    for name in args.routes.split(","):
        if name != "index":
            routes[name] = makers[name]()
    budgets = [int(b) for b in args.budgets.split(",")]
    scorers = [EvidenceScorer(q.evidences, "ascii", True) for q in questions]
    recall = {r: {b: [] for b in budgets} for r in routes}
    contexts = {r: {b: [] for b in budgets} for r in routes}
    for qi, q in enumerate(tqdm(questions, desc="questions", unit="q", file=sys.stderr)):
        for b in budgets:
            fill = FillOptions(budget=b, max_candidates=128)
            for name, search in routes.items():
                context = search(q.input, qvecs[qi], q.doc_id, fill).context
                recall[name][b].append(scorers[qi].score(context).recall * 100)
                contexts[name][b].append(context)
    leaves = sum(len(t.leaves()) for t in trees.values())
    print(f"{dataset.name}: {len(questions)} questions, {len(trees)} documents, {leaves} HC200 leaves, "
          f"embedder {reference.embedder.id}; each question ranks its own document's leaves (top 128), Auto-Merge on")
    for b in budgets:
        for name in routes:
            est = mean_ci(recall[name][b])
            line = f"T={b} {name:>18}: ERec {est.value:.2f} [{est.low:.2f}, {est.high:.2f}]"
            if name != "index":
                d = paired_diff_ci(recall[name][b], recall["index"][b])
                differ = sum(a != c for a, c in zip(contexts[name][b], contexts["index"][b]))
                line += (f"; minus index {d.value:+.2f} [{d.low:+.2f}, {d.high:+.2f}], "
                         f"contexts differing {differ}/{len(questions)}")
            print(line)
    shutil.rmtree(folder, ignore_errors=True)
    return 0


# -- speed ---------------------------------------------------------------------------------------

def _synthetic_items(size: int, dim: int, seed: int):
    from hichunk.bench.perf.serve_load import synthetic_document
    from hichunk.chunkers import ChunkOptions, chunk_document
    from hichunk.document import parse_document

    rng = np.random.default_rng(seed)
    base = [chunk_document(parse_document(synthetic_document(rng, d), "markdown", f"m{d}.md"), "structure",
                           ChunkOptions(leaf_tokens=200)) for d in range(40)]
    items, total, doc = [], 0, 0
    while total < size:
        tree = base[doc % len(base)]
        n = len(tree.leaves())
        vectors = rng.standard_normal((n, dim)).astype(np.float32)
        items.append((f"manual-{doc:06d}.md", tree, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)))
        total += n
        doc += 1
    return items


def _open(store: str, path: str, embedder):
    from hichunk.retrieval import Index, IndexConfig

    config = {"directory": IndexConfig(method="structure"), "directory-ann": IndexConfig(method="structure", search="ann"),
              "lancedb": IndexConfig(method="structure", store="embedded")}[store]
    return Index.create(path, config, exist_ok=False, embedder=embedder)


def cmd_speed(args) -> int:
    from hichunk.retrieval import FillOptions
    from hichunk.retrieval.embedders import load_embedder
    from hichunk.retrieval.search import search_vector

    embedder = load_embedder(None)
    rng = np.random.default_rng(args.seed + 1)
    queries = rng.standard_normal((args.queries, embedder.dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    fill = FillOptions(budget=4096)
    print(f"load average at start: {os.getloadavg()[0]:.1f}; {args.queries} queries per store and size, T=4096; "
          f"medians with 95% bootstrap intervals")
    print("| leaves | store | build (one commit), leaves/s | search p50, ms | p95, ms |")
    print("|---|---|---|---|---|")
    for size in [int(s) for s in args.sizes.split(",")]:
        items = _synthetic_items(size, embedder.dim, args.seed)
        for store in args.stores.split(","):
            folder = tempfile.mkdtemp(prefix=f"store-speed-{store}-")
            path = os.path.join(folder, "idx")
            index = _open(store, path, embedder)
            started = time.perf_counter()
            index.add_trees(items)
            build = time.perf_counter() - started
            index = type(index).open(path, embedder=embedder)  # a fresh reader, as a server opens it
            search_vector(index, queries[0], "warm up", fill)
            ms = []
            for qv in queries:
                t0 = time.perf_counter()
                search_vector(index, qv, "q", fill)
                ms.append((time.perf_counter() - t0) * 1000)
            p50, lo, hi = bootstrap_ci(np.asarray(ms))
            print(f"| {index.n_leaves:,} | {store} | {index.n_leaves / build:,.0f} ({build:.1f} s) | "
                  f"{p50:.1f} [{lo:.1f}-{hi:.1f}] | {np.percentile(ms, 95):.1f} |", flush=True)
            index.close()
            shutil.rmtree(folder, ignore_errors=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hichunk.integrations.store_bench", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("recall", help="evidence recall per route on a benchmark dataset")
    r.add_argument("--data", required=True, metavar="DIR")
    r.add_argument("--name", default=None, help="dataset name inside DIR (default: the only one)")
    r.add_argument("--budgets", default="2000,3000,4000")
    r.add_argument("--routes", default=",".join(ROUTES), help=f"comma-separated, from {', '.join(ROUTES)}")
    r.add_argument("--trees", default=None, metavar="DIR", help="tree cache folder (as bench rag --reuse-trees)")
    r.add_argument("--embeddings", default=None, metavar="FILE", help="embedding cache file kept between runs")
    r.add_argument("--limit", type=int, default=0, help="first N questions only (default: all)")
    r.set_defaults(run=cmd_recall)
    s = sub.add_parser("speed", help="build rate and search latency per store and size")
    s.add_argument("--sizes", default="10000,100000")
    s.add_argument("--stores", default=",".join(STORES), help=f"comma-separated, from {', '.join(STORES)}")
    s.add_argument("--queries", type=int, default=200)
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(run=cmd_speed)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
