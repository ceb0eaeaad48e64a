"""Check exact provenance on real documents: every passage's text is ``raw[start:end]`` of its file.

    python -m hichunk.bench.perf.provenance_check --docs DIR [--max-docs 60] [--budgets 256,1024,4096]

Indexes up to ``--max-docs`` documents found under ``--docs`` (every known
format, sorted by path, evenly spaced) in memory with the offline embedder,
asks one question per document (its first heading, or its first words) at
each budget with both rule sets, and compares every passage with the file's
decoded text. Prints the count of exact passages (and the first mismatches).
"""

from __future__ import annotations

import argparse
import sys
import time

from hichunk.document import load_document
from hichunk.document.inputs import collect_inputs
from hichunk.retrieval.index import Index, IndexConfig
from hichunk.retrieval.search import FillOptions


def _question(text: str) -> str:
    for line in text.splitlines():
        words = line.strip("#=-*<>/ \t").split()
        if len(words) >= 2:
            return " ".join(words[:12])
    return "overview"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hichunk.bench.perf.provenance_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", required=True, metavar="DIR")
    parser.add_argument("--max-docs", type=int, default=60)
    parser.add_argument("--budgets", default="256,1024,4096")
    parser.add_argument("--method", default="hichunk")
    args = parser.parse_args(argv)

    found = collect_inputs([args.docs])
    step = max(1, len(found) // args.max_docs)
    paths = found[::step][: args.max_docs]
    raws, loaders = {}, []
    for path in paths:
        try:
            raws[path] = load_document(path).text
        except Exception as exc:  # unreadable files are skipped and counted
            print(f"skipped {path}: {exc}", file=sys.stderr)
            continue
        loaders.append((path, lambda p=path: load_document(p)))
    index = Index.memory(IndexConfig(method=args.method))
    started = time.perf_counter()
    report = index.add(loaders)
    formats = sorted({load_document(p).format for p in raws})
    print(f"{len(index)} documents ({', '.join(formats)}), {report.leaves} leaves, indexed in "
          f"{time.perf_counter() - started:.1f} s")
    total = exact = truncated = merged = 0
    bad = []
    for raw in raws.values():
        for budget in (int(b) for b in args.budgets.split(",")):
            for mode in ("paper", "reference"):
                result = index.search(_question(raw), FillOptions(budget=budget, mode=mode))
                for p in result.passages:
                    total += 1
                    truncated += p.truncated
                    merged += p.merged
                    if p.text == raws[p.doc][p.start : p.end]:
                        exact += 1
                    elif len(bad) < 5:
                        bad.append(f"{p.doc} {p.start}-{p.end}: {p.text[:60]!r}")
    print(f"passages exact: {exact}/{total} ({merged} merged sections, {truncated} truncated)")
    for line in bad:
        print(f"  mismatch: {line}")
    return 0 if exact == total else 1


if __name__ == "__main__":
    sys.exit(main())
