"""``hichunk demo``: the whole pipeline on a bundled sample document.

Chunk the sample into a tree, index its leaves, and answer a question with
Auto-Merge, printing what each step produced.
"""

from __future__ import annotations

import argparse
import os
import tempfile

SAMPLE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "samples", "solar_guide.md")
QUESTION = "How do I size a home battery, and which capacity and power figures should I compare?"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run the pipeline on a bundled sample: chunk, index, query with Auto-Merge",
                       description="Chunk a bundled sample document into a tree, index its leaves in a temporary "
                       "directory, and answer a question with Auto-Merge, printing each step.")
    p.add_argument("--document", default=SAMPLE, help="use this document instead of the bundled sample")
    p.add_argument("--question", default=QUESTION, help="the question to answer")
    p.add_argument("--budget", type=int, default=600, help="context budget in tokens (default: 600)")
    p.add_argument("--hints", default="use", choices=["use", "ignore"],
                   help="use (default, as hichunk chunk): keep the document's headings, the model adds structure inside "
                   "their sections; ignore: the model infers all structure from the text alone (the paper's protocol)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hichunk.chunkers import ChunkOptions, chunk_document
    from hichunk.document import load_document
    from hichunk.retrieval import FillOptions, Index, IndexConfig
    from hichunk.tree import render_tree
    from hichunk.wording import counted

    doc = load_document(args.document)
    tree = chunk_document(doc, "hichunk", ChunkOptions(hints=args.hints))
    print(f"== 1. chunk tree (method hichunk, hints {args.hints})\n")
    print(render_tree(tree))

    with tempfile.TemporaryDirectory(prefix="hichunk-demo-") as folder:
        index = Index.create(os.path.join(folder, "idx"), IndexConfig(hints=args.hints))
        report = index.add_paths([args.document])
        print(f"\n== 2. index: {counted(report.leaves, 'leaf', 'leaves')} embedded with {index.embedder.id}\n")
        result = index.search(args.question, FillOptions(budget=args.budget))

    print(f"== 3. query, budget {result.budget} tokens, Auto-Merge on: {args.question}\n")
    for p in result.passages:
        how = "merged section" if p.merged else p.kind
        title = " > ".join(p.titles) or "(untitled)"
        print(f"  rank {p.rank:>2}  {how:<14} {p.tokens:>4} tok  chars {p.start}-{p.end}  {title}")
    print(f"\n  {counted(len(result.merges), 'merge')}, {result.tokens} of {result.budget} tokens used\n")
    print("== context\n")
    print(result.context)
    return 0
