"""Chunk every document of a dataset with one method, timing each and keeping failures visible."""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass

from tqdm import tqdm

from hichunk.document.model import Document
from hichunk.errors import HichunkError
from hichunk.tokens import Tokenizer
from hichunk.tree.model import ChunkTree
from hicbench.runners.methods import MethodSpec

log = logging.getLogger(__name__)
ON_ERROR = ("fail", "count")


@dataclass
class Chunked:
    doc_id: str
    tree: ChunkTree | None
    seconds: float
    error: str | None = None


def chunk_all(docs: dict[str, Document], spec: MethodSpec, tokenizer: Tokenizer, on_error: str = "fail",
              progress: bool = True) -> dict[str, Chunked]:
    """Trees of all documents (in id order). ``on_error="fail"`` stops at the first failure with its
    document named; ``"count"`` records it (the benchmark then scores that item as a miss)."""
    if on_error not in ON_ERROR:
        raise HichunkError(f"on_error must be one of {ON_ERROR}")
    chunker = spec.chunker_for(tokenizer)
    out: dict[str, Chunked] = {}
    for doc_id in tqdm(sorted(docs), desc=f"chunking {spec.label}", unit="doc", disable=not progress, file=sys.stderr):
        t0 = time.perf_counter()
        try:
            tree = chunker.chunk(docs[doc_id])
        except HichunkError as exc:
            if on_error == "fail":
                raise HichunkError(f"{spec.label} failed on {doc_id}: {exc}") from None
            log.warning("%s failed on %s: %s", spec.label, doc_id, exc)
            out[doc_id] = Chunked(doc_id, None, time.perf_counter() - t0, str(exc))
            continue
        out[doc_id] = Chunked(doc_id, tree, time.perf_counter() - t0)
    return out


def tree_meta(chunked: dict[str, Chunked]) -> dict:
    """The settings a method's trees were made with (first successful tree's meta)."""
    for c in chunked.values():
        if c.tree is not None:
            return {k: v for k, v in c.tree.meta.items() if isinstance(v, (str, int, float, bool)) or v is None}
    return {}
