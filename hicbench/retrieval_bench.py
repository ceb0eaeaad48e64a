"""Index build throughput and query latency.

    python -m hichunk.bench.retrieval_bench build   --corpus CORPUS --split dev --out /tmp/idx-dev
    python -m hichunk.bench.retrieval_bench latency --from-index /tmp/idx-dev --sizes 10000,100000

``build`` indexes a corpus split with a fresh embedding cache and reports
leaves/s and the share of wall time spent outside the encoder (chunking,
cache, writing). ``latency`` replicates the trees and vectors of a built
index into pools of the given sizes (each replica's vectors perturbed, so
rankings differ) and times queries from ranking to finished context,
excluding query encoding: query vectors are leaf vectors plus noise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time

import numpy as np

from hichunk.bench.stats import fmt_ci


def _load(args):
    return os.getloadavg()[0]


def cmd_build(args) -> int:
    from hichunk.bench.data.corpus import load_split
    from hichunk.document import parse_document
    from hichunk.retrieval.index import Index, IndexConfig

    docs = list(load_split(args.corpus, args.split))[: args.limit]
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    index = Index.create(args.out, IndexConfig(embedder=args.embedder, method=args.method, breadcrumb=not args.no_breadcrumb))
    index.embedder.embed_queries(["warm up"])  # model load is not build time
    load_before = _load(args)
    report = index.add([(d.id, (lambda d=d: parse_document(d.markdown, "markdown", d.id))) for d in docs], progress=True)
    outside = report.seconds - report.encode_seconds
    print(f"documents: {len(docs)} ({args.split}), leaves: {report.leaves}, encoded: {report.encoded}, "
          f"embedder: {index.embedder.id}, method: {args.method}")
    print(f"build: {report.seconds:.1f}s, {report.leaves / report.seconds:.1f} leaves/s; encoder {report.encode_seconds:.1f}s "
          f"({report.leaves / max(report.encode_seconds, 1e-9):.1f} leaves/s inside it); "
          f"outside the encoder: {outside:.1f}s = {100 * outside / report.seconds:.1f}% of the time")
    print(f"load average (1 min) before/after: {load_before:.1f}/{_load(args):.1f} on {os.cpu_count()} cores")
    started = time.perf_counter()
    again = index.add([(d.id, (lambda d=d: parse_document(d.markdown, "markdown", d.id))) for d in docs])
    print(f"re-run on unchanged sources: {time.perf_counter() - started:.2f}s, {again.encoded} encoded")
    return 0


def _replicate(source, out: str, size: int, seed: int):
    from hichunk.retrieval.index import Index

    rng = np.random.default_rng(seed)
    vectors, row_doc, row_node, names = source.pool()
    if os.path.exists(out):
        shutil.rmtree(out)
    index = Index.create(out, source.config)
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
    from hichunk.retrieval.search import FillOptions, search_vector

    source = Index.open(args.from_index)
    base, _, _, _ = source.pool()
    rng = np.random.default_rng(0)
    for size in [int(s) for s in args.sizes.split(",")]:
        index = _replicate(source, os.path.join(args.work, f"pool-{size}"), size, seed=size)
        vectors, _, _, names = index.pool()
        picks = rng.integers(0, len(base), args.queries)
        queries = base[picks] + rng.normal(0, 0.05, (args.queries, base.shape[1])).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        for auto_merge in (True, False):
            options = FillOptions(budget=args.budget, auto_merge=auto_merge)
            cold, warm = [], []
            for timings in (cold, warm):  # first pass loads trees from disk, second finds them cached
                for q in queries:
                    started = time.perf_counter()
                    search_vector(index, q, "", options)
                    timings.append(time.perf_counter() - started)
            ms = np.array(warm) * 1e3
            print(f"{len(vectors)} leaves in {len(names)} docs, T={args.budget}, auto-merge={auto_merge}: "
                  f"warm p50 {fmt_ci(ms, np.median)} ms, p95 {fmt_ci(ms, lambda x, axis=None: np.quantile(x, 0.95, axis=axis))} ms; "
                  f"cold p50 {np.median(cold) * 1e3:.1f} ms")
        started = time.perf_counter()
        for q in queries[:50]:
            s = vectors @ q
            np.argpartition(-s, 64)[:64]
        print(f"  of which scoring + top-64 alone: {(time.perf_counter() - started) / 50 * 1e3:.2f} ms per query")
    if args.scoring_rows:
        matrix = rng.standard_normal((args.scoring_rows, base.shape[1]), dtype=np.float32)
        started = time.perf_counter()
        for q in queries[:20]:
            s = matrix @ q
            np.argpartition(-s, 64)[:64]
        print(f"scoring + top-64 over {args.scoring_rows} random vectors: {(time.perf_counter() - started) / 20 * 1e3:.1f} ms per query")
    print(f"load average (1 min): {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
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
    b.set_defaults(run=cmd_build)
    lat = sub.add_parser("latency")
    lat.add_argument("--from-index", required=True)
    lat.add_argument("--sizes", default="10000,100000")
    lat.add_argument("--queries", type=int, default=200)
    lat.add_argument("--budget", type=int, default=4096)
    lat.add_argument("--work", default="/tmp/hichunk-bench-pools")
    lat.add_argument("--scoring-rows", type=int, default=1_000_000, help="also time bare scoring over this many rows (0: skip)")
    lat.set_defaults(run=cmd_latency)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
