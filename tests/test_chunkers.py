import pytest
from fakes import chunk_document

from hichunk.chunkers import METHODS, ChunkOptions, get_chunker
from hichunk.document import parse_document
from hichunk.errors import HichunkError

FLAT = ["fixed", "recursive", "cdc"]


def leaves_text(tree):
    return "".join(tree.raw_text(x) for x in tree.leaves())


@pytest.fixture
def long_text():
    paras = []
    for p in range(30):
        sents = " ".join(f"Paragraph {p} sentence {s} says something about topic {p % 5}." for s in range(6))
        paras.append(sents)
    return "\n\n".join(paras) + "\n"


def test_unknown_method_is_a_clear_error():
    with pytest.raises(HichunkError, match="unknown chunking method"):
        get_chunker("nope")


@pytest.mark.parametrize("method", FLAT)
def test_flat_methods_make_bounded_leaves_under_the_root(method, long_text, tokenizer):
    doc = parse_document(long_text, "text")
    tree = chunk_document(doc, method, ChunkOptions(leaf_tokens=64, tokenizer=tokenizer))
    leaves = tree.leaves()
    assert leaves_text(tree) == long_text
    assert all(tree.nodes[x.parent].kind == "root" for x in leaves)
    assert all(tokenizer.count(tree.clean_text(x)) == x.tokens <= 64 for x in leaves)
    assert [t for t, _ in tree.split_texts()] == [tree.raw_text(x) for x in leaves]


def test_fixed_windows_are_full(long_text, tokenizer):
    tree = chunk_document(parse_document(long_text, "text"), "fixed", ChunkOptions(leaf_tokens=50, tokenizer=tokenizer))
    sizes = [x.tokens for x in tree.leaves()]
    assert all(s >= 48 for s in sizes[:-1])


def test_recursive_cuts_at_paragraphs_first(long_text, tokenizer):
    tree = chunk_document(parse_document(long_text, "text"), "recursive", ChunkOptions(leaf_tokens=200, tokenizer=tokenizer))
    for leaf in tree.leaves():
        assert tree.raw_text(leaf).startswith("Paragraph") and tree.raw_text(leaf).endswith("\n\n") or leaf is tree.leaves()[-1]


def test_cdc_cuts_move_only_near_an_edit(long_text, tokenizer):
    opts = ChunkOptions(leaf_tokens=64, tokenizer=tokenizer)
    before = [tree_text for tree_text, _ in chunk_document(parse_document(long_text, "text"), "cdc", opts).split_texts()]
    edited = "A brand new opening sentence is inserted here. " + long_text
    after = [t for t, _ in chunk_document(parse_document(edited, "text"), "cdc", opts).split_texts()]
    fixed_before = [t for t, _ in chunk_document(parse_document(long_text, "text"), "fixed", opts).split_texts()]
    fixed_after = [t for t, _ in chunk_document(parse_document(edited, "text"), "fixed", opts).split_texts()]
    kept_cdc = len(set(before) & set(after)) / len(before)
    kept_fixed = len(set(fixed_before) & set(fixed_after)) / len(fixed_before)
    assert kept_cdc > 0.6 and kept_fixed < 0.2


def test_cdc_works_on_chinese_without_spaces(tokenizer):
    text = "这是一个很长的中文句子，用于测试分块算法是否能在中文上正常工作。" * 80
    tree = chunk_document(parse_document(text, "text"), "cdc", ChunkOptions(leaf_tokens=100, tokenizer=tokenizer))
    assert leaves_text(tree) == text
    assert len(tree.leaves()) > 5 and all(x.tokens <= 100 for x in tree.leaves())


def test_structure_uses_heading_hints(guide_md, tokenizer):
    tree = chunk_document(parse_document(guide_md, "markdown"), "structure", ChunkOptions(merge_over_chunk=False, tokenizer=tokenizer))
    assert [level for _, level in tree.split_texts()] == [1, 2, 2, 3, 1]
    ignored = chunk_document(parse_document(guide_md, "markdown"), "structure", ChunkOptions(hints="ignore", tokenizer=tokenizer))
    assert len(ignored.splits) == 1


def test_structure_max_level_and_merge(guide_md, tokenizer):
    doc = parse_document(guide_md, "markdown")
    folded = chunk_document(doc, "structure", ChunkOptions(max_level=2, merge_over_chunk=False, tokenizer=tokenizer))
    assert [level for _, level in folded.split_texts()] == [1, 2, 2, 1]
    merged = chunk_document(doc, "structure", ChunkOptions(tokenizer=tokenizer))  # merge_over_chunk is the default
    assert [level for _, level in merged.split_texts()] == [1, 1]


@pytest.mark.parametrize("method", [m for m in METHODS if m != "hichunk"])  # hichunk needs a model: test_engine*.py
def test_every_method_is_deterministic_and_lossless(method, guide_md, tokenizer):
    doc = parse_document(guide_md, "markdown")
    a = chunk_document(doc, method, ChunkOptions(leaf_tokens=16, tokenizer=tokenizer))
    b = chunk_document(parse_document(guide_md, "markdown"), method, ChunkOptions(leaf_tokens=16, tokenizer=tokenizer))
    assert a == b
    assert leaves_text(a) == guide_md and "".join(t for t, _ in a.split_texts()) == guide_md


def test_fixed_windows_keep_words_whole(tokenizer):
    words = ["internationalization", "configuration", "a", "reproducibility", "of", "documentation"]
    text = " ".join(words[i % len(words)] for i in range(900)) + "\n"
    tree = chunk_document(parse_document(text, "text"), "fixed", ChunkOptions(leaf_tokens=64, tokenizer=tokenizer))
    leaves = tree.leaves()
    assert "".join(tree.raw_text(x) for x in leaves) == text
    assert all(tree.raw_text(x)[-1] in " \n" for x in leaves)  # every window ends at a word's end
    assert all(60 <= x.tokens <= 64 for x in leaves[:-1])


def test_fixed_windows_cut_inside_a_run_without_spaces(tokenizer):
    text = "中文段落没有空格也没有换行" * 200
    tree = chunk_document(parse_document(text, "text"), "fixed", ChunkOptions(leaf_tokens=64, tokenizer=tokenizer))
    sizes = [x.tokens for x in tree.leaves()]
    assert len(sizes) > 5 and all(62 <= s <= 64 for s in sizes[:-1])
