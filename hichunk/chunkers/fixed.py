"""``fixed`` (C200): non-overlapping windows of N tokens, each window a leaf."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from hichunk.chunkers.base import ChunkOptions, flat_tree
from hichunk.document.model import Document
from hichunk.tokens import Tokenizer, cut_after_space
from hichunk.tree.model import ChunkTree

# Texts are tokenised in windows of about this many characters, cut at line
# ends, so memory stays bounded on huge inputs.
WINDOW_CHARS = 1 << 20


def windows(text: str, size: int = WINDOW_CHARS) -> Iterator[tuple[int, str]]:
    """(offset, piece) covering ``text``, cut after a newline where possible."""
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            nl = text.rfind("\n", start, end)
            end = nl + 1 if nl > start else end
        yield start, text[start:end]
        start = end


def token_starts(text: str, tokenizer: Tokenizer) -> Iterator[np.ndarray]:
    """Token start offsets of ``text``, window by window (absolute offsets, int32 when they fit)."""
    dtype = np.int32 if len(text) < 2**31 else np.int64
    for offset, piece in windows(text):
        yield (tokenizer.starts(piece) + offset).astype(dtype)


def fixed_cuts(text: str, tokenizer: Tokenizer, size: int) -> list[int]:
    """Offsets where each window of at most ``size`` tokens (counted on its own) begins, after the first.

    A window whose text, tokenised alone, comes to more than ``size`` (a cut
    inside a word can cost a token) ends one token earlier.
    """
    starts = np.concatenate([np.zeros(0, dtype=np.int32), *token_starts(text, tokenizer)])
    cuts: list[int] = []
    first, pos = 0, 0  # token index and offset where the current window starts
    while first + size < len(starts):
        j = first + size
        while True:
            cut = cut_after_space(text, int(starts[j]))
            if j == first + 1 or (cut > pos and tokenizer.count(text[pos:cut]) <= size):
                break
            j -= 1
        if not pos < cut < len(text):
            break
        cuts.append(cut)
        first, pos = j, cut
    return cuts


class FixedChunker:
    name = "fixed"

    def __init__(self, options: ChunkOptions):
        self.options = options

    def chunk(self, doc: Document) -> ChunkTree:
        opts = self.options
        return flat_tree(doc, fixed_cuts(doc.clean, opts.tokenizer, opts.leaf_tokens), opts, {"method": self.name})
