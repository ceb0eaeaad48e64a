"""The front door: chunk anything into a tree with one call.

``hichunk.chunk`` accepts what a user has at hand (a path, a string of text, a
loaded ``Document``), resolves models and embedders by name, and validates
every option before any work starts.
"""

from __future__ import annotations

import os
from typing import Any

from hichunk.chunkers import DEFAULT_METHOD, ChunkOptions
from hichunk.document import Document, load_document, parse_document
from hichunk.document.load import EXTENSIONS
from hichunk.errors import HichunkError, InputError
from hichunk.protocol import SplitPointModel
from hichunk.retrieval.chunking import get_chunker
from hichunk.retrieval.embedders import Embedder, load_embedder
from hichunk.tree import ChunkTree

_MAX_PATH = 4096


def as_document(source: str | os.PathLike | Document | None = None, format: str | None = None, *,
                text: str | None = None) -> Document:
    """A ``Document`` from a path, a string, a ``Document``, or ``text=`` (always read as text).

    A ``str`` is read as a path when it names an existing file (one line, no longer than a path can
    be), otherwise as the document's text; but a one-line string ending in a document extension
    (``.md``, ``.txt``, ``.pdf``, ``.html``, ``.rst``, ``.docx`` ...) that names no file is a typo'd
    path, and raises ``InputError`` instead of chunking the name. ``text=`` (or a ``Document``) says
    "this is text" outright. ``format`` overrides detection (text by default for strings; from the
    extension for files).
    """
    if text is not None:
        if source is not None:
            raise HichunkError("give the source or text=..., not both")
        if not isinstance(text, str):
            raise HichunkError(f"text= takes a str, not a {type(text).__name__}")
        return parse_document(text, format or "text", "<text>")
    if isinstance(source, Document):
        return source
    if isinstance(source, os.PathLike):
        return load_document(os.fspath(source), format)
    if not isinstance(source, str):
        raise HichunkError(f"cannot chunk a {type(source).__name__}: give a path, a string, a Document or text=...")
    one_line = len(source) <= _MAX_PATH and "\n" not in source
    if one_line and os.path.isfile(source):
        return load_document(source, format)
    if one_line and _document_extension(source):
        raise InputError(f"{source}: no such file (to chunk the string itself, pass text={source!r})")
    return parse_document(source, format or "text", "<text>")


def _document_extension(name: str) -> bool:
    """Whether ``name`` ends like a document file (``.md``, ``.pdf``, ``.txt.gz`` ...), not like a sentence."""
    lower = name.lower().removesuffix(".gz")
    return name == name.strip() and os.path.splitext(lower)[1] in EXTENSIONS


def chunk(source: str | os.PathLike | Document | None = None, method: str = DEFAULT_METHOD, *,
          text: str | None = None, format: str | None = None, model: str | SplitPointModel | None = None,
          embedder: str | Embedder | None = None, **options: Any) -> ChunkTree:
    """Chunk ``source`` (a path, a string or a ``Document``) or ``text=`` into a tree.

    A one-line string ending in a document extension must name a file (a missing one is an
    ``InputError``, not a one-leaf tree of the name); ``text=`` always chunks the string as text.
    ``method``: hichunk (the split-point model, default), structure, fixed,
    recursive, cdc or semantic. ``model``: for hichunk, a registered name
    (``encoder``, ``hichunk-gen``), an adapter folder, a Hugging Face directory
    or hub id, or a model object. ``embedder``: for semantic, a name or an
    embedder object. ``options``: ``ChunkOptions`` fields (``leaf_tokens``,
    ``max_level``, ``merge_over_chunk``, ``hints``, ``tokenizer``).
    """
    chunker = make_chunker(method, model=model, embedder=embedder, **options)  # every option checked first
    return chunker.chunk(as_document(source, format, text=text))


def make_chunker(method: str = DEFAULT_METHOD, *, model: str | SplitPointModel | None = None,
                 embedder: str | Embedder | None = None, **options: Any):
    """The chunker ``chunk`` uses, made once (models loaded, options checked) to chunk many documents."""
    try:
        opts = ChunkOptions(**options)
    except TypeError as exc:
        raise HichunkError(f"unknown chunking option: {exc}") from None
    extra: dict[str, Any] = {}
    if model is not None:
        if method != "hichunk":
            raise HichunkError(f"a model only applies to the hichunk method, not {method}")
        from hichunk.models.registry import load_model

        extra["model"] = load_model(model) if isinstance(model, str) else model
    if embedder is not None:
        if method != "semantic":
            raise HichunkError(f"an embedder only applies to the semantic method, not {method}")
        extra["embedder"] = load_embedder(embedder) if isinstance(embedder, str) else embedder
    return get_chunker(method, opts, **extra)
