"""Index builds, timed for ``hichunk.bench.perf.chunk_speed --index`` (and queries, in a child process).

Builds: every embedder indexes the same documents in memory with an empty
embedding cache, rounds interleaved across embedders; leaves/s and the share
of the build spent inside the embedder (medians, 95% bootstrap intervals).

Queries (``hichunk.integrations.automerge_speed``, which needs the
integrations layer) run in a child process on the same documents.
"""

from __future__ import annotations

import time

import numpy as np

from hichunk.bench.stats import bootstrap_ci

INDEX_DOCS = 30  # documents per build: builds run at the embedder's pace


def sources(docs):
    from hichunk.document import parse_document

    return [(name, (lambda n=name, f=fmt, t=text: parse_document(t, f, n))) for name, fmt, text in docs]


def builds(docs, embedders: list[str], method: str, size: int, repeats: int) -> list[dict]:
    """One row per embedder: leaves/s and the share of time in the embedder."""
    from hichunk.retrieval.embedders import load_embedder
    from hichunk.retrieval.index import Index, IndexConfig

    for name in embedders:
        load_embedder(name).embed_passages(["warm up"])  # model load is not build time
    rates: dict[str, list[float]] = {e: [] for e in embedders}
    shares: dict[str, list[float]] = {e: [] for e in embedders}
    leaves: dict[str, int] = {}
    for r in range(repeats):
        for name in embedders[r % len(embedders):] + embedders[: r % len(embedders)]:
            index = Index.memory(IndexConfig(embedder=name, method=method, leaf_tokens=size))
            t0 = time.perf_counter()
            index.add(sources(docs))
            seconds = time.perf_counter() - t0
            leaves[name] = index.n_leaves
            rates[name].append(index.n_leaves / seconds)
            shares[name].append(index.embedder.encode_seconds / seconds)
    rows = []
    for name in embedders:
        rate, rlo, rhi = bootstrap_ci(rates[name])
        share, slo, shi = bootstrap_ci(np.asarray(shares[name]) * 100)
        rows.append({"embedder": name, "documents": len(docs), "leaves": leaves[name], "builds": repeats,
                     "leaves/s": f"{rate:.1f} [{rlo:.1f}-{rhi:.1f}]", "% in embedder": f"{share:.0f} [{slo:.0f}-{shi:.0f}]"})
    return rows


def run(docs, embedders: str, method: str, size: int, repeats: int) -> list[dict]:
    """Print and return the build table (the first ``INDEX_DOCS`` documents by name)."""
    import os

    from hichunk.bench.perf.chunk_speed import markdown_table

    docs = sorted(docs, key=lambda d: d[0])[:INDEX_DOCS]
    rows = builds(docs, [e for e in embedders.split(",") if e], method, size, repeats)
    print(f"\nindex builds, method {method} (load average {os.getloadavg()[0]:.1f})\n")
    print(markdown_table(rows))
    return rows
