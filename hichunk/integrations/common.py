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
from collections.abc import Mapping

from hichunk.document import detect_format
from hichunk.retrieval.search import FillOptions, Passage, SearchResult
from hichunk.tree.model import ChunkTree, Node
from hichunk.tree.spans import pages, raw_span

CONTENT = ("raw", "context")  # what a retrieved passage's text is: its exact raw span, or the context's clean piece
SOURCE_KEYS = ("source", "file_path", "file_name", "filename")  # where frameworks' loaders keep the file name


def node_key(source: str, node_id: int) -> str:
    """A node's id across documents: ``"<source>#<node id>"``."""
    return f"{source}#{node_id}"


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


def source_of(metadata: Mapping, text: str) -> str:
    """A document's id from a framework's metadata, or a hash of its text when it has none."""
    for key in SOURCE_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return "text-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def format_of(metadata: Mapping, fixed: str | None) -> str:
    """The parser for a document: the one asked for, else from its file name's extension, else plain text."""
    if fixed:
        return fixed
    for key in SOURCE_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and os.path.splitext(value)[1]:
            return detect_format(value)
    return "text"


def fill_options(options: FillOptions | None, budget: int | None) -> FillOptions:
    """The retriever's fill options; ``budget`` alone is a shortcut for ``FillOptions(budget=...)``."""
    if options is not None and budget is not None:
        from dataclasses import replace

        return replace(options, budget=budget)
    return options or FillOptions(budget=budget or FillOptions().budget)
