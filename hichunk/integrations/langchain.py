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
from collections.abc import Iterable
from typing import Any

from hichunk.extras import require_extra

require_extra("langchain", what="hichunk.integrations.langchain")

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_text_splitters import TextSplitter  # noqa: E402
from pydantic import ConfigDict  # noqa: E402

from hichunk.api import make_chunker  # noqa: E402
from hichunk.chunkers import DEFAULT_METHOD  # noqa: E402
from hichunk.document import parse_document  # noqa: E402
from hichunk.integrations.common import (  # noqa: E402
    SourceText,
    check_content,
    fill_options,
    node_metadata,
    passage_content,
    passage_metadata,
    source_of,
    source_texts,
)
from hichunk.retrieval.search import FillOptions, SearchResult  # noqa: E402
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
        result = self.search(query)
        return [Document(page_content=passage_content(result, p, self.content), metadata=passage_metadata(p),
                         id=f"{p.doc}#{p.node}") for p in result.passages]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return self._documents(query)

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        return await asyncio.to_thread(self._documents, query)  # the search is CPU work: off the event loop


__all__ = ["HiChunkRetriever", "HiChunkTextSplitter"]
