"""Chunk every document of a dataset with one method, timing each and keeping failures visible."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass

from tqdm import tqdm

from hichunk.bench.runners.methods import MethodSpec
from hichunk.chunkers.base import Chunker
from hichunk.document.model import Document
from hichunk.errors import HichunkError
from hichunk.hashing import text_sha256
from hichunk.kvcache import KVCache
from hichunk.tokens import Tokenizer
from hichunk.tree.export import from_dict, to_dict
from hichunk.tree.model import ChunkTree

log = logging.getLogger(__name__)
ON_ERROR = ("fail", "count")


@dataclass
class Chunked:
    doc_id: str
    tree: ChunkTree | None
    seconds: float
    error: str | None = None


class TreeCache:
    """Trees kept between benchmark runs (opt-in: ``--reuse-trees DIR``), in ``DIR/trees.sqlite``.

    The key is the chunker's class path, the method's options, the tokenizer,
    the hichunk version and the document's text. It cannot see model weights
    or embedder files: clear the folder after changing a model. A cached tree
    keeps the time its chunking took when it was made. The store is a
    ``hichunk.kvcache.KVCache``, with its failure policy.
    """

    def __init__(self, folder: str):
        self.folder = folder
        self.store = KVCache(os.path.join(folder, "trees.sqlite"), "tree cache")

    def _key(self, spec: MethodSpec, tokenizer: Tokenizer, doc: Document) -> bytes:
        from hichunk import __version__
        from hichunk.chunkers import METHODS

        key = json.dumps([METHODS.get(spec.chunker), list(spec.chunking_key), tokenizer.name, __version__,
                          text_sha256(doc.text)])
        return bytes.fromhex(text_sha256(key))

    def get(self, spec: MethodSpec, tokenizer: Tokenizer, doc: Document) -> tuple[ChunkTree, float] | None:
        raw = self.store.get(self._key(spec, tokenizer, doc))
        if raw is None:
            return None
        try:
            data = json.loads(raw)
            return from_dict(data["tree"]), float(data["seconds"])
        except (ValueError, KeyError, TypeError):  # an unreadable entry is a miss; the next put replaces it
            return None

    def put(self, spec: MethodSpec, tokenizer: Tokenizer, doc: Document, tree: ChunkTree, seconds: float) -> None:
        value = json.dumps({"tree": to_dict(tree), "seconds": seconds}, ensure_ascii=False)
        self.store.put(self._key(spec, tokenizer, doc), value.encode("utf-8", "surrogatepass"))


def chunk_one(chunker: Chunker, spec: MethodSpec, tokenizer: Tokenizer, doc: Document,
              cache: TreeCache | None = None) -> tuple[ChunkTree, float]:
    """(tree, seconds) of one document, from the cache when it holds it."""
    cached = cache.get(spec, tokenizer, doc) if cache is not None else None
    if cached is not None:
        return cached
    t0 = time.perf_counter()
    tree = chunker.chunk(doc)
    seconds = time.perf_counter() - t0
    if cache is not None:
        cache.put(spec, tokenizer, doc, tree, seconds)
    return tree, seconds


def chunk_all(docs: dict[str, Document], spec: MethodSpec, tokenizer: Tokenizer, on_error: str = "fail",
              progress: bool = True, cache: TreeCache | None = None,
              families: Mapping[str, str] | None = None) -> dict[str, Chunked]:
    """Trees of all documents (in id order). ``on_error="fail"`` stops at the first failure with its
    document named; ``"count"`` records it (the benchmark then scores that item as a miss).

    When the method's model is a folder of leave-family-out fold models (``hichunk train --folds``),
    each document is chunked by the fold model that never saw its family (``families``: id -> family;
    by default read from the id, ``hichunk.models.train.corpus.families.document_family``).
    """
    if on_error not in ON_ERROR:
        raise HichunkError(f"on_error must be one of {ON_ERROR}")
    from hichunk.models.train.folds import is_fold_dir

    if spec.model is not None and is_fold_dir(spec.model):
        return _chunk_by_fold(docs, spec, tokenizer, on_error, progress, cache, families)
    chunker = spec.chunker_for(tokenizer)
    out: dict[str, Chunked] = {}
    for doc_id in tqdm(sorted(docs), desc=f"chunking {spec.label}", unit="doc", disable=not progress, file=sys.stderr):
        t0 = time.perf_counter()
        try:
            out[doc_id] = Chunked(doc_id, *chunk_one(chunker, spec, tokenizer, docs[doc_id], cache))
        except HichunkError as exc:
            if on_error == "fail":
                raise HichunkError(f"{spec.label} failed on {doc_id}: {exc}") from None
            log.warning("%s failed on %s: %s", spec.label, doc_id, exc)
            out[doc_id] = Chunked(doc_id, None, time.perf_counter() - t0, str(exc))
    return out


def _chunk_by_fold(docs: dict[str, Document], spec: MethodSpec, tokenizer: Tokenizer, on_error: str, progress: bool,
                   cache: TreeCache | None, families: Mapping[str, str] | None) -> dict[str, Chunked]:
    from dataclasses import replace

    from hichunk.models.train.corpus.families import document_family
    from hichunk.models.train.folds import fold_dir, load_plan

    plan = load_plan(spec.model)
    by_fold: dict[int, dict[str, Document]] = {}
    for doc_id, doc in docs.items():
        family = families[doc_id] if families is not None else document_family(doc_id)
        by_fold.setdefault(plan.fold_of(family), {})[doc_id] = doc
    out: dict[str, Chunked] = {}
    for index, members in sorted(by_fold.items()):
        out.update(chunk_all(members, replace(spec, model=fold_dir(spec.model, index)), tokenizer, on_error, progress,
                             cache))
    return dict(sorted(out.items()))


def tree_meta(chunked: dict[str, Chunked]) -> dict:
    """The settings a method's trees were made with; per-document counts (model windows, parse errors) summed."""
    metas = [c.tree.meta for c in chunked.values() if c.tree is not None]
    out: dict = {}
    for key in dict.fromkeys(k for m in metas for k in m):
        values = [m.get(key) for m in metas]
        if not all(v is None or isinstance(v, (str, int, float, bool)) for v in values):
            continue
        if all(v == values[0] for v in values):
            out[key] = values[0]
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            out[f"{key} (sum over documents)"] = sum(values)
        else:
            out[key] = "varies"
    return out
