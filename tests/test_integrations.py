"""LangChain and LlamaIndex adapters, run on the real libraries offline.

The hichunk side embeds with the fake embedder; LlamaIndex's own vector index and
AutoMergingRetriever use its ``MockEmbedding``. Every span in every metadata is checked
against the source text.
"""

from __future__ import annotations

import asyncio

import pytest
from fakes import HashEmbedder

from hichunk.retrieval.index import Index, IndexConfig
from hichunk.retrieval.search import FillOptions

SOURCES = {
    "guide.md": "# Guide\n\nIntro text for the guide. It explains things at length.\n\n## Install\n\n"
                "Run the installer. Then check that it works.\n\n## Use\n\n### Basics\n\n"
                "Basic usage is simple. Type a command and press enter.\n\n### Advanced\n\n"
                "Pipes and filters combine commands. Redirect output with care.\n",
    "page.html": "<h1>Fish &amp; chips</h1>\n<p>Fry the <b>fish</b> in hot oil until golden.</p>\n<h2>Chips</h2>\n"
                 "<p>Cut potatoes into sticks &lt;1 cm&gt; thick. Fry them twice.</p>\n",
    "notes.txt": "Kites\r\n\r\nFly kites on windy days, far from trees and power lines.\r\n"
                 "Wind speeds of 10 to 25 km/h are best.\r\n",
}
OPTIONS = {"method": "structure", "leaf_tokens": 16}


@pytest.fixture
def files(tmp_path):
    for name, text in SOURCES.items():
        (tmp_path / name).write_bytes(text.encode())
    return tmp_path


@pytest.fixture
def index(files, monkeypatch):
    monkeypatch.chdir(files)
    idx = Index.memory(IndexConfig(leaf_tokens=16, method="structure"), embedder=HashEmbedder())
    idx.add_paths(list(SOURCES))
    return idx


def check_span(text: str, content: str, meta: dict, root_is_node: bool = False) -> None:
    """``root_is_node``: LlamaIndex nodes, where the root (the document) is a node and the parent of the top."""
    assert text[meta["start_index"] : meta["end_index"]] == content
    assert meta["node_path"][-1] == meta["node_id"] and meta["id"] == f"{meta['source']}#{meta['node_id']}"
    assert meta["node_path"][0] == 0
    top = 1 if root_is_node else 2
    assert meta["parent_id"] == (f"{meta['source']}#{meta['node_path'][-2]}" if len(meta["node_path"]) > top else None)


def check_passages_exact(items, index) -> None:
    assert items
    for content, meta in items:
        raw = SOURCES[meta["source"]]
        check_span(raw, content, meta)
        assert meta["score"] is not None and meta["tokens"] > 0


# -- LangChain ---------------------------------------------------------------------------------


def test_langchain_splitter_gives_exact_leaves():
    pytest.importorskip("langchain_core")
    from langchain_core.documents import BaseDocumentTransformer, Document
    from langchain_text_splitters import TextSplitter

    from hichunk.integrations.langchain import HiChunkTextSplitter

    splitter = HiChunkTextSplitter(**OPTIONS)
    assert isinstance(splitter, TextSplitter) and isinstance(splitter, BaseDocumentTransformer)
    docs = [Document(page_content=text, metadata={"source": name, "owner": "me"}) for name, text in SOURCES.items()]
    leaves = splitter.split_documents(docs)
    assert {d.metadata["source"] for d in leaves} == set(SOURCES)
    for name, text in SOURCES.items():
        mine = [d for d in leaves if d.metadata["source"] == name]
        ends = 0
        for d in mine:
            check_span(text, d.page_content, d.metadata)
            assert d.metadata["kind"] == "leaf" and d.metadata["owner"] == "me" and d.id == d.metadata["id"]
            assert not text[ends : d.metadata["start_index"]].strip()  # leaves in order, nothing but space between
            ends = d.metadata["end_index"]
        assert not text[ends:].strip()
    html = [d for d in leaves if d.metadata["source"] == "page.html"]
    assert html[0].metadata["titles"] == ["Fish & chips"]  # parsed as HTML (from the extension)
    assert [d.page_content for d in splitter.transform_documents(docs)] == [d.page_content for d in leaves]
    created = splitter.create_documents([SOURCES["guide.md"]], [{"source": "g.md"}])
    assert created[0].metadata["source"] == "g.md" and created[0].metadata["titles"] == ["Guide"]
    as_text = splitter.create_documents([SOURCES["guide.md"]])  # no file name: plain text
    assert [d.page_content for d in as_text] == splitter.split_text(SOURCES["guide.md"]) != []
    anonymous = splitter.create_documents(["Some text. More text."])
    assert anonymous[0].metadata["source"].startswith("text-")


