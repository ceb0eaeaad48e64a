"""The inverted-file search backend: vectors in lists around trained centroids (FAISS IVF), 8-bit codes.

Chosen when an index is created (``IndexConfig(search="ivf")``, ``--search ivf``); meant for large
indexes. A query scans the lists of the centroids nearest to it, spread over every core (one query
uses all of them), and proposes candidates that are re-scored exactly from the index's float32
vectors, as the graph's are (``candidates.AnnRanker``). Measured against the graph at 1M leaves on
2 cores (docs/guides/scaling.md): recall@128 0.98 at 7.5 ms against the graph's 21 ms, built in a
tenth of the time.

The centroids are trained once, on a sample of the vectors there are. An index that grows or
shrinks past ``RETRAIN_FACTOR`` times the rows it was trained on is trained again from all its
vectors at the next commit (``fits``): stale centroids would leave a few lists holding most rows.
Keys, files and checks are the graph's (``ann``): the same 64-bit keys, removal by key, one file
named by content in ``ann/``, never trusted unless it holds exactly the live rows.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import numpy as np

from hichunk.extras import MissingExtra, extra_message, require_extra

FILE_SUFFIX = "faiss"
MIN_TRAIN_PER_LIST = 39  # FAISS's own minimum of training points per centroid
LISTS_PER_ROOT = 4  # lists ~ 4 x sqrt(rows), a power of two: 4096 at 1M leaves (8192 were as fast for the recall, 3x slower to train)
RETRAIN_FACTOR = 4  # train again once the rows differ from the trained rows by this factor
TRAIN_SAMPLE_PER_LIST = 64
SINGLE_LIST_BELOW = 2_000  # fewer rows: one list, every query scans all codes (exact candidates up to 8 bits)
PERCENT_PER_EXPANSION = 1 / 8  # the shared knob: expansion x probes x/8 percent of the lists
# Default expansion by size (x probes x/8 percent of the lists), from recall@128 measured with real-query vectors
# (docs/guides/scaling.md): smaller pools need a larger share (100k: x112 0.960, x200 0.985; 300k: x160 0.986;
# 1M: x112 0.982 in 8.9 ms); up to 20k leaves every list is scanned.
PROBE_EXPANSION_BY_SIZE = ((20_000, 800), (200_000, 200), (500_000, 160))
PROBE_EXPANSION = 112  # beyond 500k leaves: 14% of the lists


def import_faiss():
    """``faiss``, or a one-line error that says how to install it."""
    try:
        import faiss
    except ImportError:
        raise MissingExtra(extra_message("ivf", ["faiss-cpu"], "the ivf search backend"), "ivf", ["faiss-cpu"]) from None
    return faiss


def require_faiss() -> None:
    """Fail now, in one line, when faiss is missing."""
    require_extra("ivf", what="the ivf search backend")


@contextmanager
def _every_core() -> Iterator[object]:
    """``faiss`` with its OpenMP threads set to the cores there are, then set back (the process's other
    OpenMP users keep their setting)."""
    faiss = import_faiss()
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    try:
        yield faiss
    finally:
        faiss.omp_set_num_threads(before)


def library_version() -> str:
    from importlib.metadata import version

    return f"faiss-cpu {version('faiss-cpu')}"


def default_probe_expansion(leaves: int) -> int:
    """The default expansion for lists holding ``leaves`` leaves (a larger share of fewer lists)."""
    return next((e for limit, e in PROBE_EXPANSION_BY_SIZE if leaves <= limit), PROBE_EXPANSION)


def lists_for(rows: int) -> int:
    """The number of lists for ``rows`` vectors: about 4 x sqrt(rows), a power of two, with enough rows
    to train every centroid (one list below ``SINGLE_LIST_BELOW``)."""
    if rows < SINGLE_LIST_BELOW:
        return 1
    target = LISTS_PER_ROOT * math.sqrt(rows)
    lists = 2 ** round(math.log2(target))
    while lists > 1 and lists * MIN_TRAIN_PER_LIST > rows:
        lists //= 2
    return lists


@dataclass(frozen=True)
class IvfParams:
    """The lists of an IVF index and the rows its centroids were trained on."""

    lists: int = 1
    trained_rows: int = 0
    code: str = "SQ8"

    def to_dict(self) -> dict:
        return asdict(self)


class IvfLists:
    """Keyed vectors in inverted lists (inner product on L2-normalised vectors), the graph's interface.

    Searches set their number of lists per call, so concurrent searches never see each other's setting."""

    def __init__(self, index, params: IvfParams):
        self.index, self.params = index, params
        self.index.parallel_mode = 1  # one query's lists split over the threads

    @classmethod
    def trained(cls, sample: np.ndarray, rows: int, dim: int) -> IvfLists:
        """An empty index whose centroids are trained on ``sample`` for an index of ``rows`` rows."""
        lists = lists_for(rows)
        with _every_core() as faiss:
            quantizer = faiss.IndexFlatIP(dim)
            index = faiss.IndexIVFScalarQuantizer(quantizer, dim, lists, faiss.ScalarQuantizer.QT_8bit,
                                                  faiss.METRIC_INNER_PRODUCT)
            index.train(np.ascontiguousarray(sample, dtype=np.float32))
        return cls(index, IvfParams(lists=lists, trained_rows=int(rows)))

    @classmethod
    def build(cls, keys: np.ndarray, vectors: np.ndarray, params: IvfParams | None = None,
              dim: int | None = None) -> IvfLists:
        """Trained on (a sample of) ``vectors``, holding them all; ``params`` is ignored, the lists follow the size."""
        dim = vectors.shape[1] if len(vectors) else int(dim or 0)
        index = cls.trained(vectors[sample_rows(len(vectors))] if len(vectors) else np.zeros((1, dim), np.float32),
                            len(vectors), dim)
        index.add(keys, vectors)
        return index

    @classmethod
    def build_from(cls, keys: np.ndarray, fetch, dim: int, block: int) -> IvfLists:
        """Lists of ``keys``, trained on a sample of their vectors, then filled ``block`` at a time."""
        sample = fetch(keys[sample_rows(len(keys))]) if len(keys) else np.zeros((1, dim), np.float32)
        index = cls.trained(sample, len(keys), dim)
        for start in range(0, len(keys), block):
            index.add(keys[start : start + block], fetch(keys[start : start + block]))
        return index

    def fits(self, rows: int) -> bool:
        """Whether centroids trained for ``trained_rows`` rows still suit an index of ``rows`` rows."""
        trained = max(self.params.trained_rows, 1)
        return trained / RETRAIN_FACTOR <= max(rows, 1) <= trained * RETRAIN_FACTOR

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        if len(keys):
            with _every_core():
                self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32),
                                        np.asarray(keys, dtype=np.uint64).astype(np.int64))

    def remove(self, keys: np.ndarray) -> None:
        if len(keys):
            faiss = import_faiss()
            self.index.remove_ids(faiss.IDSelectorBatch(np.asarray(keys, dtype=np.uint64).astype(np.int64)))

    def keys(self) -> np.ndarray:
        faiss = import_faiss()
        lists = self.index.invlists
        parts = [faiss.rev_swig_ptr(lists.get_ids(i), lists.list_size(i)).copy()
                 for i in range(self.index.nlist) if lists.list_size(i)]
        return np.sort(np.concatenate(parts).astype(np.uint64)) if parts else np.zeros(0, np.uint64)

    def search(self, vector: np.ndarray, count: int, expansion: int = 0) -> np.ndarray:
        """Keys of about the ``count`` nearest vectors, from ``probes(expansion)`` lists (``expansion``:
        the graph's candidate list length, per result of a block of 128)."""
        count = min(count, len(self))
        if count <= 0:
            return np.zeros(0, dtype=np.uint64)
        with _every_core() as faiss:
            params = faiss.SearchParametersIVF(nprobe=self.probes(expansion))
            ids = self.index.search(np.asarray(vector, dtype=np.float32)[None], count, params=params)[1][0]
        return ids[ids >= 0].astype(np.uint64)

    def probes(self, expansion: int) -> int:
        """Lists scanned for a graph candidate list of ``expansion`` (= x times the first block of 128): x/8
        percent of them, so ``Index.ann_expansion`` is one knob for both backends."""
        from hichunk.retrieval.index.candidates import FIRST_BLOCK

        share = expansion / FIRST_BLOCK * PERCENT_PER_EXPANSION / 100
        return max(1, min(self.params.lists, math.ceil(self.params.lists * share)))

    def to_bytes(self) -> bytes:
        return import_faiss().serialize_index(self.index).tobytes()

    @classmethod
    def from_bytes(cls, data: bytes, params: IvfParams) -> IvfLists:
        faiss = import_faiss()
        index = faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8))
        if not isinstance(index, faiss.IndexIVFScalarQuantizer) or index.nlist != params.lists:
            raise ValueError("not the IVF index the manifest describes")
        return cls(index, params)

    def memory_bytes(self) -> int:
        return len(self) * (int(self.index.code_size) + 8) + self.params.lists * int(self.index.d) * 4


def sample_rows(rows: int) -> np.ndarray:
    """Rows to train the centroids on (sorted, the same for the same size): all of them up to 64 per list."""
    want = lists_for(rows) * TRAIN_SAMPLE_PER_LIST
    if rows <= want:
        return np.arange(rows)
    return np.sort(np.random.default_rng(rows).choice(rows, want, replace=False))
