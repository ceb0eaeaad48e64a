"""Heading levels that hold over the whole document, whatever window a heading was predicted in.

A windowed model judges a heading's level from what its window shows, so the
same heading style can come out level 2 in one window and level 3 in the next.
Documents are consistent: every "2.1"-style heading is one level, every
"Chapter N" line another, every 14-pt bold line another. This pass groups the
predicted title starts of a whole document by *style* (numbering kind and
outline depth, chapter words and CJK units such as 章/节, the underline rule of
plain text, relative font size and weight, all capitals), gives each group the
level most of its members were predicted at, and then orders the groups:

* outline numbers are authoritative about depth: within one numbering family,
  depth d + 1 sits exactly one level below depth d;
* in typeset documents a larger (or, at equal size, bolder) heading is never
  deeper than a smaller one.

Starts whose style says nothing (an unnumbered plain line, as in Markdown with
its markers hidden) keep the level the model gave them: there is no evidence to
overrule it with. Model-agnostic: it reads only unit texts, layouts and the
predicted (level, title) of each start. Texts are read through
``hichunk.textnorm.fold``: "第\u00a01\u00a0章" and "１．２" have the styles of
"第 1 章" and "1.2".
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from hichunk.document.model import MAX_LEVEL
from hichunk.numbering import number_pattern
from hichunk.protocol import LineLayout
from hichunk.textnorm import fold

HEADING_CHARS = 120  # longer lines have no heading style
# "3", "3.2", "3.2.1." and appendix forms "A.1", "B.2.3" at the start of a line
_OUTLINE = re.compile(r"^\s*(?:[0-9]{1,3}|[A-Z](?=\.[0-9]))((?:\.[0-9]{1,3})*)\.?(?=\s|$|[\u3400-\u9fff])")
_ZH_UNIT = re.compile(r"^\s*第\s*[0-9零〇一二三四五六七八九十百千两]+\s*(章|节|節|篇|部分|部|编|編|卷|课|課|讲|講|条|條|款)")
_WORD = re.compile(r"^\s*(chapter|part|appendix|section|book|volume|lesson|unit|article)\b", re.I)


@dataclass(frozen=True, slots=True)
class Style:
    """What a heading looks like, apart from its words."""

    numbering: str = ""  # "outline", "zh-章", "word-chapter", "zh-enum", ... ("" none)
    depth: int = 0  # outline depth for outline numbers ("2.1" is 2)
    underline: str = ""
    size: float = 1.0  # relative font size, rounded
    bold: bool = False
    caps: bool = False

    @property
    def informative(self) -> bool:
        return bool(self.numbering or self.underline or self.size != 1.0 or self.bold or self.caps)

    @property
    def family(self) -> tuple:
        """The style without its outline depth: depths of one family nest."""
        return (self.numbering, self.underline, self.size, self.bold, self.caps)


def heading_style(text: str, layout: LineLayout | None = None) -> Style:
    """The style of a heading line (model-input text and its layout)."""
    s = fold(text).strip()
    if not s or len(s) > HEADING_CHARS:
        return Style()
    numbering, depth = "", 0
    m = _OUTLINE.match(s)
    if m:
        numbering, depth = "outline", 1 + m.group(1).count(".")
    elif (zh := _ZH_UNIT.match(s)) is not None:
        numbering = f"zh-{zh.group(1)}"
    elif (word := _WORD.match(s)) is not None:
        numbering = f"word-{word.group(1).lower()}"
    else:
        numbering = number_pattern(s) or ""
    alpha = [c for c in s if c.isascii() and c.isalpha()]
    caps = len(alpha) >= 3 and all(c.isupper() for c in alpha)
    layout = layout or LineLayout()
    return Style(numbering, depth, layout.underline, round(layout.size * 20) / 20, layout.bold, caps)


_SENTENCE_END = (".", "。", "!", ";", ",", ":")  # on folded text: "！" reads "!"; a question may be a title


def title_shaped(text: str, layout: LineLayout | None = None) -> bool:
    """Whether a line can be a chunk's title: a whole line, short, not a sentence of running text.

    A model may start a chunk at body text (a paragraph that opens a topic);
    such a chunk has no title, so body text never enters a breadcrumb. A
    question on a line of its own is a title (FAQs are made of them).
    """
    s = fold(text).strip()
    if not s or len(s) > HEADING_CHARS:
        return False
    if layout is not None and not (layout.starts_line and layout.ends_line):
        return False
    words = len(s.split()) if s.isascii() else len(s) // 2
    return not (s.endswith(_SENTENCE_END) and words > 8)


def _majority(levels: Sequence[int]) -> int:
    """The most frequent level; a tie goes to the shallower one."""
    counts = Counter(levels)
    return min(counts, key=lambda lv: (-counts[lv], lv))


def _monotone(groups: list[tuple[float, int]]) -> list[float]:
    """Non-decreasing fit (pool adjacent violators) of group levels in the given order, weighted by size."""
    blocks: list[list[float]] = []  # [weighted sum, weight, members]
    for level, weight in groups:
        blocks.append([level * weight, float(weight), 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, w, n = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += w
            blocks[-1][2] += n
    out: list[float] = []
    for s, w, n in blocks:
        out += [s / w] * int(n)
    return out


def consistent_levels(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                      layouts: Sequence[LineLayout] | None = None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with the levels of titled starts made consistent by style."""
    styles: dict[int, Style] = {}
    for unit, (_, title) in points.items():
        if title:
            style = heading_style(texts[unit], layouts[unit] if layouts else None)
            if style.informative:
                styles[unit] = style
    if not styles:
        return dict(points)
    members: dict[Style, list[int]] = defaultdict(list)
    for unit, style in styles.items():
        members[style].append(unit)
    level = {style: _majority([points[u][0] for u in units]) for style, units in members.items()}

    # typeset documents: bigger (then bolder) headings are never deeper
    typeset = sorted((s for s in level if s.size != 1.0 or s.bold), key=lambda s: (-s.size, -s.bold))
    if len(typeset) > 1:
        fitted = _monotone([(level[s], len(members[s])) for s in typeset])
        for s, value in zip(typeset, fitted):
            level[s] = max(1, round(value))

    # outline numbers: within a family, each depth is exactly one level below the previous one present
    families: dict[tuple, list[Style]] = defaultdict(list)
    for s in level:
        if s.numbering == "outline":
            families[s.family].append(s)
    for chain in families.values():
        chain.sort(key=lambda s: s.depth)
        for shallow, deep in zip(chain, chain[1:]):
            level[deep] = level[shallow] + (deep.depth - shallow.depth)

    out = dict(points)
    for style, units in members.items():
        for u in units:
            out[u] = (min(max(level[style], 1), MAX_LEVEL), True)
    return out
