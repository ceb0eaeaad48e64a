"""Chunking speed of the encoder model on a document of a given size, in-process and per process.

    python -m hichunk.bench.perf.split_speed --corpus CORPUS --words 8500

The document is made of test-split documents of one language, concatenated
until it has ``--words`` words (Chinese: characters). In-process timing covers
parse, sentences, features, prediction and tree, with the model already
loaded; the per-process timing runs ``python -m hichunk.bench.perf.split_speed --once``
in a fresh interpreter (imports, model load, everything) and reports its wall
time. Medians over ``--repeats`` runs.
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

from hichunk.models.train.corpus.corpus import load_split


def build_document(corpus: str, lang: str, words: int) -> str:
    """Markdown of test documents of ``lang`` joined until ``words`` words (zh: characters)."""
    parts, total = [], 0
    for d in load_split(corpus, "test"):
        if d.lang != lang:
            continue
        parts.append(d.markdown)
        total += d.n_chars if lang == "zh" else d.n_words
        if total >= words:
            break
    return "\n\n".join(parts)


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
    ap.add_argument("--once", metavar="FILE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if not args.once and not args.corpus:
        ap.error("--corpus is required")

    if args.once:
        with open(args.once, encoding="utf-8") as fh:
            chunk_once(fh.read(), encoder_chunker(args.model))
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
    size = len(markdown.split()) if args.lang == "en" else sum(1 for c in markdown if not c.isspace())
    print(json.dumps({"lang": args.lang, "words": size, "chunks": n_chunks, "model_load_s": round(load_s, 3),
                      "in_process_s_median": round(statistics.median(inproc), 3),
                      "in_process_s_per_10k_words": round(statistics.median(inproc) / size * 10000, 3),
                      "process_s_median": round(statistics.median(proc), 3), "repeats": args.repeats}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
