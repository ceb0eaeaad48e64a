"""The documentation site: every page is in the nav and exists, the CLI reference covers every command,
and the README (the front page) stays short and links only to pages that exist."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import yaml

from hichunk.cli import COMMAND_MODULES, build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README_LIMIT = 13_000  # bytes: the README is a front page; user documentation goes into docs/


def nav_pages(entries) -> list[str]:
    pages = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def load_cli_hook():
    spec = importlib.util.spec_from_file_location("cli_reference", DOCS / "hooks" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def all_commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ("hichunk",)):
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from all_commands(sub, (*words, name))


def test_every_page_is_in_the_nav_and_every_nav_entry_exists():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    listed = nav_pages(config["nav"])
    on_disk = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if "hooks" not in p.parts)
    assert [p for p in listed if not (DOCS / p).is_file()] == []
    assert sorted(set(on_disk) - set(listed)) == []
    assert len(listed) == len(set(listed)), "a page is listed twice"


def test_cli_reference_renders_every_sub_command_with_its_help():
    hook = load_cli_hook()
    assert hook.MARKER in (DOCS / "reference" / "cli.md").read_text()
    page = hook.render_cli_reference()
    commands = list(all_commands(build_parser()))
    top = {words[1] for words, _ in commands if len(words) == 2}
    assert top == set(COMMAND_MODULES)
    assert {"index build", "corpus render", "bench rag", "sft train"} <= {" ".join(w[1:]) for w, _ in commands}
    for words, parser in commands:
        assert f"`{' '.join(words)}`\n" in page, words
        assert hook.format_help(parser).rstrip() in page, words


def test_readme_is_a_short_front_page_whose_links_exist():
    text = (ROOT / "README.md").read_text()
    assert len(text.encode()) <= README_LIMIT, "move user documentation into docs/"
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert local, "the README links into the docs"
    assert [link for link in local if not (ROOT / link).exists()] == []


def test_install_lines_work_from_a_checkout():
    """hichunk is on no package index: the docs install it and its extras with pip install -e from the
    checkout, and name the CPU wheel of torch for machines whose pip would take the CUDA build."""
    pages = {p: p.read_text() for p in [ROOT / "README.md", *DOCS.rglob("*.md")]}
    for path, text in pages.items():
        for line in re.findall(r"pip install [^\n`]*", text):
            assert "hichunk[" not in line or "which from a checkout reads" in text, f"{path.name}: {line}"
    for page in (ROOT / "README.md", DOCS / "quickstart.md"):
        text = page.read_text()
        assert "pip install torch==2.13.0+cpu --index-url https://download.pytorch.org/whl/cpu" in text
        assert "takes the CPU build" not in text
    setup = re.findall(r"^pip install torch[^\n]*", (ROOT / "README.md").read_text(), re.M)
    ci = (ROOT / ".ci" / "run").read_text()
    assert setup[1] in ci.splitlines(), "CI runs the README's set-up command 2 verbatim"
    assert setup[0] == "pip install torch==2.13.0 && pip install -e . && hichunk demo"
