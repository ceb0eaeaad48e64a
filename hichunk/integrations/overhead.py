"""What the LangChain and LlamaIndex retrievers cost on top of the bare API, per query.

    python -m hichunk.integrations.overhead --index DIR --queries 100 --rounds 5 --budget 4096

Each round asks every query three ways on the same open index, in rotating
order: ``index.search`` (bare), LangChain ``HiChunkRetriever.invoke`` and
LlamaIndex ``HiChunkRetriever.retrieve``; each call encodes its query and runs
the whole search. Prints, per way, the median time with a 95% bootstrap
interval, and per wrapper the median paired ratio wrapper/bare and the median
paired extra milliseconds (pairs: the same query in the same round). Bounded
by ``--rounds`` x ``--queries`` calls and ``--seconds``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from hichunk.bench.perf.serve_load import queries
from hichunk.bench.stats import bootstrap_ci


def _fmt(values, unit: str = "ms", scale: float = 1000.0, digits: int = 2) -> str:
    value, low, high = bootstrap_ci(np.asarray(values) * scale)
    return f"{value:.{digits}f} {unit} [{low:.{digits}f}-{high:.{digits}f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hichunk.integrations.overhead", description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", required=True, metavar="DIR")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=4096)
    parser.add_argument("--seconds", type=float, default=600.0, help="stop after this long (default: 600)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    from hichunk.integrations.langchain import HiChunkRetriever as LangChainRetriever
    from hichunk.integrations.llama_index import HiChunkRetriever as LlamaIndexRetriever
    from hichunk.retrieval.index import Index
    from hichunk.retrieval.search import FillOptions

    index = Index.open(args.index)
    options = FillOptions(budget=args.budget)
    lc = LangChainRetriever(index=index, options=options)
    li = LlamaIndexRetriever(index, options=options)
    ways = {"bare index.search": lambda q: index.search(q, options), "LangChain invoke": lc.invoke,
            "LlamaIndex retrieve": li.retrieve}
    for call in ways.values():  # load the embedder, the pool and the views; import what the wrappers import
        call("warm up")
    qs = queries(args.queries, args.seed)
    times: dict[str, list[float]] = {name: [] for name in ways}
    names = list(ways)
    deadline = time.perf_counter() + args.seconds
    done = 0
    for r in range(args.rounds):
        for i, q in enumerate(qs):
            if time.perf_counter() > deadline:
                break
            order = names[(r + i) % 3 :] + names[: (r + i) % 3]
            for name in order:
                t0 = time.perf_counter()
                ways[name](q)
                times[name].append(time.perf_counter() - t0)
            done += 1
    print(f"index {args.index}: {index.n_leaves} leaves, {len(index)} documents; budget {args.budget}; "
          f"{done} paired calls ({args.rounds} rounds x {len(qs)} queries, bounded by {args.seconds:.0f} s)")
    bare = np.asarray(times[names[0]][:done])
    for name in names:
        print(f"{name:>20}: median {_fmt(times[name][:done])}")
    for name in names[1:]:
        wrapped = np.asarray(times[name][:done])
        print(f"{name:>20}: ratio to bare {_fmt(wrapped / bare, 'x', 1.0, 3)}, "
              f"extra {_fmt(wrapped - bare)} per query (paired medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
