"""A paged document's bookmarks (a PDF's outline) placed on the clean lines they name.

A bookmark gives a title, a depth and a page; the text gives lines. A bookmark
is placed on the first line, in reading order from the previous placed
bookmark, on its page or the next, whose text begins the title (or that the
title begins, for titles cut at a line end), compared without case, width,
spaces and punctuation, and with or without heading numbers on either side: an
outline often names "Introduction" where the page prints "1.1 Introduction", or
"C Platform notes" where it prints "Appendix C Platform notes" (an appendix's
section numbers, "A.2" or "C.3.10", count as heading numbers here). The shorter
of the two must end where a word ends in the longer: an index's letter-group
bookmark "C" names no line that begins "\\captionsetup", nor "Remote globbing" a
line "remote-glob" (words of Chinese and other unspaced scripts end at every
character; a long first line of a wrapped title may end anywhere, see ``_begins``),
and a line that gives only the first words of a title must be followed by a line
that goes on with it ("Grid" above an entry is not the first line of "grid.null").
When the line found is a title under a label line ("Chapter 1" above
"Introduction"), the bookmark goes on the label: the heading starts there.

The same placement builds the ground truth of real PDFs for training and
benchmarks (``hichunk.models.train.corpus.truth``) and, in ``hichunk.document.pdf``,
the explicit headings that ``--hints use`` trusts.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Sequence

from hichunk.document.model import MAX_LEVEL, Document
from hichunk.document.roles import HEADING_CHARS, heading_continuation
from hichunk.numbering import strip_heading_number

_NOISE = re.compile(r"[\W_]+")
_WORD_RUN = re.compile(r"\w+")
# a line ending in glyphs without a text mapping: boxes, replacement characters, private-use code points
_UNREADABLE_TAIL = re.compile("[\u25a0\u25a1\ufffd\ue000-\uf8ff]{2,}\\s*$")
# a run of letters and digits of scripts that space their words (below U+2E80: Latin, Greek, Cyrillic ...),
# or one character of the scripts from the CJK radicals onwards, whose words run together
_WORD_OR_CHARACTER = re.compile("[^\u2e80-\U0010ffff]+|.", re.S)
# an appendix's section number ("A.2", "C.3.10"), which heading numbering leaves alone (a lone "A" is a word)
_APPENDIX_NUMBER = re.compile(r"^\s*[A-Z](?:\.[0-9]{1,3})+\.?\s+(?=\S)")
_APPENDIX_LABEL = re.compile(r"^\s*(?:appendix|附录|附錄)\s*(?=\S)", re.I)
MIN_PREFIX = 4  # a line must give at least this much of a title to be its first line
LONG_PREFIX = 16  # a line giving this much of a title may end inside one of the title's words
FOOTNOTE_MARK = 2  # digits glued to the end of a heading line: a footnote mark


class Compared:
    """A text as placement compares it: ``chars`` (NFKC, case-folded, only letters and digits) and
    ``word_ends``, the lengths of ``chars`` prefixes that end a word of the text (found only when asked:
    most comparisons end at the first letter)."""

    __slots__ = ("_folded", "_word_ends", "chars")

    def __init__(self, text: str):
        self._folded = unicodedata.normalize("NFKC", text).casefold()
        self.chars = _NOISE.sub("", self._folded)
        self._word_ends: frozenset[int] | None = None

    @property
    def word_ends(self) -> frozenset[int]:
        if self._word_ends is None:
            ends: list[int] = []
            size = 0
            for run in _WORD_RUN.findall(self._folded):
                letters = run.replace("_", "")  # "glp_read_ccdata" is one word, compared without its underscores
                if not letters:
                    continue
                # each character of the CJK scripts is a word of its own
                for word in (letters,) if letters.isascii() else _WORD_OR_CHARACTER.findall(letters):
                    size += len(word)
                    ends.append(size)
            self._word_ends = frozenset(ends)
        return self._word_ends


def compared(text: str) -> Compared:
    """``text`` as placement compares it (``Compared``)."""
    return Compared(text)


def bare_compared(text: str) -> Compared:
    """``compared`` text without its heading number ("1.1", "Chapter 2", "A.2")."""
    return compared(_APPENDIX_NUMBER.sub("", strip_heading_number(text), count=1))


def _begins(line: Compared, title: Compared) -> bool:
    """The title begins the line, or the line begins the title, the shorter ending a word of the longer.

    A heading line may end in a footnote mark ("Support for Korean6"). A line that gives ``LONG_PREFIX``
    characters of a longer title may end inside one of the title's words: the page broke the line
    there, and outlines glue the words of a wrapped heading ("clique/coloringformat")."""
    if not line.chars:
        return False
    if line.chars.startswith(title.chars):
        rest = line.chars[len(title.chars):]
        return (not rest or len(title.chars) in line.word_ends
                or (len(rest) <= FOOTNOTE_MARK and rest.isdigit() and title.chars[-1:].isalpha()))
    size = len(line.chars)
    return (title.chars.startswith(line.chars) and size >= min(len(title.chars), MIN_PREFIX)
            and (size in title.word_ends or size >= LONG_PREFIX))


class TitleFinder:
    """Finds where titles begin among a document's clean lines (each line's compared forms computed once)."""

    def __init__(self, doc: Document):
        self.doc = doc
        self._forms: dict[int, tuple[Compared, Compared, Compared]] = {}
        self._pages: dict[int | None, Compared] = {}
        self._by_page: defaultdict[int, list[str]] | None = None

    def _line(self, i: int) -> tuple[Compared, Compared, Compared]:
        """A line as compared: whole, without its number, and without an "Appendix" word before its letter."""
        forms = self._forms.get(i)
        if forms is None:
            text = self.doc.lines[i].text
            forms = self._forms[i] = (compared(text), bare_compared(text), compared(_APPENDIX_LABEL.sub("", text, count=1)))
        return forms

    def _label_above(self, index: int) -> int:
        """``index``, or the label line above it whose heading ``index`` completes."""
        lines = self.doc.lines
        k = index - 1
        while k >= 0 and index - k <= 4 and lines[k].is_blank:
            k -= 1
        if k >= 0 and index - k <= 4 and heading_continuation(self.doc, k) == index:
            return k
        return index

    def _page_text(self, page: int | None) -> Compared:
        """The compared text of ``page`` and the next (of the whole document when unpaged)."""
        text = self._pages.get(page)
        if text is None:
            if self._by_page is None:
                self._by_page = defaultdict(list)
                for line in self.doc.lines:
                    self._by_page[line.style.page if line.style is not None else 0].append(line.text)
            pages = (page, page + 1) if page else sorted(self._by_page)
            text = self._pages[page] = compared("\n".join(t for p in pages for t in self._by_page.get(p, ())))
        return text

    def printed(self, title: str, page: int | None) -> bool:
        """Whether ``title``'s words (with or without its number) are printed, in order, on ``page`` or the next.

        An outline can list what no page prints: hyperref bookmarks an index's letter groups whether
        or not the index sets the letters. Such an entry names no heading, where one that ``find``
        cannot place but the page prints is a heading the reading lost."""
        text = self._page_text(page)
        starts = text.word_ends | {0}
        for form in (compared(title), bare_compared(title)):
            at = text.chars.find(form.chars) if form.chars else -1
            while at >= 0:
                if at in starts and at + len(form.chars) in text.word_ends:
                    return True
                at = text.chars.find(form.chars, at + 1)
        return False

    def find(self, title: str, page: int | None, start: int = 0) -> int | None:
        """Index of the line where ``title``, bookmarked on ``page`` (1-based; None: anywhere), begins,
        searching from line ``start`` (rules in the module docstring)."""
        whole, bare = compared(title), bare_compared(title)
        if not whole.chars:
            return None
        lines = self.doc.lines
        for i in range(start, len(lines)):
            style = lines[i].style
            line_page = style.page if style is not None else 0
            if page and line_page and line_page > page + 1:
                return None
            if page and line_page and line_page < page:
                continue
            line_whole, line_bare, line_unlabelled = self._line(i)
            for line, wanted in ((line_whole, whole), (line_bare, bare), (line_unlabelled, whole)):
                if _begins(line, wanted) and (len(line.chars) >= len(wanted.chars)
                                              or self._goes_on(i, wanted.chars[len(line.chars):])):
                    return self._label_above(i)
        return None

    def _goes_on(self, index: int, rest: str) -> bool:
        """Whether the next line goes on with ``rest``, the part of a title that line ``index`` does not give:
        a line that gives only the first words of a title is its first line only when the heading wraps
        ("Grid" above a reference entry is not the first line of "grid.null")."""
        lines = self.doc.lines
        if _UNREADABLE_TAIL.search(lines[index].text):  # the rest is on this line, in glyphs the PDF cannot spell
            return True
        k = index + 1
        while k < len(lines) and lines[k].is_blank:
            k += 1
        if k >= len(lines):
            return False
        following = self._line(k)[0].chars
        n = min(len(rest), len(following))
        return n > 0 and rest[:n] == following[:n]


def place_bookmarks(doc: Document, entries: Sequence[tuple[int, str, int | None]]) -> dict[int, int]:
    """Clean line index -> heading level for the (depth, title, page) bookmarks that name a heading line.

    A bookmark counts when it points to a page and is placed there
    (``TitleFinder.find``) on a line short enough for a heading: one placed on
    a paragraph that merely begins with its title (a run-in heading) would make
    the paragraph a title. Depths beyond 10 are level 10; a line named by two
    bookmarks keeps the first.
    """
    finder = TitleFinder(doc)
    out: dict[int, int] = {}
    cursor = 0
    for depth, title, page in entries:
        index = finder.find(title, page, cursor) if page else None
        if index is None:
            continue
        cursor = index + 1
        if len(doc.lines[index].text.strip()) <= HEADING_CHARS and index not in out:
            out[index] = min(max(depth, 1), MAX_LEVEL)
    return out
