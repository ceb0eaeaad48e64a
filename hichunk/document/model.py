"""The document model every later stage reads.

A document has two views of the same content:

* ``text``  - the raw decoded source. Chunks are spans of it, so concatenating
  them rebuilds the file exactly.
* ``clean`` - a Markdown view for models and embedders: markup stripped, HTML
  headings turned into ``#`` lines, reST adornments folded into their title.
  For plain text and Markdown it *is* ``text``.

Lines live in the clean view; ``Document.raw_offset`` maps any clean offset back
into ``text`` so that boundaries found on clean text become exact raw spans.
Heading levels come only from ``Line.heading`` (explicit markup), never from a
line merely starting with ``#``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

MAX_LEVEL = 10


def page_range(page_starts: Sequence[int], start: int, end: int) -> tuple[int, int] | None:
    """1-based first and last page of the raw span [start, end) given the pages' start offsets (None: no pages).

    An empty span lies on the page of its start; the form feed that ends a page belongs to that page.
    """
    if not page_starts:
        return None
    first = bisect_right(page_starts, start)
    last = bisect_right(page_starts, max(start, end - 1))
    return max(first, 1), max(last, 1)


@dataclass(frozen=True, slots=True)
class LineStyle:
    """Typography of a line, for formats that have it (PDF, DOCX); models read it as layout cues.

    Sizes and distances are relative to the document's body text, so the same
    heading style reads the same in any document: ``size`` 1.3 is a font 30%
    larger than the body font, ``gap`` 2.0 is two body line heights of space above.
    """

    page: int = 0  # 1-based page number (0: the format has no pages)
    size: float = 1.0  # font size / the body font size
    bold: bool = False
    italic: bool = False
    indent: float = 0.0  # left edge minus the body's left margin, in body font sizes
    gap: float = 0.0  # vertical space above the line, in body line heights (0: none or unknown)


class Line(NamedTuple):
    """One line of the clean view.

    ``clean_start``/``clean_end`` delimit ``text`` in ``Document.clean`` (no
    newline). ``heading`` is the level (1..10) given by explicit markup, or None.
    ``style`` is the line's typography where the format has one (PDF, DOCX).

    A named tuple, not a frozen dataclass: one is made per line, and the
    dataclass took 0.6 µs to make, the tuple 0.25 µs (making lines was a third of Markdown parsing).
    """

    clean_start: int
    clean_end: int
    text: str
    heading: int | None = None
    style: LineStyle | None = None

    @property
    def is_blank(self) -> bool:
        return not self.text.strip()


class OffsetMap:
    """Monotone map from clean offsets (boundaries between clean characters) to raw offsets.

    The clean view is a sequence of runs, each given by a breakpoint
    ``(clean_start, boundary_raw, copy_raw)``:

    * ``boundary_raw`` - where a cut exactly at the start of the run lands in the
      raw text. Loaders put it where the run's markup begins (the ``<h2`` of a
      heading, the overline of a reST title), so a chunk cut there carries it.
    * ``copy_raw`` - for runs whose characters are copied from raw text, the raw
      offset of the run's first character; cuts inside the run are exact.
      ``None`` for inserted/rewritten runs (``## `` prefixes, decoded entities):
      every cut inside them maps to ``boundary_raw``.

    Identity documents need one breakpoint, so plain text and Markdown pay
    nothing. ``0`` maps to ``0`` and ``clean_len`` to ``raw_len`` always.
    """

    __slots__ = ("_clean", "_boundary", "_copy", "clean_len", "raw_len")

    def __init__(self, breakpoints: Sequence[tuple[int, int, int | None]], clean_len: int, raw_len: int):
        points = list(breakpoints)
        if not points or points[0][0] != 0:
            points.insert(0, (0, 0, None))
        self._clean = [p[0] for p in points]
        self._boundary = [p[1] for p in points]
        self._copy = [p[2] for p in points]
        self.clean_len = clean_len
        self.raw_len = raw_len

    @classmethod
    def identity(cls, length: int) -> OffsetMap:
        return cls([(0, 0, 0)], length, length)

    def __call__(self, clean_offset: int) -> int:
        if clean_offset <= 0:
            return 0
        if clean_offset >= self.clean_len:
            return self.raw_len
        k = bisect_right(self._clean, clean_offset) - 1
        copy = self._copy[k]
        if clean_offset == self._clean[k] or copy is None:
            return self._boundary[k]
        return copy + clean_offset - self._clean[k]


@dataclass(slots=True)
class Document:
    """A loaded document: raw text, clean Markdown view, lines and offset map.

    For paged formats (PDF) ``text`` is the extracted text and ``page_starts``
    holds the raw offset where each page begins (empty for other formats).
    ``bookmarks`` are headings the file states outside its text (a PDF's
    outline placed on its lines: clean line index -> level). They count among
    ``headings`` (what ``--hints use`` trusts) but, unlike markup, leave the
    lines themselves alone, so sentences, model inputs and layout read the same
    with or without them.
    """

    name: str
    format: str
    text: str
    clean: str
    lines: list[Line]
    offsets: OffsetMap = field(repr=False)
    page_starts: list[int] = field(default_factory=list)
    bookmarks: dict[int, int] = field(default_factory=dict)

    def pages(self, start: int, end: int) -> tuple[int, int] | None:
        """1-based first and last page of the raw span [start, end), or None for formats without pages."""
        return page_range(self.page_starts, start, end)

    def raw_offset(self, clean_offset: int) -> int:
        """Raw offset in ``text`` of a clean offset (0 -> 0, end -> end)."""
        return self.offsets(clean_offset)

    @property
    def headings(self) -> list[tuple[int, int]]:
        """(line index, level) of every explicit heading line: markup, then bookmarks on lines without markup."""
        marked = [(i, line.heading) for i, line in enumerate(self.lines) if line.heading]
        if not self.bookmarks:
            return marked
        taken = {i for i, _ in marked}
        return sorted(marked + [(i, level) for i, level in self.bookmarks.items() if i not in taken])
