"""The approximate search backend: an HNSW graph over the live leaf vectors (usearch), exact re-scoring.

Chosen when an index is created (``IndexConfig(search="ann")``, ``--search ann``). The graph holds
8-bit copies of the vectors and finds ``OVERSAMPLE`` x k candidates; their float32 vectors (the index's
own, from its segments) are scored exactly, so every score a search reports is the exact dot product
and only the candidate set is approximate. Why usearch, and the measured recall, latency, build time and
memory of each library we tried: docs/guides/scaling.md and ``hichunk.bench.perf.retrieval_bench ann``.

Keys: every live row has a 64-bit key, ``segment sequence number << 32 | row``, so a graph survives
commits that add or remove documents: removed rows are removed from the graph by key, new rows added.
A compaction moves rows to a new segment, and the graph is then rebuilt from the vectors.

An index directory keeps the graph in ``ann/<sha256 of the file>.usearch``: immutable, named by content,
written (temp + fsync + rename) before the manifest that refers to it. A graph file that is missing,
whose content does not match its name, or whose keys are not exactly the live rows is never used: it is
rebuilt from the vectors with a warning (and written again by the next commit).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from hichunk.extras import MissingExtra, available, extra_message, require_extra

log = logging.getLogger(__name__)

OVERSAMPLE = 2  # graph candidates per result, re-scored exactly
EXPANSION = 8  # the graph search's candidate list per result (usearch expansion_search = EXPANSION x k)
# Default expansion by graph size, from recall@128 measured with real-query vectors (README, Scaling): x8 gives
# 0.999 at 10k leaves but 0.976 at 100k (x16: 0.992) and 0.896 at 1M (x32: 0.975), so the list grows with the graph.
EXPANSION_BY_SIZE = ((20_000, 8), (200_000, 16), (500_000, 32))
EXPANSION_LARGEST = 64


def default_expansion(leaves: int, search: str = "ann") -> int:
    """The search list per result for a graph of ``leaves`` leaves (a longer one as the graph grows); for
    inverted lists (search "ivf") the share of lists to scan (``ivf.default_probe_expansion``)."""
    if search == "ivf":
        from hichunk.retrieval.index.ivf import default_probe_expansion

        return default_probe_expansion(leaves)
    return next((e for limit, e in EXPANSION_BY_SIZE if leaves <= limit), EXPANSION_LARGEST)
KEY_SHIFT = 32


def import_usearch():
    """``usearch.index``, or a one-line error that says how to install it.

    Ray, when installed, is imported first: once usearch's compiled module is loaded, a later
    ``ray.init`` in the same process aborts (``std::regex_error`` in Ray's GCS client; seen with
    usearch 2.26 and ray 2.60), while in the other order both work. So an ANN index can be searched
    and then updated on Ray in one process."""
    if "ray" not in sys.modules and available("ray"):
        try:
            import ray  # noqa: F401
        except ImportError:  # a broken Ray only matters to a distributed build, which says so itself
            pass
    try:
        import usearch.index
    except ImportError:
        raise MissingExtra(extra_message("ann", ["usearch"], "the ann search backend"), "ann", ["usearch"]) from None
    return usearch.index


def require_usearch() -> None:
    """Fail now, in one line, when usearch is missing (looked up, not imported: see ``import_usearch``)."""
    require_extra("ann", what="the ann search backend")


def library_version() -> str:
    from importlib.metadata import version

    return f"usearch {version('usearch')}"


@dataclass(frozen=True)
class AnnParams:
    """Graph settings (chosen by measurement, see the module doc): HNSW links per node, candidate list
    while inserting, and the scalar type of the graph's vector copies."""

    dtype: str = "i8"
    connectivity: int = 32
    expansion_add: int = 256

    def to_dict(self) -> dict:
        return asdict(self)


def row_keys(seq: int, start: int, count: int) -> np.ndarray:
    """The keys of ``count`` rows of segment ``seq`` from row ``start``."""
    return (np.uint64(seq) << np.uint64(KEY_SHIFT)) | np.arange(start, start + count, dtype=np.uint64)


