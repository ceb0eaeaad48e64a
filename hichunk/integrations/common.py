"""What the LangChain and LlamaIndex adapters share: node ids, metadata, chunkers and document formats.

Metadata keys (both frameworks):

* ``source``: the document's id (its path, or the id it has in the index);
* ``start_index``, ``end_index``: the exact raw span; ``raw[start_index:end_index]`` is the chunk's text;
* ``level``, ``kind`` (``section``/``chunk``/``leaf``), ``titles`` (heading breadcrumb);
* ``node_id`` (the node in its tree), ``node_path`` (node ids from the root, 0, down to the node), ``id`` and
  ``parent_id`` (``"<source>#<node id>"``; ``parent_id`` is None at the top, where the parent is the root, which
  is the whole document);
* ``page_start``, ``page_end`` for paged documents (PDF);
* retrieved passages add ``score``, ``rank``, ``tokens``, ``merged``, ``truncated``.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hichunk.document import Document, detect_format, load_document, parse_bytes, parse_document
from hichunk.document.load import BINARY_PARSERS
from hichunk.retrieval.search import FillOptions, Passage, SearchResult
from hichunk.tree.model import ChunkTree, Node
from hichunk.tree.spans import pages, raw_span

TREE_KIND = "hichunk-tree"  # the kind of the document that holds a serialised chunk tree in a store
CONTENT = ("context", "raw")  # what a retrieved passage's text is: its exact raw span, or the context's clean piece
SOURCE_KEYS = ("source", "file_path", "file_name", "filename")  # where frameworks' loaders keep the file name


def node_key(source: str, node_id: int) -> str:
    """A node's id across documents: ``"<source>#<node id>"``."""
    return f"{source}#{node_id}"


def node_uuid(key: str) -> str:
    """A UUID made from a node key, for stores that take only UUID ids (Qdrant): the same key, the same id."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "hichunk:" + key))


def _parent_key(source: str, path: list[int]) -> str | None:
    return node_key(source, path[-2]) if len(path) > 2 else None


def _paged(meta: dict, page_span: tuple[int, int] | None) -> dict:
    if page_span is not None:
        meta["page_start"], meta["page_end"] = page_span
    return meta


def node_metadata(tree: ChunkTree, node: Node, source: str) -> dict:
    """Metadata of one tree node, with its exact raw span (surrounding whitespace excluded)."""
    start, end = raw_span(tree, node)
    path = [tree.root.id] + [n.id for n in tree.path(node)]
    return _paged({"source": source, "start_index": start, "end_index": end, "level": node.level, "kind": node.kind,
                   "titles": tree.breadcrumb(node), "node_id": node.id, "node_path": path,
                   "id": node_key(source, node.id), "parent_id": _parent_key(source, path)},
                  pages(tree, start, end))


def passage_metadata(p: Passage) -> dict:
    """Metadata of one retrieved passage: the node metadata keys plus how it was retrieved."""
    return _paged({"source": p.doc, "start_index": p.start, "end_index": p.end, "level": p.level, "kind": p.kind,
                   "titles": list(p.titles), "node_id": p.node, "node_path": [0, *p.path],
                   "id": node_key(p.doc, p.node), "parent_id": _parent_key(p.doc, [0, *p.path]), "score": p.score,
                   "rank": p.rank, "tokens": p.tokens, "merged": p.merged, "truncated": p.truncated},
                  p.pages)


def passage_content(result: SearchResult, p: Passage, content: str) -> str:
    """The passage's exact raw text, or (``context``) the clean piece of it the context shows."""
    return p.text if content == "raw" else result.context[p.context_start : p.context_end]


def check_content(content: str) -> str:
    if content not in CONTENT:
        from hichunk.errors import HichunkError

        raise HichunkError(f"content must be one of {', '.join(CONTENT)} (got {content!r})")
    return content


def source_of(metadata: Mapping, text: str, fallback: str | None = None) -> str:
    """A document's id from a framework's metadata, else ``fallback`` (the framework's own document id),
    else a hash of its text."""
    for key in SOURCE_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return fallback or "text-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def tree_key(source: str) -> str:
    """Where a document's chunk tree is kept in a docstore, byte store or document store."""
    return f"{source}#tree"


def format_of(metadata: Mapping, fixed: str | None) -> str:
    """The parser for a document's text: the one asked for, else from its file name's extension, else plain text.

    A framework document holds text already, so a binary source name (``x.pdf``, ``x.docx``: the loader
    extracted the text) means plain text."""
    if fixed:
        return fixed
    for key in SOURCE_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and os.path.splitext(value)[1]:
            found = detect_format(value)
            return "text" if found in BINARY_PARSERS else found
    return "text"


PAGE_KEYS = ("page", "page_label", "page_number")  # PyPDFLoader: page (0-based), page_label; LlamaIndex: page_label
PAGE_JOINER = "\n\f\n"  # between the pages of one source (a form feed, as hichunk's own PDF text has)


