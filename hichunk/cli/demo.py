"""``hichunk demo``: the whole pipeline on a bundled sample document."""

from __future__ import annotations

import argparse
import os

SAMPLE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "samples", "solar_guide.md")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="chunk a bundled sample document and print its tree",
                       description="Run the pipeline on a bundled sample: chunk it into a tree and print the tree.")
    p.add_argument("--document", default=SAMPLE, help="use this document instead of the bundled sample")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hichunk.chunkers import chunk_document
    from hichunk.document import load_document
    from hichunk.tree import render_tree

    doc = load_document(args.document)
    tree = chunk_document(doc, "structure")
    print(render_tree(tree))
    return 0
