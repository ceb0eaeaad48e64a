"""A crash-safe index directory: manifest, trees, vector segments, writer lock, commit, garbage collection.

Layout::

    manifest.json            the committed state: config, documents, segments
    trees/<hash>.json        one chunk tree per document (hichunk.tree JSON), named by content hash
    segments/<id>.vec.npy    leaf vectors (float32, L2-normalised), one row per leaf
    segments/<id>.node.npy   the tree node id of each row
    ann/<hash>.usearch       search "ann" only: the HNSW graph of the live rows, named by content hash
    cache.sqlite             embedding cache (model id + exact encoder input -> vector)
    lock                     held by the one writer

Files other than the manifest are immutable once written. A commit writes
its new files first (temp + fsync + rename), then replaces ``manifest.json``
the same way: that rename is the single commit point, so a kill -9 at any
moment leaves the index as before or as after. Files no committed manifest
refers to are deleted after a commit or by the next writer. Finished
encodings live in the cache from the moment their batch ends, so a rerun
after a crash encodes only what had not finished.

With ``search="ann"`` every commit also writes the graph of the rows it
leaves live (``ann.py``: removed rows taken out by key, new rows added; a
compaction rebuilds it) before the manifest, which names it; a reader that
finds it missing or not matching the live rows rebuilds it from the vectors.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import numpy as np

from hichunk.errors import HichunkError, IndexBusy, IndexChanged
from hichunk.retrieval.faults import checkpoint
from hichunk.retrieval.index.ann import KEY_SHIFT, Graph, backend, backend_version, content_name, load_checked, rebuild_warning
from hichunk.retrieval.index.candidates import KeyTable
from hichunk.retrieval.index.config import APPROXIMATE, IndexConfig
from hichunk.retrieval.index.files import atomic_write, fsync_dir, npy_bytes
from hichunk.retrieval.index.store import Staged
from hichunk.tree.export import from_dict, to_dict
from hichunk.tree.model import ChunkTree

INDEX_FORMAT = "hichunk.index/1"
BUILD_BLOCK = 65536  # rows read from the segments and added to a graph at a time
MANIFEST = "manifest.json"


@dataclass
class Segment:
    """A vector segment and its documents' trees, written and waiting for a commit."""

    seg: str
    rows: int
    dim: int
    docs: dict[str, dict]  # document id -> its manifest entry