def _page_number(metadata: Mapping) -> int | None:
    """The 1-based page a loader's page document holds, when its metadata says so."""
    page = metadata.get("page")
    if isinstance(page, int) and not isinstance(page, bool) and page >= 0:
        return page + 1
    for key in ("page_number", "page_label"):
        value = metadata.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
        if isinstance(value, str) and value.strip().isdigit() and int(value) >= 1:
            return int(value)
    return None


def is_pdf(metadata: Mapping) -> bool:
    """True when a loader's metadata says the text came from a PDF (a .pdf source name or a PDF file type)."""
    names = [metadata.get(k) for k in SOURCE_KEYS]
    return metadata.get("file_type") == "application/pdf" or any(
        isinstance(v, str) and v.lower().endswith(".pdf") for v in names)


def is_pdf_page(metadata: Mapping) -> bool:
    """True for one page of a PDF as a loader gives it (a .pdf source and a page key)."""
    return is_pdf(metadata) and any(k in metadata for k in PAGE_KEYS)


@dataclass
class SourceText:
    """One document to chunk: a framework document, all pages of one PDF joined, or a binary file to read."""

    source: str
    text: str
    metadata: dict  # the (first) input document's metadata; page keys dropped when pages were joined
    members: list[int] = field(default_factory=list)  # positions of the input documents it came from
    page_starts: list[int] = field(default_factory=list)
    path: str | None = None  # a real PDF/DOCX file, read with hichunk's own reader
    blob: tuple[bytes, str] | None = None  # a file's bytes and format (Haystack ``ByteStream``), read the same way

    def document(self, fmt: str | None) -> Document:
        if self.blob is not None:
            data, blob_format = self.blob
            return parse_bytes(data, blob_format, self.source)
        if self.path is not None:
            doc = load_document(self.path)
            doc.name = self.source
            return doc
        doc = parse_document(self.text, format_of(self.metadata, fmt), self.source)
        doc.page_starts = list(self.page_starts)
        return doc


def _binary_file(text: str, metadata: Mapping) -> str | None:
    """The path of a real binary document (PDF, DOCX) the input names instead of holding its text."""
    candidates = [text.strip()] if len(text) < 4096 and "\n" not in text.strip() else []
    if not text.strip():
        candidates += [v for v in (metadata.get(k) for k in SOURCE_KEYS) if isinstance(v, str)]
    for path in candidates:
        if path and detect_format(path) in BINARY_PARSERS and os.path.isfile(path):
            return path
    return None


def source_texts(items: Sequence[tuple[str, Mapping]], source: Sequence[str]) -> list[SourceText]:
    """Group framework documents into the documents hichunk chunks, in input order.

    Page documents of one PDF (PyPDFLoader, SimpleDirectoryReader: one document per page) are joined in
    page order into one text, so the tree spans the whole PDF and ``page_starts`` keeps the loaders' page
    numbers; a document that names a real PDF or DOCX file instead of holding text is read from the file.
    ``source[i]`` is the id of input ``i``."""
    out: list[SourceText] = []
    groups: dict[str, SourceText] = {}
    pages: dict[str, list[tuple[int, int, str]]] = {}
    for i, (text, metadata) in enumerate(items):
        if is_pdf_page(metadata) and text.strip() != source[i]:
            key = source[i]
            if key not in groups:
                kept = {k: v for k, v in metadata.items() if k not in PAGE_KEYS}
                groups[key] = SourceText(key, "", kept)
                pages[key] = []
                out.append(groups[key])
            number = _page_number(metadata)
            pages[key].append((number if number is not None else len(pages[key]) + 1, i, text))
            groups[key].members.append(i)
            continue
        path = _binary_file(text, metadata)
        named = any(isinstance(metadata.get(k), str) and metadata.get(k) for k in SOURCE_KEYS)
        out.append(SourceText(path if path is not None and not named else source[i], text, dict(metadata), [i],
                              path=path))
    for key, parts in pages.items():
        _join_pages(groups[key], sorted(parts, key=lambda p: (p[0], p[1])))
    return out


def _join_pages(group: SourceText, parts: list[tuple[int, int, str]]) -> None:
    """Join page texts; ``page_starts`` gets an entry per page number up to the last (empty where a page is missing)."""
    text, starts = "", []
    for number, _, page_text in parts:
        if text:
            text += PAGE_JOINER
        while len(starts) < number:  # pages the loader left out start (empty) where the next one does
            starts.append(len(text))
        text += page_text
    group.text, group.page_starts = text, starts


def fill_options(options: FillOptions | None, budget: int | None) -> FillOptions:
    """The retriever's fill options; ``budget`` alone is a shortcut for ``FillOptions(budget=...)``."""
    if options is not None and budget is not None:
        from dataclasses import replace

        return replace(options, budget=budget)
    return options or FillOptions(budget=budget or FillOptions().budget)
