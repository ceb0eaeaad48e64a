"""Window filling: as many numbered lines as the model's token budget allows.

A window costs the model's fixed overhead (instruction, chat template) plus
the tokens of each numbered line ``"{i} @ {text}\\n"``, counted line by line
in the model's own tokenizer, as the reference code does. Residual lines come
first (numbered from 0), new lines follow.

Two guards keep the loop moving where the reference code would spin forever:
when the residual lines leave no room for a single new line they are dropped,
and a window always takes at least one new line, even one that alone exceeds
the budget (possible only with tiny windows; the trace marks it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hichunk.protocol import render_line


class LineCounter:
    """Token counts of numbered lines, remembered per (number, unit) so restarts do not recount."""

    def __init__(self, count_tokens: Callable[[str], int], texts: Sequence[str]):
        self._count = count_tokens
        self._texts = texts
        self._memo: dict[tuple[int, int], int] = {}

    def __call__(self, number: int, unit: int) -> int:
        key = (number, unit)
        n = self._memo.get(key)
        if n is None:
            n = self._memo[key] = self._count(render_line(number, self._texts[unit]))
        return n

    def lines(self, units: Sequence[int], first_number: int = 0) -> int:
        """Tokens of these units numbered consecutively from ``first_number``."""
        return sum(self(first_number + k, u) for k, u in enumerate(units))


@dataclass(frozen=True, slots=True)
class Filled:
    """One window's content: residual units, how many new units from ``start``, and its line tokens."""

    residual: tuple[int, ...]
    start: int
    n_new: int
    line_tokens: int
    overflow: bool  # a single new line exceeded the budget and was taken anyway


def fill_window(start: int, n_units: int, residual: Sequence[int], budget: int, counter: LineCounter) -> Filled:
    """New units from ``start`` after ``residual`` until ``budget`` line tokens are used."""
    residual = tuple(residual)
    used = counter.lines(residual)
    if residual and used + counter(len(residual), start) > budget:
        residual, used = (), 0
    first_number = len(residual)
    n_new = 0
    while start + n_new < n_units:
        cost = counter(first_number + n_new, start + n_new)
        if used + cost > budget and n_new > 0:
            break
        used += cost
        n_new += 1
    return Filled(residual, start, n_new, used, used > budget)
