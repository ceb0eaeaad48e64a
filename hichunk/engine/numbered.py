"""In a document whose sections carry numbers, a start without one below the top level is not a section.

A manual numbered "1", "1.1", "1.1.2" (or "第1章", "（一）", "Chapter 3") states its outline in
its numbers. Its short unnumbered lines under a numbered section are not more of that outline:
table rows and option names ("Setting", "Learning Cycles"), menu entries ("F11 设置全屏模式"),
definition terms and running labels. A model that reads one of them as a heading ends the real
section in the middle of its text. So once most starts of a document (at least
``MIN_NUMBERED`` and a share ``MIN_SHARE``) are numbered, the unnumbered starts below the
shallowest numbered level are dropped. That level and those above it keep theirs ("Preface",
"References", "Concept Index" beside numbered chapters; a manual's title above them), and so
does the opening chunk.

The other way round, a numbered line the model missed is found by the numbers around it: in text
without typography (plain text, Markdown with its markers hidden), a line that stands alone after a
blank line and opens with the number that comes next in the document's outline ("2.3 G3. Something
does not work ..." after a found "2.2", "2.1" under "2") starts a section on the level of the found
starts of its depth. Only outline numbers of two parts or more count ("1." is as often a list item),
and typeset documents are left to their typography (their run-in "4.4.1 Creation of objects. The
basic ..." is no bookmark). Model-agnostic, like the other document-level passes: it reads unit
texts, their layout and the levels already made consistent.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from hichunk.engine.outline import HEADING_CHARS, heading_style
from hichunk.protocol import LineLayout
from hichunk.textnorm import fold

MIN_NUMBERED = 3
MIN_SHARE = 0.6


def numbered_outline_only(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                          layout: Sequence[LineLayout] | None = None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) without unnumbered starts below the numbered top of a numbered document."""
    if not points:
        return points
    numbered = {u for u in points if _numbered(texts[u], layout[u] if layout else None)}
    if len(numbered) < MIN_NUMBERED or len(numbered) < MIN_SHARE * len(points):
        return points
    top = min(points[u][0] for u in numbered)
    return {u: v for u, v in points.items() if u in numbered or v[0] <= top or u == 0}


def _numbered(text: str, layout: LineLayout | None) -> bool:
    """Whether a line opens with a section number, however long it runs ("1.3 Question 2.3. What do I do if ...")."""
    return bool(heading_style(text.strip()[:HEADING_CHARS], layout).numbering)


_OUTLINE_NUMBER = re.compile(r"^(\d{1,3}(?:\.\d{1,3})+)\.?\s+\S")


def missed_outline_numbers(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                           layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """``points`` plus a titled start on every standalone line that continues the outline numbers found."""
    if layout is None or any(line.size != 1.0 or line.bold for line in layout):
        return points
    numbers = {u: n for u, text in enumerate(texts) if (n := _outline_number(text)) is not None}
    found = {u: numbers[u] for u, (_, title) in points.items() if title and u in numbers}
    levels: dict[int, Counter] = {}
    for u, n in found.items():
        levels.setdefault(len(n), Counter())[points[u][0]] += 1
    candidates = {u: n for u, n in numbers.items() if u not in points and len(n) in levels
                  and layout[u].blank_before and not layout[u].role and len(texts[u]) <= HEADING_CHARS * 2}
    out, have = dict(points), set(found.values())
    while True:
        expected = {n[:-1] + (n[-1] + 1,) for n in have} | {n + (1,) for n in have}
        new = {u: n for u, n in candidates.items() if u not in out and n in expected}
        if not new:
            return _missed_parents(out, found, texts, layout)
        for u, n in new.items():
            out[u] = (levels[len(n)].most_common(1)[0][0], True)
            have.add(n)


def _missed_parents(points: dict[int, tuple[int, bool]], found: dict[int, tuple[int, ...]], texts: Sequence[str],
                    layout: Sequence[LineLayout]) -> dict[int, tuple[int, bool]]:
    """``points`` plus the missed chapter line "N. Title" over a found "N.1": the first standalone line after the start
    before it that opens with "N" (a README's title "1. NexT" under its badges, over "1.1 目录"; its opening text
    may hold a numbered list).

    A one-part number is as often a list item, so only the line the found numbers name counts, and only where no
    line numbered "N+1" follows it before "N.1" (a list "1. ... 2. ..." in the text above)."""
    out = dict(points)
    for first_child, n in found.items():
        if len(n) != 2 or n[1] != 1 or points[first_child][0] < 2:
            continue
        above = max((u for u in points if u < first_child), default=-1)
        numbered = [(u, _chapter_number(texts[u])) for u in range(above + 1, first_child)]
        if any(m == n[0] + 1 for _, m in numbered):
            continue
        lines = [u for u, m in numbered if m == n[0] and layout[u].blank_before and not layout[u].role
                 and len(texts[u]) <= HEADING_CHARS]
        if lines:
            out[lines[0]] = (points[first_child][0] - 1, True)
    return out


_CHAPTER_NUMBER = re.compile(r"^(\d{1,3})\.?\s+\S")


def _chapter_number(text: str) -> int | None:
    """The one-part number a line opens with ("1. NexT" -> 1; "1.1 目录" -> None)."""
    m = _CHAPTER_NUMBER.match(fold(text).strip())
    return int(m[1]) if m else None


def _outline_number(text: str) -> tuple[int, ...] | None:
    """The outline number a line opens with, two parts or more ("2.3 G3. ..." -> (2, 3))."""
    m = _OUTLINE_NUMBER.match(fold(text).strip())
    return tuple(int(p) for p in m[1].split(".")) if m else None
