"""``cdc``: content-defined chunking on token ids.

A gear hash rolls over token ids; a cut falls where its top bits are zero, so
cut points depend only on the ~64 tokens before them and an edit moves only
the cuts near it. Working on tokens (not on space-separated words) keeps it
sound on Chinese. Sizes are bounded by ``min_tokens``/``max_tokens``.
"""

from __future__ import annotations

import math

import numpy as np

from hichunk.chunkers.base import ChunkOptions, flat_tree
from hichunk.document.model import Document
from hichunk.token_table import TokenTable
from hichunk.tokens import cut_after_space
from hichunk.tree.model import ChunkTree

_GEAR = np.random.default_rng(20250914).integers(0, 2**63, size=1 << 16, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
_HASH_SPAN = 64  # a uint64 gear hash forgets tokens older than this
_HASH_BLOCK = 1 << 18  # tokens hashed at a time (bounded memory on huge texts)


def gear_hash(ids: np.ndarray) -> np.ndarray:
    """h[i] = sum_k gear(ids[i-k]) << k over the last 64 tokens (mod 2**64)."""
    g = _GEAR[ids % len(_GEAR)]
    h = np.zeros(len(ids), dtype=np.uint64)
    for k in range(min(_HASH_SPAN, len(ids))):
        h[k:] += g[: len(ids) - k] << np.uint64(k)
    return h


def candidate_tokens(ids: np.ndarray, bits: int) -> list[int]:
    """Indexes of the tokens whose hash qualifies (hashed block by block, each with the history it needs)."""
    candidates: list[int] = []
    shift = np.uint64(64 - bits)
    for first in range(0, len(ids), _HASH_BLOCK):
        lead = max(0, first - (_HASH_SPAN - 1))
        h = gear_hash(ids[lead : first + _HASH_BLOCK])[first - lead :]
        candidates.extend((np.nonzero((h >> shift) == 0)[0] + first).tolist())
    return candidates


def cdc_cuts(table: TokenTable, min_tokens: int, max_tokens: int, avg_extra: int) -> list[int]:
    """Cut offsets: a hash hit at least ``min_tokens`` after the last cut, forced at ``max_tokens``.

    ``table`` must keep its token ids (``keep_ids=True``).
    """
    bits = max(1, round(math.log2(max(2, avg_extra))))
    text, starts = table.text, table.all_starts
    candidates = candidate_tokens(table.ids, bits)
    cut_tokens: list[int] = []
    last = 0
    ci = 0
    n = len(starts)
    while last + max_tokens < n or ci < len(candidates):
        while ci < len(candidates) and candidates[ci] < last + min_tokens:
            ci += 1
        if ci < len(candidates) and candidates[ci] <= last + max_tokens:
            last = candidates[ci]
        elif last + max_tokens < n:
            last += max_tokens
        else:
            break
        cut_tokens.append(last)
    cuts: list[int] = []
    for t in cut_tokens:
        pos = cut_after_space(text, int(starts[t]))
        if 0 < pos < len(text) and (not cuts or pos > cuts[-1]):
            cuts.append(pos)
    return cuts


class CDCChunker:
    name = "cdc"

    def __init__(self, options: ChunkOptions, min_fraction: float = 0.5, avg_fraction: float = 0.25):
        self.options = options
        self.min_tokens = max(1, int(options.leaf_tokens * min_fraction))
        self.avg_extra = max(2, int(options.leaf_tokens * avg_fraction))

    def chunk(self, doc: Document) -> ChunkTree:
        opts = self.options
        table = TokenTable(doc.clean, opts.tokenizer, keep_ids=True)
        cuts = cdc_cuts(table, self.min_tokens, opts.leaf_tokens, self.avg_extra)
        return flat_tree(doc, cuts, opts, {"method": self.name, "min_tokens": self.min_tokens}, table)
