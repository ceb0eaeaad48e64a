"""reStructuredText: section titles from adornments, everything else kept as written.

A section title is a line of text with an underline, and optionally an
overline, made of one repeated punctuation character. As in docutils, the level
of a title is the order in which its style - (character, has overline) - first
appears in the document. In the clean view the title becomes
``'#' * level + ' ' + title``; the adornment lines are folded into it, so the
heading's raw span runs from the overline (or the title) through the underline.

What is never a title: indented lines (literal blocks after ``::``, directive
and comment bodies, block quotes all are indented, and docutils does not allow
sections inside them), explicit markup lines (``.. x``), a title line that does
not start a paragraph, and transitions (a lone adornment line between blank
lines). An underline shorter than its title counts only when it is at least
four characters long (docutils warns but accepts it); an overline must match
its underline.

Other lines are copied unchanged: inline markup is not rendered, so the clean
view loses nothing.
"""

from __future__ import annotations

import re
import unicodedata

from hichunk.document.cleanview import CleanBuilder
from hichunk.document.markdown import BOM, split_raw_lines
from hichunk.document.model import MAX_LEVEL, Document

_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1*[ \t]*$")


def _width(text: str) -> int:
    """Display width as docutils counts it (East Asian wide characters count two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _adornment(line: str) -> str | None:
    """The adornment character of a column-0 adornment line, or None."""
    if not line.rstrip() or not _ADORNMENT.match(line):
        return None
    return line[0]


def _is_blank(line: str) -> bool:
    return not line.strip()


def _title_ok(title: str, under: str, overline: bool) -> bool:
    text = title.strip() if overline else title.rstrip()
    if not text or text.startswith(".. ") or text == "..":
        return False
    if not overline and title[:1] in (" ", "\t"):
        return False
    if _adornment(title) is not None and not overline:
        return False
    length = len(under.rstrip())
    return length >= _width(text) or length >= 4


def find_titles(lines: list[str]) -> dict[int, tuple[int, int, tuple[str, bool]]]:
    """Title line index -> (first raw line index, last raw line index, style)."""
    titles: dict[int, tuple[int, int, tuple[str, bool]]] = {}
    n = len(lines)
    i = 0
    prev_blank = True  # start of document counts as a blank line before
    while i < n:
        line = lines[i]
        char = _adornment(line)
        # overline + title + underline
        if char is not None and prev_blank and i + 2 < n:
            title, under = lines[i + 1], lines[i + 2]
            if (
                _adornment(under) == char
                and under.rstrip() == line.rstrip()
                and _title_ok(title, under, overline=True)
            ):
                titles[i + 1] = (i, i + 2, (char, True))
                i += 3
                prev_blank = True
                continue
        # title + underline
        if not _is_blank(line) and prev_blank and i + 1 < n:
            under = lines[i + 1]
            uchar = _adornment(under)
            if uchar is not None and _title_ok(line, under, overline=False):
                titles[i] = (i, i + 1, (uchar, False))
                i += 2
                prev_blank = True
                continue
        prev_blank = _is_blank(line)
        i += 1
    return titles


def parse_rst(text: str, name: str = "<text>") -> Document:
    """reST: heading hints from section adornments; the rest of the text as is."""
    skip = 1 if text.startswith(BOM) else 0
    spans = [(s + skip, e + skip) for s, e in split_raw_lines(text[skip:])]
    lines = [text[s:e] for s, e in spans]
    titles = find_titles(lines)
    levels: dict[tuple[str, bool], int] = {}
    folded = set()
    for first, last, _ in titles.values():
        folded.update(range(first, last + 1))
    b = CleanBuilder(text)
    for i, (s, e) in enumerate(spans):
        if i in titles:
            first, _last, style = titles[i]
            level = levels.setdefault(style, min(len(levels) + 1, MAX_LEVEL))
            line_start = spans[first][0]
            b.new_line(line_start if b.started else 0, level)
            raw_line = text[s:e]
            lead = len(raw_line) - len(raw_line.lstrip())
            body = raw_line.strip()
            b.insert("#" * level + " ", line_start)
            b.copy(s + lead, s + lead + len(body))
        elif i in folded:
            continue
        else:
            b.new_line(s if b.started else 0)
            b.copy(s, e)
    return b.finish(name, "rst")
