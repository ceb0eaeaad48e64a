"""Command-line options shared by several commands (chunking knobs, input decoding)."""

from __future__ import annotations

import argparse

from hichunk.document.load import PARSERS


def add_input_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("input")
    group.add_argument("--input-format", default="auto", choices=["auto", *PARSERS],
                       help="how to read the files (default: from the extension; unknown extensions are plain text)")
    group.add_argument("--encoding", default="utf-8", help="text encoding of the files (default: utf-8)")
    group.add_argument("--encoding-errors", default="strict", choices=["strict", "replace", "ignore"],
                       help="what to do with undecodable bytes (default: strict, i.e. refuse the file)")


def add_chunk_options(parser: argparse.ArgumentParser, default_method: str) -> None:
    from hichunk.chunkers import METHODS

    group = parser.add_argument_group("chunking")
    group.add_argument("--method", default=default_method, choices=list(METHODS),
                       help=f"chunking method (default: {default_method})")
    group.add_argument("--hints", default="use", choices=["use", "ignore"],
                       help="use: trust explicit headings in Markdown/HTML/reST; ignore: infer structure from content")
    group.add_argument("--leaf-tokens", type=_leaf_size, default=200, metavar="N",
                       help="leaf size in tokens (HC200 leaves; chunk size of fixed/recursive/cdc) (default: 200)")
    group.add_argument("--max-level", type=_level, default=10, metavar="K",
                       help="fold split points deeper than level K into the chunk before them (default: 10)")
    group.add_argument("--merge-over-chunk", action="store_true",
                       help="merge a chunk with the deeper chunks after it when together they fit in one leaf")
    group.add_argument("--tokenizer", default=None, metavar="NAME",
                       help="tokenizer for sizes: a Hugging Face directory or hub id (default: offline XLM-R via blingfire)")


def _leaf_size(value: str) -> int:
    from hichunk.chunkers.base import MIN_LEAF_TOKENS

    n = int(value)
    if n < MIN_LEAF_TOKENS:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_LEAF_TOKENS}")
    return n


def _level(value: str) -> int:
    n = int(value)
    if not 1 <= n <= 10:
        raise argparse.ArgumentTypeError("must be between 1 and 10")
    return n


def chunk_options_from(args: argparse.Namespace):
    """ChunkOptions from parsed arguments."""
    from hichunk.chunkers import ChunkOptions
    from hichunk.tokens import load_tokenizer

    return ChunkOptions(leaf_tokens=args.leaf_tokens, max_level=args.max_level, hints=args.hints,
                        merge_over_chunk=args.merge_over_chunk, tokenizer=load_tokenizer(args.tokenizer))


def load_input(path: str, args: argparse.Namespace):
    """Load one document as the input options say ('-' reads standard input as text)."""
    from hichunk.document import decode_bytes, load_document, parse_document

    fmt = None if args.input_format == "auto" else args.input_format
    if path == "-":
        import sys

        text = decode_bytes(sys.stdin.buffer.read(), "<stdin>", args.encoding, args.encoding_errors)
        return parse_document(text, fmt or "text", "<stdin>")
    return load_document(path, fmt, args.encoding, args.encoding_errors)
