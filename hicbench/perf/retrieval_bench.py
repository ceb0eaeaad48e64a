"""Index build throughput and query latency.

    python -m hichunk.bench.perf.retrieval_bench build   --corpus CORPUS --split dev --out /tmp/idx-dev [--ray --workers 2]
    python -m hichunk.bench.perf.retrieval_bench latency --from-index /tmp/idx-dev --sizes 10000,100000 [--search exact,ann]
    python -m hichunk.bench.perf.retrieval_bench ann     --vectors /tmp/idx-dev --sizes 10000,100000,1000000
    python -m hichunk.bench.perf.retrieval_bench rag-diff RUN_A RUN_B

``build`` indexes a corpus split with a fresh embedding cache (``--repeat``
times) and reports documents/s, leaves/s and the share of time outside the
encoder (chunking, cache, writing; on Ray: of the workers' capacity), and on
Ray the per-worker rate and the driver's work per leaf. ``latency`` replicates the trees and vectors of a built
index into pools of the given sizes (each replica's vectors perturbed, so
rankings differ) and times queries from ranking to finished context,
excluding query encoding: query vectors are leaf vectors plus noise
(``--search exact,ann`` times both backends). ``ann`` compares exact search
with ANN libraries on real leaf vectors and, at sizes beyond them, synthetic
vectors drawn from a mixture fitted to them: recall@k against exact, latency,
build time and memory. ``rag-diff`` gives the paired difference of evidence
recall between two ``hichunk bench rag`` runs (e.g. exact vs ANN).
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from itertools import islice

import numpy as np

from hichunk.bench.stats import fmt_ci, mean_ci


def _load(args):
    return os.getloadavg()[0]


def _corpus_items(args):
    from hichunk.document import parse_document
    from hichunk.models.train.corpus.corpus import load_split

    docs = list(load_split(args.corpus, args.split))[: args.limit]
    docs.sort(key=lambda d: -len(d.markdown))  # largest first, as add_paths orders files for Ray
    return docs, [(d.id, (lambda d=d: parse_document(d.markdown, "markdown", d.id))) for d in docs]


def _start_ray(args):
    """Start (or join) Ray before timing, and load the embedder once in every worker."""
    from hichunk.retrieval.index.distributed import LOCAL, embed_task, import_ray

    ray = import_ray()
    started = time.perf_counter()
    if args.ray == LOCAL:
        ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=args.ray, include_dashboard=False, log_to_driver=False)
    up = time.perf_counter() - started
    warm = ray.remote(num_cpus=1)(embed_task)
    workers = args.workers or int(ray.cluster_resources().get("CPU", 1))
    ray.get([warm.remote(args.embedder or "", ["warm up"]) for _ in range(workers)])
    print(f"Ray: started in {up:.1f}s, {workers} workers warmed (embedder loaded) in "
          f"{time.perf_counter() - started - up:.1f}s; neither is build time")
    return ray, workers


def cmd_build(args) -> int:
    from hichunk.bench.stats import bootstrap_ci
    from hichunk.retrieval.index import Index, IndexConfig

    docs, items = _corpus_items(args)
    ray, workers = _start_ray(args) if args.ray else (None, 1)
    config = IndexConfig(embedder=args.embedder, method=args.method, breadcrumb=not args.no_breadcrumb)
    runs, tasks = [], []
    load_before = _load(args)
    for run in range(args.repeat):
        if os.path.exists(args.out):
            shutil.rmtree(args.out)
        index = Index.create(args.out, config)  # a fresh index: an empty embedding cache
        index.embedder.embed_queries(["warm up"])  # model load is not build time
        report = index.add(items, progress=not args.quiet, ray=args.ray, workers=args.workers if args.ray else None)
        capacity = report.seconds * workers  # worker-seconds available
        runs.append((len(docs) / report.seconds, report.leaves / report.seconds,
                     1 - report.encode_seconds / capacity, report.driver_seconds / max(report.leaves, 1)))
        tasks += [n / s for n, s in report.encode_tasks if s > 0]
        print(f"run {run + 1}: {report.seconds:.1f}s, {report.leaves} leaves ({report.encoded} encoded), "
              f"encoder {report.encode_seconds:.1f}s" + (f", driver {report.driver_seconds:.2f}s" if args.ray else ""),
              flush=True)
        index.close()
    where = f"Ray ({args.ray}), {workers} workers" if args.ray else "local (this process)"
    print(f"documents: {len(docs)} ({args.split}), leaves: {report.leaves}, embedder: {index.embedder.id}, "
          f"method: {args.method}; {where}; {args.repeat} runs, each on a fresh index and cache")
    for label, col, unit in (("documents/s", 0, ""), ("leaves/s", 1, ""), ("time outside the embedder", 2, "%")):
        values = [r[col] * (100 if unit else 1) for r in runs]
        v, lo, hi = bootstrap_ci(values)
        print(f"  {label}: median {v:.2f}{unit} (95% CI {lo:.2f}-{hi:.2f}, n={len(values)} runs)")
    if tasks:
        print(f"  per worker inside the embedder: median {fmt_ci(tasks)} leaves/s over embedding tasks")
        per_leaf = float(np.median([r[3] for r in runs]))
        print(f"  driver work per leaf: {per_leaf * 1e3:.3f} ms (the ceiling of one driver: "
              f"{1 / max(per_leaf, 1e-12):.0f} leaves/s)")
    print(f"load average (1 min) before/after: {load_before:.1f}/{_load(args):.1f} on {os.cpu_count()} cores")
    if ray is not None:
        ray.shutdown()
    return 0


def _replicate(source, out: str, size: int, seed: int, search: str = "exact"):
    from dataclasses import replace

    from hichunk.retrieval.index import Index

    rng = np.random.default_rng(seed)
    vectors, row_doc, row_node, names = source.pool()
    if os.path.exists(out):
        shutil.rmtree(out)
    index = Index.create(out, replace(source.config, search=search))
    trees = {name: source.tree(name) for name in names}
    rows_of = {name: np.flatnonzero(row_doc == slot) for slot, name in enumerate(names)}
    items, total, copy = [], 0, 0
    while total < size:
        for name in names:
            if total >= size:
                break
            v = vectors[rows_of[name]]
            if copy:
                v = v + rng.normal(0, 0.02, v.shape).astype(np.float32)
                v /= np.linalg.norm(v, axis=1, keepdims=True)
            items.append((f"{name}#{copy}", trees[name], v))
            total += len(v)
        copy += 1
    index.add_trees(items)
    return index


def cmd_latency(args) -> int:
    from hichunk.retrieval.index import Index

    source = Index.open(args.from_index)
    base, _, _, _ = source.pool()
    rng = np.random.default_rng(0)
    for size in [int(s) for s in args.sizes.split(",")]:
        picks = rng.integers(0, len(base), args.queries)
        queries = base[picks] + rng.normal(0, 0.05, (args.queries, base.shape[1])).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        for search in args.search.split(","):
            started = time.perf_counter()
            index = _replicate(source, os.path.join(args.work, f"pool-{size}-{search}"), size, seed=size, search=search)
            print(f"{search}: index of {index.n_leaves} leaves written in {time.perf_counter() - started:.1f}s", flush=True)
            _time_searches(index, queries, args, search)
        vectors = index.pool().vectors
        started = time.perf_counter()
        for q in queries[:50]:
            s = vectors @ q
            np.argpartition(-s, 64)[:64]
        print(f"  exact scoring + top-64 alone: {(time.perf_counter() - started) / 50 * 1e3:.2f} ms per query")
    if args.scoring_rows:
        matrix = rng.standard_normal((args.scoring_rows, base.shape[1]), dtype=np.float32)
        started = time.perf_counter()
        for q in queries[:20]:
            s = matrix @ q
            np.argpartition(-s, 64)[:64]
        print(f"scoring + top-64 over {args.scoring_rows} random vectors: {(time.perf_counter() - started) / 20 * 1e3:.1f} ms per query")
    print(f"load average (1 min): {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


def _time_searches(index, queries: np.ndarray, args, search: str) -> None:
    from hichunk.retrieval.search import FillOptions, search_vector

    for auto_merge in (True, False):
        options = FillOptions(budget=args.budget, auto_merge=auto_merge)
        cold, warm = [], []
        for timings in (cold, warm):  # first pass loads trees (and the graph) from disk, second finds them cached
            for q in queries:
                started = time.perf_counter()
                search_vector(index, q, "", options)
                timings.append(time.perf_counter() - started)
        ms = np.array(warm) * 1e3
        print(f"  {search}: {index.n_leaves} leaves in {len(index.docs)} docs, T={args.budget}, auto-merge={auto_merge}: "
              f"warm p50 {fmt_ci(ms, np.median)} ms, p95 {fmt_ci(ms, _p95)} ms; cold p50 {np.median(cold) * 1e3:.1f} ms",
              flush=True)


# -- ANN backends: recall, latency, build time and memory ------------------------------------------

class MixtureModel:
    """Synthetic vectors shaped like real ones: k-means clusters of the real vectors, and around each
    centre the real vectors' residual spread (principal components, variances), L2-normalised."""

    def __init__(self, centres: np.ndarray, weights: np.ndarray, basis: np.ndarray, scales: np.ndarray, rest: float):
        self.centres, self.weights, self.basis, self.scales, self.rest = centres, weights, basis, scales, rest

    @classmethod
    def fit(cls, real: np.ndarray, clusters: int = 64, components: int = 128, seed: int = 0) -> MixtureModel:
        rng = np.random.default_rng(seed)
        centres = real[rng.choice(len(real), clusters, replace=False)].copy()
        for _ in range(20):  # plain k-means on cosine similarity
            assign = np.argmax(real @ centres.T, axis=1)
            for c in range(clusters):
                members = real[assign == c]
                if len(members):
                    centres[c] = members.mean(axis=0)
        residual = real - centres[assign]
        _, sing, vt = np.linalg.svd(residual - residual.mean(axis=0), full_matrices=False)
        var = sing**2 / len(real)
        rest = float(np.sqrt(var[components:].mean())) if len(var) > components else 0.0
        weights = np.bincount(assign, minlength=clusters) / len(real)
        return cls(centres.astype(np.float32), weights, vt[:components].astype(np.float32),
                   np.sqrt(var[:components]).astype(np.float32), rest)

    def sample(self, n: int, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        dim = self.centres.shape[1]
        out = np.empty((n, dim), dtype=np.float32)
        for start in range(0, n, 65536):
            m = min(65536, n - start)
            c = rng.choice(len(self.centres), m, p=self.weights)
            z = rng.standard_normal((m, len(self.scales)), dtype=np.float32) * self.scales
            v = self.centres[c] + z @ self.basis + self.rest * rng.standard_normal((m, dim), dtype=np.float32)
            out[start : start + m] = v / np.linalg.norm(v, axis=1, keepdims=True)
        return out


def _real_vectors(path: str) -> np.ndarray:
    """Leaf vectors from an index directory, an embedding cache (.sqlite) or a .npy file."""
    if not os.path.exists(path):  # opening a missing cache would create an empty one
        raise SystemExit(f"retrieval_bench: error: no vectors at {path!r} (an index directory, .sqlite cache or .npy file)")
    if os.path.isdir(path):
        from hichunk.retrieval.index import Index

        vectors = Index.open(path).pool().vectors
    elif path.endswith(".npy"):
        vectors = np.load(path)
    else:
        from hichunk.kvcache import KVCache

        kv = KVCache(path, "embedding cache")
        rows = kv._db.execute("SELECT value FROM kv ORDER BY key").fetchall()
        if not rows:
            raise SystemExit(f"retrieval_bench: error: the embedding cache {path!r} holds no vectors")
        vectors = np.stack([np.frombuffer(r[0], dtype=np.float32) for r in rows])
    return np.ascontiguousarray(vectors, dtype=np.float32)


def _question_vectors(data: str, embedder: str | None, limit: int) -> np.ndarray:
    from hichunk.bench.data.hicbench_format import load_dataset
    from hichunk.retrieval.embedders import load_embedder

    questions = [q.input for q in load_dataset(data).qas][:limit]
    return np.asarray(load_embedder(embedder).embed_queries(questions), dtype=np.float32)


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _exact_top(matrix: np.ndarray, queries: np.ndarray, k: int) -> list[set[int]]:
    out = []
    for start in range(0, len(queries), 32):
        scores = queries[start : start + 32] @ matrix.T
        for row in scores:
            top = np.argpartition(-row, k)[:k]
            out.append(set(top.tolist()))
    return out


class _Backend:
    """One library behind build(vectors) and candidates(query, count) -> row ids; rows re-scored exactly."""

    name = ""

    def build(self, vectors: np.ndarray) -> None: ...

    def candidates(self, query: np.ndarray, count: int, expansion: int) -> np.ndarray: ...

    def nbytes(self) -> int: ...


class _Usearch(_Backend):
    def __init__(self, dtype: str):
        self.name, self.dtype = f"usearch-{dtype}", dtype

    def build(self, vectors):
        from hichunk.retrieval.index.ann import AnnParams, Graph

        self.graph = Graph.build(np.arange(len(vectors), dtype=np.uint64), vectors, AnnParams(dtype=self.dtype))

    def candidates(self, query, count, expansion):
        return self.graph.search(query, count, expansion).astype(np.int64)

    def nbytes(self):
        return len(self.graph.to_bytes())


class _FaissHNSW(_Backend):
    name = "faiss-hnsw-f32"

    def build(self, vectors):
        import faiss

        from hichunk.retrieval.index.ann import AnnParams

        faiss.omp_set_num_threads(os.cpu_count() or 1)
        params = AnnParams()
        self.index = faiss.IndexHNSWFlat(vectors.shape[1], params.connectivity, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = params.expansion_add
        self.index.add(vectors)
        faiss.omp_set_num_threads(1)

    def candidates(self, query, count, expansion):
        import faiss

        params = faiss.SearchParametersHNSW()
        params.efSearch = max(count, expansion)
        return self.index.search(query[None], count, params=params)[1][0]

    def nbytes(self):
        import faiss

        return len(faiss.serialize_index(self.index))


class _Ivf(_Backend):
    """The product's inverted lists (``hichunk.retrieval.index.ivf``): one query over every core."""

    name = "ivf"

    def build(self, vectors):
        from hichunk.retrieval.index.ivf import IvfLists

        self.graph = IvfLists.build(np.arange(len(vectors), dtype=np.uint64), vectors)

    def nbytes(self):
        return self.graph.memory_bytes()


class _Hnswlib(_Backend):
    name = "hnswlib-f32"

    def build(self, vectors):
        import hnswlib

        from hichunk.retrieval.index.ann import AnnParams

        params = AnnParams()
        self.index = hnswlib.Index(space="ip", dim=vectors.shape[1])
        self.index.init_index(max_elements=len(vectors), ef_construction=params.expansion_add, M=params.connectivity)
        self.index.set_num_threads(os.cpu_count() or 1)
        self.index.add_items(vectors, np.arange(len(vectors)))
        self.index.set_num_threads(1)

    def candidates(self, query, count, expansion):
        self.index.set_ef(max(count, expansion))
        return self.index.knn_query(query[None], count)[0][0].astype(np.int64)

    def nbytes(self):
        import tempfile

        with tempfile.NamedTemporaryFile() as fh:
            self.index.save_index(fh.name)
            return os.path.getsize(fh.name)


BACKENDS = {"usearch-i8": lambda: _Usearch("i8"), "usearch-f16": lambda: _Usearch("f16"),
            "usearch-f32": lambda: _Usearch("f32"), "faiss-hnsw": _FaissHNSW, "ivf": _Ivf,
            "hnswlib": _Hnswlib}


def _timed_ranking(rank, queries: np.ndarray, k: int) -> tuple[np.ndarray, list[set[int]]]:
    """Milliseconds per query and the top-k rows each found."""
    times, found = [], []
    for q in queries:
        started = time.perf_counter()
        rows = rank(q, k)
        times.append(time.perf_counter() - started)
        found.append(set(int(r) for r in rows[:k]))
    return np.array(times) * 1e3, found


def _report_backend(name: str, size: int, ms: np.ndarray, found, truth, build_s: float, nbytes: int, rss: int,
                    k: int) -> None:
    recall = [len(f & t) / k for f, t in zip(found, truth)]
    est = mean_ci(recall)
    print(f"  {name:19s} n={size}: recall@{k} {est.value:.4f} (95% CI {est.low:.4f}-{est.high:.4f}, n={est.n}); "
          f"p50 {fmt_ci(ms, np.median)} ms, p95 {fmt_ci(ms, _p95)} ms; build {build_s:.1f}s; "
          f"{nbytes / size:.0f} B/leaf ({nbytes / 2**20:.0f} MiB), RSS +{rss / 2**20:.0f} MiB", flush=True)


def _p95(x, axis=None):
    return np.quantile(x, 0.95, axis=axis)


def cmd_ann(args) -> int:
    from hichunk.retrieval.index.ann import OVERSAMPLE
    from hichunk.retrieval.index.candidates import AnnRanker, ExactRanker, KeyTable
    from hichunk.retrieval.index.store import Pool
    from hichunk.retrieval.search.ranking import top_rows

    real = _real_vectors(args.vectors)
    queries = _question_vectors(args.questions, args.embedder, args.queries) if args.questions else None
    if queries is None:  # held-out real vectors, perturbed
        rng = np.random.default_rng(1)
        queries = real[rng.integers(0, len(real), args.queries)] + rng.normal(0, 0.03, (args.queries, real.shape[1]))
        queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    model = MixtureModel.fit(real)
    k = args.k
    print(f"real vectors: {len(real)} x {real.shape[1]} from {args.vectors}; queries: {len(queries)} "
          f"({'questions of ' + args.questions if args.questions else 'perturbed leaf vectors'}); k = {k}; "
          f"graph candidates re-scored exactly: {OVERSAMPLE} x k; threads: build {os.cpu_count()}, search 1 "
          f"(ivf: {os.cpu_count()}, one query's lists spread over them)")
    for size in [int(s) for s in args.sizes.split(",")]:
        real_kind = size <= len(real) and not args.synthetic
        matrix = real[:size] if real_kind else model.sample(size, seed=size)
        truth = _exact_top(matrix, queries, k)
        print(f"{size} leaves ({'real' if real_kind else 'synthetic, mixture fitted to the real vectors'}); "
              f"mean cosine of the k-th neighbour {np.mean([np.sort(matrix[list(t)] @ q)[0] for t, q in zip(truth, queries)]):.3f}",
              flush=True)
        # the product's rankers, over a table of 50-leaf documents (graph key = row)
        slots = (np.arange(size) // 50).astype(np.int32)
        nodes = (np.arange(size) % 50 + 1).astype(np.int32)
        names = [f"d{i:06d}" for i in range(int(slots[-1]) + 1)]
        table = KeyTable(np.arange(size, dtype=np.uint64), slots, nodes, names, lambda pos, m=matrix: m[pos], matrix.shape[1])

        def rows_of(candidates, kk):
            return np.array([50 * int(d[1:]) + n - 1 for d, n, _ in islice(candidates, kk)])

        for name in args.backends.split(","):
            if name == "exact":
                ranker = ExactRanker(Pool(matrix, slots, nodes, names))
                ms, found = _timed_ranking(lambda q, kk, r=ranker: rows_of(r.ranked(q), kk), queries, k)
                _report_backend("exact", size, ms, found, truth, 0.0, matrix.nbytes, 0, k)
                continue
            backend = BACKENDS[name]()
            rss = _rss()
            started = time.perf_counter()
            backend.build(matrix)
            build_s = time.perf_counter() - started
            nbytes, grown = backend.nbytes(), _rss() - rss
            for expansion in [int(e) for e in args.expansions.split(",")]:
                if name in ("usearch-i8", "ivf"):  # the product's backends: their ranker, as a search runs it
                    ranker = AnnRanker(backend.graph, table, expansion)

                    def rank(q, kk, ranker=ranker):
                        return rows_of(ranker.ranked(q), kk)
                else:  # another library, its candidates re-scored the same way
                    def rank(q, kk, backend=backend, m=matrix, e=expansion):
                        rows = np.sort(backend.candidates(q, OVERSAMPLE * kk, e * kk))
                        return rows[top_rows(m[rows] @ q, kk)]

                ms, found = _timed_ranking(rank, queries, k)
                _report_backend(f"{name} x{expansion}", size, ms, found, truth, build_s, nbytes, grown, k)
            if name in ("usearch-i8", "ivf"):
                from hichunk.retrieval.index.ann import EXPANSION, default_expansion

                _time_update(backend.graph, matrix, table, queries, truth, k, model,
                             default_expansion(size, "ivf") if name == "ivf" else EXPANSION)
            del backend
    print(f"load average (1 min): {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


def _time_update(graph, matrix: np.ndarray, table, queries: np.ndarray, truth, k: int, model: MixtureModel,
                 expansion: int) -> None:
    """What a commit that replaces 1% of the rows costs the graph (or lists): removal by key + insertion,
    then the new file (serialised, hashed, written); and recall afterwards at ``expansion`` (the removed
    rows' vectors stay out)."""
    import hashlib
    import tempfile

    from hichunk.retrieval.index.candidates import AnnRanker, KeyTable

    n = len(matrix)
    dead = np.random.default_rng(2).choice(n, max(1, n // 100), replace=False).astype(np.uint64)
    fresh = model.sample(len(dead), seed=n + 1)
    started = time.perf_counter()
    graph.remove(dead)
    new_keys = np.arange(n, n + len(dead), dtype=np.uint64)
    graph.add(new_keys, fresh)
    changed = time.perf_counter() - started
    started = time.perf_counter()
    data = graph.to_bytes()
    hashlib.sha256(data).hexdigest()
    with tempfile.NamedTemporaryFile(dir=".") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    written = time.perf_counter() - started
    live = np.setdiff1d(np.arange(n), dead.astype(np.int64))
    both = np.concatenate([matrix[live], fresh])
    keys = np.concatenate([live.astype(np.uint64), new_keys])
    after = KeyTable(keys, (np.arange(len(keys)) // 50).astype(np.int32), (np.arange(len(keys)) % 50 + 1).astype(np.int32),
                     [f"d{i:06d}" for i in range(len(keys) // 50 + 1)], lambda pos: both[pos], both.shape[1])
    truth_after = _exact_top(both, queries, k)
    ranker = AnnRanker(graph, after, expansion)
    recall = np.mean([len({50 * int(d[1:]) + m - 1 for d, m, _ in islice(ranker.ranked(q), k)} & t) / k
                      for q, t in zip(queries, truth_after)])
    print(f"  update of 1% ({len(dead)} rows removed by key, {len(dead)} added): {changed:.2f}s in the graph, "
          f"{written:.2f}s to serialise, hash and write the new {len(data) / 2**20:.0f} MiB file; "
          f"recall@{k} afterwards {recall:.4f} (x{expansion})", flush=True)


def cmd_rag_diff(args) -> int:
    """Paired difference of evidence recall between two `hichunk bench rag` runs on the same questions."""
    import json

    from hichunk.bench.stats import paired_diff_ci

    def load(path):
        with open(os.path.join(path, "results.json"), encoding="utf-8") as fh:
            data = json.load(fh)
        return data, {(i["method"], i["qid"]): i for i in data["items"]}

    (a_data, a), (b_data, b) = load(args.a), load(args.b)
    if set(a) != set(b):
        raise SystemExit("the two runs did not answer the same questions with the same methods")
    methods = list(dict.fromkeys(m for m, _ in a))
    print(f"ERec in percent, mean over questions, paired difference B - A with a 95% bootstrap interval\n"
          f"A: {args.a} ({a_data['run'].get('models', {}).get('retrieval', '')})\n"
          f"B: {args.b} ({b_data['run'].get('models', {}).get('retrieval', '')})")
    for budget in a_data["budgets"]:
        for m in methods:
            keys = [key for key in a if key[0] == m]
            x = [100 * a[key]["recall"][str(budget)] for key in keys]
            y = [100 * b[key]["recall"][str(budget)] for key in keys]
            d = paired_diff_ci(y, x)
            changed = sum(abs(p - q) > 1e-9 for p, q in zip(x, y))
            print(f"  T={budget} {m:10s} A {np.mean(x):6.2f}  B {np.mean(y):6.2f}  B-A {d.value:+.2f} "
                  f"[{d.low:+.2f}, {d.high:+.2f}] (n={d.n}, {changed} questions changed)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--corpus", required=True, metavar="DIR")
    b.add_argument("--split", default="dev")
    b.add_argument("--limit", type=int, default=None)
    b.add_argument("--embedder", default="")
    b.add_argument("--method", default="structure")
    b.add_argument("--no-breadcrumb", action="store_true")
    b.add_argument("--out", default="/tmp/hichunk-bench-idx")
    b.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="build on Ray: a local Ray (no ADDRESS) with --workers CPUs, or a cluster address")
    b.add_argument("--workers", type=int, default=None, help="Ray workers (default: all cores)")
    b.add_argument("--repeat", type=int, default=3, help="builds, each on a fresh index and cache (default: 3)")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    b.set_defaults(run=cmd_build)
    lat = sub.add_parser("latency")
    lat.add_argument("--from-index", required=True)
    lat.add_argument("--sizes", default="10000,100000")
    lat.add_argument("--queries", type=int, default=200)
    lat.add_argument("--budget", type=int, default=4096)
    lat.add_argument("--work", default="/tmp/hichunk-bench-pools")
    lat.add_argument("--scoring-rows", type=int, default=1_000_000, help="also time bare scoring over this many rows (0: skip)")
    lat.add_argument("--search", default="exact", help="search backends to time, comma-separated: exact, ann")
    lat.set_defaults(run=cmd_latency)
    ann = sub.add_parser("ann", help="recall@k, latency, build time and memory of exact search and ANN libraries")
    ann.add_argument("--vectors", required=True, metavar="PATH",
                     help="real leaf vectors: an index directory, an embedding cache (.sqlite) or a .npy file")
    ann.add_argument("--questions", metavar="DIR", help="a benchmark folder whose questions are the queries "
                     "(embedded with --embedder); default: real leaf vectors plus noise")
    ann.add_argument("--embedder", default=None)
    ann.add_argument("--queries", type=int, default=200)
    ann.add_argument("--sizes", default="10000,100000,1000000",
                     help="pool sizes; a size up to the number of real vectors uses them, larger ones are synthetic")
    ann.add_argument("--synthetic", action="store_true", help="synthetic vectors at every size")
    ann.add_argument("--backends", default="exact,usearch-i8",
                     help=f"comma-separated: exact, {', '.join(BACKENDS)} (ivf and faiss-hnsw need faiss-cpu, hnswlib hnswlib)")
    ann.add_argument("--k", type=int, default=128)
    ann.add_argument("--expansions", default="8",
                     help="graph search lists to time, as multiples of k, comma-separated (default: 8, the product's; "
                     "ivf scans expansion/8 percent of its lists)")
    ann.set_defaults(run=cmd_ann)
    diff = sub.add_parser("rag-diff", help="paired ERec difference between two `hichunk bench rag` runs")
    diff.add_argument("a", metavar="RUN_A", help="output folder of the first run")
    diff.add_argument("b", metavar="RUN_B", help="output folder of the second run")
    diff.set_defaults(run=cmd_rag_diff)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
