"""Distributed ingestion on Ray: workers chunk documents and embed leaves, the driver keeps cache and index.

    index.add_paths(["docs/"], ray="local", workers=2)   # start a local Ray with 2 CPUs for this build
    index.add_paths(["docs/"], ray="auto")                # join the running cluster (`ray start --head` ...)

The driver is the process that holds the index (and its writer lock). Work flows so:

1. *chunk tasks*: each takes a batch of documents (largest files first, so that a long document does not
   finish last), loads, hashes and chunks them with the index's method, and returns per document its tree,
   its leaves' encoder inputs and their cache keys, or a report (unchanged, failed).
2. the driver looks the keys up in the index's embedding cache; inputs found there go nowhere.
3. *embedding tasks*: missing inputs wait in a queue ordered by length; the driver sends the longest
   ``texts_per_task`` of them at a time (length-sorted batches: little padding) to be encoded by the
   index's embedder. An input shared by several leaves is encoded once.
4. as each embedding task returns, the driver stores its vectors in the cache (one transaction), so a
   rerun after any crash encodes none of them again. A document whose vectors are all known is staged;
   staged documents are written as immutable segments every ``SEGMENT_ROWS`` rows (an index directory
   writes the files now, and no manifest refers to them yet).
5. one commit at the end replaces the manifest (the single commit point) or the in-memory state.

Only the driver touches the cache and the index, so the same code serves an index directory, an
in-memory index (whose in-memory cache is honoured too) and a cluster without a shared file system for
the index. Documents are read by the workers: on several machines they must be readable at the same
paths everywhere (a shared file system), and hichunk must be installed on every node.

Crashes: a worker that dies is replaced by Ray and its task retried (``max_retries``); a driver that
dies leaves the index as before (the manifest was not replaced) or as after, and a rerun finds every
embedding batch that returned before the crash in the cache.

Ray itself is optional (extra ``ray``). The pipeline runs on an ``Executor``; ``RayExecutor`` is the one
that matters, ``InlineExecutor`` runs the same pipeline in this process (tests check the pipeline with it
without starting Ray).
"""

from __future__ import annotations

import heapq
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from hichunk.errors import HichunkError
from hichunk.extras import MissingExtra, extra_message
from hichunk.retrieval.chunking import get_chunker
from hichunk.retrieval.embedders import Embedder, cache_key, load_embedder
from hichunk.retrieval.faults import checkpoint
from hichunk.retrieval.index.config import IndexConfig
from hichunk.retrieval.index.ingest import DocumentSource, Ingestor, Version, load_version
from hichunk.retrieval.index.progress import BuildProgress
from hichunk.retrieval.index.reports import DocReport
from hichunk.retrieval.index.store import Staged, Written

log = logging.getLogger(__name__)

LOCAL, AUTO = "local", "auto"
SEGMENT_ROWS = 65536  # staged rows written as one segment (128 MB of float32 at 512 dimensions)
DOCS_PER_TASK = 8
TEXTS_PER_TASK = 256
MAX_RETRIES = 3  # a task whose worker died is run again this many times


def import_ray():
    """The ``ray`` module, or a one-line error that says how to install it."""
    try:
        import ray
    except ImportError:
        raise MissingExtra(extra_message("ray", ["ray"], "a distributed build"), "ray", ["ray"]) from None
    return ray


@dataclass(frozen=True)
class RaySettings:
    """Where the tasks run. ``address``: ``local`` (start a local Ray for this build), ``auto`` (join the
    cluster this machine belongs to) or a Ray address (``ray://HOST:10001``, ``HOST:6379``); a Ray already
    initialised in this process is used as it is. ``workers``: the local Ray's CPUs (default: all cores), or
    on a cluster the tasks run at once (default: the cluster's CPUs)."""

    address: str = LOCAL
    workers: int | None = None
    docs_per_task: int = DOCS_PER_TASK
    texts_per_task: int = TEXTS_PER_TASK

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise HichunkError(f"Ray workers must be at least 1 (got {self.workers})")
        if self.docs_per_task < 1 or self.texts_per_task < 1:
            raise HichunkError("documents and texts per Ray task must be at least 1")

    @classmethod
    def of(cls, ray: str | bool | RaySettings | None, workers: int | None = None) -> RaySettings | None:
        """Settings from the ``ray=`` argument of ``Index.add``: None/False (no Ray), True, an address, or settings."""
        if ray is None or ray is False:
            if workers is not None:
                raise HichunkError("workers= needs ray= (a local Ray, 'auto' or an address)")
            return None
        if isinstance(ray, RaySettings):
            return ray if workers is None else cls(ray.address, workers, ray.docs_per_task, ray.texts_per_task)
        return cls(LOCAL if ray is True else str(ray), workers)


# -- executors ------------------------------------------------------------------------------

