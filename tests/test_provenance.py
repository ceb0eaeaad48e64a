"""Exact provenance: every passage's text is ``raw[start:end]`` of its document, whatever the fill.

Random trees (plain text, where the clean view is the raw text) and random HTML, reST and
man-page documents (where it is not), random rankings, budgets, rule sets, fill rules,
orders, and both an additive word tokenizer and the real XLM-R one (whose counts are not
additive, so the final cut to the budget runs too).
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from fakes import HashEmbedder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from retrieval_helpers import WordTokenizer, leaf_ids, make_tree, random_trees, words

from hichunk.chunkers import ChunkOptions, chunk_document
from hichunk.document import parse_document
from hichunk.retrieval.search import FillOptions, TreeView, assemble, fill_context
from hichunk.tree.spans import pages, raw_cut, raw_span

WORDS = WordTokenizer()
VOCAB = ["alpha", "beta", "gamma", "delta", "tea", "bread", "solar", "&amp;", "<b>x</b>", "中文", "句子。", "e.g."]


def search(trees: dict, ranking: list[tuple[str, int]], options: FillOptions, tokenizer):
    views = {d: TreeView.build(d, t, tokenizer) for d, t in trees.items()}
    candidates = [(d, views[d].leaf_ids[i % len(views[d].leaf_ids)], 1.0 - n / 1000) for n, (d, i) in enumerate(ranking)]
    fill = fill_context(candidates, views.__getitem__, options, tokenizer)
    return assemble("q", fill, views.__getitem__, options, tokenizer)


def check_exact(result, trees: dict, options: FillOptions) -> None:
    separator = "\n\n" if options.mode == "reference" else options.separator
    pieces = [result.context[p.context_start : p.context_end] for p in result.passages]
    joined = separator.join(pieces)
    assert result.context == joined or (options.mode == "reference" and result.context.startswith(joined)
                                        and not result.context[len(joined):].strip())  # the reference keeps a cut's tail
    for p, piece in zip(result.passages, pieces):
        tree = trees[p.doc]
        node = tree.nodes[p.node]
        assert p.text == tree.text[p.start : p.end]
        assert node.start <= p.start <= p.end <= node.end
        assert p.text == p.text.strip() and piece.strip()
        assert p.pages is None
        full = raw_span(tree, node)
        if not p.truncated:
            assert (p.start, p.end) == full
        else:
            assert p.start == full[0] and p.end <= full[1]
        if options.mode == "paper":
            assert tree.clean[p.clean_start : p.clean_end] == piece
            if tree.text == tree.clean:  # the clean view is the raw text: the passage is what the context shows
                assert p.text == piece
        elif tree.text == tree.clean:
            assert "".join(p.text.split()) == "".join(piece.split())  # leaves joined by newlines


@st.composite
def plain_trees(draw):
    trees = {f"d{k}": draw(random_trees(f"d{k}")) for k in range(draw(st.integers(1, 2)))}
    names = sorted(trees)
    ranking = draw(st.lists(st.tuples(st.sampled_from(names), st.integers(0, 40)), min_size=1, max_size=40))
    return trees, ranking


fill_options = st.builds(
    FillOptions, budget=st.integers(1, 90), auto_merge=st.booleans(), mode=st.sampled_from(["paper", "reference"]),
    fill=st.sampled_from(["truncate", "whole"]), order=st.sampled_from(["rank", "document"]),
    separator=st.sampled_from(["\n\n", "\n---\n", " "]))


@settings(max_examples=200, deadline=None)
@given(plain_trees(), fill_options)
def test_passages_are_exact_spans_of_plain_text(data, options):
    trees, ranking = data
    result = search(trees, ranking, options, WORDS)
    check_exact(result, trees, options)
    assert WORDS.count(result.context) <= options.budget


def _block(kind: str, fmt: str, text: str, level: int) -> str:
    if fmt == "html":
        return f"<h{level}>{text}</h{level}>\n" if kind == "heading" else f"<p>{text}</p>\n"
    if fmt == "rst":
        return f"{text}\n{'=-~'[level - 1] * max(len(text), 3)}\n\n" if kind == "heading" else f"{text}\n\n"
    if fmt == "groff":
        return f".SH {text.upper()}\n" if kind == "heading" else f"{text}\n.PP\n"
    return ("#" * level + " " + text + "\n\n") if kind == "heading" else text + "\n\n"


@st.composite
def marked_up_documents(draw):
    fmt = draw(st.sampled_from(["html", "rst", "groff", "markdown"]))
    blocks = []
    for _ in range(draw(st.integers(2, 14))):
        kind = draw(st.sampled_from(["heading", "para", "para"]))
        text = " ".join(draw(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=40 if kind == "para" else 4)))
        if fmt == "rst":
            text = text.replace("<b>x</b>", "*x*")
        blocks.append(_block(kind, fmt, text, draw(st.integers(1, 3))))
    prefix = ".TH T 1\n" if fmt == "groff" else ""
    return fmt, prefix + "".join(blocks)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(marked_up_documents(), st.lists(st.integers(0, 60), min_size=1, max_size=30), fill_options)
def test_passages_are_exact_spans_of_marked_up_documents(tokenizer, doc, ranking, options):
    fmt, text = doc
    tree = chunk_document(parse_document(text, fmt, "doc"), "structure", ChunkOptions(leaf_tokens=12))
    assert "".join(tree.raw_text(leaf) for leaf in tree.leaves()) == text
    result = search({"doc": tree}, [("doc", i) for i in ranking], options, tokenizer)
    check_exact(result, {"doc": tree}, options)
    assert tokenizer.count(result.context) <= options.budget


def test_truncated_passage_ends_where_its_prefix_does():
    tree = make_tree([[words("a", 10), words("b", 10)]])
    leaves = leaf_ids(tree)
    result = search({"doc": tree}, [("doc", 0), ("doc", 1)], FillOptions(budget=14, auto_merge=False), WORDS)
    last = result.passages[-1]
    assert last.truncated and last.node == leaves[1]
    assert last.text == "b0 b1 b2 b3" and tree.text[last.start : last.end] == last.text
    assert last.end < tree.nodes[leaves[1]].end


def test_span_excludes_the_trailing_newline():
    tree = make_tree([[words("a", 3)]])
    result = search({"doc": tree}, [("doc", 0)], FillOptions(budget=100), WORDS)
    p = result.passages[0]
    assert tree.text.endswith("\n") and p.text == "a0 a1 a2." == tree.text[p.start : p.end]


def test_raw_cut_inside_markup_covers_the_prefix():
    doc = parse_document("<p>Fish &amp; chips are <b>hot</b> today.</p>\n", "html", "d")
    tree = chunk_document(doc, "structure", ChunkOptions(leaf_tokens=200))
    leaf = tree.leaves()[0]
    clean = tree.clean[leaf.clean_start : leaf.clean_end]
    for k in range(len(clean) + 1):
        end = raw_cut(tree, leaf, leaf.clean_start + k)
        assert leaf.start <= end <= leaf.end
        kept = iter(c for c in tree.text[leaf.start : end] if c.isalnum())
        assert all(c in kept for c in clean[:k] if c.isalnum())  # the prefix's letters, in order, before the cut
    assert raw_cut(tree, leaf, leaf.clean_start + clean.index("chips") + 5) <= tree.text.index("chips") + 5


def test_pages_of_a_paged_tree():
    paged = SimpleNamespace(page_starts=[0, 100, 250])
    assert pages(paged, 10, 20) == (1, 1) and pages(paged, 90, 120) == (1, 2) and pages(paged, 250, 251) == (3, 3)
    assert pages(SimpleNamespace(page_starts=[]), 0, 5) is None


@pytest.mark.parametrize("mode", ["paper", "reference"])
def test_index_search_passages_are_exact(tmp_path, mode):
    from hichunk.retrieval.index import Index, IndexConfig

    docs = tmp_path / "docs"
    docs.mkdir()
    sources = {
        "a.md": "# Tea\n\nGreen tea is steeped briefly.\nBlack tea takes longer.\n\n## Storage\n\nKeep tea dry and dark.\n",
        "b.html": "<h1>Bread</h1>\n<p>Knead the dough &amp; let it rise.</p>\n<h2>Baking</h2>\n<p>Bake at 220 C.</p>\n",
        "c.txt": "Solar panels\n\nClean them twice a year.\r\nCheck the inverter.\r\n",
    }
    for name, text in sources.items():
        (docs / name).write_bytes(text.encode())
    index = Index.memory(IndexConfig(leaf_tokens=16, method="structure"), embedder=HashEmbedder())
    index.add_paths([str(docs)])
    for query in ("tea storage", "knead dough", "solar inverter", "bake"):
        for budget in (5, 12, 40, 400):
            result = index.search(query, FillOptions(budget=budget, mode=mode))
            for p in result.passages:
                raw = (docs / p.doc.rsplit("/", 1)[-1]).read_bytes().decode()
                assert p.text == raw[p.start : p.end], (query, budget, p)
            json.dumps(result.to_dict())


@pytest.fixture(scope="module")
def pdf_tree():
    pytest.importorskip("pypdfium2")
    pytest.importorskip("reportlab")
    from pdf_writer import build_book

    from hichunk.document.pdf import parse_pdf

    doc = parse_pdf(build_book(chapters=3, sections=2, paragraphs=3).data, "book.pdf")
    return chunk_document(doc, "structure", ChunkOptions(leaf_tokens=40))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(0, 200), min_size=1, max_size=30), fill_options)
def test_pdf_passages_are_exact_spans_of_the_extracted_text_with_pages(pdf_tree, tokenizer, ranking, options):
    from hichunk.document.model import page_range

    assert pdf_tree.text != pdf_tree.clean and pdf_tree.page_starts  # furniture out of the clean view, reflowed lines
    result = search({"book.pdf": pdf_tree}, [("book.pdf", i) for i in ranking], options, tokenizer)
    for p in result.passages:
        assert p.text == pdf_tree.text[p.start : p.end]
        assert p.pages is not None and p.pages == page_range(pdf_tree.page_starts, p.start, p.end)
        piece = result.context[p.context_start : p.context_end]
        if options.mode == "paper":
            assert pdf_tree.clean[p.clean_start : p.clean_end] == piece
    assert tokenizer.count(result.context) <= options.budget
