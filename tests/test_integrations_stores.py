"""hichunk's Auto-Merge over the frameworks' vector stores, and the frameworks' PDF loaders.

The vector store is a real embedded database (Qdrant's local mode, on disk, through the frameworks'
own integrations ``langchain-qdrant`` and ``llama-index-vector-stores-qdrant``); embeddings are the
fake hash embedder wrapped for each framework. Given the same leaf vectors (so the same ranking), the
context must be exactly what ``Index.search`` gives on the same trees.
"""

from __future__ import annotations

import asyncio

import pytest
from fakes import HashEmbedder
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

from hichunk.retrieval.search import FillOptions

pytest.importorskip("qdrant_client")

# -- LangChain ---------------------------------------------------------------------------------


def _langchain_embeddings():
    from langchain_core.embeddings import Embeddings

    class HashEmbeddings(Embeddings):
        def embed_documents(self, texts):
            return hash_vectors(list(texts)).tolist()

        def embed_query(self, text):
            return hash_vectors([text])[0].tolist()

    return HashEmbeddings()


@pytest.mark.parametrize("kind", ["docstore", "byte_store"])
def test_langchain_store_retriever_equals_index_search(tmp_path, kind):
    pytest.importorskip("langchain_qdrant")
    from langchain_core.documents import Document
    from langchain_core.stores import InMemoryByteStore, InMemoryStore
    from langchain_qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient
    from qdrant_client.models import Distance, VectorParams

    from hichunk.integrations.langchain import HiChunkTextSplitter, HiChunkVectorStoreRetriever

    client = QdrantClient(path=str(tmp_path / "qdrant"))  # Qdrant's embedded (local) mode, on disk
    client.create_collection("leaves", vectors_config=VectorParams(size=HashEmbedder.dim, distance=Distance.COSINE))
    vectorstore = QdrantVectorStore(client=client, collection_name="leaves", embedding=_langchain_embeddings())
    splitter = HiChunkTextSplitter(**OPTIONS)
    store = {kind: InMemoryStore() if kind == "docstore" else InMemoryByteStore()}
    retriever = HiChunkVectorStoreRetriever(vectorstore=vectorstore, splitter=splitter, **store)
    documents = [Document(page_content=text, metadata={"source": name}) for name, text in corpus().items()]
    ids = retriever.add_documents(documents)
    assert len(ids) == len(splitter.split_documents(documents))

    trees = [(g.source, tree) for g, tree in splitter.chunk_trees([d.page_content for d in documents],
                                                                  [d.metadata for d in documents])]
    index = reference_index(trees, lambda source, tree: [raw_text(tree, leaf) for leaf in tree.leaves()])
    merges = 0
    for fill in FILLS:
        retriever.options = fill
        for query in QUERIES:
            want = index.search(query, fill)
            same_result(retriever.search(query), want)
            merges += len(want.merges)
    assert merges  # Auto-Merge was exercised
    retriever.options = FillOptions(budget=600)
    docs = retriever.invoke(QUERIES[0])
    result = index.search(QUERIES[0], FillOptions(budget=600))
    assert [d.page_content for d in docs] == [result.context[p.context_start : p.context_end] for p in result.passages]
    assert [d.page_content for d in asyncio.run(retriever.ainvoke(QUERIES[0]))] == [d.page_content for d in docs]
    raw = HiChunkVectorStoreRetriever(vectorstore=vectorstore, budget=600, content="raw", **store).invoke(QUERIES[0])
    texts = corpus()
    assert all(texts[d.metadata["source"]][d.metadata["start_index"] : d.metadata["end_index"]] == d.page_content
               for d in raw)


def test_langchain_store_retriever_needs_one_tree_store():
    pytest.importorskip("langchain_core")
    from langchain_core.stores import InMemoryByteStore, InMemoryStore
    from langchain_core.vectorstores import InMemoryVectorStore

    from hichunk.integrations.langchain import HiChunkVectorStoreRetriever

    vectorstore = InMemoryVectorStore(_langchain_embeddings())
    with pytest.raises(Exception, match="exactly one of docstore"):
        HiChunkVectorStoreRetriever(vectorstore=vectorstore)
    with pytest.raises(Exception, match="exactly one of docstore"):
        HiChunkVectorStoreRetriever(vectorstore=vectorstore, docstore=InMemoryStore(), byte_store=InMemoryByteStore())
    retriever = HiChunkVectorStoreRetriever(vectorstore=vectorstore, docstore=InMemoryStore(), budget=100)
    with pytest.raises(Exception, match="no hichunk tree"):
        retriever.tree("missing.md")


# -- LlamaIndex --------------------------------------------------------------------------------


def _llama_embedding():
    from llama_index.core.embeddings import BaseEmbedding

    class HashEmbedding(BaseEmbedding):
        def _get_text_embedding(self, text):
            return hash_vectors([text])[0].tolist()

        def _get_query_embedding(self, query):
            return hash_vectors([query])[0].tolist()

        async def _aget_query_embedding(self, query):
            return self._get_query_embedding(query)

    return HashEmbedding(model_name="hash")