class Executor(Protocol):
    workers: int  # tasks kept running at once

    def submit(self, fn: Callable, *args) -> Any:
        """Start ``fn(*args)`` somewhere; a handle for ``wait`` and ``result``."""
        ...

    def wait(self, handles: Sequence[Any]) -> Any:
        """One handle among ``handles`` whose task has finished (blocks until there is one)."""
        ...

    def result(self, handle: Any) -> Any:
        """The finished task's return value (its exception is raised here)."""
        ...

    def share(self, value: Any) -> Any:
        """``value`` in a form every task can take as an argument (Ray: put once in the object store)."""
        ...


class _Done:
    def __init__(self, value: Any):
        self.value = value


class InlineExecutor:
    """Runs each task in this process when it is submitted: the pipeline without Ray (tests, debugging)."""

    def __init__(self, workers: int = 1):
        self.workers = workers

    def submit(self, fn: Callable, *args) -> Any:
        return _Done(fn(*args))

    def wait(self, handles: Sequence[Any]) -> Any:
        return handles[0]

    def result(self, handle: Any) -> Any:
        return handle.value

    def share(self, value: Any) -> Any:
        return value


class RayExecutor:
    """Tasks as Ray remote functions (one CPU each, retried when their worker dies)."""

    def __init__(self, ray, workers: int):
        self.ray, self.workers = ray, workers
        self._remote: dict[Callable, Any] = {}

    def submit(self, fn: Callable, *args) -> Any:
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self.ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(fn)
        return remote.remote(*args)

    def wait(self, handles: Sequence[Any]) -> Any:
        ready, _ = self.ray.wait(list(handles), num_returns=1)
        return ready[0]

    def result(self, handle: Any) -> Any:
        try:
            return self.ray.get(handle)
        except self.ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, HichunkError):
                raise HichunkError(str(cause)) from None
            raise

    def share(self, value: Any) -> Any:
        return self.ray.put(value)


@contextmanager
def ray_executor(settings: RaySettings) -> Iterator[RayExecutor]:
    """A Ray executor: a Ray already initialised here, or one started (local) or joined (address) for the build."""
    ray = import_ray()
    started = False
    if not ray.is_initialized():
        quiet = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
        if settings.address == LOCAL:
            ray.init(num_cpus=settings.workers or os.cpu_count() or 1, **quiet)
        else:
            try:
                ray.init(address=settings.address, **quiet)
            except ConnectionError as exc:
                raise HichunkError(f"cannot join the Ray cluster at {settings.address!r}: {exc}") from None
        started = True
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        yield RayExecutor(ray, min(settings.workers, cpus) if settings.workers else cpus)
    finally:
        if started:
            ray.shutdown()


# -- tasks (run on workers) -------------------------------------------------------------------

_chunkers: dict[IndexConfig, Any] = {}


def chunk_task(config: IndexConfig, items: list[DocumentSource], committed: dict[str, dict],
               embedder_id: str) -> list[tuple[Version | DocReport, list[bytes] | None]]:
    """Load and chunk a batch of documents; per document its new version and cache keys, or a report."""
    chunker = _chunkers.get(config)
    if chunker is None:
        chunker = _chunkers[config] = get_chunker(config.method, config.chunk_options())
    out = []
    for doc_id, loader in items:
        got = load_version(doc_id, loader, chunker, committed.get(doc_id))
        if isinstance(got, Version):
            out.append((got, [cache_key(embedder_id, t) for t in got.encoder_inputs(config.breadcrumb)]))
        else:
            out.append((got, None))
    return out


def embed_task(embedder: Embedder | str, texts: list[str]) -> tuple[np.ndarray, float, str]:
    """Encode a length-sorted batch: (vectors, seconds inside the embedder, embedder id)."""
    checkpoint("ray-embed-task")
    model = load_embedder(embedder or None) if isinstance(embedder, str) else embedder
    started = time.perf_counter()
    vectors = model.embed_passages(texts)
    return np.asarray(vectors, dtype=np.float32), time.perf_counter() - started, model.id


# -- the driver ----------------------------------------------------------------------------------

@dataclass
class _Pending:
    """A new version waiting for some of its leaf vectors."""

    version: Version
    keys: list[bytes]
    vectors: np.ndarray
    missing: int


