"""A document's own table of contents names its headings: a line it names is a section start.

Manuals and theses print a table of contents: "1 绪论 ........ 1", "2.3 Where to get
it .... 14". Its entries never start a section themselves (``hichunk.document.roles``),
but each one names a heading of the document, and a model that reads a window of the
body may miss that heading (a template's chapter titles, set large, with little text
under them). Once the windows are read, a whole line shaped like a title whose words
(numbers, leaders and page numbers set aside, case and width folded) are those of a
contents entry, and appear on no other line of the body, starts a titled section. Its
level is that of the starts already found in its style (numbering, type), or of the
titled start before it; the document-level level passes that follow see it like any
other start. Model-agnostic: it reads the entries, unit texts and layouts only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence

from hichunk.document.model import Document
from hichunk.document.roles import is_toc_entry, toc_lines
from hichunk.engine.outline import heading_style, title_shaped
from hichunk.protocol import LineLayout
from hichunk.textnorm import fold

_PAGE_TAIL = re.compile(r"(?:\s*(?:\. ?){2,}|\s*[·‧⋯…_]+|\s{2,}|\s)\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*$", re.I)
_NUMBER_HEAD = re.compile(r"^\s*(?:(?:chapter|part|appendix|section)\s+)?(?:[0-9]{1,3}|[A-Z])(?:\.[0-9]{1,3})*\.?\s+", re.I)
_ZH_HEAD = re.compile(r"^\s*第\s*[0-9零〇一二三四五六七八九十百]+\s*[章节節篇部]\s*")
MIN_TITLE_CHARS = 2
FRONT_SHARE = 0.15  # contents pages open a document; indexes close it
FRONT_PAGES = 10  # a short thesis's cover, declarations and abstracts come first and may fill more than that share


def entry_words(text: str, entry: bool = False) -> str:
    """What a heading and its contents entry (``entry``: leader and page number dropped too) share: the title
    without its number, case and width folded."""
    s = fold(text).strip()
    s = _PAGE_TAIL.sub("", s) if entry else s
    s = _ZH_HEAD.sub("", _NUMBER_HEAD.sub("", s, count=1), count=1)
    return " ".join(s.split()).casefold()


def front_end(doc: Document) -> int:
    """Raw offset where a document's front (where its contents pages are) ends: the first ``FRONT_SHARE`` of
    its text, or of a paged document its first ``FRONT_PAGES`` pages when they are longer, up to half the text
    (the back half holds the indexes)."""
    share = int(len(doc.text) * FRONT_SHARE)
    if not doc.page_starts:
        return share
    pages = doc.page_starts[FRONT_PAGES] if len(doc.page_starts) > FRONT_PAGES else len(doc.text)
    return max(share, min(pages, len(doc.text) // 2))


def contents_titles(doc: Document, toc: set[int] | None = None) -> frozenset[str]:
    """The titles a document's table of contents lists (empty without one): leader entries in the document's
    front (``front_end``: a PDF's contents pages are left out of its clean view; an index at the back, leaders
    and all, lists terms, not headings) and the plain-text contents lines there (``toc``: the document's
    ``toc_lines`` when the caller has them already)."""
    front = front_end(doc)
    raw = {entry_words(line, entry=True) for line in doc.text[:front].splitlines()
           if len(line) <= 240 and line.strip()[-1:].isalnum() and is_toc_entry(line)}
    plain = {entry_words(doc.lines[i].text, entry=True) for i in (toc_lines(doc) if toc is None else toc)
             if doc.lines[i].clean_start < front and _PAGE_TAIL.search(fold(doc.lines[i].text))}  # entries, not the title
    return frozenset(t for t in raw | plain if len(t) >= MIN_TITLE_CHARS)


def starts_on_contents_titles(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                              layout: Sequence[LineLayout] | None,
                              titles: Collection[str]) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with a titled start on each body line a contents entry names once."""
    if not titles or layout is None:
        return points
    words = [entry_words(t) if layout[u].starts_line and layout[u].ends_line and not layout[u].role else ""
             for u, t in enumerate(texts)]
    seen = Counter(words)
    named = [u for u, w in enumerate(words) if w in titles and seen[w] == 1 and u not in points
             and title_shaped(texts[u], layout[u])]
    if not named:
        return points
    out = dict(points)
    by_style: dict = {}
    for u, (level, title) in points.items():
        if title:
            by_style.setdefault(heading_style(texts[u], layout[u]), []).append(level)
    for u in named:
        levels = by_style.get(heading_style(texts[u], layout[u]))
        if levels:
            level = Counter(levels).most_common(1)[0][0]
        else:
            before = [v for v in out if v < u and out[v][1]]
            level = out[max(before)][0] if before else 1
        out[u] = (level, True)
    return out
