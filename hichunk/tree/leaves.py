"""Cut a span of text into leaves of at most N tokens, on sentence boundaries.

Greedy packing of units (sentences) in order. A unit longer than N is cut by
tokens. A leaf holding only headings is never closed on its own: the next unit
is cut to fill it, so a heading always travels with the start of its body.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hichunk.token_table import TokenTable
from hichunk.tokens import cut_after_space


class Unit(NamedTuple):  # a tuple: tens of thousands are made per document set
    start: int  # clean offsets
    end: int
    heading: bool = False


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


def pack_leaves(table: TokenTable, units: list[Unit], limit: int, sizes: list[int] | None = None) -> list[tuple[int, int, int]]:
    """Leaves (start, end, tokens) covering ``units`` (which must be contiguous), each at most ``limit`` tokens.

    ``sizes``: each unit's tokens when the caller has them (``_unit_sizes`` otherwise).
    """
    if not units:
        return []
    sizes = _unit_sizes(table, units) if sizes is None else sizes
    cuts: list[int] = []  # leaf starts after the first
    used = 0  # tokens in the current leaf
    only_headings = True  # current leaf holds nothing but headings (or nothing)
    for unit, size in zip(units, sizes):
        if used and used + size > limit and not only_headings:
            cuts.append(unit.start)
            used, only_headings = 0, True
        if used + size <= limit:
            used += size
            only_headings = only_headings and unit.heading
            continue
        inner = cut_by_tokens(table, unit.start, unit.end, limit, first_limit=max(limit - used, 1) if used else None)
        cuts.extend(inner)
        used = table.count(inner[-1] if inner else unit.start, unit.end)
        only_headings = False
    bounds = [units[0].start, *cuts, units[-1].end]
    spans, counts = enforce_limit(table, [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a], limit)
    return [(a, b, n) for (a, b), n in zip(spans, counts)]


def _unit_sizes(table: TokenTable, units: list[Unit]) -> list[int]:
    """Tokens of the text that begin in each unit (from the one tokenisation; exact leaf counts come later)."""
    bounds = np.append(table.indexes([u.start for u in units]), table.index(units[-1].end))
    return np.diff(bounds).tolist()


def enforce_limit(table: TokenTable, spans: list[tuple[int, int]], limit: int) -> tuple[list[tuple[int, int]], list[int]]:
    """Make every span fit ``limit`` tokens when counted on its own; returns spans and their counts.

    Token counts are not quite additive (a span counted alone may gain a
    leading-space token), so a span found too long is cut at the longest prefix
    that fits and its remainder is moved into the next span, which keeps sizes
    even instead of leaving crumbs.
    """
    out: list[tuple[int, int]] = []
    counts: list[int] = []
    carry: int | None = None
    first_counts = table.span_counts(spans)
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
