"""``recursive``: paragraphs, then lines, then sentences, then token windows; greedy packing.

Each span too large for a chunk is split at the coarsest separator that occurs
in it, recursively; neighbouring pieces are then packed greedily up to the
target size. Paragraph-first cuts keep most chunk inputs unchanged when a
document is edited, which matters for re-embedding cost.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from hichunk.chunkers.base import ChunkOptions, flat_tree
from hichunk.document.model import Document
from hichunk.sentences import split_line
from hichunk.token_table import TokenTable
from hichunk.tree.leaves import cut_by_tokens
from hichunk.tree.model import ChunkTree

# A token never spans more characters than this, so longer spans cannot fit.
_MAX_CHARS_PER_TOKEN = 64


class _Splitter:
    def __init__(self, doc: Document, table: TokenTable, size: int):
        self.doc, self.table, self.size = doc, table, size
        lines = doc.lines
        blank = [ln.is_blank for ln in lines]
        self.line_starts = [ln.clean_start for ln, b in zip(lines, blank) if not b]
        self.para_starts = [ln.clean_start for i, ln in enumerate(lines) if not blank[i] and i and blank[i - 1]]
        self.all_line_starts = [ln.clean_start for ln in lines]

    def tokens(self, a: int, b: int) -> int:
        """Token count, or a value over the size for spans too long to fit (not worth counting)."""
        if b - a > self.size * _MAX_CHARS_PER_TOKEN:
            return self.size * _MAX_CHARS_PER_TOKEN
        return self.table.count(a, b)

    def cuts(self, a: int, b: int, level: int) -> list[int]:
        if level == 0:
            starts = self.para_starts
        elif level == 1:
            starts = self.line_starts
        elif level == 2:
            return self.sentence_cuts(a, b)
        else:
            return cut_by_tokens(self.table, a, b, self.size)
        return starts[bisect_right(starts, a) : bisect_left(starts, b)]

    def sentence_cuts(self, a: int, b: int) -> list[int]:
        out: list[int] = []
        first = max(bisect_right(self.all_line_starts, a) - 1, 0)
        for line in self.doc.lines[first:]:
            if line.clean_start >= b:
                break
            for s, _ in split_line(line.text):
                pos = line.clean_start + s
                if a < pos < b:
                    out.append(pos)
        return out

    def split(self, a: int, b: int, level: int = 0, n: int | None = None) -> list[tuple[int, int, int]]:
        """Pieces (start, end, tokens) of [a, b), each within the size (tokens are estimates); ``n``: its tokens, if known."""
        n = self.tokens(a, b) if n is None else n
        if n <= self.size:
            return [(a, b, n)]
        cuts = self.cuts(a, b, level)
        while not cuts and level < 3:
            level += 1
            cuts = self.cuts(a, b, level)
        if not cuts:
            return [(a, b, n)]
        spans = list(zip([a, *cuts], [*cuts, b]))
        pieces: list[tuple[int, int, int]] = []
        for (x, y), m in zip(spans, self.table.span_counts(spans)):
            pieces.extend(self.split(x, y, level + 1, m) if level < 3 else [(x, y, m)])
        return self.pack(pieces)

    def pack(self, pieces: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        out: list[tuple[int, int, int]] = []
        for a, b, n in pieces:
            if out and out[-1][2] + n <= self.size:
                out[-1] = (out[-1][0], b, out[-1][2] + n)
            else:
                out.append((a, b, n))
        return out


def recursive_cuts(doc: Document, table: TokenTable, size: int) -> list[int]:
    """Chunk start offsets (after the first) of the recursive splitter (``table``: the clean view's tokens)."""
    pieces = _Splitter(doc, table, size).split(0, len(doc.clean))
    return [a for a, _, _ in pieces[1:]]


class RecursiveChunker:
    name = "recursive"

    def __init__(self, options: ChunkOptions):
        self.options = options

    def chunk(self, doc: Document) -> ChunkTree:
        opts = self.options
        table = TokenTable(doc.clean, opts.tokenizer)
        return flat_tree(doc, recursive_cuts(doc, table, opts.leaf_tokens), opts, {"method": self.name}, table)
