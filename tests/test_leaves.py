"""Leaf packing: the one-search-per-leaf ``pack_leaves`` cuts where the unit-by-unit greedy loop does."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hichunk.document import parse_document
from hichunk.sentences import sentence_spans, split_sentences
from hichunk.token_table import TokenTable
from hichunk.tree.build import Boundary, build_tree
from hichunk.tree.leaves import cut_by_tokens, pack_leaves

WORDS = ["alpha", "beta.", "gamma", "x" * 40, "中文", "句子。", "  ", "\n", "3.2"]


def reference_pack(table, starts, end, headings, sizes, limit):
    """``pack_leaves`` as it was written first: one turn per unit."""
    cuts, used, only_headings = [], 0, True
    for k, (start, size, heading) in enumerate(zip(starts, sizes, headings)):
        unit_end = starts[k + 1] if k + 1 < len(starts) else end
        if used and used + size > limit and not only_headings:
            cuts.append(start)
            used, only_headings = 0, True
        if used + size <= limit:
            used += size
            only_headings = only_headings and heading
            continue
        inner = cut_by_tokens(table, start, unit_end, limit, first_limit=max(limit - used, 1) if used else None)
        cuts.extend(inner)
        used = table.count(inner[-1] if inner else start, unit_end)
        only_headings = False
    bounds = [starts[0], *cuts, end] if starts else []
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


@st.composite
def packing(draw):
    text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=120)))
    starts = sorted(draw(st.sets(st.integers(0, len(text) - 1), min_size=1, max_size=40)))
    n = len(starts)
    # sizes as the builder makes them (tokens that begin in each unit), or any sizes at all
    sizes = draw(st.one_of(st.none(), st.lists(st.integers(0, 80), min_size=n, max_size=n)))
    headings = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return text, starts, headings, sizes, draw(st.sampled_from([8, 13, 50]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(packing())
def test_pack_leaves_equals_the_unit_by_unit_loop(tokenizer, case):
    text, starts, headings, sizes, limit = case
    table = TokenTable(text, tokenizer)
    if sizes is None:
        index = table.indexes([*starts, len(text)]).tolist()
        sizes = [b - a for a, b in zip(index, index[1:])]
    got = pack_leaves(table, starts, len(text), headings, sizes, limit)
    assert got == reference_pack(table, starts, len(text), headings, sizes, limit)


def test_a_tree_from_sentence_columns_equals_one_from_sentence_objects(tokenizer):
    text = "# A\nFirst one here. Second one here.\n\n## B\n" + "word " * 300 + "\n# C\nEnd. Done here.\n"
    doc = parse_document(text, "markdown")
    bounds = [Boundary(doc.lines[i].clean_start, level, True) for i, level in doc.headings]
    from_columns = build_tree(doc, bounds, tokenizer, sentence_spans(doc), 50)
    from_objects = build_tree(doc, bounds, tokenizer, split_sentences(doc), 50)
    assert from_columns.nodes == from_objects.nodes and len(from_columns.leaves()) > 5
