"""An index kept in LanceDB: embedded inside the index directory, or a database reached by URI.

``IndexConfig(store="embedded")`` (``hichunk index build --store embedded``) keeps the database in
``<index>/lancedb``; ``store="s3://bucket/path"`` (or ``gs://``, ``az://``, a path on a shared file
system, ``db://NAME`` for LanceDB Cloud/Enterprise with ``LANCEDB_API_KEY``) reaches one that many
machines share, with the same client code. The index directory then holds only ``store.json`` (where
the database is), the embedding cache and the writer lock. Why LanceDB, measured against Milvus Lite
and Qdrant's local mode: README, "Stores".

Tables::

    leaves   doc, version, node, vector      one row per leaf of every written document version
    trees    doc, version, tree, ...         one row per document version (hichunk.tree JSON)
    commits  generation, state               the committed state: config, documents -> live version

Every Lance write (append, delete) is an atomic commit of its own table. A hichunk commit writes the
trees, then the leaves of the new versions under a fresh version id (no committed state names it, so
nothing is visible), then appends one row to ``commits``: that append is the single commit point, so a
kill -9 at any moment leaves the index as before or as after. Rows no committed state names (replaced
or removed versions, a crashed writer's) are deleted after a commit and by the next writer; searches
drop any they meet. Search is LanceDB's flat (exact) scan, re-scored from the float32 vectors and
ranked as an ``Index`` ranks its own rows (score, document id, leaf order).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import numpy as np

from hichunk.errors import HichunkError
from hichunk.extras import require_extra
from hichunk.retrieval.faults import checkpoint
from hichunk.retrieval.index.candidates import Candidate
from hichunk.retrieval.index.config import IndexConfig
from hichunk.retrieval.index.disk import _DirLock
from hichunk.retrieval.index.files import atomic_write
from hichunk.retrieval.index.store import Staged
from hichunk.retrieval.search.ranking import GROWTH
from hichunk.tree.export import from_dict, to_dict
from hichunk.tree.model import ChunkTree

STORE_FILE = "store.json"
STORE_FORMAT = "hichunk.store/1"
EMBEDDED = "embedded"
FIRST_BLOCK = 128  # leaves asked of the database by a query's first block (then x GROWTH)
OVERSAMPLE = 2  # rows fetched per ranked leaf: the block's tail is cut where ties could reorder it
DELETE_CHUNK = 500  # document ids per delete predicate


def is_store_index(path: str) -> bool:
    return os.path.exists(os.path.join(path, STORE_FILE))


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _in(column: str, values: list[str]) -> str:
    return f"{column} IN ({', '.join(_quote(v) for v in values)})"


def _lancedb():
    require_extra("lancedb", what="the lancedb index store")
    import lancedb

    return lancedb


@dataclass
class Batch:
    """Rows written for one ``write`` call, waiting for a commit: their version and document entries."""

    version: int
    docs: dict[str, dict]


class LanceStore:
    """The committed state of an index kept in LanceDB (see the module doc); ``create`` or ``open`` one."""

    def __init__(self, path: str, uri: str, state: dict | None = None):
        self.path, self.uri = path, uri
        self.cache_path = os.path.join(path, "cache.sqlite")
        self.db = _lancedb().connect(os.path.join(path, "lancedb") if uri == EMBEDDED else uri)
        self._state = state if state is not None else self._read_state()
        self.config = IndexConfig(**self._state["config"])

    @classmethod
    def create(cls, path: str, config: IndexConfig, exist_ok: bool = True) -> LanceStore:
        """A new empty index at ``path`` keeping its data at ``config.store`` (or the existing one, same config)."""
        if is_store_index(path):
            store = cls.open(path)
            if not exist_ok:
                raise HichunkError(f"{path}: an index already exists there")
            old, new = asdict(store.config), asdict(config)
            if old != new:
                diff = {k: (v, new[k]) for k, v in old.items() if new[k] != v}
                raise HichunkError(f"{path}: the index was built with other settings {diff}; use a new index directory")
            return store
        if os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
            raise HichunkError(f"{path}: not an empty directory")
        os.makedirs(path, exist_ok=True)
        store = cls(path, config.store, {"generation": 0, "config": asdict(config), "docs": {}, "embedder_id": None})
        if store._read_state(missing_ok=True) is not None:
            raise HichunkError(f"{config.store}: that database already holds a hichunk index; open it from its own "
                               "index directory or use another URI")
        store.db.create_table("commits", data=[{"generation": 0, "state": json.dumps(store._state)}])
        atomic_write(os.path.join(path, STORE_FILE), json.dumps({"format": STORE_FORMAT, "backend": "lancedb",
                                                                 "uri": config.store}, indent=1).encode())
        return store

    @classmethod
    def open(cls, path: str) -> LanceStore:
        try:
            with open(os.path.join(path, STORE_FILE), "rb") as fh:
                info = json.loads(fh.read())
        except (OSError, ValueError) as exc:
            raise HichunkError(f"{path}: cannot read {STORE_FILE}: {exc}") from None
        if info.get("format") != STORE_FORMAT:
            raise HichunkError(f"{path}: not a hichunk store index (format {info.get('format')!r})")
        return cls(path, info["uri"])

    # -- the committed state -----------------------------------------------------------
    def _table(self, name: str):
        try:
            return self.db.open_table(name)
        except (FileNotFoundError, ValueError):
            return None

    def _read_state(self, missing_ok: bool = False) -> dict | None:
        commits = self._table("commits")
        if commits is None:
            if missing_ok:
                return None
            raise HichunkError(f"{self.uri}: no hichunk index in this database")
        rows = commits.to_arrow().to_pydict()
        if not rows["generation"]:
            raise HichunkError(f"{self.uri}: the index has no committed state")
        latest = int(np.argmax(rows["generation"]))
        return json.loads(rows["state"][latest])

    @property
    def docs(self) -> dict[str, dict]:
        return self._state["docs"]

    @property
    def generation(self) -> int:
        return int(self._state["generation"])

    @property
    def embedder_id(self) -> str | None:
        return self._state.get("embedder_id")

    def info(self) -> dict:
        """What ``hichunk index info`` shows about the store."""
        leaves = self._table("leaves")
        return {"store": "lancedb", "uri": self.uri, "rows": leaves.count_rows() if leaves is not None else 0}

    def _live(self, doc: str) -> int:
        return int(self.docs[doc]["version"])

    def tree(self, doc: str) -> ChunkTree:
        trees = self._table("trees")
        found = (trees.search().where(f"doc = {_quote(doc)} AND version = {self._live(doc)}").select(["tree"])
                 .limit(1).to_arrow() if trees is not None else None)
        if found is None or not found.num_rows:
            raise HichunkError(f"{self.uri}: the index changed while it was open (another process committed); "
                               "open it again")
        return from_dict(json.loads(found["tree"][0].as_py()))

    def rows(self, doc: str) -> tuple[np.ndarray, np.ndarray]:
        table = self._table("leaves").search().where(f"doc = {_quote(doc)} AND version = {self._live(doc)}")
        found = table.select(["node", "vector"]).limit(None).to_arrow()
        nodes = found["node"].to_numpy()
        order = np.argsort(nodes, kind="stable")
        return _vectors(found)[order], nodes[order].astype(np.int32)

    # -- searching ---------------------------------------------------------------------
    def ranked(self, vector: np.ndarray, docs: list[str] | None = None) -> Iterator[Candidate]:
        """``(doc, leaf node, score)`` best first: the database's flat scan in growing blocks, re-scored
        exactly; ties by document id, then leaf order."""
        if docs is not None:
            missing = [d for d in docs if d not in self.docs]
            if missing:
                raise HichunkError(f"no document {missing[0]!r} in the index")
        leaves = self._table("leaves")
        if leaves is None or not self.docs:
            return iter(())
        return self._blocks(leaves, np.asarray(vector, dtype=np.float32), docs)

    def _blocks(self, leaves, vector: np.ndarray, docs: list[str] | None) -> Iterator[Candidate]:
        live = {d: int(e["version"]) for d, e in self.docs.items()}
        where = _in("doc", sorted(set(docs))) if docs is not None else None
        seen: set[tuple[str, int]] = set()
        k = FIRST_BLOCK
        while True:
            query = leaves.search(vector).metric("dot").select(["doc", "version", "node", "vector", "_distance"])
            if where is not None:
                query = query.where(where, prefilter=True)
            found = query.limit(OVERSAMPLE * k).to_arrow()
            names, versions = found["doc"].to_pylist(), found["version"].to_numpy()
            keep = np.array([live.get(n) == int(v) for n, v in zip(names, versions)], dtype=bool)
            scores = _vectors(found) @ vector if found.num_rows else np.zeros(0, np.float32)
            nodes = found["node"].to_numpy()
            idx = np.flatnonzero(keep)
            order = sorted(idx, key=lambda i: (-scores[i], names[i], int(nodes[i])))
            everything = found.num_rows < OVERSAMPLE * k  # the database had no more rows
            for i in order if everything else order[:k]:
                key = (names[i], int(nodes[i]))
                if key not in seen:
                    seen.add(key)
                    yield names[i], int(nodes[i]), float(scores[i])
            if everything:
                return
            k *= GROWTH

    def key_table(self):
        raise HichunkError("search 'ann' belongs to the directory format; a lancedb store searches in the database")

    def ann_graph(self, table):
        raise HichunkError("search 'ann' belongs to the directory format; a lancedb store searches in the database")

    # -- writing -----------------------------------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the writer lock, see the latest committed state and clear a crashed writer's rows."""
        with _DirLock(os.path.join(self.path, "lock")):
            self._state = self._read_state()
            self._collect_garbage()
            yield

    def write(self, staged: list[Staged]) -> Batch | None:
        """Append the trees, then the leaves, of ``staged`` under a new version id; nothing is visible yet."""
        import pyarrow as pa

        if not staged:
            return None
        version = secrets.randbits(62)
        docs, trees = {}, []
        for s in staged:
            docs[s.doc] = {"source": s.source, "sha256": s.sha256, "leaves": int(len(s.nodes)), "version": version}
            trees.append({"doc": s.doc, "version": version, "source": s.source,
                          "tree": json.dumps(to_dict(s.tree), ensure_ascii=False)})
        self._append("trees", pa.Table.from_pylist(trees, schema=_trees_schema()))
        checkpoint("tree-written")
        vectors = np.concatenate([s.vectors for s in staged]).astype(np.float32, copy=False)
        dim = int(vectors.shape[1])
        rows = pa.table({
            "doc": pa.array([s.doc for s in staged for _ in range(len(s.nodes))], pa.string()),
            "version": pa.array(np.full(len(vectors), version, dtype=np.int64)),
            "node": pa.array(np.concatenate([s.nodes for s in staged]).astype(np.int32)),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(vectors).ravel()), dim),
        }, schema=_leaves_schema(dim))
        self._append("leaves", rows)
        checkpoint("segment-vectors")
        return Batch(version, docs)

    def _append(self, name: str, data) -> None:
        table = self._table(name)
        if table is None:
            self.db.create_table(name, data=data)
        else:
            table.add(data)

    def commit(self, written: list[Batch | None], removed: set[str], embedder_id: str | None) -> None:
        state = json.loads(json.dumps(self._state))
        for doc in removed:
            state["docs"].pop(doc, None)
        for batch in written:
            if batch is not None:
                state["docs"].update(batch.docs)
        state["generation"] = self.generation + 1
        state["embedder_id"] = embedder_id or self.embedder_id
        checkpoint("before-manifest")
        self.db.open_table("commits").add([{"generation": state["generation"], "state": json.dumps(state)}])
        checkpoint("after-manifest")
        self._state = state
        self._collect_garbage()

    def _collect_garbage(self) -> None:
        """Delete rows of versions the committed state does not name, and older commit rows."""
        trees = self._table("trees")
        live = {d: int(e["version"]) for d, e in self.docs.items()}
        if trees is not None:
            pairs = trees.search().select(["doc", "version"]).limit(None).to_arrow().to_pydict()
            dead: dict[int, list[str]] = {}
            for doc, version in zip(pairs["doc"], pairs["version"]):
                if live.get(doc) != version:
                    dead.setdefault(int(version), []).append(doc)
            leaves = self._table("leaves")
            for version, names in dead.items():
                for start in range(0, len(names), DELETE_CHUNK):
                    where = f"version = {version} AND {_in('doc', names[start : start + DELETE_CHUNK])}"
                    if leaves is not None:
                        leaves.delete(where)
                    checkpoint("gc")
                    trees.delete(where)
        self.db.open_table("commits").delete(f"generation < {self.generation}")


def _vectors(found) -> np.ndarray:
    column = found["vector"].combine_chunks()
    dim = column.type.list_size
    return np.asarray(column.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, dim)


def _trees_schema():
    import pyarrow as pa

    return pa.schema([pa.field("doc", pa.string()), pa.field("version", pa.int64()), pa.field("source", pa.string()),
                      pa.field("tree", pa.large_string())])


def _leaves_schema(dim: int):
    import pyarrow as pa

    return pa.schema([pa.field("doc", pa.string()), pa.field("version", pa.int64()), pa.field("node", pa.int32()),
                      pa.field("vector", pa.list_(pa.float32(), dim))])
