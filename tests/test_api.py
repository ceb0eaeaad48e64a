"""The front door: ``import hichunk`` gives chunk, Index, FillOptions, load_document."""

from __future__ import annotations

import subprocess
import sys

import pytest
from fakes import HashEmbedder

import hichunk
from hichunk.document import parse_document


def test_chunk_takes_a_path_a_string_or_a_document(tmp_path, guide_md):
    path = tmp_path / "guide.md"
    path.write_text(guide_md)
    from_path = hichunk.chunk(str(path), "structure", merge_over_chunk=False)
    from_pathlike = hichunk.chunk(path, "structure", merge_over_chunk=False)
    from_doc = hichunk.chunk(hichunk.load_document(str(path)), "structure", merge_over_chunk=False)
    assert from_path == from_pathlike == from_doc
    assert [t for t, _ in from_path.split_texts()][1].startswith("## Install")  # Markdown headings by extension
    text_tree = hichunk.chunk(guide_md, "structure")  # a string is text (format text: no headings)
    assert "".join(t for t, _ in text_tree.split_texts()) == guide_md
    assert hichunk.chunk(guide_md, "structure", format="markdown") == hichunk.chunk(
        parse_document(guide_md, "markdown", "<text>"), "structure")


@pytest.mark.parametrize("name", ["missing_file.md", "report.PDF", "notes.txt.gz", "docs/guide.rst", "my notes.docx"])
def test_a_missing_file_name_is_an_error_not_a_tree_of_the_name(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(hichunk.HichunkError) as err:
        hichunk.chunk(name, "structure")
    assert str(err.value) == f"{name}: no such file (to chunk the string itself, pass text={name!r})"
    forced = hichunk.chunk(text=name, method="structure")  # text= always chunks the string
    assert forced.text == name and len(forced.leaves()) == 1
    assert hichunk.chunk(parse_document(name), "structure").text == name  # so does a Document


def test_sentences_and_files_without_a_document_extension_stay_text(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for text in ("Read notes.md before you start.", "see README.md\n", " spaced.md", "Version 2.1"):
        assert hichunk.chunk(text, "structure").text == text
    (tmp_path / "CHANGES").write_text("# Changes\n\nFirst release.\n", encoding="utf-8")
    assert hichunk.chunk("CHANGES", "structure").text.startswith("# Changes")  # an existing file is read
    with pytest.raises(hichunk.HichunkError, match="not both"):
        hichunk.chunk("a.md", text="words")


def test_default_method_is_the_model_and_merge_over_chunk_is_on(guide_md):
    tree = hichunk.chunk(guide_md, format="markdown")
    assert tree.meta["method"] == "hichunk"
    assert hichunk.ChunkOptions().merge_over_chunk is True


def test_options_are_checked_before_any_work():
    with pytest.raises(hichunk.HichunkError, match="leaf size"):
        hichunk.chunk("text", "fixed", leaf_tokens=2)
    with pytest.raises(hichunk.HichunkError, match="unknown chunking option"):
        hichunk.chunk("text", "fixed", leaf_size=20)
    with pytest.raises(hichunk.HichunkError, match="max level"):
        hichunk.chunk("text", "fixed", max_level=0)
    with pytest.raises(hichunk.HichunkError, match="only applies to the hichunk method"):
        hichunk.chunk("text", "fixed", model="encoder")
    with pytest.raises(hichunk.HichunkError, match="cannot chunk a int"):
        hichunk.chunk(42, "fixed")


def test_semantic_takes_an_embedder_object():
    text = "Tea is brewed hot. Green tea likes cooler water. Bread needs flour. Knead the dough well.\n" * 3
    tree = hichunk.chunk(text, "semantic", embedder=HashEmbedder(), leaf_tokens=16)
    assert tree.meta["embedder"] == HashEmbedder.id
    assert "".join(tree.raw_text(n) for n in tree.leaves()) == text


def test_every_public_name_resolves():
    assert sorted(hichunk.__all__) == sorted(hichunk._EXPORTS)
    for name in hichunk.__all__:
        assert getattr(hichunk, name) is not None


@pytest.mark.parametrize("package", ["hichunk", "hichunk.retrieval"])
def test_lazy_exports_are_also_imported_for_static_readers(package):
    """The API docs (griffe) and type checkers read the ``if TYPE_CHECKING:`` imports, not ``__getattr__``:
    each lazy export must be imported there from the module ``_EXPORTS`` names."""
    import ast
    import importlib
    import inspect

    module = importlib.import_module(package)
    guarded = next(node for node in ast.parse(inspect.getsource(module)).body
                   if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    imported = {alias.name: statement.module for statement in guarded.body for alias in statement.names}
    assert sorted(imported) == sorted(module._EXPORTS)
    for name, source in imported.items():
        assert getattr(importlib.import_module(source), name) is getattr(module, name), name


def test_tokenizer_by_name_and_unknown_attribute():
    assert hichunk.ChunkOptions(tokenizer=None).tokenizer.count("hello world") > 0
    with pytest.raises(AttributeError):
        hichunk.no_such_thing  # noqa: B018


def test_importing_the_tree_alone_loads_no_torch():
    code = "import sys, hichunk, hichunk.tree, hichunk.document; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
