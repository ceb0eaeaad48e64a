"""Auto-Merge side by side with the published code: same trees, rankings and tokenizer.

    python -m hichunk.bench.perf.automerge_bench --corpus CORPUS --split dev

For every document (structure chunker, HC200 leaves, merge_over_chunk) and
several seeded random rankings of its leaves, runs the reference
``tree_chunk_retrieval_auto_merge`` (and plain ``tree_chunk_retrieval``) and
our ``reference`` mode, checks that the contexts and merge counts are
identical, and times both (ranking excluded; our per-tree precompute is
timed separately, as it happens once when a tree is loaded).
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from hichunk.bench.perf.reference_code import PieceTokenizer, load_reference_algo, to_reference_leaves
from hichunk.bench.stats import fmt_ci


def _trees(corpus: str, split: str, limit: int | None):
    from hichunk.chunkers import ChunkOptions, chunk_document
    from hichunk.document import parse_document
    from hichunk.models.train.corpus.corpus import load_split

    options = ChunkOptions(merge_over_chunk=True)
    for i, doc in enumerate(load_split(corpus, split)):
        if limit is not None and i >= limit:
            break
        yield doc.id, chunk_document(parse_document(doc.markdown, "markdown", doc.id), "structure", options)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, metavar="DIR")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--limit", type=int, default=None, help="at most this many documents")
    parser.add_argument("--rankings", type=int, default=3, help="random rankings per document and budget")
    parser.add_argument("--budgets", default="256,1024,4096")
    parser.add_argument("--snapshot", required=True, metavar="DIR",
                        help="the reference repository github.com/TencentYoutuResearch/HiChunk (bare git dir or checkout)")
    args = parser.parse_args(argv)

    from hichunk.retrieval.search import FillOptions, TreeView, assemble, fill_context
    from hichunk.tokens import load_tokenizer

    ref = load_reference_algo(args.snapshot)
    tokenizer = load_tokenizer()
    pieces = PieceTokenizer(tokenizer)
    budgets = [int(b) for b in args.budgets.split(",")]
    rng = random.Random(0)
    same = {"auto_merge": 0, "plain": 0}
    merge_same = 0
    cases = 0
    ours_t: list[float] = []
    ref_t: list[float] = []
    view_t: list[float] = []
    mismatches: list[str] = []
    for doc_id, tree in _trees(args.corpus, args.split, args.limit):
        started = time.perf_counter()
        view = TreeView.build(doc_id, tree)
        view_t.append(time.perf_counter() - started)
        leaves = to_reference_leaves(view)
        chunks = {doc_id: leaves}
        n = len(view.leaf_ids)
        for budget in budgets:
            for _ in range(args.rankings):
                order = list(range(n))
                rng.shuffle(order)
                ids = [f"{doc_id}_{k}" for k in order]
                candidates = [(doc_id, view.leaf_ids[k], 0.0) for k in order]
                for auto_merge in (True, False):
                    options = FillOptions(budget=budget, mode="reference", auto_merge=auto_merge)
                    started = time.perf_counter()
                    fill = fill_context(candidates, lambda d, v=view: v, options, tokenizer)
                    ours = assemble("", fill, lambda d, v=view: v, options, tokenizer)
                    mid = time.perf_counter()
                    algo = ref.tree_chunk_retrieval_auto_merge if auto_merge else ref.tree_chunk_retrieval
                    context, count = algo(chunks, {"retrieved_ids": ids}, pieces, budget, 200)
                    end = time.perf_counter()
                    key = "auto_merge" if auto_merge else "plain"
                    if ours.context == context:
                        same[key] += 1
                    elif len(mismatches) < 5:
                        mismatches.append(f"{key} {doc_id} T={budget}: ours {len(ours.context)} chars, reference {len(context)}")
                    if auto_merge:
                        cases += 1
                        merge_same += ours.merge_count == count
                        ours_t.append(mid - started)
                        ref_t.append(end - mid)
    ours_a, ref_a = np.array(ours_t), np.array(ref_t)
    ratio = ref_a / np.maximum(ours_a, 1e-9)
    print(f"documents: {len(view_t)}, cases (document x budget x ranking): {cases}, budgets {budgets}")
    print(f"identical contexts, Auto-Merge: {same['auto_merge']}/{cases}; plain fill: {same['plain']}/{cases}; "
          f"identical merge counts: {merge_same}/{cases}")
    print(f"time per query, ours (reference mode): median {fmt_ci(ours_a * 1e3, np.median)} ms")
    print(f"time per query, published code:        median {fmt_ci(ref_a * 1e3, np.median)} ms")
    print(f"speed ratio (published / ours), per case: median {fmt_ci(ratio, np.median)}; "
          f"total time ratio {ref_a.sum() / ours_a.sum():.1f}x")
    print(f"per-tree precompute (once per loaded tree): median {np.median(view_t) * 1e3:.2f} ms")
    for line in mismatches:
        print("mismatch:", line)
    return 0 if same["auto_merge"] == cases and same["plain"] == cases else 1


if __name__ == "__main__":
    raise SystemExit(main())
