"""hichunk for LlamaIndex (extra ``llama-index``: ``llama-index-core``).

    from hichunk.integrations.llama_index import HiChunkNodeParser, HiChunkRetriever
    from llama_index.core.node_parser import get_leaf_nodes

    nodes = HiChunkNodeParser().get_nodes_from_documents(documents)   # the whole chunk tree of every document
    leaves = get_leaf_nodes(nodes)                                     # embed these; keep all nodes in a docstore
    # ... LlamaIndex's own AutoMergingRetriever merges retrieved leaves into their sections

    retriever = HiChunkRetriever(hichunk.Index.open("./idx"), budget=2048)   # hichunk's budgeted Auto-Merge
    nodes_with_scores = retriever.retrieve("how do I ...?")                   # or await retriever.aretrieve(...)

``HiChunkNodeParser`` returns one ``TextNode`` per node of each document's chunk
tree (sections, chunks, leaves; the root, which is the document itself, is
left out), in pre-order. Each node's text is its exact raw span
(``start_char_idx``/``end_char_idx`` and the metadata's
``start_index``/``end_index``), and nodes carry ``PARENT``/``CHILD``
relationships along the tree, ``PREVIOUS``/``NEXT`` between siblings and
``SOURCE`` to their document, which is what ``get_leaf_nodes``,
``get_root_nodes`` and ``AutoMergingRetriever`` read. Node ids are
``"<document id>#<tree node id>"``. Only ``titles`` of the metadata is shown
to embedders and LLMs (the heading breadcrumb); the provenance keys are not.

``HiChunkRetriever`` runs hichunk's own search over a hichunk ``Index`` and
returns the context's passages, in context order, as ``NodeWithScore``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from hichunk.extras import require_extra

require_extra("llama-index", what="hichunk.integrations.llama_index")

from llama_index.core.base.base_retriever import BaseRetriever  # noqa: E402
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
from hichunk.integrations.common import (  # noqa: E402
    check_content,
    fill_options,
    format_of,
    node_key,
    node_metadata,
    passage_content,
    passage_metadata,
)
from hichunk.retrieval.search import FillOptions, SearchResult  # noqa: E402
from hichunk.tree.model import ROOT, ChunkTree  # noqa: E402
from hichunk.tree.spans import raw_span  # noqa: E402

HIDDEN_KEYS = ["source", "start_index", "end_index", "level", "kind", "node_id", "node_path", "id", "parent_id",
               "page_start", "page_end", "score", "rank", "tokens", "merged", "truncated"]


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
    _chunker: Any = PrivateAttr(default=None)

    @classmethod
    def class_name(cls) -> str:
        return "HiChunkNodeParser"

    def model_post_init(self, __context: Any) -> None:
        self._chunker = make_chunker(self.method, model=self.model, leaf_tokens=self.leaf_tokens,
                                     max_level=self.max_level, merge_over_chunk=self.merge_over_chunk, hints=self.hints)

    def chunk_tree(self, text: str, source: str = "<text>", format: str | None = None) -> ChunkTree:
        return self._chunker.chunk(parse_document(text, format or self.format or "text", source))

    def _tree_nodes(self, document: BaseNode) -> list[TextNode]:
        text = document.get_content()
        source = document.node_id
        tree = self.chunk_tree(text, source, format_of(document.metadata, self.format))
        made: dict[int, TextNode] = {}
        for node, _ in tree.walk():
            if node.kind == ROOT:
                continue
            start, end = raw_span(tree, node)
            made[node.id] = _text_node(node_key(source, node.id), tree.text[start:end], start, end,
                                       node_metadata(tree, node, source))
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
        return [n for document in nodes for n in self._tree_nodes(document)]

    def _postprocess_parsed_nodes(self, nodes: list[BaseNode], parent_doc_map: dict[str, Document]) -> list[BaseNode]:
        """Only the documents' metadata is merged in: spans are exact already, and PREVIOUS/NEXT follow the
        tree (the base class would search each text in the document and link nodes across levels)."""
        if self.include_metadata:
            for node in nodes:
                document = parent_doc_map.get(node.ref_doc_id or "")
                if document is not None:
                    node.metadata = {**document.metadata, **node.metadata}
        return nodes


class HiChunkRetriever(BaseRetriever):
    """hichunk's budget fill with Auto-Merge over a hichunk ``Index``, as LlamaIndex ``NodeWithScore``.

    ``options`` (``hichunk.FillOptions``) or ``budget``; ``docs`` limits the
    search to some document ids; ``content``: ``raw`` (exact source span, the
    default) or ``context`` (the clean text the context shows).
    """

    def __init__(self, index: Any, options: FillOptions | None = None, budget: int | None = None,
                 docs: list[str] | None = None, content: str = "raw", **kwargs: Any) -> None:
        self.index, self.docs, self.content = index, docs, check_content(content)
        self.options = fill_options(options, budget)
        super().__init__(**kwargs)

    def search(self, query: str) -> SearchResult:
        """The full hichunk result (context, passages, merges) behind the nodes."""
        return self.index.search(query, self.options, None, self.docs)

    def _nodes(self, query: str) -> list[NodeWithScore]:
        result = self.search(query)
        out = []
        for p in result.passages:
            meta = passage_metadata(p)
            node = _text_node(meta["id"], passage_content(result, p, self.content), p.start, p.end, meta)
            out.append(NodeWithScore(node=node, score=p.score))
        return out

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(query_bundle.query_str)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._nodes, query_bundle.query_str)


__all__ = ["HiChunkNodeParser", "HiChunkRetriever"]