@dataclass
class _Pipeline:
    ingest: Ingestor
    executor: Executor
    embedder_spec: Embedder | str
    settings: RaySettings
    write: Callable[[list[Staged]], Written]
    progress: bool = False
    written: list[Written] = field(default_factory=list)
    _buffer: list[Staged] = field(default_factory=list)
    _rows: int = 0
    _waiting: dict[str, _Pending] = field(default_factory=dict)  # doc -> pending version
    _wanted: dict[bytes, list[tuple[str, list[int]]]] = field(default_factory=dict)  # key -> (doc, rows)
    _queue: list[tuple[int, int, bytes, str]] = field(default_factory=list)  # (-len, seq, key, text): longest first
    _seq: int = 0
    _bars: BuildProgress | None = None  # documents done, leaves with their vectors

    def run(self, items: Sequence[DocumentSource]) -> list[Written]:
        ex, cfg = self.executor, self.settings
        store = self.ingest.store
        config_ref, embedder_ref = ex.share(store.config), ex.share(self.embedder_spec)
        batches = [list(items[i : i + cfg.docs_per_task]) for i in range(0, len(items), cfg.docs_per_task)]
        batches.reverse()  # pop() takes them in the given order
        running: dict[Any, tuple[str, Any]] = {}
        queue_cap = 4 * cfg.texts_per_task * ex.workers  # inputs waiting for encoding before chunking pauses
        with BuildProgress(len(items), self.progress, docs_label="indexing (ray)") as bars:
            self._bars = bars
            while True:
                while len(running) < ex.workers:
                    chunking = any(kind == "chunk" for kind, _ in running.values())
                    if len(self._queue) >= cfg.texts_per_task or (self._queue and not batches and not chunking):
                        texts = [heapq.heappop(self._queue) for _ in range(min(cfg.texts_per_task, len(self._queue)))]
                        keys = [k for _, _, k, _ in texts]
                        running[ex.submit(embed_task, embedder_ref, [t for _, _, _, t in texts])] = ("embed", keys)
                    elif batches and len(self._queue) < queue_cap:
                        batch = batches.pop()
                        committed = {d: store.docs[d] for d, _ in batch if d in store.docs}
                        running[ex.submit(chunk_task, config_ref, batch, committed, self.ingest.embedder.id)] = ("chunk", None)
                    else:
                        break
                if not running:
                    break
                done = ex.wait(list(running))
                kind, keys = running.pop(done)
                result = ex.result(done)
                started = time.perf_counter()
                if kind == "chunk":
                    self._chunked(result)
                else:
                    self._embedded(keys, *result)
                self.ingest.report.driver_seconds += time.perf_counter() - started
        if self._waiting:  # cannot happen: every key was queued
            raise HichunkError(f"internal error: {len(self._waiting)} documents still wait for vectors")
        started = time.perf_counter()
        self._flush()
        self.ingest.report.driver_seconds += time.perf_counter() - started
        return self.written

    def _chunked(self, results: list[tuple[Version | DocReport, list[bytes] | None]]) -> None:
        emb = self.ingest.embedder
        report = self.ingest.report
        found = emb.lookup([k for _, keys in results if keys for k in keys])
        for got, keys in results:
            if keys is None:
                report.docs.append(got)
                self._bars.docs.update(1)
                continue
            version = got
            vectors = np.zeros((len(keys), emb.dim), dtype=np.float32)
            missing = 0
            new_rows: dict[bytes, list[int]] = {}
            for row, key in enumerate(keys):
                if key in found:
                    vectors[row] = found[key]
                else:
                    new_rows.setdefault(key, []).append(row)
                    missing += 1
            report.cache_hits += len(keys) - missing
            self._bars.expect(len(keys))
            self._bars.embedded(len(keys) - missing)
            version.encoded = missing
            pending = _Pending(version, keys, vectors, missing)
            for key, rows in new_rows.items():
                if key not in self._wanted:
                    self._wanted[key] = []
                    text = version.inputs[rows[0]]
                    heapq.heappush(self._queue, (-len(text), self._seq, key, text))
                    self._seq += 1
                self._wanted[key].append((version.doc, rows))
            if missing:
                self._waiting[version.doc] = pending
            else:
                self._ready(pending)

    def _embedded(self, keys: list[bytes], vectors: np.ndarray, seconds: float, model_id: str) -> None:
        emb = self.ingest.embedder
        if model_id != emb.id:
            raise HichunkError(f"a Ray worker embedded with {model_id!r}, not the index's {emb.id!r}")
        emb.store(keys, vectors)
        checkpoint("ray-cache-put")
        report = self.ingest.report
        report.encoded += len(keys)
        report.encode_seconds += seconds
        report.encode_tasks.append((len(keys), seconds))
        for key, vector in zip(keys, vectors):
            for doc, rows in self._wanted.pop(key):
                self._bars.embedded(len(rows))
                pending = self._waiting[doc]
                pending.vectors[rows] = vector
                pending.missing -= len(rows)
                if pending.missing == 0:
                    self._ready(self._waiting.pop(doc))

    def _ready(self, pending: _Pending) -> None:
        pending.version.vectors = pending.vectors
        staged = self.ingest.finish([pending.version])
        pending.version.inputs = None  # the texts are not needed any more
        self._buffer += staged
        self._rows += sum(len(s.nodes) for s in staged)
        self._bars.docs.update(1)
        if self._rows >= SEGMENT_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            self.written.append(self.write(self._buffer))
            self._buffer, self._rows = [], 0


def ingest_distributed(ingest: Ingestor, items: Sequence[DocumentSource], executor: Executor,
                       embedder_spec: Embedder | str, settings: RaySettings,
                       write: Callable[[list[Staged]], Written], progress: bool = False) -> list[Written]:
    """Chunk and embed ``items`` on ``executor``; the written segments, ready for one commit."""
    return _Pipeline(ingest, executor, embedder_spec, settings, write, progress).run(items)