def test_langchain_splitter_uses_the_hichunk_method():
    pytest.importorskip("langchain_core")
    from hichunk.integrations.langchain import HiChunkTextSplitter

    text = SOURCES["guide.md"] * 3
    leaves = HiChunkTextSplitter(leaf_tokens=40).create_documents([text], [{"source": "g.md"}])
    for d in leaves:
        check_span(text, d.page_content, d.metadata)
    assert {d.metadata["level"] for d in leaves} >= {1, 2}


def test_langchain_retriever_sync_async_and_in_a_chain(index):
    pytest.importorskip("langchain_core")
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableLambda

    from hichunk.integrations.langchain import HiChunkRetriever

    retriever = HiChunkRetriever(index=index, budget=40, content="raw")
    assert isinstance(retriever, BaseRetriever) and retriever.options == FillOptions(budget=40)
    default = HiChunkRetriever(index=index, budget=60)  # LLM-ready text by default: no markup
    assert default.content == "context" and all("<" not in d.page_content for d in default.invoke("fry the fish"))
    docs = retriever.invoke("fry the fish")
    check_passages_exact([(d.page_content, d.metadata) for d in docs], index)
    expected = index.search("fry the fish", FillOptions(budget=40))
    assert [(d.metadata["source"], d.metadata["node_id"]) for d in docs] == [(p.doc, p.node) for p in expected.passages]
    assert sum(d.metadata["tokens"] for d in docs) <= 40
    assert [d.page_content for d in asyncio.run(retriever.ainvoke("fry the fish"))] == [d.page_content for d in docs]
    merged = HiChunkRetriever(index=index, options=FillOptions(budget=400), content="raw").invoke(
        "install and use the guide basics")
    check_passages_exact([(d.page_content, d.metadata) for d in merged], index)
    assert any(d.metadata["merged"] for d in merged)
    context = HiChunkRetriever(index=index, budget=60, content="context")
    pieces = context.invoke("chips potatoes")
    assert "\n\n".join(d.page_content for d in pieces) == context.search("chips potatoes").context
    chain = retriever | RunnableLambda(lambda ds: "\n\n".join(d.page_content for d in ds))
    assert "fish" in chain.invoke("fry the fish")
    only = HiChunkRetriever(index=index, budget=100, docs=["notes.txt"]).invoke("wind")
    assert {d.metadata["source"] for d in only} == {"notes.txt"}
    with pytest.raises(Exception, match="content must be one of"):
        HiChunkRetriever(index=index, content="html")


# -- LlamaIndex --------------------------------------------------------------------------------


def _llama_documents():
    from llama_index.core import Document

    return [Document(text=text, id_=name, metadata={"file_path": name}) for name, text in SOURCES.items()]


def test_llama_index_parser_links_the_whole_tree():
    pytest.importorskip("llama_index.core")
    from llama_index.core.node_parser import NodeParser, get_leaf_nodes, get_root_nodes
    from llama_index.core.schema import MetadataMode, NodeRelationship

    from hichunk.integrations.common import format_of
    from hichunk.integrations.llama_index import HiChunkNodeParser

    parser = HiChunkNodeParser(**OPTIONS)
    assert isinstance(parser, NodeParser)
    nodes = parser.get_nodes_from_documents(_llama_documents())
    by_id = {n.node_id: n for n in nodes}
    assert len(by_id) == len(nodes)
    for name, text in SOURCES.items():
        tree = parser.chunk_tree(text, name, format_of({"file_path": name}, None))
        mine = [n for n in nodes if n.ref_doc_id == name]
        assert len(mine) == len(tree.nodes)  # every node, the root (the document itself, holding the tree) too
        root = [n for n in mine if n.metadata["kind"] == "root"]
        assert len(root) == 1 and root[0].node_id == f"{name}#0" and "hichunk_tree" in root[0].metadata
    for n in nodes:
        text = SOURCES[n.ref_doc_id]
        check_span(text, n.text, n.metadata, root_is_node=True)
        assert (n.start_char_idx, n.end_char_idx) == (n.metadata["start_index"], n.metadata["end_index"])
        parent = n.relationships.get(NodeRelationship.PARENT)
        assert (parent.node_id if parent else None) == n.metadata["parent_id"]
        for child in n.child_nodes or []:
            assert by_id[child.node_id].parent_node.node_id == n.node_id
        assert "start_index" not in n.get_content(MetadataMode.EMBED) and "node_path" not in n.get_content(MetadataMode.LLM)
        assert n.metadata["file_path"] == n.ref_doc_id
    leaves = get_leaf_nodes(nodes)
    assert {n.node_id for n in leaves} == {n.node_id for n in nodes if n.metadata["kind"] == "leaf"}
    assert {n.node_id for n in get_root_nodes(nodes)} == {n.node_id for n in nodes if n.metadata["parent_id"] is None}
    siblings = [n for n in nodes if n.next_node is not None]
    assert siblings and all(by_id[n.next_node.node_id].prev_node.node_id == n.node_id for n in siblings)
    assert all(by_id[n.next_node.node_id].parent_node == n.parent_node for n in siblings)


