"""``fixed`` (C200): non-overlapping windows of at most N tokens, each window a leaf, ending between words where it can."""

from __future__ import annotations

from hichunk.chunkers.base import ChunkOptions, flat_tree
from hichunk.document.model import Document
from hichunk.token_table import PLAIN_SPACE, TokenTable
from hichunk.tokens import cut_after_space
from hichunk.tree.model import ChunkTree


def fixed_cuts(table: TokenTable, size: int) -> list[int]:
    """Offsets where each window of at most ``size`` tokens (counted on its own) begins, after the first.

    A window ends before the last word that starts among its final ``size // 16``
    tokens, so words stay whole where they can (and a window's count comes from
    the one tokenisation, with no word cut to count again); it ends inside a word
    only when no word starts there (a long run of Chinese, a URL). A window whose
    text, tokenised alone, comes to more than ``size`` ends one token earlier.
    """
    text, starts = table.text, table.all_starts
    back = max(2, size // 16)
    cuts: list[int] = []
    first, pos = 0, 0  # token index and offset where the current window starts
    while first + size < len(starts):
        j = _word_cut(text, starts, first + size, max(first + 1, first + size - back))
        if j is None or table.count(pos, int(starts[j])) > size:
            j = first + size
            while True:
                cut = cut_after_space(text, int(starts[j]))
                if j == first + 1 or (cut > pos and table.count(pos, cut) <= size):
                    break
                j -= 1
        cut = cut_after_space(text, int(starts[j]))
        if not pos < cut < len(text):
            break
        cuts.append(cut)
        first, pos = j, cut
    return cuts


def _word_cut(text: str, starts, last: int, lowest: int) -> int | None:
    """The last token in ``[lowest, last]`` whose visible start begins a word (plain whitespace before it)."""
    for j in range(last, lowest - 1, -1):
        s = int(starts[j])
        if 0 < s < len(text) and text[s - 1] in PLAIN_SPACE:
            return j
    return None


class FixedChunker:
    name = "fixed"

    def __init__(self, options: ChunkOptions):
        self.options = options

    def chunk(self, doc: Document) -> ChunkTree:
        opts = self.options
        table = TokenTable(doc.clean, opts.tokenizer)
        return flat_tree(doc, fixed_cuts(table, opts.leaf_tokens), opts, {"method": self.name}, table)
