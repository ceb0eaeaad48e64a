"""Level edits on split points before a tree is built: ``max_level`` and ``merge_over_chunk``."""

from __future__ import annotations

from hichunk.token_table import TokenTable
from hichunk.tokens import Tokenizer
from hichunk.tree.build import Boundary


def fold_levels(bounds: list[Boundary], max_level: int) -> list[Boundary]:
    """Drop split points deeper than ``max_level``: their text joins the chunk before them."""
    return [b for b in bounds if b.level <= max_level]


def merge_over_chunk(bounds: list[Boundary], clean: str, tokenizer: Tokenizer, size: int,
                     table: TokenTable | None = None) -> list[Boundary]:
    """Merge a chunk with the deeper chunks right after it when together they fit in ``size`` tokens.

    As in the reference code: levels are visited from the deepest up; the
    followers of a level-k chunk are the run of deeper chunks whose levels never
    decrease; the merged chunk keeps the head's level and title flag. This turns
    runs of tiny sub-sections into one leaf-sized chunk. ``table``: the clean
    view's ``TokenTable`` when the caller has one.
    """
    bounds = sorted(bounds, key=lambda b: b.offset)
    if not bounds:
        return bounds
    table = table or TokenTable(clean, tokenizer)
    for level in range(max(b.level for b in bounds), 0, -1):
        i = 0
        while i < len(bounds):
            if bounds[i].level == level:
                j, run_max = i + 1, level + 1
                while j < len(bounds) and bounds[j].level >= run_max:
                    run_max = bounds[j].level
                    j += 1
                end = bounds[j].offset if j < len(bounds) else len(clean)
                if j > i + 1 and table.count(bounds[i].offset, end) <= size:
                    del bounds[i + 1 : j]
            i += 1
    return bounds
