"""A paged document's bookmarks (a PDF's outline) placed on the clean lines they name.

A bookmark gives a title, a depth and a page; the text gives lines. A bookmark
is placed on the first line, in reading order from the previous placed
bookmark, on its page or the next, whose text begins the title (or that the
title begins, for titles cut at a line end), compared without case, width,
spaces and punctuation, and with or without heading numbers on either side: an
outline often names "Introduction" where the page prints "1.1 Introduction", or
"C Platform notes" where it prints "Appendix C Platform notes" (an appendix's
section numbers, "A.2" or "C.3.10", count as heading numbers here).
When the line found is a title under a label line ("Chapter 1" above
"Introduction"), the bookmark goes on the label: the heading starts there.

The same placement builds the ground truth of real PDFs for training and
benchmarks (``hichunk.models.train.corpus.truth``) and, in ``hichunk.document.pdf``,
the explicit headings that ``--hints use`` trusts.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from hichunk.document.model import MAX_LEVEL, Document
from hichunk.document.roles import HEADING_CHARS, heading_continuation
from hichunk.numbering import strip_heading_number

_NOISE = re.compile(r"[\W_]+", re.UNICODE)
# an appendix's section number ("A.2", "C.3.10"), which heading numbering leaves alone (a lone "A" is a word)
_APPENDIX_NUMBER = re.compile(r"^\s*[A-Z](?:\.[0-9]{1,3})+\.?\s+(?=\S)")
_APPENDIX_LABEL = re.compile(r"^\s*(?:appendix|附录|附錄)\s*(?=\S)", re.I)
MIN_PREFIX = 4  # a line must give at least this much of a title to be its first line


def norm_title(text: str) -> str:
    """A title as placement compares it: NFKC, case-folded, only letters and digits."""
    return _NOISE.sub("", unicodedata.normalize("NFKC", text).casefold())


def bare_title(text: str) -> str:
    """``norm_title`` of the text without its heading number ("1.1", "Chapter 2", "A.2")."""
    return norm_title(_APPENDIX_NUMBER.sub("", strip_heading_number(text), count=1))


def _begins(line: str, title: str) -> bool:
    return bool(line) and (line.startswith(title) or (title.startswith(line) and len(line) >= min(len(title), MIN_PREFIX)))


class TitleFinder:
    """Finds where titles begin among a document's clean lines (each line's compared forms computed once)."""

    def __init__(self, doc: Document):
        self.doc = doc
        self._forms: dict[int, tuple[str, str]] = {}

    def _line(self, i: int) -> tuple[str, str, str]:
        """A line as compared: whole, without its number, and without an "Appendix" word before its letter."""
        forms = self._forms.get(i)
        if forms is None:
            text = self.doc.lines[i].text
            forms = self._forms[i] = (norm_title(text), bare_title(text), norm_title(_APPENDIX_LABEL.sub("", text, count=1)))
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

    def find(self, title: str, page: int | None, start: int = 0) -> int | None:
        """Index of the line where ``title``, bookmarked on ``page`` (1-based; None: anywhere), begins,
        searching from line ``start`` (rules in the module docstring)."""
        whole, bare = norm_title(title), bare_title(title)
        if not whole:
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
            if _begins(line_whole, whole) or _begins(line_bare, bare) or _begins(line_unlabelled, whole):
                return self._label_above(i)
        return None


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
