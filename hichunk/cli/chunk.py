"""``hichunk chunk``: documents in, chunk trees out."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from contextlib import ExitStack

from hichunk.cli.options import (
    add_chunk_options,
    add_input_options,
    chunk_options_from,
    input_paths,
    load_input,
)
from hichunk.errors import HichunkError

log = logging.getLogger("hichunk")
FORMATS = ("tree", "splits", "json", "markdown", "html")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "chunk",
        help="chunk documents into trees",
        description="Chunk documents (text, Markdown, HTML, reST, man pages, PDF, DOCX) into chunk trees. "
        "Directories are walked for known document types.",
        epilog="formats: tree = readable outline; splits = the reference repository's result format "
        '{"FILE": {"splits": [[text, level], ...]}}; json = one tree per line (JSON Lines, loads back '
        "with hichunk.tree.from_dict); markdown = the text with the tree written as headings; html = one "
        "self-contained page with every tree as collapsible sections (no network needed to view it).\n"
        "exit codes: 0 all documents chunked, 1 some failed (others written), 2 usage error or none chunked.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or directories ('-' reads standard input)")
    p.add_argument("--format", default="tree", choices=FORMATS, help="output format (default: tree)")
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of standard output")
    add_chunk_options(p, models=True)
    add_input_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from hichunk.chunkers import PROGRESS_METHODS
    from hichunk.retrieval.chunking import get_chunker

    paths = input_paths(args.paths, args)
    method = args.method
    with ExitStack() as stack:
        extra = _model_run(args, stack) if method == "hichunk" else {}
        if method in PROGRESS_METHODS:
            extra["progress"] = not args.quiet
        if method != "hichunk" and (args.model or args.endpoint):
            raise HichunkError(f"--model and --endpoint only apply to the hichunk method, not {method}")
        chunker = get_chunker(method, chunk_options_from(args), **extra)
        results: list[tuple[str, object]] = []
        failures = 0
        for path in tqdm(paths, desc="chunking", unit="doc", disable=args.quiet or len(paths) < 5, file=sys.stderr):
            try:
                results.append((path, chunker.chunk(load_input(path, args))))
            except HichunkError as exc:
                failures += 1
                print(f"hichunk: error: {exc}", file=sys.stderr)
    if not results:
        return 2
    _write(results, args)
    if failures:
        log.warning("%d of %d documents failed", failures, len(paths))
    return 1 if failures else 0


def _model_run(args: argparse.Namespace, stack: ExitStack) -> dict:
    """Model, engine settings, prediction cache and trace writer for the hichunk method."""
    from hichunk.cli.options import model_from
    from hichunk.engine import EngineSettings, PredictionCache

    extra: dict = {"model": model_from(args), "settings": EngineSettings(window_tokens=args.window, recurrent=args.recurrent,
                                                                  document_levels=args.levels == "document")}
    if not args.no_cache:
        extra["cache"] = PredictionCache()
        stack.callback(extra["cache"].close)
    if args.trace:
        try:
            trace = stack.enter_context(open(args.trace, "w", encoding="utf-8"))
        except OSError as exc:
            raise HichunkError(f"{args.trace}: cannot write the trace ({exc.strerror})") from None

        def write(doc: str, record) -> None:
            trace.write(json.dumps({"doc": doc, **record.to_dict()}, ensure_ascii=False) + "\n")
            trace.flush()

        extra["on_window"] = write
    return extra


def _write_splits(results: list[tuple[str, object]], out) -> None:
    """The splits JSON, written chunk by chunk so huge documents are never copied whole."""
    out.write("{")
    for i, (path, tree) in enumerate(results):
        out.write(("" if i == 0 else ", ") + json.dumps(path, ensure_ascii=False) + ': {"splits": [')
        for j, (text, level) in enumerate(tree.split_texts()):
            out.write(("" if j == 0 else ", ") + json.dumps([text, level], ensure_ascii=False))
        out.write("]}")
    out.write("}\n")


def _write(results: list[tuple[str, object]], args: argparse.Namespace) -> None:
    from hichunk.tree import render_tree, to_dict, to_markdown

    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.format == "splits":
            _write_splits(results, out)
        elif args.format == "json":
            for _, tree in results:
                out.write(json.dumps(to_dict(tree), ensure_ascii=False) + "\n")
        elif args.format == "html":
            from hichunk.htmlview import tree_page

            out.write(tree_page([tree for _, tree in results]))
        elif args.format == "markdown":
            for i, (path, tree) in enumerate(results):
                if len(results) > 1:
                    out.write(f"{'' if i == 0 else chr(10)}<!-- {path} -->\n")
                out.write(to_markdown(tree))
        else:
            out.write("\n\n".join(render_tree(tree) for _, tree in results) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