class DirectoryStore:
    """The committed state of one index directory (see the module doc); ``create`` or ``open`` one."""

    def __init__(self, path: str, manifest: dict, seen: tuple | None = None):
        self.path = path
        self.manifest = manifest
        self._seen = seen  # (inode, mtime, size) of the manifest file this state was read from
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
        manifest = {"format": INDEX_FORMAT, "generation": 0, "config": asdict(config), "docs": {}, "segments": {},
                    "root": os.getcwd()}
        atomic_write(os.path.join(path, MANIFEST), json.dumps(manifest, indent=1).encode())
        return cls.open(path)

    @classmethod
    def open(cls, path: str) -> DirectoryStore:
        seen = _manifest_stat(path)
        return cls(path, _read_manifest(path), seen)

    def changed_on_disk(self) -> bool:
        """Whether the manifest file is another than the one this state was read from (one stat, no read)."""
        return _manifest_stat(self.path) != self._seen

    def refresh(self) -> bool:
        """Follow commits made by other processes: re-read the manifest when it changed on disk; True when the
        committed state (its generation) is a new one. Readers of this store must not be reading meanwhile."""
        if not self.changed_on_disk():
            return False
        seen = _manifest_stat(self.path)
        fresh = _read_manifest(self.path)
        self._seen = seen
        if fresh.get("generation") == self.generation:
            return False
        self._replace(fresh)
        return True

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

    @property
    def root(self) -> str | None:
        """The directory document ids are relative to (recorded at creation; None in indexes made before)."""
        return self.manifest.get("root")

    def record_root(self, root: str) -> None:
        """Give an index made before roots were recorded its root; the next commit writes it."""
        self.manifest["root"] = root

    def tree(self, doc: str) -> ChunkTree:
        try:
            with open(os.path.join(self.path, self.docs[doc]["tree"]), "rb") as fh:
                return from_dict(json.loads(fh.read()))
        except FileNotFoundError:
            raise IndexChanged(f"{self.path}: the index changed while it was open (another process committed); "
                               "open it again") from None

    def rows(self, doc: str) -> tuple[np.ndarray, np.ndarray]:
        d = self.docs[doc]
        vectors, nodes = self._segment(d["segment"])
        return vectors[d["row"] : d["row"] + d["leaves"]], nodes[d["row"] : d["row"] + d["leaves"]]

    def _segment(self, seg: str) -> tuple[np.ndarray, np.ndarray]:
        if seg not in self._segments:
            base = os.path.join(self.path, "segments", seg)
            try:
                self._segments[seg] = (np.load(f"{base}.vec.npy", mmap_mode="r"), np.load(f"{base}.node.npy", mmap_mode="r"))
            except FileNotFoundError:
                raise IndexChanged(f"{self.path}: the index changed while it was open (another process committed); "
                                   "open it again") from None
        return self._segments[seg]

    # -- writing -----------------------------------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the writer lock; re-read the manifest (another process may have committed) and clear
        a crashed writer's leftovers."""
        with _DirLock(os.path.join(self.path, "lock")):
            root = self.root
            seen = _manifest_stat(self.path)
            fresh = _read_manifest(self.path)
            self._seen = seen
            if fresh.get("generation") != self.manifest.get("generation"):
                self._replace(fresh)
            if root and not self.root:  # a root found for an index made before roots were recorded
                self.record_root(root)
            self._collect_garbage()
            yield

    def write(self, staged: list[Staged]) -> Segment | None:
        """Write one vector segment and the trees of ``staged``; a later ``commit`` makes them visible.

        Until then no manifest refers to these files, so a crash leaves them to
        the next writer's garbage collection.
        """
        if not staged:
            return None
        seg = uuid.uuid4().hex[:16]
        vectors = np.concatenate([s.vectors for s in staged]).astype(np.float32, copy=False)
        nodes = np.concatenate([s.nodes for s in staged]).astype(np.int32, copy=False)
        self._write_segment(seg, vectors, nodes)
        docs = {}
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
        return Segment(seg, int(len(nodes)), int(vectors.shape[1]), docs)

    def commit(self, written: list[Segment | None], removed: set[str], embedder_id: str | None) -> None:
        manifest = json.loads(json.dumps(self.manifest))
        docs, segments = manifest["docs"], manifest["segments"]
        for doc_id in removed:
            docs.pop(doc_id, None)
        for w in written:
            if w is not None:
                segments[w.seg] = {"rows": w.rows, "dim": w.dim, "seq": _next_seq(manifest)}
                docs.update(w.docs)
        compacted = self._compact_if_sparse(manifest)
        manifest["segments"] = {k: v for k, v in segments.items() if any(d["segment"] == k for d in docs.values())}
        if self.config.search in APPROXIMATE:
            self._write_graph(manifest, rebuild=compacted)
        manifest["generation"] = self.generation + 1
        manifest["embedder_id"] = embedder_id or self.embedder_id
        checkpoint("before-manifest")
        atomic_write(os.path.join(self.path, MANIFEST), json.dumps(manifest, indent=1, ensure_ascii=False).encode())
        checkpoint("after-manifest")
        self._seen = _manifest_stat(self.path)
        self._replace(manifest)
        self._collect_garbage()

    def _replace(self, manifest: dict) -> None:
        self.manifest = manifest
        self._segments.clear()

    def _write_segment(self, seg: str, vectors: np.ndarray, nodes: np.ndarray) -> None:
        atomic_write(os.path.join(self.path, "segments", f"{seg}.vec.npy"), npy_bytes(vectors))
        checkpoint("segment-vectors")
        atomic_write(os.path.join(self.path, "segments", f"{seg}.node.npy"), npy_bytes(nodes))

    def _compact_if_sparse(self, manifest: dict) -> bool:
        """Rewrite live rows into one segment when dead rows outnumber them (updates leave old rows behind)."""
        docs, segments = manifest["docs"], manifest["segments"]
        live = sum(d["leaves"] for d in docs.values())
        if sum(segments[s]["rows"] for s in {d["segment"] for d in docs.values()}) <= 2 * live:
            return False
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
        segments[seg] = {"rows": row, "dim": dim, "seq": _next_seq(manifest)}
        return True

    # -- the ANN graph (search "ann") ------------------------------------------------------
    def _live_keys(self, manifest: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
        """(graph key, tree node id, document slot) of every live row of ``manifest``, documents in id
        order then leaf order, and the document ids."""
        names = sorted(manifest["docs"])
        if not names:
            return np.zeros(0, np.uint64), np.zeros(0, np.int32), np.zeros(0, np.int32), names
        entries = [manifest["docs"][d] for d in names]
        segments = manifest["segments"]
        counts = np.array([d["leaves"] for d in entries], dtype=np.int64)
        total = int(counts.sum())
        first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        within = np.arange(total, dtype=np.int64) - np.repeat(first, counts)
        start = np.array([d["row"] for d in entries], dtype=np.int64)
        seq = np.array([segments[d["segment"]]["seq"] for d in entries], dtype=np.uint64)
        rows = np.repeat(start, counts) + within
        keys = (np.repeat(seq, counts) << np.uint64(KEY_SHIFT)) | rows.astype(np.uint64)
        slots = np.repeat(np.arange(len(names), dtype=np.int32), counts)
        nodes = np.zeros(total, dtype=np.int32)
        row_seq = np.repeat(seq, counts)
        for seg, info in segments.items():
            mask = row_seq == np.uint64(info["seq"])
            if mask.any():
                nodes[mask] = self._segment(seg)[1][rows[mask]]
        return keys, nodes, slots, names

    def _fetch(self, manifest: dict, keys: np.ndarray) -> np.ndarray:
        """The float32 vectors of graph ``keys`` (rows of ``manifest``'s segments)."""
        by_seq = {info["seq"]: seg for seg, info in manifest["segments"].items()}
        dim = next(iter(manifest["segments"].values()))["dim"] if manifest["segments"] else 0
        keys = np.asarray(keys, dtype=np.uint64)
        seq, row = keys >> np.uint64(KEY_SHIFT), (keys & np.uint64(0xFFFFFFFF)).astype(np.int64)
        out = np.empty((len(keys), dim), dtype=np.float32)
        for s in np.unique(seq):
            mask = seq == s
            out[mask] = self._segment(by_seq[int(s)])[0][row[mask]]
        return out

    def _build_graph(self, manifest: dict, keys: np.ndarray) -> Graph:
        dim = next(iter(manifest["segments"].values()))["dim"] if manifest["segments"] else 0
        return backend(self.config.search)[0].build_from(keys, lambda part: self._fetch(manifest, part), dim, BUILD_BLOCK)

    def _stored_graph(self, manifest: dict, keys: np.ndarray) -> Graph | None:
        """The graph ``manifest`` names, when intact and holding exactly ``keys``; None (with a warning) if not."""
        entry = manifest.get("ann")
        if not entry or not len(keys):
            if len(keys):
                rebuild_warning(self.path, "the manifest names no graph file")
            return None
        params = backend(self.config.search)[1](**entry["params"])
        graph, why = load_checked(os.path.join(self.path, entry["file"]), entry["file"], params, np.sort(keys),
                                  self.config.search)
        if graph is None:
            rebuild_warning(self.path, why)
        return graph

    def _write_graph(self, manifest: dict, rebuild: bool) -> None:
        """Bring the graph to ``manifest``'s live rows (from the committed one unless ``rebuild``) and write it."""
        keys = self._live_keys(manifest)[0]
        if not len(keys):
            manifest["ann"] = None
            return
        old_keys = self._live_keys(self.manifest)[0]
        graph = None if rebuild else self._stored_graph(self.manifest, old_keys)
        if graph is not None and not graph.fits(len(keys)):  # lists trained for another size: train them again
            graph = None
        if graph is None:
            graph = self._build_graph(manifest, keys)
        else:
            graph.remove(np.setdiff1d(old_keys, keys))
            added = np.setdiff1d(keys, old_keys)
            for start in range(0, len(added), BUILD_BLOCK):
                graph.add(added[start : start + BUILD_BLOCK], self._fetch(manifest, added[start : start + BUILD_BLOCK]))
        data = graph.to_bytes()
        name = content_name(data, backend(self.config.search)[2])
        os.makedirs(os.path.join(self.path, "ann"), exist_ok=True)
        if not os.path.exists(os.path.join(self.path, name)):
            atomic_write(os.path.join(self.path, name), data)
        checkpoint("ann-written")
        manifest["ann"] = {"file": name, "rows": int(len(keys)), "library": backend_version(self.config.search),
                           "params": graph.params.to_dict()}

    def key_table(self) -> KeyTable:
        keys, nodes, slots, names = self._live_keys(self.manifest)
        manifest = self.manifest
        dim = next(iter(manifest["segments"].values()))["dim"] if manifest["segments"] else 0
        return KeyTable(keys, slots, nodes, names, lambda pos: self._fetch(manifest, keys[pos]), dim)

    def ann_graph(self, table: KeyTable) -> Graph:
        """The committed graph, checked; rebuilt in memory from the vectors when it is missing or stale."""
        graph = self._stored_graph(self.manifest, table.keys)
        return graph if graph is not None else self._build_graph(self.manifest, table.keys)

    def _collect_garbage(self) -> None:
        """Delete files the committed manifest does not refer to (leftovers of replaced or crashed writes)."""
        keep_trees = {os.path.basename(d["tree"]) for d in self.docs.values()}
        keep_segs = set(self.manifest["segments"])
        ann = self.manifest.get("ann")
        keep_ann = {os.path.basename(ann["file"])} if ann else set()
        for sub, keep in (("trees", lambda f: f in keep_trees),
                          ("segments", lambda f: f.split(".")[0] in keep_segs and not f.startswith(".")),
                          ("ann", lambda f: f in keep_ann)):
            folder = os.path.join(self.path, sub)
            if not os.path.isdir(folder):
                continue
            for name in os.listdir(folder):
                if not keep(name):
                    os.remove(os.path.join(folder, name))
                    checkpoint("gc")
        for name in os.listdir(self.path):
            if name.startswith(".") and name.endswith(".tmp"):
                os.remove(os.path.join(self.path, name))
        fsync_dir(self.path)


def _next_seq(manifest: dict) -> int:
    """A new segment's sequence number (the high half of its rows' graph keys)."""
    seq = int(manifest.get("next_seq", 0))
    manifest["next_seq"] = seq + 1
    return seq


def _manifest_stat(path: str) -> tuple | None:
    """What tells one manifest file from the next (each commit renames a new file into place)."""
    try:
        st = os.stat(os.path.join(path, MANIFEST))
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


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
            raise IndexBusy(f"{os.path.dirname(self.path)}: another process is writing this index") from None
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fh.fileno(), fcntl.LOCK_UN)
        self.fh.close()
