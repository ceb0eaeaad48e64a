"""What the command line prints a user: counts in the right number, tree lines that say what their numbers
are, index reports that say what happened, and the sources listed under a query's context."""

from __future__ import annotations

import json

import pytest
from fakes import HashEmbedder

import hichunk.cli as cli
from hichunk.chunkers import ChunkOptions, chunk_document
from hichunk.document import parse_document
from hichunk.tree import render_tree
from hichunk.wording import counted

BOOK = ("# Guide\n\nIntro words here. More intro words follow.\n\n## Part one\n\n"
        + "Sentence number one is here. " * 12 + "\n\n## Part two\n\nShort part.\n")


def test_counted():
    assert [counted(n, "leaf", "leaves") for n in (0, 1, 2)] == ["0 leaves", "1 leaf", "2 leaves"]
    assert counted(1, "document") == "1 document" and counted(3, "chunk") == "3 chunks"


def test_tree_lines_name_their_numbers():
    tree = chunk_document(parse_document(BOOK, "markdown", "guide.md"), "structure",
                          ChunkOptions(leaf_tokens=40, merge_over_chunk=False))
    head, top, one, two = render_tree(tree).splitlines()
    assert head == f"guide.md: 3 chunks, {len(tree.leaves())} leaves, {tree.root.tokens} tokens"
    guide, part_one, part_two = (next(n for n in tree.nodes if n.kind == "chunk" and n.title == t)
                                 for t in ("Guide", "Part one", "Part two"))
    leaf_sizes = ", ".join(str(tree.nodes[c].tokens) for c in part_one.children)
    assert len(part_one.children) > 1 and part_one.tokens != tree.root.tokens
    assert top == f"L1 Guide  [{tree.root.tokens} tok with subsections; own text {guide.tokens} tok in 1 leaf]"
    assert one == f"  L2 Part one  [{part_one.tokens} tok in {len(part_one.children)} leaves: {leaf_sizes}]"
    assert two == f"  L2 Part two  [{part_two.tokens} tok in 1 leaf]"
    flat = chunk_document(parse_document("one line", "text", "t.txt"), "fixed", ChunkOptions())
    assert render_tree(flat).splitlines()[0] == f"t.txt: 1 chunk, 1 leaf, {flat.root.tokens} tokens"


def test_index_reports_say_what_happened(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("hichunk.retrieval.index.index.load_embedder", lambda name: HashEmbedder())
    (tmp_path / "guide.md").write_text(BOOK, encoding="utf-8")
    build = ["-q", "index", "build", "guide.md", "--index", "idx", "--method", "structure", "--leaf-tokens", "40"]
    assert cli.main(build) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("index build: 1 added; ") and " leaves embedded (" in line
    assert cli.main(build) == 0  # nothing changed: no "0 leaves embedded (0 encoded, 0 from the cache)"
    assert capsys.readouterr().out.startswith("index build: 1 unchanged in ")
    assert cli.main(["-q", "index", "remove", "guide.md", "--index", "idx"]) == 0
    n = len(chunk_document(parse_document(BOOK, "markdown"), "structure", ChunkOptions(leaf_tokens=40)).leaves())
    assert capsys.readouterr().out == f"index remove: 1 document removed ({n} leaves)\n"


@pytest.mark.parametrize("words", [["index", "--help"], ["index", "remove", "--help"]])
def test_index_help_says_where_ids_are_listed(words, capsys):
    with pytest.raises(SystemExit):
        cli.main(words)
    assert "hichunk index info --docs lists them" in " ".join(capsys.readouterr().out.split())


def test_plain_query_lists_the_sources_under_the_context(tmp_path, monkeypatch, capsys):
    pytest.importorskip("reportlab")
    from pdf_writer import build_book

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("hichunk.retrieval.index.index.load_embedder", lambda name: HashEmbedder())
    (tmp_path / "book.pdf").write_bytes(build_book(chapters=2, chinese=False).data)
    (tmp_path / "guide.md").write_text(BOOK, encoding="utf-8")
    assert cli.main(["-q", "index", "build", "book.pdf", "guide.md", "--index", "idx", "--method", "structure",
                     "--leaf-tokens", "40"]) == 0
    question = ["query", "--index", "idx", "--budget", "300", "sentence number one chapter section"]
    capsys.readouterr()
    assert cli.main(["-q", *question, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert cli.main(["-q", *question]) == 0
    out = capsys.readouterr().out
    context, listing = out.split("\n\nsources (", 1)
    assert context == result["context"]
    lines = listing.splitlines()
    assert lines[0] == f"{len(result['passages'])} passages, {result['tokens']} of 300 tokens, Auto-Merge on):"
    assert len(lines) == 1 + len(result["passages"]) and {p["doc"] for p in result["passages"]} == {"book.pdf", "guide.md"}
    for i, (line, p) in enumerate(zip(lines[1:], result["passages"]), 1):
        where = " > ".join([p["doc"], *p["titles"]])
        assert line.startswith(f"[{i}] {where}, chars {p['start']}-{p['end']}, "), line
        assert (", p. " in line or ", pp. " in line) == (p["doc"] == "book.pdf")
        assert f"score {p['score']:.3f}" in line and ("merged section" in line) == p["merged"]
    assert cli.main(["-q", *question, "--no-sources"]) == 0
    assert capsys.readouterr().out == result["context"] + "\n"
