"""What the service's worker processes run; the fork server imports this module once (``workers.PRELOAD``).

``chunk_job`` parses one document within the work limits and chunks it. Chunkers are kept
in a small LRU keyed by their options: each is a cheap view over the one shared split-point
model of the process (``hichunk.models.registry.shipped_encoder``), so a client that sends
every request with other options costs at most ``MAX_CHUNKERS`` small objects, never a model
each. The index update's tasks (chunk and embed) are ``hichunk.retrieval.index.distributed``'s.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from hichunk.api import make_chunker
from hichunk.document.limits import WorkLimits, parse_within
from hichunk.document.load import parse_document
from hichunk.document.model import Document
from hichunk.retrieval.embedders import Embedder, load_embedder
from hichunk.retrieval.index import distributed  # noqa: F401 - the update's tasks, preloaded
from hichunk.tree import to_dict

MAX_CHUNKERS = 8


@dataclass(frozen=True)
class ChunkSpec:
    """The chunking options of one request."""

    method: str = "hichunk"
    leaf_tokens: int = 200
    max_level: int = 10
    merge_over_chunk: bool = True
    hints: str = "use"


@dataclass(frozen=True)
class ChunkJob:
    """One ``/chunk`` request's work: the document (text, or a file's bytes) and how to chunk it."""

    source: str | bytes
    format: str
    name: str
    encoding: str
    spec: ChunkSpec
    limits: WorkLimits
    embedder: Embedder | str | None  # the semantic method's (the index's embedder: an object or its name)


@dataclass(frozen=True)
class TextSource:
    """A document sent as text (an index update's): a loader that can travel to the worker that chunks it."""

    text: str
    format: str
    name: str

    def __call__(self) -> Document:
        return parse_document(self.text, self.format, self.name)


_chunkers: OrderedDict[tuple, object] = OrderedDict()
_lock = threading.Lock()


def chunker_for(spec: ChunkSpec, embedder: Embedder | str | None):
    """A chunker for ``spec`` from the LRU (made when missing; the model behind it is shared)."""
    key = (spec, embedder if isinstance(embedder, str) or embedder is None else embedder.id)
    with _lock:
        chunker = _chunkers.get(key)
        if chunker is not None:
            _chunkers.move_to_end(key)
            return chunker
    semantic = None
    if spec.method == "semantic":
        semantic = load_embedder(embedder or None) if isinstance(embedder, str) or embedder is None else embedder
    chunker = make_chunker(spec.method, embedder=semantic, leaf_tokens=spec.leaf_tokens, max_level=spec.max_level,
                           merge_over_chunk=spec.merge_over_chunk, hints=spec.hints)
    with _lock:
        _chunkers[key] = chunker
        while len(_chunkers) > MAX_CHUNKERS:
            _chunkers.popitem(last=False)
    return chunker


def chunk_job(job: ChunkJob) -> dict:
    """The tree JSON of ``hichunk chunk --format json`` for the job's document."""
    doc = parse_within(job.source, job.format, job.name, job.limits, job.encoding)
    return to_dict(chunker_for(job.spec, job.embedder).chunk(doc))


def warm_up(embedder: Embedder | str | None = None, with_embedder: bool = False) -> bool:
    """Load the default split-point model (and the index's embedder, for updates) in a fresh worker."""
    from hichunk.models.registry import load_model

    load_model(None)
    if with_embedder and (isinstance(embedder, str) or embedder is None):
        load_embedder(embedder or None)
    return True