def test_llama_index_auto_merge_retriever_over_qdrant_equals_index_search(tmp_path):
    pytest.importorskip("llama_index.vector_stores.qdrant")
    from llama_index.core import Document, StorageContext, VectorStoreIndex
    from llama_index.core.node_parser import get_leaf_nodes
    from llama_index.core.schema import MetadataMode
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient

    from hichunk.integrations.llama_index import HiChunkAutoMergeRetriever, HiChunkNodeParser

    documents = [Document(text=text, id_=name, metadata={"file_path": name}) for name, text in corpus().items()]
    parser = HiChunkNodeParser(uuid_ids=True, **OPTIONS)
    nodes = parser.get_nodes_from_documents(documents)
    leaves = get_leaf_nodes(nodes)
    vector_store = QdrantVectorStore(client=QdrantClient(path=str(tmp_path / "qdrant")), collection_name="leaves")
    storage = StorageContext.from_defaults(vector_store=vector_store)
    storage.docstore.add_documents(nodes)
    vectors = VectorStoreIndex(leaves, storage_context=storage, embed_model=_llama_embedding())
    retriever = HiChunkAutoMergeRetriever(vectors.as_retriever(similarity_top_k=2), storage.docstore)

    embedded = {(n.metadata["source"], n.metadata["node_id"]): n.get_content(MetadataMode.EMBED) for n in leaves}
    trees = [(d.id_, retriever.tree(d.id_)) for d in documents]
    index = reference_index(trees, lambda source, tree: [embedded[(source, leaf.id)] for leaf in tree.leaves()])
    merges = 0
    for fill in FILLS:
        retriever.options = fill
        for query in QUERIES:
            want = index.search(query, fill)
            same_result(retriever.search(query), want)
            merges += len(want.merges)
    assert merges
    assert retriever.vector_retriever.similarity_top_k == 2  # the setting is put back after each block
    retriever.options = FillOptions(budget=600)
    found = retriever.retrieve(QUERIES[0])
    result = index.search(QUERIES[0], FillOptions(budget=600))
    assert [n.node.get_content() for n in found] == [result.context[p.context_start : p.context_end]
                                                     for p in result.passages]
    assert [n.node.get_content() for n in asyncio.run(retriever.aretrieve(QUERIES[0]))] == \
        [n.node.get_content() for n in found]


def test_llama_index_auto_merge_retriever_refuses_a_docstore_without_trees():
    pytest.importorskip("llama_index.core")
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.node_parser import get_leaf_nodes

    from hichunk.integrations.llama_index import HiChunkAutoMergeRetriever, HiChunkNodeParser

    nodes = HiChunkNodeParser(**OPTIONS).get_nodes_from_documents([Document(text=corpus()["doc0.md"], id_="a.md")])
    vectors = VectorStoreIndex(get_leaf_nodes(nodes), embed_model=_llama_embedding())
    with pytest.raises(Exception, match="similarity_top_k"):
        HiChunkAutoMergeRetriever(object(), vectors.docstore)
    retriever = HiChunkAutoMergeRetriever(vectors.as_retriever(), vectors.docstore, budget=100)
    with pytest.raises(Exception, match="no hichunk tree"):
        retriever.retrieve("kites")


# -- PDFs from the frameworks' loaders -------------------------------------------------------


@pytest.fixture
def book(tmp_path):
    return write_book(tmp_path / "book.pdf")


def test_pypdfloader_pages_chunk_as_one_tree_with_pages(book):
    pytest.importorskip("langchain_community")
    pytest.importorskip("pypdf")
    from langchain_community.document_loaders import PyPDFLoader

    from hichunk.integrations.langchain import HiChunkTextSplitter

    pages = PyPDFLoader(str(book)).load()
    assert len(pages) > 1 and all(p.metadata["source"] == str(book) for p in pages)
    splitter = HiChunkTextSplitter(leaf_tokens=60)
    leaves = splitter.split_documents(pages[::-1])  # out of order on purpose: joined in page order
    assert {d.metadata["source"] for d in leaves} == {str(book)}
    assert len({d.metadata["node_path"][0] for d in leaves}) == 1 and len(splitter.chunk_trees(
        [p.page_content for p in pages], [p.metadata for p in pages])) == 1  # one tree spans the PDF
    assert all("page" not in d.metadata and "page_label" not in d.metadata for d in leaves)
    check_pages([(d.page_content, d.metadata) for d in leaves], [p.page_content for p in pages])


def test_simple_directory_reader_pdf_pages_chunk_as_one_tree_with_pages(book):
    pytest.importorskip("llama_index.readers.file")
    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.node_parser import get_leaf_nodes

    from hichunk.integrations.llama_index import HiChunkNodeParser

    pages = SimpleDirectoryReader(input_files=[str(book)]).load_data()
    assert len(pages) > 1
    nodes = HiChunkNodeParser(leaf_tokens=60).get_nodes_from_documents(pages)
    roots = [n for n in nodes if n.metadata["kind"] == "root"]
    assert len(roots) == 1 and roots[0].metadata["source"] == pages[0].metadata["file_path"]
    leaves = get_leaf_nodes(nodes)
    assert all("page_label" not in n.metadata for n in leaves)
    check_pages([(n.get_content(), n.metadata) for n in leaves], [p.get_content() for p in pages])


def test_splitter_given_a_real_pdf_path_uses_the_pdf_reader(book):
    pytest.importorskip("langchain_core")
    import hichunk
    from hichunk.integrations.langchain import HiChunkTextSplitter
    from hichunk.tree.spans import raw_span

    tree = hichunk.chunk(str(book), leaf_tokens=60)
    want = [tree.text[slice(*raw_span(tree, leaf))] for leaf in tree.leaves()]
    splitter = HiChunkTextSplitter(leaf_tokens=60)
    assert [t for t in splitter.split_text(str(book))] == [t for t in want if t]
    from langchain_core.documents import Document

    leaves = splitter.split_documents([Document(page_content="", metadata={"source": str(book)})])
    assert [d.page_content for d in leaves] == [t for t in want if t]
    assert leaves[0].metadata["source"] == str(book) and "page_start" in leaves[0].metadata
