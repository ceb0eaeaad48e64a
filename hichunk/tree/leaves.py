"""Cut a span of text into leaves of at most N tokens, on sentence boundaries.

Greedy packing of units (sentences) in order. A unit longer than N is cut by
tokens. A leaf holding only headings is never closed on its own: the next unit
is cut to fill it, so a heading always travels with the start of its body.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

import numpy as np

from hichunk.token_table import TokenTable
from hichunk.tokens import cut_after_space


def cut_by_tokens(table: TokenTable, start: int, end: int, limit: int, first_limit: int | None = None) -> list[int]:
    """Cut positions (absolute offsets of ``table.text``, excluding ``start``/``end``) every ``limit`` tokens.

    ``first_limit`` is the room left in the leaf the first piece joins.
    """
    text = table.text
    starts = np.concatenate([[start], table.starts(start + 1, end)])  # the span's own first token starts at ``start``
    cuts: list[int] = []
    index = first_limit if first_limit is not None else limit
    while index < len(starts):
        pos = cut_after_space(text, int(starts[index]), end)
        if (not cuts or pos > cuts[-1]) and start < pos < end:
            cuts.append(pos)
        index += limit
    return cuts


def pack_leaves(table: TokenTable, starts: Sequence[int], end: int, headings: Sequence[bool], sizes: Sequence[int],
                limit: int) -> list[tuple[int, int]]:
    """Leaf spans covering units, each of at most ``limit`` tokens by the units' sizes (``enforce_limit`` then
    makes each fit when counted on its own; a caller with many chunks does that for all of them at once).

    Unit ``i`` spans ``starts[i]`` to the next start (the last one to ``end``); ``headings[i]`` says it is a
    heading and ``sizes[i]`` (at least 0) is its tokens (of the one tokenisation). The run of units that
    fit whole is found by one search of the running sizes, so the loop turns once per leaf, not once per
    sentence.
    """
    if not starts:
        return []
    prefix = list(accumulate(sizes, initial=0))  # prefix[i]: tokens of the units before unit i
    n = len(starts)
    cuts: list[int] = []  # leaf starts after the first
    used = 0  # tokens in the current leaf
    only_headings = True  # current leaf holds nothing but headings (or nothing)
    i = 0
    while i < n:
        # units i..k-1 join the current leaf whole; unit k (if any) does not fit
        k = bisect_right(prefix, limit - used + prefix[i], i + 1) - 1
        if k > i:
            used += prefix[k] - prefix[i]
            only_headings = only_headings and all(headings[i:k])
        if k == n:
            break
        size = sizes[k]
        if used and not only_headings:
            cuts.append(starts[k])
            used, only_headings = 0, True
        if used + size <= limit:
            used += size
            only_headings = only_headings and headings[k]
        else:
            unit_end = starts[k + 1] if k + 1 < n else end
            inner = cut_by_tokens(table, starts[k], unit_end, limit, first_limit=max(limit - used, 1) if used else None)
            cuts.extend(inner)
            used = table.count(inner[-1] if inner else starts[k], unit_end)
            only_headings = False
        i = k + 1
    bounds = [starts[0], *cuts, end]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def enforce_limit(table: TokenTable, spans: list[tuple[int, int]], limit: int,
                  first_counts: list[int] | None = None) -> tuple[list[tuple[int, int]], list[int]]:
    """Make every span fit ``limit`` tokens when counted on its own; returns spans and their counts.

    Token counts are not quite additive (a span counted alone may gain a
    leading-space token), so a span found too long is cut at the longest prefix
    that fits and its remainder is moved into the next span, which keeps sizes
    even instead of leaving crumbs. ``first_counts``: the spans' counts
    (``table.span_counts``) when the caller has them.
    """
    out: list[tuple[int, int]] = []
    counts: list[int] = []
    carry: int | None = None
    first_counts = table.span_counts(spans) if first_counts is None else first_counts
    for i, (a, b) in enumerate(spans):
        n = first_counts[i] if carry is None else table.count(carry, b)
        a = carry if carry is not None else a
        carry = None
        while n > limit:
            cut, head = longest_fitting_prefix(table, a, b, limit)
            out.append((a, cut))
            counts.append(head)
            a = cut
            if i + 1 < len(spans):
                carry = a
                break
            n = table.count(a, b)
        if carry is None:
            out.append((a, b))
            counts.append(n)
    return out, counts


def longest_fitting_prefix(table: TokenTable, a: int, b: int, limit: int) -> tuple[int, int]:
    """(end, tokens) of the longest prefix of [a, b) ending on a token start with at most ``limit`` tokens."""
    text = table.text
    starts = table.starts(a + 1, b).tolist()  # token starts strictly inside the span; the first token starts at a
    index = min(limit, len(starts)) - 1
    while index >= 1:
        cut = cut_after_space(text, starts[index], b)
        if a < cut < b:
            n = table.count(a, cut)
            if n <= limit:
                return cut, n
        index -= 1
    cut = max(a + 1, cut_after_space(text, starts[0], b)) if starts else a + 1
    return cut, table.count(a, cut)
