"""A persistent, crash-safe index of chunk trees and leaf vectors.

Layout of an index directory::

    manifest.json            the committed state: config, documents, segments
    trees/<hash>.json        one chunk tree per document (hichunk.tree JSON), named by content hash
    segments/<id>.vec.npy    leaf vectors (float32, L2-normalised), one row per leaf
    segments/<id>.node.npy   the tree node id of each row
    cache.sqlite             embedding cache (model id + exact encoder input -> vector)
    lock                     held by the one writer

Files other than the manifest are immutable once written. A commit writes
its new files first (temp + fsync + rename), then replaces ``manifest.json``
the same way: that rename is the single commit point, so a kill -9 at any
moment leaves the index as before or as after. Files no committed manifest
refers to are deleted after a commit or by the next writer. Finished
encodings live in the cache from the moment their batch ends, so a rerun
after a crash encodes only what had not finished.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import time
import uuid
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Iterable

import numpy as np

from hichunk.document.model import Document
from hichunk.errors import HichunkError
from hichunk.tree.export import from_dict, to_dict
from hichunk.tree.model import LEAF, ChunkTree
from hichunk.retrieval.faults import checkpoint
from hichunk.retrieval.index.files import atomic_write, fsync_dir, npy_bytes

log = logging.getLogger(__name__)

INDEX_FORMAT = "hichunk.index/1"
MANIFEST = "manifest.json"
DEFAULT_METHOD = "hichunk"  # the split-point model; explicit headings are kept (hints "use")
DOCS_PER_GROUP = 32  # documents chunked and encoded together (one length-sorted encoding pass)


@dataclass
class IndexConfig:
    """How documents become leaves and vectors; fixed for the life of an index."""

    embedder: str = ""  # "" = the offline default
    breadcrumb: bool = True
    method: str = DEFAULT_METHOD
    leaf_tokens: int = 200
    max_level: int = 10
    merge_over_chunk: bool = True
    hints: str = "use"
    tokenizer: str = ""  # "" = the offline default

    def chunk_options(self):
        from hichunk.chunkers import ChunkOptions
        from hichunk.tokens import load_tokenizer

        return ChunkOptions(leaf_tokens=self.leaf_tokens, max_level=self.max_level, merge_over_chunk=self.merge_over_chunk,
                            hints=self.hints, tokenizer=load_tokenizer(self.tokenizer or None))


@dataclass
class DocReport:
    doc: str
    status: str  # added | updated | unchanged | removed | failed
    leaves: int = 0
    encoded: int = 0  # leaves whose vector was computed (not found in the cache)
    recompute_ratio: float | None = None  # REFERENCE.md §6 R against the previous version (updates only)
    error: str | None = None


@dataclass
class UpdateReport:
    docs: list[DocReport] = field(default_factory=list)
    leaves: int = 0
    encoded: int = 0
    cache_hits: int = 0
    new_input_tokens: int = 0  # tokens of unique new-version inputs of updated documents
    missing_input_tokens: int = 0  # ... of those not in the previous version
    seconds: float = 0.0
    encode_seconds: float = 0.0

    @property
    def recompute_ratio(self) -> float | None:
        """R over all updated documents: missing tokens / tokens of unique new inputs."""
        return self.missing_input_tokens / self.new_input_tokens if self.new_input_tokens else None

    def count(self, status: str) -> int:
        return sum(1 for d in self.docs if d.status == status)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["recompute_ratio"] = self.recompute_ratio
        return out


def doc_id_for(path: str) -> str:
    """A document's id: its path relative to the working directory (absolute when outside it)."""
    rel = os.path.relpath(os.path.abspath(path))
    return os.path.normpath(rel if not rel.startswith("..") else os.path.abspath(path))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class _Staged:
    doc: str
    tree_bytes: bytes
    vectors: np.ndarray
    nodes: np.ndarray
    source: str
    sha256: str


