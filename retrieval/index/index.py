"""The index users see: add, update and remove documents or trees, search with Auto-Merge.

    index = Index.create("./idx", IndexConfig())   # a crash-safe directory (or Index.open("./idx"))
    index = Index.memory(IndexConfig())            # the same index in memory: nothing written to disk
    index.add_paths(["docs/"])                     # chunk, embed (through the cache) and commit
    index.add_trees([("doc-1", tree)])             # trees you already have; their leaves are embedded
    result = index.search("how do I ...?", FillOptions(budget=4096))

Where the state lives is the store's business (``disk.DirectoryStore``,
``memory.MemoryStore``); how documents become leaf vectors is ingestion's
(``ingest.Ingestor``). Both kinds of index behave the same for add, update,
remove and search.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, ExitStack, nullcontext
from typing import TYPE_CHECKING

import numpy as np

from hichunk.errors import HichunkError
from hichunk.kvcache import MEMORY, KVCache
from hichunk.retrieval.embedders import CachedEmbedder, Embedder, load_embedder
from hichunk.retrieval.embedders.batcher import QueryBatcher
from hichunk.retrieval.index.ann import default_expansion, require_backend
from hichunk.retrieval.index.candidates import AnnRanker, Candidate, ExactRanker
from hichunk.retrieval.index.config import APPROXIMATE, IndexConfig
from hichunk.retrieval.index.disk import DirectoryStore
from hichunk.retrieval.index.ingest import DOCS_PER_GROUP, DocumentSource, Ingestor, PathLoader, TreeItem
from hichunk.retrieval.index.lance import LanceStore, is_store_index
from hichunk.retrieval.index.memory import MemoryStore
from hichunk.retrieval.index.reports import DocReport, UpdateReport
from hichunk.retrieval.index.store import Pool, Staged, Store, Written, gather_pool
from hichunk.retrieval.search import FillOptions, SearchResult, TreeView, search_index
from hichunk.tokens import Tokenizer
from hichunk.tree.model import ChunkTree

if TYPE_CHECKING:
    from hichunk.retrieval.index.distributed import Executor, RaySettings

MAX_VIEWS = 4096  # search views kept per index (least recently used go first)
MIGRATION_SAMPLE = 64  # document ids looked at to find the root of an index made before roots were recorded


def doc_id_for(path: str, root: str | None = None) -> str:
    """A document's id: its path relative to ``root`` (default: the working directory), absolute when outside it.

    An index passes the root it recorded when it was created (``Index.doc_id``), so the same file
    gets the same id from whatever directory a command runs in.
    """
    full = os.path.abspath(path)
    rel = os.path.relpath(full, os.path.abspath(root) if root else os.getcwd())
    return os.path.normpath(full if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel)


def legacy_root(doc_ids: Iterable[str], near: Iterable[str]) -> str:
    """For an index made before roots were recorded, the directory its relative ids were made in: the first
    of ``near`` and the directories above each (nearest first) under which the most of them name a file."""
    relative = [d for d in doc_ids if not os.path.isabs(d)][:MIGRATION_SAMPLE]
    candidates: list[str] = []
    for start in near:
        path = os.path.abspath(start)
        while path not in candidates:
            candidates.append(path)
            path = os.path.dirname(path)
    best, found = candidates[0], 0
    for candidate in candidates:
        hits = sum(os.path.isfile(os.path.join(candidate, d)) for d in relative)
        if hits > found:
            best, found = candidate, hits
    return best


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class Index:
    """Make one with ``Index.create(path, config)``, ``Index.open(path)`` or ``Index.memory(config)``.

    ``embedder`` (any ``Embedder``) replaces the one the config names, e.g. a
    model already loaded; the index records its id and refuses another later.

    Searches may run in many threads at once (one loaded index serving
    concurrent queries): the shared caches (tree views, the leaf pool, the
    embedder) are filled under a lock and read-only once built, and query
    encoding runs in one thread at a time, since embedders make no promise
    about threads. With ``batch_queries()`` on, queries that wait for the
    encoder are encoded together (``hichunk.retrieval.embedders.batcher``),
    as ``hichunk serve`` does. A write must not overlap searches; the HTTP
    service orders them with a readers-writer lock.
    """

    def __init__(self, store: Store, embedder: Embedder | None = None):
        if store.config.search in APPROXIMATE:
            require_backend(store.config.search)  # a missing library is one line now, not a traceback at the first search
        self.store = store
        self._base_embedder = embedder
        self._embedder: CachedEmbedder | None = None
        self._views: OrderedDict[tuple[str, str], TreeView] = OrderedDict()
        self._pool: Pool | None = None
        self._ranker: ExactRanker | AnnRanker | LanceStore | None = None
        self._ann_expansion: int | None = None  # None: by the graph's size (ann.default_expansion)
        self._generation = store.generation
        self._lock = threading.RLock()  # the caches above
        self._encode_lock = threading.Lock()  # query encoding
        self._batcher: QueryBatcher | None = None

    @classmethod
    def create(cls, path: str, config: IndexConfig | None = None, exist_ok: bool = True,
               embedder: Embedder | None = None) -> Index:
        """A new empty index directory at ``path`` (or the existing one, which must have the same config)."""
        config = (config or IndexConfig()).with_defaults()
        if config.store or is_store_index(path):  # the data in a database (embedded or by URI)
            return cls(LanceStore.create(path, config, exist_ok), embedder)
        return cls(DirectoryStore.create(path, config, exist_ok), embedder)

    @classmethod
    def open(cls, path: str, embedder: Embedder | None = None) -> Index:
        return cls(LanceStore.open(path) if is_store_index(path) else DirectoryStore.open(path), embedder)

    @classmethod
    def memory(cls, config: IndexConfig | None = None, embedder: Embedder | None = None,
               cache: str | None = None) -> Index:
        """An index in memory; ``cache`` is an embedding cache file to share across runs (default: in memory)."""
        return cls(MemoryStore((config or IndexConfig()).with_defaults(), cache or MEMORY), embedder)

    # -- facts -------------------------------------------------------------------------
    @property
    def config(self) -> IndexConfig:
        return self.store.config

    @property
    def docs(self) -> dict[str, dict]:
        return self.store.docs

    def __len__(self) -> int:
        return len(self.docs)

    @property
    def n_leaves(self) -> int:
        return sum(d["leaves"] for d in self.docs.values())

    @property
    def generation(self) -> int:
        """The committed state's number; it grows with every commit (by this process or another)."""
        return self.store.generation

    @property
    def root(self) -> str:
        """The directory the ids of documents added by path are relative to: recorded when the index was
        created (an index made before that gets one found from its ids, written at its next commit); an
        in-memory index uses the working directory."""
        recorded = getattr(self.store, "root", None)
        if recorded:
            return recorded
        if not hasattr(self.store, "record_root"):
            return os.getcwd()
        found = legacy_root(self.docs, [os.getcwd(), os.path.dirname(os.path.abspath(self.store.path))])
        self.store.record_root(found)
        return found

    def doc_id(self, path: str) -> str:
        """The id of the document at ``path`` in this index (relative to ``root``; absolute outside it)."""
        return doc_id_for(path, self.root)

    def changed_on_disk(self) -> bool:
        """Whether another process committed since this index last looked (cheap: one stat)."""
        check = getattr(self.store, "changed_on_disk", None)
        return bool(check and check())

    def refresh(self) -> bool:
        """Follow commits by other processes (re-read the manifest when it changed); True when the state is new.

        Must not overlap searches on this object (a server calls it under its writer lock)."""
        refresh = getattr(self.store, "refresh", None)
        with self._lock:
            if refresh is None or not refresh():
                return False
            self._follow_store()
            return True

    def tree(self, doc: str) -> ChunkTree:
        if doc not in self.docs:
            raise HichunkError(f"no document {doc!r} in the index")
        return self.store.tree(doc)

    def view(self, doc: str, tokenizer: Tokenizer | None = None) -> TreeView:
        """The search view of a document's tree (cached), sizes in ``tokenizer`` (default: the tree's)."""
        with self._lock:
            self._follow_store()
            key = (doc, getattr(tokenizer, "name", ""))
            view = self._views.get(key)
            if view is None:
                view = self._views[key] = TreeView.build(doc, self.tree(doc), tokenizer)
                if len(self._views) > MAX_VIEWS:
                    self._views.popitem(last=False)
            else:
                self._views.move_to_end(key)
            return view

    def pool(self) -> Pool:
        """(vectors, row -> document slot, row -> node id, document ids) of every live leaf, built once per commit."""
        with self._lock:
            self._follow_store()
            if self._pool is None:
                self._pool = gather_pool(self.store)
            return self._pool

    def ranker(self) -> ExactRanker | AnnRanker | LanceStore:
        """The search backend over the committed state (exact, the ANN graph, or a store's database), built
        once per commit."""
        with self._lock:
            self._follow_store()
            if self._ranker is None:
                if hasattr(self.store, "ranked"):  # a database store searches itself
                    self._ranker = self.store
                elif self.config.search in APPROXIMATE and any(d["leaves"] for d in self.docs.values()):
                    table = self.store.key_table()
                    self._ranker = AnnRanker(self.store.ann_graph(table), table, self.ann_expansion)
                else:
                    self._ranker = ExactRanker(self.pool())
            return self._ranker

    @property
    def ann_expansion(self) -> int:
        """Search "ann": the graph search's candidate list per leaf of the first block of 128 (default: by the
        index's size, 8 up to 20k leaves, 16 up to 200k, 32 up to 500k, then 64); search "ivf": x probes x/8
        percent of the lists (default: 800, all of them, up to 20k leaves, 200 up to 200k, 160 up to 500k, then 112). Larger finds more of the exact top leaves and takes longer."""
        return self._ann_expansion if self._ann_expansion is not None else default_expansion(self.n_leaves, self.config.search)

    @ann_expansion.setter
    def ann_expansion(self, value: int) -> None:
        if int(value) < 1:
            raise HichunkError(f"the ANN expansion must be at least 1 (got {value})")
        with self._lock:
            self._ann_expansion = int(value)
            if isinstance(self._ranker, AnnRanker):
                self._ranker.expansion = self._ann_expansion

    def ranked(self, vector: np.ndarray, docs: list[str] | None = None) -> Iterator[Candidate]:
        """``(doc, leaf node id, score)`` best first for a query vector; ``docs`` limits the pool."""
        return self.ranker().ranked(vector, docs)

    def _follow_store(self) -> None:
        """Drop views, pool and ranker when the committed state changed (a commit here or by another process)."""
        if self._generation != self.store.generation:
            self._views.clear()
            self._pool = None
            self._ranker = None
            self._generation = self.store.generation

    @property
    def embedder(self) -> CachedEmbedder:
        """The index's embedder behind its embedding cache, loaded on first use."""
        with self._lock:
            if self._embedder is None:
                base = self._base_embedder or load_embedder(self.config.embedder or None)
                recorded = self.store.embedder_id
                if recorded and recorded != base.id:
                    raise HichunkError(f"the index was built with embedder {recorded!r} but {base.id!r} is in use; "
                                       "rebuild the index")
                self._embedder = CachedEmbedder(base, KVCache(self.store.cache_path, "embedding cache"))
            return self._embedder

    def embed_query(self, query: str):
        """The query's vector (the encoder serves one caller, or one batch, at a time)."""
        embedder = self.embedder
        if self._batcher is not None:
            return self._batcher(query)
        with self._encode_lock:
            return embedder.embed_queries([query])[0]

    def batch_queries(self, on: bool = True, max_batch: int = 32) -> None:
        """Encode concurrent queries together (much higher throughput under load; vectors equal to a lone
        encoding within float32 rounding). Off by default: one caller's results then never depend on others'."""
        with self._lock:
            self._batcher = QueryBatcher(lambda texts: self.embedder.embed_queries(texts), max_batch) if on else None

    def close(self) -> None:
        """Release the embedding cache file (the index can be used again; it reopens it)."""
        with self._lock:
            if self._embedder is not None:
                self._embedder.cache.close()
                self._embedder = None

    # -- writing -----------------------------------------------------------------------
    def add(self, documents: Iterable[DocumentSource], progress: bool = False, group_size: int = DOCS_PER_GROUP,
            ray: str | bool | RaySettings | Executor | None = None, workers: int | None = None,
            remove: Iterable[str] = (), guard: Callable[[], AbstractContextManager] | None = None) -> UpdateReport:
        """Add or update documents given as ``(doc id, loader)`` and remove the ids in ``remove``; one commit.

        A document whose source bytes are unchanged is skipped. For updated
        documents the report gives R, the recompute ratio of REFERENCE.md §6.
        ``ray`` chunks and embeds on Ray (``distributed``): ``True`` or
        ``"local"`` starts a local Ray with ``workers`` CPUs, ``"auto"`` joins
        the running cluster, any other string is a Ray address, or any
        ``Executor``. Loaders then run on the workers (they are pickled).
        ``guard`` (e.g. a readers-writer lock's writer side) is held only
        while the committed state changes: when the writer lock picks up other
        processes' commits, and for the commit itself; searches on this object
        may run while documents are parsed, chunked and embedded.
        """
        items = list(documents)
        gone = list(remove)
        both = sorted({doc for doc, _ in items} & set(gone))
        if both:
            raise HichunkError(f"document {both[0]!r} is both added and removed")
        if ray is None and workers is None:
            return self._write(lambda ingest: self._written(ingest.documents(items, progress, group_size)), gone, guard)
        return self._write(lambda ingest: self._distributed(ingest, items, ray, workers, progress), gone, guard)

    def add_paths(self, paths: Iterable[str], progress: bool = False, group_size: int = DOCS_PER_GROUP,
                  ray: str | bool | RaySettings | Executor | None = None, workers: int | None = None) -> UpdateReport:
        """Add or update the documents at ``paths`` (files, or directories walked for known types).

        With ``ray`` (see ``add``), the largest files go first, so that a long
        document does not finish last.
        """
        from hichunk.document.inputs import collect_inputs

        found = collect_inputs(list(paths))
        if ray is not None:
            found.sort(key=lambda p: -_file_size(p))
        return self.add([(self.doc_id(p), PathLoader.here(p)) for p in found], progress, group_size, ray, workers)

    def add_trees(self, items: Iterable[TreeItem], progress: bool = False,
                  guard: Callable[[], AbstractContextManager] | None = None) -> UpdateReport:
        """Add or replace documents by chunk trees you already have; one commit.

        Each item is ``(doc id, tree)``, whose leaves are embedded through the
        index's embedder and cache like any document's, or ``(doc id, tree,
        vectors)`` with one L2-normalised row per leaf in leaf order, made by
        your own encoder (vectors must come from the index's embedder model to
        be comparable with its queries). ``guard``: as in ``add``.
        """
        return self._write(lambda ingest: self._written(ingest.trees(items, progress)), [], guard)

    def remove(self, doc_ids: Iterable[str], guard: Callable[[], AbstractContextManager] | None = None) -> UpdateReport:
        """Remove documents by id; one commit (``guard``: as in ``add``)."""
        return self._write(None, list(doc_ids), guard)

    def _write(self, stage: Callable[[Ingestor], list[Written]] | None, remove: list[str],
               guard: Callable[[], AbstractContextManager] | None = None) -> UpdateReport:
        """Stage under the writer lock against the latest committed state, then commit once (removals too)."""
        started = time.perf_counter()
        report = UpdateReport()
        guard = guard or nullcontext
        with ExitStack() as held:
            with guard():  # taking the writer lock re-reads what other processes committed
                held.enter_context(self.store.writing())
            gone: dict[str, int] = {}
            for doc_id in remove:
                if doc_id not in self.docs:
                    raise HichunkError(f"no document {doc_id!r} in the index")
                gone[doc_id] = self.docs[doc_id]["leaves"]
            written = stage(Ingestor(self.store, self.embedder, report)) if stage else []
            report.docs += [DocReport(doc_id, "removed", leaves) for doc_id, leaves in gone.items()]
            if written or gone:
                with guard():
                    self.store.commit(written, set(gone), self.embedder.id if written else None)
        report.seconds = time.perf_counter() - started
        return report

    def _written(self, staged: list[Staged]) -> list[Written]:
        return [self.store.write(staged)] if staged else []

    def _distributed(self, ingest: Ingestor, items: list[DocumentSource], ray, workers: int | None,
                     progress: bool) -> list[Written]:
        from hichunk.retrieval.index.distributed import RaySettings, ingest_distributed, ray_executor

        spec = self._base_embedder or self.config.embedder
        if hasattr(ray, "submit"):  # an Executor given as it is
            settings = RaySettings(workers=workers)
            return ingest_distributed(ingest, items, ray, spec, settings, self.store.write, progress)
        settings = RaySettings.of(ray, workers)
        with ray_executor(settings) as executor:
            return ingest_distributed(ingest, items, executor, spec, settings, self.store.write, progress)

    # -- searching ---------------------------------------------------------------------
    def search(self, query: str, options: FillOptions | None = None, tokenizer: Tokenizer | None = None,
               docs: list[str] | None = None) -> SearchResult:
        """Rank the pool's leaves for ``query`` and fill the budget (Auto-Merge on by default);
        ``docs`` limits the pool to those documents."""
        return search_index(self, query, options, tokenizer, docs)