class Graph:
    """An HNSW graph of keyed vectors (inner product on L2-normalised vectors).

    Searches from several threads take turns: usearch takes the candidate list length as a setting of
    the index, not of the call, so setting it and searching happen under one lock (a query's result
    never depends on what other threads ask for)."""

    def __init__(self, index, params: AnnParams):
        self.index, self.params = index, params
        self._search_lock = threading.Lock()

    @classmethod
    def empty(cls, dim: int, params: AnnParams | None = None) -> Graph:
        params = params or AnnParams()
        u = import_usearch()
        return cls(u.Index(ndim=dim, metric="ip", dtype=params.dtype, connectivity=params.connectivity,
                           expansion_add=params.expansion_add), params)

    @classmethod
    def build(cls, keys: np.ndarray, vectors: np.ndarray, params: AnnParams | None = None, dim: int | None = None) -> Graph:
        graph = cls.empty(vectors.shape[1] if len(vectors) else int(dim or 0), params)
        graph.add(keys, vectors)
        return graph

    @classmethod
    def build_from(cls, keys: np.ndarray, fetch: Fetch, dim: int, block: int) -> Graph:
        """A graph of ``keys``, their vectors fetched ``block`` at a time (an index larger than memory)."""
        graph = cls.empty(dim, AnnParams())
        for start in range(0, len(keys), block):
            graph.add(keys[start : start + block], fetch(keys[start : start + block]))
        return graph

    def fits(self, rows: int) -> bool:
        """A graph suits any size (it has nothing trained)."""
        return True

    def __len__(self) -> int:
        return len(self.index)

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        if len(keys):
            self.index.add(np.asarray(keys, dtype=np.uint64), np.ascontiguousarray(vectors, dtype=np.float32),
                           threads=os.cpu_count() or 1)

    def remove(self, keys: np.ndarray) -> None:
        if len(keys):
            self.index.remove(np.asarray(keys, dtype=np.uint64))

    def keys(self) -> np.ndarray:
        return np.sort(np.asarray(self.index.keys, dtype=np.uint64))

    def search(self, vector: np.ndarray, count: int, expansion: int = 0) -> np.ndarray:
        """Keys of about the ``count`` nearest vectors (fewer when the graph holds fewer), searched with a
        candidate list of ``expansion`` (at least ``count``): longer finds more of the true nearest, slower."""
        count = min(count, len(self.index))
        if count <= 0:
            return np.zeros(0, dtype=np.uint64)
        with self._search_lock:
            self.index.expansion_search = max(count, expansion, 64)
            found = self.index.search(np.asarray(vector, dtype=np.float32), count, threads=1)
        return np.asarray(found.keys, dtype=np.uint64)

    def to_bytes(self) -> bytes:
        return bytes(self.index.save())

    @classmethod
    def from_bytes(cls, data: bytes, params: AnnParams) -> Graph:
        u = import_usearch()
        index = u.Index.restore(bytearray(data))
        if index is None:
            raise ValueError("not a usearch index")
        return cls(index, params)

    def memory_bytes(self) -> int:
        return int(self.index.memory_usage)


def backend(search: str) -> tuple[type, type, str]:
    """(index class, its parameter class, file suffix) of an approximate search backend: the HNSW graph
    (search "ann") or FAISS inverted lists (search "ivf", ``ivf.py``); both have the interface of ``Graph``."""
    if search == "ivf":
        from hichunk.retrieval.index.ivf import FILE_SUFFIX, IvfLists, IvfParams

        return IvfLists, IvfParams, FILE_SUFFIX
    return Graph, AnnParams, "usearch"


def require_backend(search: str) -> None:
    """Fail now, in one line, when the library of backend ``search`` is missing."""
    if search == "ivf":
        from hichunk.retrieval.index.ivf import require_faiss

        require_faiss()
    else:
        require_usearch()


def backend_version(search: str) -> str:
    if search == "ivf":
        from hichunk.retrieval.index.ivf import library_version as faiss_version

        return faiss_version()
    return library_version()


def content_name(data: bytes, suffix: str = "usearch") -> str:
    return f"ann/{hashlib.sha256(data).hexdigest()[:32]}.{suffix}"


def load_checked(path: str, name: str, params, expected_keys: np.ndarray, search: str = "ann") -> tuple[Graph | None, str]:
    """The graph (or lists) stored at ``path`` (relative ``name``) when intact and holding exactly
    ``expected_keys`` (sorted); else None and why."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return None, f"cannot read it ({exc.strerror})"
    cls, _, suffix = backend(search)
    if content_name(data, suffix) != name:
        return None, "its content does not match its name (changed or damaged)"
    try:
        graph = cls.from_bytes(data, params)
    except Exception as exc:  # a damaged file that still hashes right cannot happen; be safe anyway
        return None, f"cannot load it ({exc})"
    if len(graph) != len(expected_keys) or not np.array_equal(graph.keys(), expected_keys):
        return None, "it does not hold exactly the index's live rows"
    return graph, ""


def rebuild_warning(where: str, why: str) -> None:
    log.warning("%s: the ANN graph is not usable (%s); rebuilding it from the vectors", where, why)


Fetch = Callable[[np.ndarray], np.ndarray]  # keys -> their float32 vectors
