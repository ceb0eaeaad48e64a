"""MkDocs hook: the CLI reference page is rendered from the real ``hichunk`` parsers at build time.

The page holds a marker; every build replaces it with each command's ``--help``, walked from
``hichunk.cli.build_parser()``, so the reference can never drift from the code.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

MARKER = "<!-- cli-reference -->"
HELP_WIDTH = 100  # argparse wraps to $COLUMNS; a fixed width keeps the page the same on every machine


def iter_commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("hichunk",)
                  ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (command words, parser) pair, depth first in --help order; aliases once."""
    yield path, parser
    seen: set[int] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if id(sub) not in seen:
                    seen.add(id(sub))
                    yield from iter_commands(sub, (*path, name))


def format_help(parser: argparse.ArgumentParser) -> str:
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(HELP_WIDTH)
    try:
        return parser.format_help()
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def render_cli_reference() -> str:
    """Markdown: one section per command and sub-command, its --help as a text block."""
    from hichunk.cli import build_parser

    sections = []
    for path, parser in iter_commands(build_parser()):
        heading = "#" * min(len(path) + 1, 6)
        sections.append(f"{heading} `{' '.join(path)}`\n\n```text\n{format_help(parser).rstrip()}\n```\n")
    return "\n".join(sections)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, render_cli_reference())
    return markdown
