"""Invariants over random and adversarial documents (hypothesis)."""

import os

from fakes import chunk_document
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hichunk.chunkers import METHODS, ChunkOptions
from hichunk.document import parse_document
from hichunk.sentences import split_sentences

# Raise for a deeper search, e.g. HICHUNK_PROPERTY_EXAMPLES=1000 pytest tests/test_properties.py
EXAMPLES = int(os.environ.get("HICHUNK_PROPERTY_EXAMPLES", "60"))
WORDS = ["alpha", "beta", "Mr.", "e.g.", "3.2", "don't", "x" * 40, "中文", "句子。", "测试！", "“引号”", "\t", "#tag", "a.b"]

fragment = st.one_of(
    st.builds(lambda k, w: "#" * k + " " + " ".join(w), st.integers(1, 12), st.lists(st.sampled_from(WORDS), max_size=4)),
    st.builds(lambda w: " ".join(w) + ".", st.lists(st.sampled_from(WORDS), min_size=1, max_size=30)),
    st.builds(lambda n: "这是一个中文句子，没有空格。" * n, st.integers(1, 20)),
    st.just("```\n# not a heading\n```"),
    st.just("Title\n====="),
    st.just(""),
    st.just("   "),
    st.text(max_size=40),
    st.builds(lambda n: "y" * n, st.integers(1, 3000)),
)
newline = st.sampled_from(["\n", "\r\n", "\n\n", "\r"])


@st.composite
def documents(draw):
    parts = draw(st.lists(st.tuples(fragment, newline), max_size=25))
    return "".join(f + nl for f, nl in parts) + draw(st.sampled_from(["", "\n", "tail"]))


def check_tree(tree, text, leaf_tokens, tokenizer, flat):
    leaves = tree.leaves()
    assert "".join(tree.raw_text(x) for x in leaves) == text
    assert "".join(t for t, _ in tree.split_texts()) == text
    assert all(1 <= s.level <= 10 for s in tree.splits)
    for node in tree.nodes:
        assert tree.raw_text(node) == text[node.start : node.end]
        if node.kind != "root":
            assert 1 <= node.level <= 10
        if node.children:
            kids = [tree.nodes[c] for c in node.children]
            assert (node.start, node.end) == (kids[0].start, kids[-1].end)
            assert all(a.end == b.start and a.clean_end == b.clean_start for a, b in zip(kids, kids[1:]))
            assert all(k.parent == node.id for k in kids)
    for leaf in leaves:
        assert tokenizer.count(tree.clean_text(leaf)) == leaf.tokens <= leaf_tokens
        if flat:
            assert tree.nodes[leaf.parent].kind == "root"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents(), fmt=st.sampled_from(["markdown", "text", "html", "rst", "groff"]), leaf_tokens=st.sampled_from([8, 13, 50]), data=st.data())
def test_every_chunker_is_lossless_bounded_and_deterministic(text, fmt, leaf_tokens, tokenizer, data):
    method = data.draw(st.sampled_from([m for m in METHODS if m != "hichunk"]))  # hichunk needs a model: test_engine*.py
    opts = ChunkOptions(leaf_tokens=leaf_tokens, tokenizer=tokenizer, merge_over_chunk=data.draw(st.booleans()),
                        max_level=data.draw(st.integers(1, 10)))
    doc = parse_document(text, fmt, "prop")
    tree = chunk_document(doc, method, opts)
    check_tree(tree, text, leaf_tokens, tokenizer, flat=method != "structure")
    assert chunk_document(parse_document(text, fmt, "prop"), method, opts) == tree


@settings(max_examples=EXAMPLES, deadline=None)
@given(documents(), st.sampled_from(["markdown", "text", "html", "rst", "groff"]))
def test_documents_and_sentences_are_consistent(text, fmt):
    doc = parse_document(text, fmt)
    # an empty clean view (markup only) cannot say where the raw text ends; the tree builder handles it
    assert doc.raw_offset(0) == 0 and (not doc.clean or doc.raw_offset(len(doc.clean)) == len(text))
    offsets = [doc.raw_offset(i) for i in range(len(doc.clean) + 1)]
    assert offsets == sorted(offsets)
    for a, b in zip(doc.lines, doc.lines[1:]):
        assert doc.clean[a.clean_end : b.clean_start] in ("\n", "\r\n", "\r\n"[1:]) or b.clean_start - a.clean_end <= 2
    for line in doc.lines:
        assert line.text == doc.clean[line.clean_start : line.clean_end]
    sentences = split_sentences(doc)
    for s in sentences:
        line = doc.lines[s.line]
        assert line.clean_start <= s.start < s.end <= line.clean_end
    assert all(a.end <= b.start for a, b in zip(sentences, sentences[1:]))


def test_a_chunk_that_takes_the_blank_text_before_it_is_counted_again(tokenizer):
    """Found by the property above: the recursive chunker cut after a leading blank line, the tree builder
    joined that blank text to the first chunk, and the first leaf kept the blank text's count (0 tokens)."""
    text = "\n############ alpha alpha\n"
    for method in ("recursive", "fixed", "cdc"):
        opts = ChunkOptions(leaf_tokens=8, tokenizer=tokenizer)
        check_tree(chunk_document(parse_document(text, "markdown", "prop"), method, opts), text, 8, tokenizer, True)
