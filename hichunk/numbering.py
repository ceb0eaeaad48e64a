"""Heading numbering ("3.2.", "Chapter 3", "第2章", "（一）"...): detect it and strip it.

Numbered headings give a chunker an easy shortcut (the number says the level),
so training augmentation strips them to make a model read the content instead;
``number_pattern`` names the style as a feature. Both work on a heading's
title text, without the Markdown ``#`` marks.

Stripping never empties a title: a heading that is only a number ("Chapter 3",
"1.0") comes back unchanged; ``is_label`` tells such a label line apart (a
book's "Chapter 3" line whose title is on the next line).

Titles are read through ``hichunk.textnorm.fold``, so "第\u00a01\u00a0章",
"１．２" and "Chapter\u30003" are numbered like their plain spellings; the
patterns below are written for the folded text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from hichunk.textnorm import fold

_ZH_NUM = "零〇一二三四五六七八九十百千两"
_DIGITS = "0-9"
_SEP = r"\s"

# (name, pattern) in the order they are tried; each matches the numbering plus what follows it
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "zh-chapter",  # 第2章, 第三节, 第一部分, 第十二条
        re.compile(
            rf"^第{_SEP}*[{_DIGITS}{_ZH_NUM}]+{_SEP}*(?:章|节|節|篇|部分|部|条|條|款|回|卷|课|課|讲|講|编|編|集|单元|單元|期|册|冊)"
            rf"(?:{_SEP}*[:、.\-—]+)?{_SEP}*"
        ),
    ),
    ("zh-paren", re.compile(rf"^\({_SEP}*[{_ZH_NUM}]+{_SEP}*\){_SEP}*")),  # (一); （1） and （a） too, see _match
    ("zh-enum", re.compile(rf"^[{_ZH_NUM}]+{_SEP}*[、.:]{_SEP}*")),
    ("circled", re.compile(rf"^[\u2460-\u2473\u2776-\u277f]{_SEP}*")),
    (
        "chapter-word",  # Chapter 3, Section 2.1:, Part II, Appendix A -
        re.compile(
            r"^(?:chapter|section|part|appendix|lesson|unit|article|step|lecture|module|book|volume|vol\.)"
            rf"{_SEP}+(?:[{_DIGITS}]{{1,3}}(?:\.[{_DIGITS}]{{1,3}})*|[IVXLCDM]+|[ivxlcdm]+|[A-Z])\b"
            rf"(?:{_SEP}*[.:\-–—)]+)?{_SEP}*",
            re.I,
        ),
    ),
    ("section-sign", re.compile(rf"^§+{_SEP}*[{_DIGITS}]{{1,3}}(?:\.[{_DIGITS}]{{1,3}})*\.?{_SEP}*")),
    (
        "decimal",  # 3, 3.2, 3.2.1., 1)  1、 1: (followed by space, CJK, or a terminator)
        re.compile(
            rf"^[{_DIGITS}]{{1,3}}(?:\.[{_DIGITS}]{{1,3}})*"
            rf"(?:[.、):](?![{_DIGITS}]){_SEP}*|{_SEP}+|(?=[\u3400-\u9fff]))"
        ),
    ),
    ("paren", re.compile(rf"^\({_SEP}*(?:[{_DIGITS}]{{1,3}}|[a-zA-Z]|[ivxIVX]+){_SEP}*\){_SEP}*")),
    (
        "roman",
        re.compile(
            r"^(?=[IVXLCDM])M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})[.)]" + rf"{_SEP}+"
            r"|^(?=[ivxlcdm])m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})[.)]" + rf"{_SEP}+"
        ),
    ),
    ("letter", re.compile(rf"^[A-Za-z][.)]{_SEP}+")),
]


_LABEL_STYLES = ("zh-chapter", "chapter-word")
# what a label can begin with: a cheap test before the patterns
_LABEL_START = re.compile(r"\s*(?:第|chapter|section|part|appendix|lesson|unit|article|step|lecture|module|book|vol)", re.I)


def _combined(patterns: list[tuple[str, re.Pattern[str]]]) -> re.Pattern[str]:
    """One pattern trying every style in order (an alternation keeps the first that matches): one scan, not ten."""
    parts = []
    for k, (_, pattern) in enumerate(patterns):
        body = pattern.pattern
        flags = "i" if pattern.flags & re.I else ""
        parts.append(f"(?P<s{k}>(?{flags}:{body}))" if flags else f"(?P<s{k}>{body})")
    return re.compile("|".join(parts))


_ANY_STYLE = _combined(PATTERNS)


@lru_cache(maxsize=1 << 15)
def _match(title: str) -> tuple[str, int] | None:
    """(style, where the numbering ends) in ``title``; offsets hold in the original, fold keeps lengths."""
    folded = fold(title)
    text = folded.lstrip()
    offset = len(folded) - len(text)
    m = _ANY_STYLE.match(text)
    if not m or m.end() == 0:
        return None
    name = PATTERNS[int(m.lastgroup[1:])][0]
    if name == "paren" and title[offset] == "（":
        name = "zh-paren"  # full-width parentheses are the Chinese style, whatever they hold
    return name, offset + m.end()


def number_pattern(title: str) -> str | None:
    """Name of the numbering style that starts ``title`` (e.g. ``decimal``, ``zh-chapter``), or None."""
    found = _match(title)
    if not found:
        return None
    return found[0]


def is_label(title: str) -> bool:
    """Whether ``title`` is only a chapter-like label ("Chapter 3", "Part II", "Appendix A.", "第 1 章").

    Books often print such a label on its own line and the chapter's title on
    the next: together they are one heading.
    """
    if not _LABEL_START.match(fold(title)):
        return False
    found = _match(title)
    return found is not None and found[0] in _LABEL_STYLES and not title[found[1] :].strip(" .:-–—")


def strip_heading_number(title: str) -> str:
    """``title`` without its leading numbering; unchanged when nothing else would remain."""
    found = _match(title)
    if not found:
        return title
    rest = title[found[1] :].strip()
    return rest if rest else title