def test_llama_index_auto_merging_retriever_on_our_nodes():
    pytest.importorskip("llama_index.core")
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.ingestion import IngestionPipeline
    from llama_index.core.node_parser import get_leaf_nodes, get_root_nodes
    from llama_index.core.retrievers import AutoMergingRetriever

    from hichunk.integrations.llama_index import HiChunkNodeParser

    documents = [d for d in _llama_documents() if d.id_ == "guide.md"]
    nodes = IngestionPipeline(transformations=[HiChunkNodeParser(**OPTIONS)]).run(documents=documents)
    leaves = get_leaf_nodes(nodes)
    storage = StorageContext.from_defaults()
    storage.docstore.add_documents(nodes)
    vectors = VectorStoreIndex(leaves, storage_context=storage, embed_model=MockEmbedding(embed_dim=8))
    everything = AutoMergingRetriever(vectors.as_retriever(similarity_top_k=len(leaves)), storage)
    merged = everything.retrieve("how do I install?")
    assert len(merged) < len(leaves) and {n.node_id for n in get_root_nodes(nodes)} <= {r.node.node_id for r in merged}
    covered = set()
    for r in merged:  # all leaves retrieved: merged into sections that still cover every leaf once
        check_span(SOURCES["guide.md"], r.node.get_content(), r.node.metadata, root_is_node=True)
        covered |= {n.node_id for n in leaves if r.node.start_char_idx <= n.start_char_idx < r.node.end_char_idx}
    assert covered == {n.node_id for n in leaves}
    some = AutoMergingRetriever(vectors.as_retriever(similarity_top_k=2), storage).retrieve("install")
    assert some and all(SOURCES["guide.md"][r.node.start_char_idx : r.node.end_char_idx] == r.node.get_content()
                        for r in some)


def test_llama_index_retriever_over_a_hichunk_index(index):
    pytest.importorskip("llama_index.core")
    from llama_index.core.retrievers import BaseRetriever

    from hichunk.integrations.llama_index import HiChunkRetriever

    retriever = HiChunkRetriever(index, budget=50, content="raw")
    assert isinstance(retriever, BaseRetriever) and HiChunkRetriever(index).content == "context"
    found = retriever.retrieve("fry the fish in oil")
    check_passages_exact([(n.node.get_content(), n.node.metadata) for n in found], index)
    expected = index.search("fry the fish in oil", FillOptions(budget=50))
    assert [n.score for n in found] == [p.score for p in expected.passages]
    assert [n.node.get_content() for n in asyncio.run(retriever.aretrieve("fry the fish in oil"))] == \
        [n.node.get_content() for n in found]
    context = HiChunkRetriever(index, options=FillOptions(budget=50, mode="reference"), content="context")
    result = context.search("fry the fish in oil")
    assert [n.node.get_content() for n in context.retrieve("fry the fish in oil")] == \
        [result.context[p.context_start : p.context_end] for p in result.passages]


def test_retrievers_give_page_ranges_for_pdfs(tmp_path, monkeypatch):
    pytest.importorskip("pypdfium2")
    pytest.importorskip("reportlab")
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from pdf_writer import build_book

    from hichunk.document.model import page_range
    from hichunk.integrations.langchain import HiChunkRetriever as LangChainRetriever
    from hichunk.integrations.llama_index import HiChunkRetriever as LlamaIndexRetriever

    monkeypatch.chdir(tmp_path)
    (tmp_path / "book.pdf").write_bytes(build_book(chapters=3).data)
    (tmp_path / "guide.md").write_text(SOURCES["guide.md"], encoding="utf-8")
    index = Index.memory(IndexConfig(leaf_tokens=40, method="structure"), embedder=HashEmbedder())
    index.add_paths(["book.pdf", "guide.md"])
    tree = index.tree("book.pdf")
    docs = LangChainRetriever(index=index, budget=300, content="raw").invoke("chunk tree retrieval budget merge")
    nodes = LlamaIndexRetriever(index, budget=300, content="raw").retrieve("chunk tree retrieval budget merge")
    assert [d.metadata for d in docs] == [n.node.metadata for n in nodes]
    pdf = [d for d in docs if d.metadata["source"] == "book.pdf"]
    assert pdf
    for d in pdf:
        meta = d.metadata
        assert d.page_content == tree.text[meta["start_index"] : meta["end_index"]]
        assert (meta["page_start"], meta["page_end"]) == page_range(tree.page_starts, meta["start_index"], meta["end_index"])
    assert all("page_start" not in d.metadata for d in docs if d.metadata["source"] == "guide.md")
