"""Chunking speed of the encoder model on a document of a given size, in-process and per process.

    python -m hichunk.bench.perf.split_speed --corpus CORPUS --words 8500

The document is made of test-split documents of one language, concatenated
until it has ``--words`` words (Chinese: characters). In-process timing covers
parse, sentences, features, prediction and tree, with the model already
loaded; the per-process timing runs ``python -m hichunk.bench.perf.split_speed --once``
in a fresh interpreter (imports, model load, everything) and reports its wall
time. Medians over ``--repeats`` runs.

``--breakdown`` splits the in-process time into the model's own forward
passes (the line model's embedding bags and network, the outline heads) and
everything else (parsing, sentences, features, token counts, engine, tree), CPU
time, for the same document chunked again (``warm``: the per-line caches hold its
lines, as in a service that sees repeated text) and for documents of the same
size never seen before (``cold``: each one chunked once).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from hichunk.models.train.corpus.corpus import load_split


def build_documents(corpus: str, lang: str, words: int, count: int = 1) -> list[str]:
    """``count`` documents, each Markdown of test documents of ``lang`` joined until ``words`` words (zh:
    characters), no source document in two of them (fewer when the split runs out)."""
    docs, parts, total = [], [], 0
    for d in load_split(corpus, "test"):
        if d.lang != lang:
            continue
        parts.append(d.markdown)
        total += d.n_chars if lang == "zh" else d.n_words
        if total >= words:
            docs.append("\n\n".join(parts))
            parts, total = [], 0
            if len(docs) == count:
                break
    return docs


def count_words(markdown: str, lang: str) -> int:
    """Words (zh: non-space characters)."""
    return len(markdown.split()) if lang == "en" else sum(1 for c in markdown if not c.isspace())


def build_document(corpus: str, lang: str, words: int) -> str:
    """Markdown of test documents of ``lang`` joined until ``words`` words (zh: characters)."""
    return build_documents(corpus, lang, words)[0]


@contextmanager
def forward_clock() -> Iterator[list[float]]:
    """CPU seconds spent in the encoder's forward passes while inside: the line model's embedding bags and
    network (``NumpyLabeller``), the outline heads and, for a head that reads meaning, the sentence encoder
    over the headings; the list holds one running total."""
    from hichunk.models.encoder import outline_head
    from hichunk.models.encoder.numpy_net import NumpyLabeller

    total = [0.0]
    patched = [(NumpyLabeller, "line_vectors"), (NumpyLabeller, "window_logits"),
               (outline_head.OutlineHead, "_own_probabilities"), (outline_head, "sentence_vectors")]
    originals = [getattr(cls, name) for cls, name in patched]

    def timed(fn):
        def wrapper(*args, **kwargs):
            t0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                total[0] += time.process_time() - t0
        return wrapper

    for (cls, name), fn in zip(patched, originals):
        setattr(cls, name, timed(fn))
    try:
        yield total
    finally:
        for (cls, name), fn in zip(patched, originals):
            setattr(cls, name, fn)


def breakdown(documents: list[str], chunker, repeats: int, lang: str = "en") -> dict:
    """CPU time per document, in and outside the forward passes: ``warm`` (the first document again,
    ``repeats`` times) and ``cold`` (each further document once; their sizes differ, each at least ``--words``)."""
    def one(markdown: str) -> tuple[float, float]:
        with forward_clock() as forward:
            t0 = time.process_time()
            chunk_once(markdown, chunker)
            total = time.process_time() - t0
        return total, forward[0]

    out = {}
    chunk_once(documents[0], chunker)  # the lines of the warm document are seen once before
    for label, docs in (("warm", [documents[0]] * repeats), ("cold", documents[1:])):
        if not docs:
            continue
        runs = [one(d) for d in docs]
        totals, outside = [t for t, _ in runs], [t - f for t, f in runs]
        out[label] = {"n": len(runs), "words_median": statistics.median(count_words(d, lang) for d in docs),
                      "cpu_s_median": round(statistics.median(totals), 4),
                      "outside_forward_s_median": round(statistics.median(outside), 4),
                      "outside_forward_share_median": round(statistics.median(o / t for o, t in zip(outside, totals)), 3),
                      "outside_forward_share_range": [round(min(o / t for o, t in zip(outside, totals)), 3),
                                                      round(max(o / t for o, t in zip(outside, totals)), 3)]}
    return out


def encoder_chunker(model_dir: str | None):
    """The benchmarks' chunker for the encoder model (hints ignored), its model loaded once."""
    from hichunk.bench.runners.methods import parse_method
    from hichunk.tokens import load_tokenizer

    return parse_method(f"encoder={model_dir}" if model_dir else "encoder").chunker_for(load_tokenizer())


def chunk_once(markdown: str, chunker) -> int:
    """Parse and chunk one document; returns the number of chunks."""
    from hichunk.document import parse_document

    return len(chunker.chunk(parse_document(markdown, "markdown")).splits)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hichunk.bench.perf.split_speed", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", metavar="DIR", help="a built corpus; its test split makes the document")
    ap.add_argument("--words", type=int, default=8500)
    ap.add_argument("--lang", default="en", choices=("en", "zh"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--model", help="encoder model folder (default: shipped weights)")
    ap.add_argument("--breakdown", action="store_true",
                    help="only CPU time in and outside the model's forward passes, warm (the document again) and cold "
                    "(--repeats documents of the same size never seen)")
    ap.add_argument("--once", metavar="FILE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if not args.once and not args.corpus:
        ap.error("--corpus is required")

    if args.once:
        with open(args.once, encoding="utf-8") as fh:
            chunk_once(fh.read(), encoder_chunker(args.model))
        return 0
    if args.breakdown:
        documents = build_documents(args.corpus, args.lang, args.words, 1 + args.repeats)
        print(json.dumps({"lang": args.lang, "words": args.words, "repeats": args.repeats,
                          **breakdown(documents, encoder_chunker(args.model), args.repeats, args.lang)}))
        return 0
    markdown = build_document(args.corpus, args.lang, args.words)
    t0 = time.perf_counter()
    chunker = encoder_chunker(args.model)
    load_s = time.perf_counter() - t0
    chunk_once(markdown, chunker)  # warm-up: lazy loads
    inproc = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        n_chunks = chunk_once(markdown, chunker)
        inproc.append(time.perf_counter() - t0)
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False, encoding="utf-8") as fh:
        fh.write(markdown)
    proc = []
    try:
        cmd = [sys.executable, "-m", "hichunk.bench.perf.split_speed", "--once", fh.name] + (["--model", args.model] if args.model else [])
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True)
            proc.append(time.perf_counter() - t0)
    finally:
        os.unlink(fh.name)
    size = count_words(markdown, args.lang)
    print(json.dumps({"lang": args.lang, "words": size, "chunks": n_chunks, "model_load_s": round(load_s, 3),
                      "in_process_s_median": round(statistics.median(inproc), 3),
                      "in_process_s_per_10k_words": round(statistics.median(inproc) / size * 10000, 3),
                      "process_s_median": round(statistics.median(proc), 3), "repeats": args.repeats}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
