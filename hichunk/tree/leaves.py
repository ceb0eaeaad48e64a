"""Cut a span of text into leaves of at most N tokens, on sentence boundaries.

Greedy packing of units (sentences) in order. A unit longer than N is cut by
tokens. A leaf holding only headings is never closed on its own: the next unit
is cut to fill it, so a heading always travels with the start of its body.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hichunk.tokens import Tokenizer, cut_after_space


@dataclass(frozen=True, slots=True)
class Unit:
    start: int  # clean offsets
    end: int
    heading: bool = False


def cut_by_tokens(clean: str, start: int, end: int, limit: int, tokenizer: Tokenizer, first_limit: int | None = None) -> list[int]:
    """Cut positions (absolute clean offsets, excluding ``start``/``end``) every ``limit`` tokens.

    ``first_limit`` is the room left in the leaf the first piece joins.
    """
    text = clean[start:end]
    starts = tokenizer.starts(text)
    cuts: list[int] = []
    index = first_limit if first_limit is not None else limit
    while index < len(starts):
        pos = start + cut_after_space(text, int(starts[index]))
        if (not cuts or pos > cuts[-1]) and start < pos < end:
            cuts.append(pos)
        index += limit
    return cuts


def pack_leaves(clean: str, units: list[Unit], limit: int, tokenizer: Tokenizer) -> list[tuple[int, int, int]]:
    """Leaves (start, end, tokens) covering ``units`` (which must be contiguous), each at most ``limit`` tokens."""
    if not units:
        return []
    sizes = _unit_sizes(clean, units, tokenizer)
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
        inner = cut_by_tokens(clean, unit.start, unit.end, limit, tokenizer, first_limit=max(limit - used, 1) if used else None)
        cuts.extend(inner)
        tail_start = inner[-1] if inner else unit.start
        used = tokenizer.count(clean[tail_start : unit.end])
        only_headings = False
    bounds = [units[0].start, *cuts, units[-1].end]
    spans, counts = enforce_limit(clean, [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a], limit, tokenizer)
    return [(a, b, n) for (a, b), n in zip(spans, counts)]


def _unit_sizes(clean: str, units: list[Unit], tokenizer: Tokenizer) -> list[int]:
    """Token count of each unit from one tokenisation of the whole span (exact counts come later)."""
    base = units[0].start
    starts = np.asarray(tokenizer.starts(clean[base : units[-1].end]))  # stays an array: huge chunks, bounded memory
    offsets = np.fromiter((u.start - base for u in units), dtype=np.int64, count=len(units))
    bounds = np.append(np.searchsorted(starts, offsets, side="left"), len(starts))
    return np.diff(bounds).tolist()


def enforce_limit(clean: str, spans: list[tuple[int, int]], limit: int, tokenizer: Tokenizer) -> tuple[list[tuple[int, int]], list[int]]:
    """Make every span fit ``limit`` tokens when counted on its own; returns spans and their counts.

    Token counts are not quite additive (a span counted alone may gain a
    leading-space token), so a span found too long is cut at the longest prefix
    that fits and its remainder is moved into the next span, which keeps sizes
    even instead of leaving crumbs.
    """
    out: list[tuple[int, int]] = []
    counts: list[int] = []
    carry: int | None = None
    for i, (a, b) in enumerate(spans):
        a = carry if carry is not None else a
        carry = None
        n = tokenizer.count(clean[a:b])
        while n > limit:
            cut, head = longest_fitting_prefix(clean, a, b, limit, tokenizer)
            out.append((a, cut))
            counts.append(head)
            a = cut
            if i + 1 < len(spans):
                carry = a
                break
            n = tokenizer.count(clean[a:b])
        if carry is None:
            out.append((a, b))
            counts.append(n)
    return out, counts


def longest_fitting_prefix(clean: str, a: int, b: int, limit: int, tokenizer: Tokenizer, starts: list[int] | None = None) -> tuple[int, int]:
    """(end, tokens) of the longest prefix of [a, b) ending on a token start with at most ``limit`` tokens.

    ``starts`` (token starts of ``clean[a:b]``, relative) saves re-tokenising.
    """
    text = clean[a:b]
    if starts is None:
        starts = tokenizer.starts(text).tolist()
    index = min(limit, len(starts) - 1)
    while index > 1:
        cut = a + cut_after_space(text, starts[index])
        if a < cut < b:
            n = tokenizer.count(clean[a:cut])
            if n <= limit:
                return cut, n
        index -= 1
    cut = a + max(1, cut_after_space(text, starts[1]) if len(starts) > 1 else 1)
    return cut, tokenizer.count(clean[a:cut])
