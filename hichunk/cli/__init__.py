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
    add_general_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"hichunk.cli.{name}").register(sub)
    for command in sub_commands(parser):
        add_general_options(command.add_argument_group("general (also accepted before the command)"), sub_command=True)
    return parser


def add_general_options(group: argparse._ActionsContainer, sub_command: bool = False) -> None:
    """-v/-q, on the top parser and on every sub-command, so that they work after the command too.

    A sub-command leaves them unset unless given there (SUPPRESS): ``hichunk -q chunk ...`` keeps the
    top-level value, ``hichunk chunk ... -q`` sets it, and ``-v`` counts on both sides (``main`` adds them).
    """
    unset = argparse.SUPPRESS
    group.add_argument("-v", "--verbose", action="count", dest="sub_verbose" if sub_command else "verbose",
                       default=unset if sub_command else 0, help="more logging (-vv for debug)")
    group.add_argument("-q", "--quiet", action="store_true", default=unset if sub_command else False,
                       help="only errors; no progress bars")


def sub_commands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every sub-command's parser below ``parser``, depth first (``index``, ``index build`` ...)."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # an alias names the same parser
                found += [sub, *sub_commands(sub)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.verbose += vars(args).pop("sub_verbose", 0)
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
