"""A crash-safe index directory: manifest, trees, vector segments, writer lock, commit, garbage collection.

Layout::

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
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict

import numpy as np

from hichunk.errors import HichunkError
from hichunk.retrieval.faults import checkpoint
from hichunk.retrieval.index.config import IndexConfig
from hichunk.retrieval.index.files import atomic_write, fsync_dir, npy_bytes
from hichunk.retrieval.index.store import Staged
from hichunk.tree.export import from_dict, to_dict
from hichunk.tree.model import ChunkTree

INDEX_FORMAT = "hichunk.index/1"
MANIFEST = "manifest.json"


class DirectoryStore:
    """The committed state of one index directory (see the module doc); ``create`` or ``open`` one."""

    def __init__(self, path: str, manifest: dict):
        self.path = path
        self.manifest = manifest
        self.config = IndexConfig(**manifest["config"])
        self.cache_path = os.path.join(path, "cache.sqlite")
        self._segments: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # loaded (memory-mapped) segments

    @classmethod
    def create(cls, path: str, config: IndexConfig, exist_ok: bool = True) -> DirectoryStore:
        """A new empty index at ``path`` (or the existing one, which must have the same config)."""
        if os.path.exists(os.path.join(path, MANIFEST)):
            store = cls.open(path)
            if not exist_ok:
                raise HichunkError(f"{path}: an index already exists there")
            old, new = asdict(store.config), asdict(config)
            if old != new:
                diff = {k: (v, new[k]) for k, v in old.items() if new[k] != v}
                raise HichunkError(f"{path}: the index was built with other settings {diff}; use a new index directory")
            return store
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
    def open(cls, path: str) -> DirectoryStore:
        return cls(path, _read_manifest(path))

    # -- the committed state -----------------------------------------------------------
    @property
    def docs(self) -> dict[str, dict]:
        return self.manifest["docs"]

    @property
    def generation(self) -> int:
        return int(self.manifest.get("generation", 0))

    @property
    def embedder_id(self) -> str | None:
        return self.manifest.get("embedder_id")

    def tree(self, doc: str) -> ChunkTree:
        try:
            with open(os.path.join(self.path, self.docs[doc]["tree"]), "rb") as fh:
                return from_dict(json.loads(fh.read()))
        except FileNotFoundError:
            raise HichunkError(f"{self.path}: the index changed while it was open (another process committed); "
                               "open it again") from None

    def rows(self, doc: str) -> tuple[np.ndarray, np.ndarray]:
        d = self.docs[doc]
        vectors, nodes = self._segment(d["segment"])
        return vectors[d["row"] : d["row"] + d["leaves"]], nodes[d["row"] : d["row"] + d["leaves"]]

    def _segment(self, seg: str) -> tuple[np.ndarray, np.ndarray]:
        if seg not in self._segments:
            base = os.path.join(self.path, "segments", seg)
            self._segments[seg] = (np.load(f"{base}.vec.npy", mmap_mode="r"), np.load(f"{base}.node.npy", mmap_mode="r"))
        return self._segments[seg]

    # -- writing -----------------------------------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the writer lock; re-read the manifest (another process may have committed) and clear
        a crashed writer's leftovers."""
        with _DirLock(os.path.join(self.path, "lock")):
            fresh = _read_manifest(self.path)
            if fresh.get("generation") != self.manifest.get("generation"):
                self._replace(fresh)
            self._collect_garbage()
            yield

    def commit(self, staged: list[Staged], removed: set[str], embedder_id: str | None) -> None:
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
                data = json.dumps(to_dict(s.tree), ensure_ascii=False).encode("utf-8", "surrogatepass")
                tree_file = f"trees/{hashlib.sha256(data).hexdigest()[:32]}.json"
                if not os.path.exists(os.path.join(self.path, tree_file)):
                    atomic_write(os.path.join(self.path, tree_file), data)
                docs[s.doc] = {"source": s.source, "sha256": s.sha256, "tree": tree_file, "segment": seg,
                               "row": row, "leaves": int(len(s.nodes))}
                row += len(s.nodes)
                checkpoint("tree-written")
        self._compact_if_sparse(manifest)
        manifest["segments"] = {k: v for k, v in segments.items() if any(d["segment"] == k for d in docs.values())}
        manifest["generation"] = self.generation + 1
        manifest["embedder_id"] = embedder_id or self.embedder_id
        checkpoint("before-manifest")
        atomic_write(os.path.join(self.path, MANIFEST), json.dumps(manifest, indent=1, ensure_ascii=False).encode())
        checkpoint("after-manifest")
        self._replace(manifest)
        self._collect_garbage()

    def _replace(self, manifest: dict) -> None:
        self.manifest = manifest
        self._segments.clear()

    def _write_segment(self, seg: str, vectors: np.ndarray, nodes: np.ndarray) -> None:
        atomic_write(os.path.join(self.path, "segments", f"{seg}.vec.npy"), npy_bytes(vectors))
        checkpoint("segment-vectors")
        atomic_write(os.path.join(self.path, "segments", f"{seg}.node.npy"), npy_bytes(nodes))

    def _compact_if_sparse(self, manifest: dict) -> None:
        """Rewrite live rows into one segment when dead rows outnumber them (updates leave old rows behind)."""
        docs, segments = manifest["docs"], manifest["segments"]
        live = sum(d["leaves"] for d in docs.values())
        if sum(segments[s]["rows"] for s in {d["segment"] for d in docs.values()}) <= 2 * live:
            return
        vectors, nodes = [], []
        row = 0
        for doc_id in sorted(docs):
            d = docs[doc_id]
            vec, nod = self._segment(d["segment"])
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


def _read_manifest(path: str) -> dict:
    try:
        with open(os.path.join(path, MANIFEST), "rb") as fh:
            manifest = json.loads(fh.read())
    except FileNotFoundError:
        raise HichunkError(f"{path}: no index here (build one with `hichunk index build`)") from None
    except (OSError, ValueError) as exc:
        raise HichunkError(f"{path}: cannot read the index manifest: {exc}") from exc
    if manifest.get("format") != INDEX_FORMAT:
        raise HichunkError(f"{path}: not a hichunk index (format {manifest.get('format')!r})")
    return manifest


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
