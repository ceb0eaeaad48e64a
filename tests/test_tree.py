import json

import networkx as nx
import pytest

from hichunk.document import parse_document
from hichunk.sentences import split_sentences
from hichunk.tree import Boundary, build_tree, from_dict, to_dict, to_markdown, to_networkx, to_splits


def md_tree(text, tokenizer, leaf_tokens=200, extra=()):
    doc = parse_document(text, "markdown", "t.md")
    bounds = [Boundary(doc.lines[i].clean_start, lvl, True) for i, lvl in doc.headings] + list(extra)
    return build_tree(doc, bounds, tokenizer, split_sentences(doc), leaf_tokens)


def outer_title(tree, node):
    """Title of the nearest ancestor that comes from another split point."""
    cur = tree.nodes[node.parent]
    while cur.split == node.split and cur.parent is not None:
        cur = tree.nodes[cur.parent]
    return cur.title


def test_levels_give_parents(tokenizer):
    text = "# A\nbody a\n## B\nbody b\n### C\nbody c\n## D\nbody d\n# E\nbody e\n"
    tree = md_tree(text, tokenizer)
    chunks = {n.title: n for n in tree.chunks()}
    parent = {t: outer_title(tree, n) for t, n in chunks.items()}
    assert parent == {"A": None, "B": "A", "C": "B", "D": "A", "E": None}
    section_b = tree.nodes[chunks["B"].parent]
    assert section_b.kind == "section" and tree.nodes[section_b.children[0]] is chunks["B"]
    assert tree.raw_text(section_b) == "## B\nbody b\n### C\nbody c\n"
    assert tree.raw_text(chunks["B"]) == "## B\nbody b\n"
    assert chunks["C"].parent == section_b.id  # a chunk without sub-chunks needs no section
    kinds = [n.kind for n in tree.nodes]
    assert kinds.count("section") == 2 and kinds.count("chunk") == 5 and kinds.count("leaf") == 5
    assert [s for s in to_splits(tree)] == [["# A\nbody a\n", 1], ["## B\nbody b\n", 2], ["### C\nbody c\n", 3],
                                             ["## D\nbody d\n", 2], ["# E\nbody e\n", 1]]


def test_text_before_first_split_is_a_level_one_chunk(tokenizer):
    tree = md_tree("preface text here\n## B\nbody b\n", tokenizer)
    assert to_splits(tree) == [["preface text here\n", 1], ["## B\nbody b\n", 2]]


@pytest.mark.parametrize("lead", ["\n", "\n\n  \n", "\u3000\n", "---\ntitle: Page\nsummary: s\n---\n\n",
                                  "+++\ntitle = \"Page\"\n+++\n"])
def test_blank_text_before_the_first_split_opens_the_first_chunk(tokenizer, lead):
    text = lead + "## B\nbody b\n### C\nbody c\n"
    tree = md_tree(text, tokenizer)
    assert to_splits(tree) == [[lead + "## B\nbody b\n", 2], ["### C\nbody c\n", 3]]
    first = tree.splits[0]
    assert (first.start, first.clean_start, first.title) == (0, tree.clean.index("## B"), True)
    assert [tree.raw_text(leaf) for leaf in tree.leaves()] == [lead + "## B\nbody b\n", "### C\nbody c\n"]
    assert [n.title for n in tree.chunks()] == ["B", "C"]
    assert to_markdown(tree).startswith(lead + "## B")


@pytest.mark.parametrize("lead", ["---\ntitle: Page\n---\nAn introduction.\n", "---\ntitle: never closed\n\n",
                                  "---\n\nA rule, then text.\n"])
def test_front_matter_with_text_or_not_front_matter_stays_a_chunk(tokenizer, lead):
    tree = md_tree(lead + "## B\nbody b\n", tokenizer)
    assert to_splits(tree) == [[lead, 1], ["## B\nbody b\n", 2]]


def test_heading_without_body_opens_the_next_chunk(tokenizer):
    text = "# Part\n## Section\nbody of the section.\n## Empty\n## Next\nnext body.\n"
    tree = md_tree(text, tokenizer)
    leaves = [tree.raw_text(leaf) for leaf in tree.leaves()]
    assert leaves == ["# Part\n## Section\nbody of the section.\n", "## Empty\n## Next\nnext body.\n"]
    assert [n.title for n in tree.chunks()] == ["Section", "Next"]  # no chunk for text-less headings
    assert [n.title for n in tree.nodes if n.kind == "section"] == ["Part"]  # "Empty" vanished
    section = next(n for n in tree.chunks() if n.title == "Section")
    assert tree.raw_text(section).startswith("# Part")  # breadcrumb travels with the body
    assert tree.breadcrumb(tree.leaves()[0]) == ["Part", "Section"]
    # the splits (what was predicted) are untouched
    assert [level for _, level in to_splits(tree)] == [1, 2, 2, 2]


def test_trailing_heading_joins_the_previous_leaf(tokenizer):
    tree = md_tree("# A\nbody a here.\n# Appendix\n", tokenizer)
    assert [tree.raw_text(x) for x in tree.leaves()] == ["# A\nbody a here.\n# Appendix\n"]


