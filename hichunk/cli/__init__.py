"""The ``hichunk`` command. Each sub-command lives in its own module with a ``register`` function."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from hichunk import __version__
from hichunk.errors import HichunkError

# Sub-command modules under hichunk.cli, in --help order. Each defines
# register(subparsers) and keeps heavy imports inside its handler.
COMMAND_MODULES = ["demo", "chunk", "index", "query", "serve", "corpus", "train", "sft", "bench"]

EXIT_OK, EXIT_PARTIAL, EXIT_ERROR = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hichunk",
        description="Hierarchical chunking and Auto-Merge retrieval for RAG, offline by default.",
    )
    parser.add_argument("--version", action="version", version=f"hichunk {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    parser.add_argument("-q", "--quiet", action="store_true", help="only errors; no progress bars")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"hichunk.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.ERROR if args.quiet else (logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)]
    logging.basicConfig(level=level, format="hichunk: %(levelname)s: %(message)s")
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_ERROR
    try:
        return int(args.handler(args) or EXIT_OK)
    except HichunkError as exc:
        print(f"hichunk: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("hichunk: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
