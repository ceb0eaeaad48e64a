"""Split-point scoring: exact counts on small cases, pooling and bootstrap intervals."""

from __future__ import annotations

import pytest

from hichunk.bench.metrics.splits import SplitCounts, bootstrap_ci, chunks_from_points, count_line_points, count_splits


def test_counts_follow_the_reference_rules():
    # headings: L1, L2, L2; chunks: a correct L1, an L2 predicted at level 3, a non-heading chunk
    c = count_splits([1, 2, 2], [(1, 1), (2, 3), (None, 2)])
    assert dict(c.gt) == {1: 1, 2: 2}
    assert dict(c.pred) == {1: 1, 2: 1, 3: 1}
    assert dict(+c.hit) == {1: 1}
    assert c.hit_no_level == 2
    assert c.prf(1) == pytest.approx((1.0, 1.0, 1.0))
    assert c.f1(2) == 0.0
    p, r, f = c.prf()
    assert (p, r) == pytest.approx((2 / 3, 2 / 3))
    assert f == pytest.approx(2 / 3)


def test_deep_levels_count_as_they_are_and_counts_pool():
    a = count_splits([12], [(12, 12), (12, 15)])
    assert a.hit[12] == 1 and a.gt[12] == 1 and a.pred[15] == 1 and a.hit[15] == 0
    b = count_splits([1], [(None, 1)])
    pooled = a + b
    assert pooled.gt[1] == 1 and pooled.pred[1] == 1 and pooled.hit_no_level == 2
    assert SplitCounts.from_dict(pooled.to_dict()) == pooled


def test_chunks_from_points_adds_the_first_chunk_and_keeps_the_first_level_per_line():
    assert chunks_from_points([(5, 2), (3, 1), (5, 3)]) == [(0, 1), (3, 1), (5, 2)]
    assert chunks_from_points([(0, 2)]) == [(0, 2)]


def test_count_line_points_uses_line_levels():
    levels = [1, 0, 2, 0, 0, 2, 0]
    c = count_line_points(levels, [(0, 1), (2, 2), (4, 2)])
    assert c.hit_no_level == 2 and sum(c.pred.values()) == 3 and sum(c.gt.values()) == 3
    assert c.f1(1) == 1.0
    assert c.prf(2)[0] == 0.5 and c.prf(2)[1] == 0.5


def test_bootstrap_is_seeded_and_brackets_the_pooled_value():
    docs = [count_splits([1, 2], [(1, 1), (None, 2)]), count_splits([1, 2, 2], [(1, 1), (2, 2), (2, 2)]),
            count_splits([2], [(None, 1)])]
    pooled = sum(docs, SplitCounts())
    lo, hi = bootstrap_ci(docs, lambda c: c.f1(), n=300, seed=1)
    assert (lo, hi) == bootstrap_ci(docs, lambda c: c.f1(), n=300, seed=1)
    assert lo <= pooled.f1() <= hi
    assert bootstrap_ci([], lambda c: c.f1()) != bootstrap_ci([], lambda c: c.f1())  # NaNs for no documents
