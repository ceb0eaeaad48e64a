"""Auto-Merge on hand-built trees: exact merge sequences, both rule sets, and the budget as a property."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from retrieval_helpers import WordTokenizer, leaf_ids, make_tree, random_trees, words

from hichunk.errors import HichunkError
from hichunk.retrieval.search import FillOptions, TreeView, assemble, fill_context

TOK = WordTokenizer()


def run(trees, ranking, budget, **kw):
    """Fill a context from ``ranking``: (doc, leaf position) pairs, or leaf positions of the single tree."""
    if not isinstance(trees, dict):
        trees = {"doc": trees}
    views = {d: TreeView.build(d, t) for d, t in trees.items()}
    ranked = [r if isinstance(r, tuple) else ("doc", r) for r in ranking]
    candidates = [(d, views[d].leaf_ids[i], 1.0 - n / 100) for n, (d, i) in enumerate(ranked)]
    options = FillOptions(budget=budget, **kw)
    fill = fill_context(candidates, views.__getitem__, options, TOK)
    return assemble("q", fill, views.__getitem__, options, TOK)


def merges(result):
    return [(m.parent, m.replaced) for m in result.merges]


def test_two_children_below_threshold_do_not_merge():
    tree = make_tree([[words(f"x{i}_", 10) for i in range(6)], [words("y", 10)]])  # chunk of 60 tokens
    chunk, leaves = 1, leaf_ids(tree)
    res = run(tree, [0, 1], 1000)
    assert merges(res) == []  # 20 < 60/3 * (1 + 20/1000)
    assert [p.node for p in res.passages] == leaves[:2]
    assert tree.nodes[chunk].kind == "chunk"


def test_threshold_crossed_merges_into_the_parent():
    tree = make_tree([[words(f"x{i}_", 10) for i in range(4)], [words("y", 10)]])  # chunk of 40 tokens
    leaves = leaf_ids(tree)
    res = run(tree, [0, 1], 1000)
    assert merges(res) == [(1, leaves[:2])]
    assert [p.node for p in res.passages] == [1]
    assert res.passages[0].merged and res.passages[0].leaves == leaves[:2]
    assert res.context == tree.clean_text(tree.nodes[1]).strip()
    assert res.tokens == 40 and res.merge_count == 2


@pytest.mark.parametrize("budget, merged", [(35, False), (40, True)])
def test_parent_too_large_for_the_rest_of_the_budget_does_not_merge(budget, merged):
    # chunk of 3 x 10 tokens, another chunk of 2 x 10; ranking: other chunk's leaf, then two of the three
    tree = make_tree([[words(f"x{i}_", 10) for i in range(3)], [words("o", 10), words("p", 10)]])
    res = run(tree, [3, 0, 1], budget)
    # t = 30: threshold 30/3 * (1 + 30/T) <= 20 in both cases; the merged context needs 40 tokens
    assert (merges(res) == [(1, leaf_ids(tree)[:2])]) is merged
    assert res.tokens <= budget


def test_chained_merge_two_levels_up():
    a = [words(f"a{i}_", 10) for i in range(3)]
    b = [words(f"b{i}_", 10) for i in range(3)]
    tree = make_tree([[a, b], [words("d", 10), words("e", 10)]])
    section, chunk_a, chunk_b = 1, 2, 6
    la = leaf_ids(tree)
    res = run(tree, [0, 1, 3, 4], 1000)
    assert merges(res) == [(chunk_a, la[0:2]), (chunk_b, la[3:5]), (section, [chunk_a, chunk_b])]
    assert [p.node for p in res.passages] == [section]
    assert res.passages[0].rank == 0 and res.tokens == 60


def test_merged_parent_keeps_the_rank_of_its_earliest_part():
    tree = make_tree([[words(f"x{i}_", 10) for i in range(4)], [words("y", 10), words("z", 10)]])
    res = run(tree, [4, 0, 1], 1000)  # y first, then two x leaves merge into their chunk
    assert [p.node for p in res.passages] == [leaf_ids(tree)[4], 1]
    res = run(tree, [4, 0, 1], 1000, order="document")
    assert [p.node for p in res.passages] == [1, leaf_ids(tree)[4]]


def reference_example():
    """The worked example of reference_behaviour.md §5.4 in the reference tree shape."""
    return make_tree([
        [["h0 h1 h2."], [words("a", 8), words("b", 8)], [words("c", 8), words("d", 8)]],
        [[words("y", 5)]],
    ])


def test_reference_mode_only_child_and_character_threshold():
    tree = reference_example()
    section, h, ab = 1, 2, 4
    lv = leaf_ids(tree)
    res = run(tree, [1, 2, 3, 0, 4], 40, mode="reference")
    # leaf 0 is an only child, so its split H enters; S then has AB and H: 57 chars >= 56
    assert merges(res) == [(ab, lv[1:3]), (section, [ab, lv[3], h])]
    assert [p.node for p in res.passages] == [section]
    assert res.merge_count == 1  # one leaf (d) pulled in beyond those retrieved
    assert res.context == "\n".join(["h0 h1 h2.", words("a", 8), words("b", 8), words("c", 8), words("d", 8)])


def test_paper_mode_same_example_counts_tokens():
    tree = reference_example()
    section, h, ab, cd = 1, 2, 4, 7
    lv = leaf_ids(tree)
    res = run(tree, [1, 2, 3, 0, 4], 40)
    # H + AB = 19 tokens < 35/3 * (1 + 27/40): no merge at H; d then completes CD and S follows
    assert merges(res) == [(ab, lv[1:3]), (cd, lv[3:5]), (section, [ab, cd, h])]
    assert res.tokens == 35 and [p.node for p in res.passages] == [section]


def test_reference_mode_only_child_is_applied_once():
    tree = make_tree([[[[words("solo", 4)]]], [words("x", 4), words("y", 4)]])
    res = run(tree, [0], 100, mode="reference")
    leaf = leaf_ids(tree)[0]
    parent = tree.nodes[leaf].parent
    assert [p.node for p in res.passages] == [parent]  # one step up, not to the top of the chain
    res = run(tree, [0], 100)
    assert [p.node for p in res.passages] == [1]  # paper mode climbs the whole single-child chain


def test_reference_mode_cuts_the_context_at_the_budget():
    tree = make_tree([[words("a", 10), words("b", 10), words("c", 10), words("d", 10)]])
    res = run(tree, [0, 2], 15, mode="reference")
    assert res.tokens == 15 and res.passages[-1].truncated
    assert res.context.startswith(words("a", 10)) and TOK.count(res.context) == 15


def test_plain_greedy_truncates_or_skips():
    tree = make_tree([[words("a", 10), words("b", 30), words("c", 5)]])
    lv = leaf_ids(tree)
    res = run(tree, [0, 1, 2], 20, auto_merge=False)
    assert [p.node for p in res.passages] == lv[:2] and res.passages[1].truncated and res.tokens == 20
    res = run(tree, [0, 1, 2], 20, auto_merge=False, fill="whole")
    assert [p.node for p in res.passages] == [lv[0], lv[2]] and res.tokens == 15


def test_documents_never_mix():
    trees = {"d1": make_tree([[words("a", 5), words("b", 5)]]), "d2": make_tree([[words("c", 5), words("d", 5)]])}
    res = run(trees, [("d1", 0), ("d2", 1), ("d2", 0)], 100)
    # d2's two leaves merge into their chunk, the root's only child, so the whole document enters
    assert [(p.doc, p.node) for p in res.passages] == [("d1", leaf_ids(trees["d1"])[0]), ("d2", 0)]


def test_bad_options():
    with pytest.raises(HichunkError):
        FillOptions(budget=0)
    with pytest.raises(HichunkError):
        FillOptions(mode="magic")


@st.composite
def trees_and_rankings(draw):
    tree = draw(random_trees())
    n = len(leaf_ids(tree))
    ranking = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2 * n))
    return tree, ranking


@settings(max_examples=150, deadline=None)
@given(trees_and_rankings(), st.integers(1, 80), st.sampled_from(["paper", "reference"]),
       st.sampled_from(["truncate", "whole"]), st.booleans(), st.sampled_from(["rank", "document"]))
def test_budget_is_never_exceeded(data, budget, mode, fill, auto_merge, order):
    tree, ranking = data
    res = run(tree, ranking, budget, mode=mode, fill=fill, auto_merge=auto_merge, order=order)
    assert TOK.count(res.context) <= budget
    assert res.tokens == TOK.count(res.context) or mode == "paper"
    spans = sorted((p.clean_start, p.clean_end) for p in res.passages)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # no text twice
    for p in res.passages:
        assert p.text in tree.clean if mode == "paper" else True



def test_budget_in_another_tokenizer(guide_md):
    from hichunk.chunkers import ChunkOptions, chunk_document
    from hichunk.document import parse_document

    tree = chunk_document(parse_document(guide_md * 3, "markdown", "g"), "structure", ChunkOptions(leaf_tokens=12))
    view = TreeView.build("g", tree, TOK)  # the tree counted in XLM-R tokens; the budget is in words
    assert view.tokens(0) == sum(TOK.count(t) for t in view.texts) != tree.root.tokens
    candidates = [("g", leaf, 0.0) for leaf in reversed(view.leaf_ids)]
    for mode in ("paper", "reference"):
        options = FillOptions(budget=30, mode=mode)
        res = assemble("q", fill_context(candidates, lambda d: view, options, TOK), lambda d: view, options, TOK)
        assert TOK.count(res.context) <= 30 and res.passages