def test_only_headings(tokenizer):
    text = "# A\n## B\n### C\n"
    tree = md_tree(text, tokenizer)
    assert "".join(tree.raw_text(x) for x in tree.leaves()) == text
    assert len(tree.leaves()) == 1


def test_leaves_are_sentence_aligned_and_bounded(tokenizer):
    body = " ".join(f"Sentence number {i} talks about topic {i % 7}." for i in range(60))
    tree = md_tree("# Long\n" + body + "\n", tokenizer, leaf_tokens=50)
    leaves = tree.leaves()
    assert len(leaves) > 5
    for leaf in leaves:
        assert tokenizer.count(tree.clean_text(leaf)) == leaf.tokens <= 50
    for leaf in leaves[1:]:
        assert tree.clean_text(leaf).startswith("Sentence number")


def test_overlong_sentence_is_cut_by_tokens(tokenizer):
    tree = md_tree("# T\n" + "word " * 500 + "\n", tokenizer, leaf_tokens=64)
    leaves = tree.leaves()
    assert all(leaf.tokens <= 64 for leaf in leaves) and len(leaves) >= 8
    assert leaves[0].tokens >= 60 and "word" in tree.clean_text(leaves[0])  # the heading leaf is filled, not left alone


def test_node_spans_are_unions_of_leaves(tokenizer, guide_md):
    tree = md_tree(guide_md, tokenizer, leaf_tokens=8)
    for node in tree.nodes:
        if node.children:
            kids = [tree.nodes[c] for c in node.children]
            assert node.start == kids[0].start and node.end == kids[-1].end
            assert all(a.end == b.start for a, b in zip(kids, kids[1:]))
            assert node.tokens == sum(k.tokens for k in kids)


def test_json_round_trip_gives_an_equal_tree(tokenizer, guide_md):
    tree = md_tree(guide_md, tokenizer, leaf_tokens=16)
    data = json.loads(json.dumps(to_dict(tree)))
    assert from_dict(data) == tree


def test_from_dict_rejects_other_json():
    with pytest.raises(ValueError):
        from_dict({"format": "something else"})


def test_networkx_export_is_a_tree(tokenizer, guide_md):
    tree = md_tree(guide_md, tokenizer)
    graph = to_networkx(tree)
    assert nx.is_arborescence(graph)
    assert graph.number_of_nodes() == len(tree.nodes)
    assert graph.nodes[0]["kind"] == "root"


def test_markdown_export_writes_levels(tokenizer):
    doc = parse_document("Intro line here.\nTitle line\nbody text.\n", "text")
    bounds = [Boundary(doc.lines[1].clean_start, 2, True), Boundary(doc.lines[2].clean_start, 3, False)]
    tree = build_tree(doc, bounds, tokenizer, split_sentences(doc), 200)
    assert to_markdown(tree) == "<!-- chunk level 1 -->\nIntro line here.\n## Title line\n<!-- chunk level 3 -->\nbody text.\n"


def test_breadcrumb_and_path(tokenizer, guide_md):
    tree = md_tree(guide_md, tokenizer)
    basics_leaf = next(x for x in tree.leaves() if "Basic usage" in tree.clean_text(x))
    assert tree.breadcrumb(basics_leaf) == ["Guide", "Use", "Basics"]


def test_empty_document(tokenizer):
    doc = parse_document("", "markdown")
    tree = build_tree(doc, [], tokenizer, split_sentences(doc), 200)
    assert tree.leaves() == [] and to_splits(tree) == []


def _bounds(levels, width=10):
    return [Boundary(i * width, level, True) for i, level in enumerate(levels)]


class _WordTokenizer:
    name = "words"

    def count(self, text):
        return len(text.split())


def test_merge_over_chunk_follows_the_reference_run_rule():
    from hichunk.tree.levels import merge_over_chunk

    clean = "".join(f"w{i} x\n".ljust(10) for i in range(4))
    levels = lambda bs: [b.level for b in bs]  # noqa: E731
    # [1,3,2]: the level-2 chunk breaks the never-decreasing run, so only the level-3 one merges
    assert levels(merge_over_chunk(_bounds([1, 3, 2]), clean[:30], _WordTokenizer(), 100)) == [1, 2]
    # [1,2,3,2]: all fits, everything merges into the level-1 chunk
    assert levels(merge_over_chunk(_bounds([1, 2, 3, 2]), clean, _WordTokenizer(), 100)) == [1]
    # too big to merge: nothing changes
    assert levels(merge_over_chunk(_bounds([1, 2, 3, 2]), clean, _WordTokenizer(), 3)) == [1, 2, 3, 2]
    # [1,2,3,2] with room for 4 words: the level-3 run merges into its level-2 head only
    assert levels(merge_over_chunk(_bounds([1, 2, 3, 2]), clean, _WordTokenizer(), 4)) == [1, 2, 2]


def test_fold_levels_drops_deeper_points():
    from hichunk.tree.levels import fold_levels

    assert [b.level for b in fold_levels(_bounds([1, 2, 3, 2, 4]), 2)] == [1, 2, 2]