class Index:
    """Open with ``Index.open(path)`` or ``Index.create(path, config)``."""

    def __init__(self, path: str, manifest: dict):
        self.path = path
        self.manifest = manifest
        self.config = IndexConfig(**manifest["config"])
        self._embedder = None
        self._views: OrderedDict[tuple[str, str], object] = OrderedDict()
        self._pool = None  # (matrix, row_doc, row_node, doc_names) built on first search

    # -- opening ---------------------------------------------------------------
    @classmethod
    def create(cls, path: str, config: IndexConfig | None = None, exist_ok: bool = True) -> "Index":
        """A new empty index at ``path`` (or the existing one, which must have the same config)."""
        from hichunk.retrieval.embedders import DEFAULT_EMBEDDER
        from hichunk.tokens import DEFAULT_TOKENIZER

        config = config or IndexConfig()
        config = replace(config, embedder=config.embedder or DEFAULT_EMBEDDER, tokenizer=config.tokenizer or DEFAULT_TOKENIZER)
        _check_method(config.method)
        if os.path.exists(os.path.join(path, MANIFEST)):
            index = cls.open(path)
            if not exist_ok:
                raise HichunkError(f"{path}: an index already exists there")
            if asdict(index.config) != asdict(config):
                diff = {k: (v, asdict(config)[k]) for k, v in asdict(index.config).items() if asdict(config)[k] != v}
                raise HichunkError(f"{path}: the index was built with other settings {diff}; use a new index directory")
            return index
        if os.path.exists(path) and not os.path.isdir(path):
            raise HichunkError(f"{path}: not a directory")
        if os.path.isdir(path) and os.listdir(path):
            raise HichunkError(f"{path}: the directory is not empty and holds no index")
        for sub in ("", "trees", "segments"):
            os.makedirs(os.path.join(path, sub), exist_ok=True)
        manifest = {"format": INDEX_FORMAT, "generation": 0, "config": asdict(config), "docs": {}, "segments": {}}
        atomic_write(os.path.join(path, MANIFEST), json.dumps(manifest, indent=1).encode())
        return cls(path, manifest)

    @classmethod
    def open(cls, path: str) -> "Index":
        manifest_path = os.path.join(path, MANIFEST)
        try:
            with open(manifest_path, "rb") as fh:
                manifest = json.loads(fh.read())
        except FileNotFoundError:
            raise HichunkError(f"{path}: no index here (build one with `hichunk index build`)") from None
        except (OSError, ValueError) as exc:
            raise HichunkError(f"{path}: cannot read the index manifest: {exc}") from exc
        if manifest.get("format") != INDEX_FORMAT:
            raise HichunkError(f"{path}: not a hichunk index (format {manifest.get('format')!r})")
        return cls(path, manifest)

    # -- facts -------------------------------------------------------------------
    @property
    def docs(self) -> dict[str, dict]:
        return self.manifest["docs"]

    def __len__(self) -> int:
        return len(self.docs)

    @property
    def n_leaves(self) -> int:
        return sum(d["leaves"] for d in self.docs.values())

    def tree(self, doc: str) -> ChunkTree:
        entry = self.docs.get(doc)
        if entry is None:
            raise HichunkError(f"no document {doc!r} in the index")
        try:
            with open(os.path.join(self.path, entry["tree"]), "rb") as fh:
                return from_dict(json.loads(fh.read()))
        except FileNotFoundError:
            raise HichunkError(f"{self.path}: the index changed while it was open (another process committed); "
                               "open it again") from None

    def view(self, doc: str, tokenizer=None):
        """The search view of a document's tree (cached), sizes in ``tokenizer`` (default: the tree's)."""
        from hichunk.retrieval.search.view import TreeView

        key = (doc, getattr(tokenizer, "name", ""))
        view = self._views.get(key)
        if view is None:
            view = TreeView.build(doc, self.tree(doc), tokenizer)
            self._views[key] = view
            if len(self._views) > 4096:
                self._views.popitem(last=False)
        else:
            self._views.move_to_end(key)
        return view

    @property
    def embedder(self):
        if self._embedder is None:
            from hichunk.kvcache import KVCache
            from hichunk.retrieval.embedders import CachedEmbedder, load_embedder

            self._embedder = CachedEmbedder(load_embedder(self.config.embedder or None),
                                            KVCache(os.path.join(self.path, "cache.sqlite"), "embedding cache"))
            recorded = self.manifest.get("embedder_id")
            if recorded and recorded != self._embedder.id:
                raise HichunkError(f"{self.path}: built with embedder {recorded!r} but {self._embedder.id!r} is installed; "
                                   "rebuild the index")
        return self._embedder

    # -- writing -------------------------------------------------------------------
    def add(self, documents: Iterable[tuple[str, Callable[[], Document]]], progress: bool = False,
            group_size: int = DOCS_PER_GROUP) -> UpdateReport:
        """Add or update documents given as ``(doc id, loader)``; one commit at the end.

        A document whose source bytes are unchanged is skipped. For updated
        documents the report gives R, the recompute ratio of REFERENCE.md §6.
        """
        from tqdm import tqdm

        from hichunk.retrieval.chunking import get_chunker
        from hichunk.retrieval.inputs import encoder_inputs

        started = time.perf_counter()
        report = UpdateReport()
        items = list(documents)
        with self._lock():
            self._reload()
            chunker = get_chunker(self.config.method, self.config.chunk_options())
            embedder = self.embedder
            hits0, encoded0, secs0 = embedder.hits, embedder.encoded, embedder.encode_seconds
            staged: list[_Staged] = []
            bar = tqdm(total=len(items), desc="indexing", unit="doc", disable=not progress, file=_stderr())
            for start in range(0, len(items), group_size):
                group = []
                for doc_id, loader in items[start : start + group_size]:
                    try:
                        doc = loader()
                        data = doc.text.encode("utf-8", "surrogatepass")
                        sha = _sha256(data)
                        old = self.docs.get(doc_id)
                        if old is not None and old["sha256"] == sha:
                            report.docs.append(DocReport(doc_id, "unchanged", old["leaves"], recompute_ratio=0.0))
                            continue
                        tree = chunker.chunk(doc)
                        group.append((doc_id, doc, sha, tree, encoder_inputs(tree, self.config.breadcrumb), old))
                    except HichunkError as exc:
                        report.docs.append(DocReport(doc_id, "failed", error=str(exc)))
                        log.error("%s: %s", doc_id, exc)
                bar.update(min(group_size, len(items) - start))
                if not group:
                    continue
                vectors = embedder.embed_passages([t for g in group for t in g[4]])
                missed = embedder.last_missed
                row = 0
                for doc_id, doc, sha, tree, inputs, old in group:
                    n = len(inputs)
                    nodes = np.fromiter((node.id for node in tree.nodes if node.kind == LEAF), dtype=np.int32, count=n)
                    tree_bytes = json.dumps(to_dict(tree), ensure_ascii=False).encode("utf-8", "surrogatepass")
                    staged.append(_Staged(doc_id, tree_bytes, vectors[row : row + n], nodes, doc.name, sha))
                    row += n
                    entry = DocReport(doc_id, "updated" if old else "added", n, int(missed[row - n : row].sum()))
                    if old is not None:
                        r = self._recompute(old, inputs)
                        report.new_input_tokens += r.unique_tokens
                        report.missing_input_tokens += r.recomputed_tokens
                        entry.recompute_ratio = r.ratio
                    report.docs.append(entry)
            bar.close()
            report.encoded = embedder.encoded - encoded0
            report.cache_hits = embedder.hits - hits0
            report.encode_seconds = embedder.encode_seconds - secs0
            report.leaves = sum(len(s.nodes) for s in staged)
            if staged:
                self._commit(staged, removed=set())
        report.seconds = time.perf_counter() - started
        return report

    def add_paths(self, paths: Iterable[str], progress: bool = False, group_size: int = DOCS_PER_GROUP) -> UpdateReport:
        """Add or update the documents at ``paths`` (files, or directories walked for known types)."""
        from hichunk.document.inputs import collect_inputs
        from hichunk.document import load_document

        found = collect_inputs(list(paths))
        return self.add([(doc_id_for(p), (lambda p=p: load_document(p))) for p in found], progress, group_size)

    def add_embedded(self, items: Iterable[tuple[str, ChunkTree, np.ndarray]], source: str = "") -> None:
        """Add trees whose leaf vectors were computed elsewhere (rows in leaf order, normalised); one commit.

        For users with their own encoder pipeline, and for benchmarks that need large pools.
        """
        staged = []
        for doc_id, tree, vectors in items:
            nodes = np.fromiter((n.id for n in tree.nodes if n.kind == LEAF), dtype=np.int32)
            if vectors.shape[0] != len(nodes):
                raise HichunkError(f"{doc_id}: {vectors.shape[0]} vectors for {len(nodes)} leaves")
            data = json.dumps(to_dict(tree), ensure_ascii=False).encode("utf-8", "surrogatepass")
            staged.append(_Staged(doc_id, data, np.asarray(vectors, dtype=np.float32), nodes, source or tree.name,
                                  _sha256(tree.text.encode("utf-8", "surrogatepass"))))
        with self._lock():
            self._reload()
            if staged:
                self._commit(staged, removed=set())

    def remove(self, doc_ids: Iterable[str]) -> UpdateReport:
        report = UpdateReport()
        with self._lock():
            self._reload()
            gone = set()
            for doc_id in doc_ids:
                if doc_id not in self.docs:
                    raise HichunkError(f"no document {doc_id!r} in the index")
                gone.add(doc_id)
                report.docs.append(DocReport(doc_id, "removed", self.docs[doc_id]["leaves"]))
            if gone:
                self._commit([], removed=gone)
        return report

    def _recompute(self, old: dict, inputs: list[str]):
        """R of the new inputs against the previous version's (REFERENCE.md §6)."""
        from hichunk.tokens import load_tokenizer
        from hichunk.retrieval.inputs import encoder_inputs, recompute

        with open(os.path.join(self.path, old["tree"]), "rb") as fh:
            previous = encoder_inputs(from_dict(json.loads(fh.read())), self.config.breadcrumb)
        return recompute(previous, inputs, load_tokenizer(self.config.tokenizer or None))

    # -- commit ----------------------------------------------------------------------
    def _commit(self, staged: list[_Staged], removed: set[str]) -> None:
        manifest = json.loads(json.dumps(self.manifest))
        docs, segments = manifest["docs"], manifest["segments"]
        for doc_id in removed:
            docs.pop(doc_id, None)
        if staged:
            seg = uuid.uuid4().hex[:16]
            vectors = np.concatenate([s.vectors for s in staged]).astype(np.float32, copy=False)
            nodes = np.concatenate([s.nodes for s in staged]).astype(np.int32, copy=False)
            self._write_segment(seg, vectors, nodes)
            segments[seg] = {"rows": int(len(nodes)), "dim": int(vectors.shape[1])}
            row = 0
            for s in staged:
                tree_file = f"trees/{_sha256(s.tree_bytes)[:32]}.json"
                if not os.path.exists(os.path.join(self.path, tree_file)):
                    atomic_write(os.path.join(self.path, tree_file), s.tree_bytes)
                docs[s.doc] = {"source": s.source, "sha256": s.sha256, "tree": tree_file, "segment": seg,
                               "row": row, "leaves": int(len(s.nodes))}
                row += len(s.nodes)
                checkpoint("tree-written")
        self._compact_if_sparse(manifest)
        manifest["segments"] = {k: v for k, v in segments.items() if any(d["segment"] == k for d in docs.values())}
        manifest["generation"] = self.manifest.get("generation", 0) + 1
        manifest["embedder_id"] = self.embedder.id
        checkpoint("before-manifest")
        atomic_write(os.path.join(self.path, MANIFEST), json.dumps(manifest, indent=1, ensure_ascii=False).encode())
        checkpoint("after-manifest")
        self.manifest = manifest
        self._pool = None
        self._views.clear()
        self._collect_garbage()

    def _write_segment(self, seg: str, vectors: np.ndarray, nodes: np.ndarray) -> None:
        atomic_write(os.path.join(self.path, "segments", f"{seg}.vec.npy"), npy_bytes(vectors))
        checkpoint("segment-vectors")
        atomic_write(os.path.join(self.path, "segments", f"{seg}.node.npy"), npy_bytes(nodes))

    def _compact_if_sparse(self, manifest: dict) -> None:
        """Rewrite live rows into one segment when dead rows outnumber them (updates leave old rows behind)."""
        docs, segments = manifest["docs"], manifest["segments"]
        used = {d["segment"] for d in docs.values()}
        live = sum(d["leaves"] for d in docs.values())
        total = sum(segments[s]["rows"] for s in used)
        if total <= 2 * live:
            return
        vectors, nodes = [], []
        cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        row = 0
        for doc_id in sorted(docs):
            d = docs[doc_id]
            if d["segment"] not in cache:
                cache[d["segment"]] = self._load_segment(d["segment"])
            vec, nod = cache[d["segment"]]
            vectors.append(np.asarray(vec[d["row"] : d["row"] + d["leaves"]]))
            nodes.append(np.asarray(nod[d["row"] : d["row"] + d["leaves"]]))
            d["row"] = row
            row += d["leaves"]
        seg = uuid.uuid4().hex[:16]
        dim = next(iter(segments.values()))["dim"]
        self._write_segment(seg, np.concatenate(vectors) if vectors else np.zeros((0, dim), np.float32),
                            np.concatenate(nodes) if nodes else np.zeros(0, np.int32))
        for d in docs.values():
            d["segment"] = seg
        segments[seg] = {"rows": row, "dim": dim}

    def _collect_garbage(self) -> None:
        """Delete files the committed manifest does not refer to (leftovers of replaced or crashed writes)."""
        keep_trees = {os.path.basename(d["tree"]) for d in self.docs.values()}
        keep_segs = set(self.manifest["segments"])
        for sub, keep in (("trees", lambda f: f in keep_trees),
                          ("segments", lambda f: f.split(".")[0] in keep_segs and not f.startswith("."))):
            folder = os.path.join(self.path, sub)
            for name in os.listdir(folder):
                if not keep(name):
                    os.remove(os.path.join(folder, name))
                    checkpoint("gc")
        for name in os.listdir(self.path):
            if name.startswith(".") and name.endswith(".tmp"):
                os.remove(os.path.join(self.path, name))
        fsync_dir(self.path)

    def _reload(self) -> None:
        """Re-read the manifest (another process may have committed) and clear a crashed writer's leftovers."""
        fresh = Index.open(self.path)
        if fresh.manifest.get("generation") != self.manifest.get("generation"):
            self.manifest = fresh.manifest
            self._pool = None
            self._views.clear()
        self._collect_garbage()

    def _lock(self):
        return _DirLock(os.path.join(self.path, "lock"))

    # -- reading vectors -------------------------------------------------------------
    def _load_segment(self, seg: str) -> tuple[np.ndarray, np.ndarray]:
        base = os.path.join(self.path, "segments", seg)
        return np.load(f"{base}.vec.npy", mmap_mode="r"), np.load(f"{base}.node.npy", mmap_mode="r")

    def pool(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
        """(vectors, row -> document slot, row -> node id, document ids) of every live leaf, loaded once."""
        if self._pool is None:
            names = sorted(self.docs)
            dims = {s["dim"] for s in self.manifest["segments"].values()}
            dim = dims.pop() if dims else 0
            vectors = np.zeros((self.n_leaves, dim), dtype=np.float32)
            row_doc = np.zeros(self.n_leaves, dtype=np.int32)
            row_node = np.zeros(self.n_leaves, dtype=np.int32)
            loaded: dict[str, tuple[np.ndarray, np.ndarray]] = {}
            row = 0
            for slot, doc_id in enumerate(names):
                d = self.docs[doc_id]
                if d["segment"] not in loaded:
                    loaded[d["segment"]] = self._load_segment(d["segment"])
                vec, nod = loaded[d["segment"]]
                n = d["leaves"]
                vectors[row : row + n] = vec[d["row"] : d["row"] + n]
                row_node[row : row + n] = nod[d["row"] : d["row"] + n]
                row_doc[row : row + n] = slot
                row += n
            self._pool = (vectors, row_doc, row_node, names)
        return self._pool

    # -- searching ----------------------------------------------------------------------
    def search(self, query: str, options=None, tokenizer=None, docs: list[str] | None = None):
        """Rank the pool's leaves for ``query`` and fill the budget (Auto-Merge on by default)."""
        from hichunk.retrieval.search import search_index

        return search_index(self, query, options, tokenizer, docs)


def _check_method(method: str) -> None:
    from hichunk.chunkers import METHODS

    if method not in METHODS:
        raise HichunkError(f"unknown chunking method {method!r} (choose from {', '.join(METHODS)})")


def _stderr():
    import sys

    return sys.stderr


class _DirLock:
    """An exclusive advisory lock on a file; the OS drops it when the process dies."""

    def __init__(self, path: str):
        self.path = path
        self.fh = None

    def __enter__(self):
        self.fh = open(self.path, "a+")
        try:
            fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.close()
            raise HichunkError(f"{os.path.dirname(self.path)}: another process is writing this index") from None
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fh.fileno(), fcntl.LOCK_UN)
        self.fh.close()
