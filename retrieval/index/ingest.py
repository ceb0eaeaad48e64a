"""Ingestion: documents, or chunk trees a user already has, become staged entries for one commit.

Documents are loaded and chunked with the index's method
(``hichunk.retrieval.chunking.get_chunker``) a group at a time. Every tree's
leaves become encoder inputs (``hichunk.retrieval.inputs``) and are embedded
through the index's cached embedder in one length-sorted pass per group, so an
unchanged leaf is never encoded twice. A document whose source bytes did not
change is skipped; an updated one gets its recompute ratio R against the
version it replaces.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from hichunk.chunkers import PROGRESS_METHODS, Chunker
from hichunk.document.model import Document
from hichunk.errors import HichunkError
from hichunk.hashing import text_sha256
from hichunk.retrieval.chunking import get_chunker
from hichunk.retrieval.embedders import CachedEmbedder
from hichunk.retrieval.embedders.base import Progress
from hichunk.retrieval.index.progress import BuildProgress
from hichunk.retrieval.index.reports import DocReport, UpdateReport
from hichunk.retrieval.index.store import Staged, Store
from hichunk.retrieval.inputs import encoder_inputs, recompute
from hichunk.tokens import load_tokenizer
from hichunk.tree.model import LEAF, ChunkTree

log = logging.getLogger(__name__)

DOCS_PER_GROUP = 32  # documents chunked and encoded together (one length-sorted encoding pass)

DocumentSource = tuple[str, Callable[[], Document]]  # (doc id, loader)


@dataclass(frozen=True)
class PathLoader:
    """Loads the file at ``path`` (the document's name, as given) relative to ``base``.

    A plain, picklable loader that works from any working directory, so a Ray
    worker started elsewhere reads the same file and names the document the same.
    """

    path: str
    base: str
    format: str | None = None
    encoding: str = "utf-8"
    encoding_errors: str = "strict"

    @classmethod
    def here(cls, path: str, **options) -> PathLoader:
        return cls(path, os.getcwd(), **options)

    def __call__(self) -> Document:
        from hichunk.document import load_document

        full = os.path.join(self.base, self.path)
        try:
            doc = load_document(full, self.format, self.encoding, self.encoding_errors)
        except HichunkError as exc:
            if full == self.path:
                raise
            raise type(exc)(str(exc).replace(full, self.path)) from None
        doc.name = self.path
        return doc
TreeItem = tuple  # (doc id, tree) or (doc id, tree, leaf vectors in leaf order)


@dataclass
class Version:
    """A new version of one document, waiting for its leaf vectors."""

    doc: str
    tree: ChunkTree
    source: str
    sha256: str
    vectors: np.ndarray | None  # given by the caller or computed elsewhere; None: embed the leaves
    inputs: list[str] | None = None  # the leaves' encoder inputs, when already made
    encoded: int = 0  # of its leaves, how many missed the cache and were encoded

    def encoder_inputs(self, breadcrumb: bool) -> list[str]:
        if self.inputs is None:
            self.inputs = encoder_inputs(self.tree, breadcrumb)
        return self.inputs


def load_version(doc_id: str, loader: Callable[[], Document], chunker: Chunker, committed: dict | None) -> Version | DocReport:
    """Load and chunk one document; a report instead when its text is the committed one's or it cannot be read."""
    try:
        doc = loader()
        sha = text_sha256(doc.text)
        if committed is not None and committed["sha256"] == sha:
            return DocReport(doc_id, "unchanged", committed["leaves"], recompute_ratio=0.0)
        return Version(doc_id, chunker.chunk(doc), doc.name, sha, None)
    except HichunkError as exc:
        log.info("%s: %s", doc_id, exc)  # the report carries it (the CLI prints each failure once)
        return DocReport(doc_id, "failed", error=str(exc))


def leaf_nodes(tree: ChunkTree) -> np.ndarray:
    """Node ids of the tree's leaves, in leaf order (one per vector row)."""
    return np.fromiter((node.id for node in tree.nodes if node.kind == LEAF), dtype=np.int32)


class Ingestor:
    """Stages new versions against a store's committed state, recording what it did in ``report``."""

    def __init__(self, store: Store, embedder: CachedEmbedder, report: UpdateReport):
        self.store, self.embedder, self.report = store, embedder, report
        self.config = store.config

    def chunker(self, progress: bool = False) -> Chunker:
        """The index's chunker; ``progress`` gives methods that can show one a bar per long document."""
        extra = {"progress": True} if progress and self.config.method in PROGRESS_METHODS else {}
        return get_chunker(self.config.method, self.config.chunk_options(), **extra)

    def documents(self, items: Sequence[DocumentSource], progress: bool = False,
                  group_size: int = DOCS_PER_GROUP) -> list[Staged]:
        """Load, chunk and embed ``items``; unchanged and failed documents are reported, not staged."""
        chunker = self.chunker(progress)
        staged: list[Staged] = []
        with BuildProgress(len(items), progress) as bars:
            for start in range(0, len(items), group_size):
                group = []
                for doc_id, loader in items[start : start + group_size]:
                    got = load_version(doc_id, loader, chunker, self.store.docs.get(doc_id))
                    if isinstance(got, DocReport):
                        self.report.docs.append(got)
                    else:
                        group.append(got)
                    bars.docs.update(1)
                bars.expect(sum(len(v.tree.leaves()) for v in group))
                staged += self._stage(group, bars.embedded)
        return staged

    def trees(self, items: Iterable[TreeItem], progress: bool = False) -> list[Staged]:
        """Stage finished trees, embedding the leaves of those given without vectors (in one pass)."""
        versions = []
        for doc_id, tree, *given in items:
            vectors = np.asarray(given[0], dtype=np.float32) if given else None
            if vectors is not None and (vectors.ndim != 2 or vectors.shape != (len(tree.leaves()), self.embedder.dim)):
                raise HichunkError(f"{doc_id}: vectors of shape {vectors.shape} for {len(tree.leaves())} leaves "
                                   f"(the index's embedder gives {self.embedder.dim} dimensions)")
            versions.append(Version(doc_id, tree, tree.name, text_sha256(tree.text), vectors))
        with BuildProgress(len(versions), progress, docs_label="trees") as bars:
            bars.docs.update(len(versions))
            bars.expect(sum(len(v.tree.leaves()) for v in versions if v.vectors is None))
            return self._stage(versions, bars.embedded)

    def _stage(self, versions: list[Version], progress: Progress | None = None) -> list[Staged]:
        breadcrumb = self.config.breadcrumb
        waiting = [v for v in versions if v.vectors is None]
        vectors, missed = self._embed([t for v in waiting for t in v.encoder_inputs(breadcrumb)], progress)
        row = 0
        for v in waiting:
            n = len(v.inputs)
            v.vectors, v.encoded = vectors[row : row + n], int(missed[row : row + n].sum())
            row += n
        return self.finish(versions)

    def finish(self, versions: list[Version]) -> list[Staged]:
        """Versions with their vectors become staged entries; reports (R for updates) are recorded."""
        staged = []
        for v in versions:
            nodes = leaf_nodes(v.tree)
            entry = DocReport(v.doc, "updated" if v.doc in self.store.docs else "added", len(nodes), v.encoded)
            if entry.status == "updated":
                self._measure_update(entry, v.encoder_inputs(self.config.breadcrumb))
            self.report.docs.append(entry)
            staged.append(Staged(v.doc, v.tree, v.vectors, nodes, v.source, v.sha256))
            self.report.leaves += len(nodes)
        return staged

    def _embed(self, texts: list[str], progress: Progress | None) -> tuple[np.ndarray, np.ndarray]:
        """Vectors of ``texts`` and which of them missed the cache; counts go to the report."""
        if not texts:
            return np.zeros((0, self.embedder.dim), np.float32), np.zeros(0, bool)
        e = self.embedder
        hits, encoded, seconds = e.hits, e.encoded, e.encode_seconds
        vectors = e.embed_passages(texts, progress)
        self.report.cache_hits += e.hits - hits
        self.report.encoded += e.encoded - encoded
        self.report.encode_seconds += e.encode_seconds - seconds
        return vectors, e.last_missed

    def _measure_update(self, entry: DocReport, inputs: list[str]) -> None:
        """R of the new inputs against those of the committed version (REFERENCE.md §6)."""
        previous = encoder_inputs(self.store.tree(entry.doc), self.config.breadcrumb)
        r = recompute(previous, inputs, load_tokenizer(self.config.tokenizer or None))
        entry.recompute_ratio = r.ratio
        self.report.new_input_tokens += r.unique_tokens
        self.report.missing_input_tokens += r.recomputed_tokens
