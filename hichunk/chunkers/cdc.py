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
from hichunk.chunkers.fixed import windows
from hichunk.document.model import Document
from hichunk.tokens import Tokenizer, cut_after_space
from hichunk.tree.model import ChunkTree

_GEAR = np.random.default_rng(20250914).integers(0, 2**63, size=1 << 16, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
_HASH_SPAN = 64  # a uint64 gear hash forgets tokens older than this


def gear_hash(ids: np.ndarray) -> np.ndarray:
    """h[i] = sum_k gear(ids[i-k]) << k over the last 64 tokens (mod 2**64)."""
    g = _GEAR[ids % len(_GEAR)]
    h = np.zeros(len(ids), dtype=np.uint64)
    for k in range(min(_HASH_SPAN, len(ids))):
        h[k:] += g[: len(ids) - k] << np.uint64(k)
    return h


def candidate_tokens(text: str, tokenizer: Tokenizer, bits: int) -> tuple[np.ndarray, list[int]]:
    """Token start offsets of the whole text, and the indexes of tokens whose hash qualifies."""
    all_starts: list[np.ndarray] = []
    candidates: list[int] = []
    seen = 0
    history = np.zeros(0, dtype=np.int64)
    shift = np.uint64(64 - bits)
    dtype = np.int32 if len(text) < 2**31 else np.int64
    for offset, piece in windows(text):
        ids, starts = tokenizer.encode(piece)
        context = np.concatenate([history, ids])
        h = gear_hash(context)[len(history) :]
        candidates.extend((np.nonzero((h >> shift) == 0)[0] + seen).tolist())
        all_starts.append((starts + offset).astype(dtype))
        seen += len(ids)
        history = context[-(_HASH_SPAN - 1) :]
    return np.concatenate([np.zeros(0, dtype=dtype), *all_starts]), candidates


def cdc_cuts(text: str, tokenizer: Tokenizer, min_tokens: int, max_tokens: int, avg_extra: int) -> list[int]:
    """Cut offsets: a hash hit at least ``min_tokens`` after the last cut, forced at ``max_tokens``."""
    bits = max(1, round(math.log2(max(2, avg_extra))))
    starts, candidates = candidate_tokens(text, tokenizer, bits)
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
        cuts = cdc_cuts(doc.clean, opts.tokenizer, self.min_tokens, opts.leaf_tokens, self.avg_extra)
        return flat_tree(doc, cuts, opts, {"method": self.name, "min_tokens": self.min_tokens})
