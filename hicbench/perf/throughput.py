"""Chunking throughput benchmark: our chunkers against langchain and semchunk on the same texts.

    python -m hichunk.bench.perf.throughput --docs DIR [--glob '*.rst.txt'] [--repeats 3] [--big-mb 50]

Every method gets the same documents and the same chunk size in tokens of the
same tokenizer (ours: the offline default). Competitors are optional imports
(``pip install langchain-text-splitters semchunk``), used only here. Peak
memory on a large file is measured in a child process per method.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from hichunk.chunkers import ChunkOptions, chunk_document
from hichunk.document import detect_format, parse_document
from hichunk.tokens import load_tokenizer

OURS = ("structure", "fixed", "recursive", "cdc")


def _competitors(size: int, count: Callable[[str], int]) -> dict[str, Callable[[], Callable[[str], list[str]]]]:
    """Factories of competitor splitters; a fresh one per timed run, so no cache survives a repeat."""
    out: dict[str, Callable[[], Callable[[str], list[str]]]] = {}
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        out["langchain-recursive (tokens)"] = lambda: RecursiveCharacterTextSplitter(
            chunk_size=size, chunk_overlap=0, length_function=count).split_text
        out[f"langchain-recursive ({size * 4} chars)"] = lambda: RecursiveCharacterTextSplitter(
            chunk_size=size * 4, chunk_overlap=0).split_text
    except ImportError:
        print("langchain-text-splitters not installed: skipped", file=sys.stderr)
    try:
        import semchunk

        # semchunk memoises token counts per counter function: a new function per repeat keeps repeats cold
        out["semchunk (tokens)"] = lambda: semchunk.chunkerify(lambda text: count(text), size)
    except ImportError:
        print("semchunk not installed: skipped", file=sys.stderr)
    return out


def _timed(fn: Callable[[], object], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def run_corpus(paths: list[str], size: int, repeats: int) -> list[dict]:
    tokenizer = load_tokenizer()
    texts = [open(p, encoding="utf-8", errors="replace").read() for p in paths]
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    fmts = [detect_format(p) for p in paths]
    opts = ChunkOptions(leaf_tokens=size, merge_over_chunk=False, tokenizer=tokenizer)
    rows = []
    docs = [parse_document(t, f, p) for t, f, p in zip(texts, fmts, paths)]
    chunk_document(docs[0], "structure", opts)  # warm-up: imports, Punkt parameters
    parse = _timed(lambda: [parse_document(t, f, p) for t, f, p in zip(texts, fmts, paths)], repeats)
    rows.append(_row("parse only (ours)", megabytes, parse, None))
    for method in OURS:
        trees = []
        times = _timed(lambda m=method, out=trees: out.append([chunk_document(d, m, opts) for d in docs]), repeats)
        rows.append(_row(f"{method} (ours, chunking)", megabytes, times, sum(len(t.leaves()) for t in trees[-1])))
        both = [p + c for p, c in zip(parse, times)]
        rows.append(_row(f"{method} (ours, parse+chunking)", megabytes, both, None))
    for name, make in _competitors(size, tokenizer.count).items():
        out = []

        def run(make=make, out=out) -> None:
            split = make()
            out.append([split(t) for t in texts])

        times = _timed(run, repeats)
        rows.append(_row(name, megabytes, times, sum(len(c) for c in out[-1])))
    return rows


def _row(name: str, megabytes: float, times: list[float], chunks: int | None) -> dict:
    med = statistics.median(times)
    return {"method": name, "mb": round(megabytes, 2), "repeats": len(times), "median_s": round(med, 3),
            "mb_per_s": round(megabytes / med, 2), "min_s": round(min(times), 3), "max_s": round(max(times), 3),
            "chunks": chunks}


def make_big_file(path: str, megabytes: int, seed: int = 0) -> None:
    """A reproducible large text of English-like paragraphs with some Chinese."""
    rng = random.Random(seed)
    words = ("the of and to in a is that for it as with was on be by this are or from at which an chunk tree "
             "section level leaf budget merge token retrieval index query document heading 中文 句子 检索").split()
    with open(path, "w", encoding="utf-8") as fh:
        written = 0
        while written < megabytes * 1024 * 1024:
            para = " ".join(rng.choice(words) for _ in range(rng.randint(20, 120))) + ".\n\n"
            fh.write(para)
            written += len(para.encode("utf-8"))


def peak_memory(path: str, method: str, size: int) -> dict:
    """Wall time and peak RSS of ``hichunk chunk`` on one file, in a child process."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "hichunk", "-q", "chunk", path, "--method", method,
                           "--leaf-tokens", str(size), "--format", "splits", "-o", os.devnull],
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{method} failed: {proc.stderr.strip()}")
    return {"method": method, "wall_s": round(wall, 1)}


def run_big(megabytes: int, size: int) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.txt")
        make_big_file(path, megabytes)
        file_bytes = os.path.getsize(path)
        for method in OURS:
            # RUSAGE_CHILDREN keeps the maximum over finished children, so run each method in
            # its own wrapper process and read that process's own peak
            code = ("import json,resource,sys;from hichunk.bench.perf.throughput import peak_memory;"
                    f"r=peak_memory({path!r},{method!r},{size});"
                    "r['peak_mb']=round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,1);"
                    "print(json.dumps(r))")
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            row = json.loads(out.stdout)
            row["file_mb"] = round(file_bytes / 2**20, 1)
            row["peak_x_file"] = round(row["peak_mb"] / (file_bytes / 2**20), 1)
            row["mb_per_s"] = round(file_bytes / 1e6 / row["wall_s"], 2)
            rows.append(row)
    return rows


def _table(rows: list[dict]) -> str:
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", help="folder of documents (e.g. the reST sources of Debian's python3.11-doc)")
    parser.add_argument("--glob", default="**/*.rst.txt", help="files to take under --docs (default: **/*.rst.txt)")
    parser.add_argument("--size", type=int, default=200, help="chunk size in tokens (default 200)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--big-mb", type=int, default=0, help="also measure peak memory on a generated file of this size")
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, tokenizer {load_tokenizer().name}")
    if args.docs:
        paths = sorted(glob.glob(os.path.join(args.docs, args.glob), recursive=True))
        if not paths:
            parser.error(f"no files match {args.glob} under {args.docs}")
        print(f"\ncorpus: {len(paths)} files under {args.docs}\n")
        print(_table(run_corpus(paths, args.size, args.repeats)))
    if args.big_mb:
        print(f"\nlarge file: {args.big_mb} MB, one child process per method\n")
        print(_table(run_big(args.big_mb, args.size)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
