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
  deeper than a smaller one;
* a numbered label ("Chapter 3", "第 3 章", "Appendix B") whose number opens the
  outline numbers that follow it ("3.1", "3.2.1", "B.1") is their depth 1: one level
  above depth 2, whatever levels the windows gave them, and wherever the labels
  end up once they nest under parts;
* across fonts too, nested outline depths ("2" then "2.1") and labels of one
  hierarchy (部分 > 章 > 节 > 条, Part > Chapter > Section, 一、 > （一）, I. > A.)
  get consecutive levels, placed where most of their headings already are;
* a depth-1 number between two deeper numbers of one chapter ("1." between
  "14.3.2" and "14.3.3") is an item of a list in that section: it nests one
  level below the section;
* appendix labels sit on the level of most chapter labels (unless parts are there);
* in typeset documents depth-1 numbers are level 1 (the title page is their
  sibling, as in PDF outlines) unless parts sit above them;
* the document's own top: wordless front matter (badges, a logo, contents) is a
  sibling of the top headings, the first heading after nothing but words (a
  preamble, an added sentence) is the title above the sections it was put
  beside, and no level is skipped.

Starts whose style says nothing (an unnumbered plain line, as in Markdown with
its markers hidden) keep the level the model gave them: there is no evidence to
overrule it with. Model-agnostic: it reads only unit texts, layouts and the
predicted (level, title) of each start. Texts are read through
``hichunk.textnorm.fold``: "第\u00a01\u00a0章" and "１．２" have the styles of
"第 1 章" and "1.2".
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from hichunk.document.model import MAX_LEVEL
from hichunk.numbering import number_pattern
from hichunk.protocol import LineLayout
from hichunk.textnorm import fold

HEADING_CHARS = 120  # longer lines have no heading style
TIER_RATIO = 1.1  # a heading type this much smaller than another is a deeper level (LaTeX, texinfo, DocBook: 1.2)
MIN_TIER = 2  # headings of a larger type before it is read as a parent tier
# "3", "3.2", "3.2.1." and appendix forms "A.1", "B.2.3" at the start of a line
_OUTLINE = re.compile(r"^\s*(?:[0-9]{1,3}|[A-Z](?=\.[0-9]))((?:\.[0-9]{1,3})*)\.?(?=\s|$|[\u3400-\u9fff])")
_ZH_UNIT = re.compile(r"^\s*第\s*[0-9零〇一二三四五六七八九十百千两]+\s*(章|节|節|篇|部分|部|编|編|卷|课|課|讲|講|条|條|款)")
# a label word counts with a number after it, or alone on its line: "Part II", "Chapter 3", "Appendix"; not "Part Program"
_WORD = re.compile(r"^\s*(chapter|part|appendix|section|book|volume|lesson|unit|article)"
                   r"(?=\s*[:.]?\s*$|\s+(?:[0-9]{1,3}|[ivxlcdm]+|[a-z]|one|two|three|four|five|six|seven|eight|nine|ten)\b)", re.I)
# "附录 A", "附录一", "附录" alone: an appendix label, the same style as "Appendix A"
_ZH_APPENDIX = re.compile(r"^\s*附[录錄](?=\s*:?\s*$|\s*(?:[0-9]{1,3}|[A-Za-z]|[一二三四五六七八九十]+)(?![A-Za-z]))")
# the number of a label heading: "Chapter 3", "Appendix B", "附录 B", "第3章", "第十二章"
_LABEL_NUMBER = re.compile(r"^\s*(?:(?:chapter|appendix|part|book|lesson|unit)\s+([0-9]{1,3}|[A-Z])\b"
                           r"|第\s*([0-9]{1,3}|[零〇一二三四五六七八九十百两]+)\s*[章篇部卷编]"
                           r"|附[录錄]\s*([0-9]{1,3}|[A-Z])(?![A-Za-z]))", re.I)
_OUTLINE_HEAD = re.compile(r"^\s*([0-9]{1,3}|[A-Z])\.[0-9]")
_ZH_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}


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
    found = _text_style(text)
    if found is None:
        return Style()
    numbering, depth, caps = found
    layout = layout or LineLayout()
    return Style(numbering, depth, layout.underline, round(layout.size * 20) / 20, layout.bold, caps)


@lru_cache(maxsize=1 << 14)
def _text_style(text: str) -> tuple[str, int, bool] | None:
    """What ``heading_style`` reads of the text: numbering, outline depth, all capitals (None: no style at all).
    Cached: the engine's passes ask again for the same lines, and so do later documents."""
    s = fold(text).strip()
    if not s or len(s) > HEADING_CHARS:
        return None
    numbering, depth = "", 0
    m = _OUTLINE.match(s)
    if m:
        numbering, depth = "outline", 1 + m.group(1).count(".")
    elif (zh := _ZH_UNIT.match(s)) is not None:
        numbering = f"zh-{zh.group(1)}"
    elif (word := _WORD.match(s)) is not None:
        numbering = f"word-{word.group(1).lower()}"
    elif _ZH_APPENDIX.match(s):
        numbering = "word-appendix"
    else:
        numbering = number_pattern(s) or ""
        if numbering == "roman" and s[0] in "CDLMcdlm" and not s[1:2].isalpha():
            numbering = "letter"  # "C." follows "B.": no document numbers its sections 100, 500, 50, 1000
    alpha = [c for c in s if c.isascii() and c.isalpha()]
    caps = len(alpha) >= 3 and all(c.isupper() for c in alpha)
    return numbering, depth, caps


_SENTENCE_END = (".", "。", "!", ";", ",", ":")  # on folded text: "！" reads "!"; a question may be a title


def title_shaped(text: str, layout: LineLayout | None = None) -> bool:
    """Whether a line can be a chunk's title: a whole line, short, not a sentence of running text.

    A model may start a chunk at body text (a paragraph that opens a topic);
    such a chunk has no title, so body text never enters a breadcrumb. A
    question on a line of its own is a title (FAQs are made of them). Nor is
    markup a title: a line of nothing but HTML tags, images or addresses
    (``<div align="right">`` above a README's badges) may open a chunk, but it
    names nothing, and front matter made of it stays beside the top headings.
    """
    s = fold(text).strip()
    if not s or len(s) > HEADING_CHARS or _only_markup(s):
        return False
    if layout is not None and not (layout.starts_line and layout.ends_line):
        return False
    return not (s.endswith(_SENTENCE_END) and _word_count(s) > 8)


def _only_markup(text: str) -> bool:
    """Whether nothing alphanumeric is left once tags, images and addresses are removed ("2.3.1" is left);
    on a line of a hard-wrapped file a tag may begin or end off the line (``<p align="center"><a``)."""
    return not any(c.isalnum() for c in _TAG_PIECE.sub(" ", _TAG_OR_URL.sub(" ", _IMAGE.sub(" ", text))))


def _word_count(text: str) -> int:
    """Words of a line; for text with CJK or other non-ASCII, two characters count as one word."""
    return len(text.split()) if text.isascii() else len(text.strip()) // 2


def _zh_number(text: str) -> int | None:
    """A Chinese numeral below 1000 ("十二" 12, "二十" 20, "一百零三" 103) as an int."""
    total, digit = 0, None
    for c in text:
        if c in _ZH_DIGITS:
            digit = _ZH_DIGITS[c]
        elif c in "十百":
            total += (1 if digit is None else digit) * (10 if c == "十" else 100)
            digit = None
        else:
            return None
    return total + (digit or 0)


def label_number(text: str) -> str | None:
    """The number a label heading carries, normalised ("Chapter 3" and "第三章" give "3"; "Appendix B" gives "B")."""
    m = _LABEL_NUMBER.match(fold(text))
    if not m:
        return None
    if m.group(1) or m.group(3):
        return (m.group(1) or m.group(3)).upper()
    value = m.group(2)
    number = int(value) if value.isdigit() else _zh_number(value)
    return None if number is None else str(number)


def _labels_over_outlines(styles: dict[int, Style], texts: Sequence[str]) -> dict[Style, Style]:
    """Label styles whose numbers open the outline numbers after them -> the shallowest outline style they open.

    A label style qualifies when most outline headings that follow one of its members
    (up to the next member) start with that member's number.
    """
    found: dict[Style, tuple[int, int, Style | None]] = {}
    current: tuple[Style, str] | None = None
    for unit in sorted(styles):
        style, text = styles[unit], texts[unit]
        number = label_number(text) if style.numbering.startswith(("zh-", "word-")) else None
        if number is not None:
            current = (style, number)
            continue
        if current is None or style.numbering != "outline":
            continue
        head = _OUTLINE_HEAD.match(fold(text))
        label, number = current
        hits, total, top = found.get(label, (0, 0, None))
        opens = bool(head and head.group(1).upper() == number)
        top = style if opens and (top is None or style.depth < top.depth) else top
        found[label] = (hits + opens, total + 1, top)
    return {label: top for label, (hits, total, top) in found.items()
            if top is not None and hits / total >= 0.6 and top.depth >= 2}


def _follow_label(level: dict[Style, int], label: Style, top: Style) -> None:
    """Outline numbers from depth ``top.depth`` down move so that ``top`` sits just below ``label``."""
    shift = level[label] + 1 - level[top]
    for s in level:
        if s.numbering == "outline" and s.depth >= top.depth:
            level[s] += shift


def _most(evidence: Sequence[bool]) -> bool:
    """Whether most of the evidence (at least 60%) holds."""
    return bool(evidence) and sum(evidence) / len(evidence) >= 0.6


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


def _smaller_type_deeper(typeset: Sequence[Style], level: dict[Style, int], members: dict[Style, list[int]]) -> None:
    """Headings in a clearly smaller type go below those of the nearest clearly larger type that recurs after them.

    The monotone fit lets two sizes share a level, and a model that reads
    words more than type often puts a DocBook or LaTeX manual's sections and
    subsections (17 and 14 pt) on one level. Typeset documents give each
    level its own size, so a size at least ``TIER_RATIO`` smaller goes at least
    one level below the shallowest heading of the nearest larger size, when
    that size has ``MIN_TIER`` headings and one of them comes after the smaller
    size's first heading: its chapters recur between the sections, while a
    title page's large lines all come before them and are no parent tier.
    """
    sizes = sorted({s.size for s in typeset}, reverse=True)
    units = {size: sorted(u for s in typeset if s.size == size for u in members[s]) for size in sizes}
    for i, size in enumerate(sizes):
        first = units[size][0]
        for larger in reversed(sizes[:i]):
            if size * TIER_RATIO <= larger and len(units[larger]) >= MIN_TIER and units[larger][-1] > first:
                top = min(level[s] for s in typeset if s.size == larger)
                for s in typeset:
                    if s.size == size:
                        level[s] = max(level[s], top + 1)
                break


def consistent_levels(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                      layouts: Sequence[LineLayout] | None = None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with the levels of titled starts made consistent by style."""
    points = _questions_beside_questions(_navigation_untitled(points, texts), texts)
    styles: dict[int, Style] = {}
    for unit, (_, title) in points.items():
        if title:
            style = heading_style(texts[unit], layouts[unit] if layouts else None)
            if style.informative:
                styles[unit] = style
    if not styles:
        return _without_level_gaps(_front_matter_beside_the_top(_opening_title_above(dict(points), styles, texts, layouts),
                                                                texts, layouts))
    items = _items_inside_sections(styles, texts)
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

    nested = _nest_outline_depths(level, styles, texts)

    # a label whose number opens the outline numbers under it ("Chapter 2" over "2.1") sits just above them;
    # the numbers of every depth from there down move with them. Where those numbers nest under shallower
    # ones ("1." over "1.1"), the label ("Appendix A" over "A.1") is a sibling of the shallower ones instead.
    opened: dict[Style, Style] = {}
    for label, top in _labels_over_outlines(styles, texts).items():
        parents = [level[s] for s in styles.values() if s.numbering == "outline" and s.depth == top.depth - 1]
        # beside numbered chapters an appendix label is a chapter; a few stray numbers ("2 a sin(x)") among
        # forty "Chapter N" labels are no chapters beside them
        if top.depth in nested and len(parents) >= sum(1 for x in styles.values() if x == label):
            level[label] = _majority(parents)
            continue
        level[label] = max(1, min(level[label], level[top] - 1))
        opened[label] = top
        _follow_label(level, label, top)

    _nest_labels(level, styles)
    for label, top in opened.items():  # a label nested under a part takes the numbers it opens along
        _follow_label(level, label, top)
    _nest_restarting_numbers(level, styles, texts)

    # an appendix is a chapter: "Appendix A" and "附录 A" go where most chapter labels ("Chapter 3", "第 3 章") are,
    # or without chapter labels where most chapter numbers ("3 Output of entire files", a texinfo manual's) are;
    # not beside parts (a book's appendices are often the parts' siblings), nor on one lone "Chapter 13" line
    chapters = [level[s] for s in styles.values() if s.numbering in ("word-chapter", "zh-章")]
    if not chapters:
        chapters = [level[s] for s in styles.values() if s.numbering == "outline" and s.depth == 1]
    if len(chapters) >= 2 and not any(s.numbering in _PART_LABELS for s in styles.values()):
        for s in level:
            if s.numbering == "word-appendix":
                level[s] = _majority(chapters)

    # and a clearly smaller type deeper, once the numbers have nested (they may lift the larger type instead)
    if len(typeset) > 1:
        _smaller_type_deeper(typeset, level, members)
    out = dict(points)
    for style, units in members.items():
        for u in units:
            out[u] = (min(max(level[style], 1), MAX_LEVEL), True)
    if layouts is not None and any(lay.size != 1.0 for lay in layouts):
        out = _typeset_top_level(out, {u: s for u, s in styles.items() if u not in items})
    else:
        out = _opening_title_above(out, styles, texts, layouts)
    return _without_level_gaps(_front_matter_beside_the_top(_nest_items(out, items), texts, layouts))


def _questions_beside_questions(points: dict[int, tuple[int, bool]], texts: Sequence[str]) -> dict[int, tuple[int, bool]]:
    """A question heading is never the parent of the next question: an FAQ's entries are siblings.

    A windowed model reading a long FAQ with its markers hidden may put each question a little
    deeper than the one before (levels 2, 3, 4 for entries of one list); a titled question
    right after another titled question (no other heading between) takes at most its level.
    """
    out = dict(points)
    previous: int | None = None  # level of the last titled start when it was a question
    for unit in sorted(points):
        level, title = out[unit]
        if not title:
            continue
        if fold(texts[unit]).rstrip().endswith("?"):
            if previous is not None and level > previous:
                out[unit] = (level := previous, True)
            previous = level
        else:
            previous = None
    return out


def _outline_parts(text: str) -> tuple[str, ...]:
    m = _OUTLINE.match(fold(text))
    return tuple(m.group(0).strip().rstrip(".").split(".")) if m else ()


def _items_inside_sections(styles: dict[int, Style], texts: Sequence[str]) -> set[int]:
    """Depth-1 numbers between two deeper numbers of one chapter ("1." to "22." between "14.3.2" and "14.3.3").

    A chapter's number comes before its sections' numbers, so once "14 Expansion"
    (or "Chapter 14") has opened chapter 14, a "1." found between "14.3.2" and
    "14.3.3" is an item of a numbered list inside that section (the rules of an
    algorithm, the steps of a procedure), not a chapter: it must not end chapter 14
    (nor count as a chapter of a typeset book). A "15." or "14." there is left
    alone: chapter 15 with a stray "14.73" of running text after it, or a slide's
    navigation line repeating "14.1 ... 14".
    """
    deep = sorted(u for u, s in styles.items()
                  if s.numbering == "outline" and s.depth >= 2 and any(c.isalpha() for c in texts[u]))
    opened: dict[str, int] = {}
    for u in sorted(styles):
        s = styles[u]
        number = _outline_parts(texts[u])[0] if s.numbering == "outline" and s.depth == 1 else (
            label_number(texts[u]) if s.numbering.startswith(("zh-", "word-")) else None)
        if number is not None:
            opened.setdefault(number, u)
    items = set()
    for u, s in styles.items():
        if s.numbering != "outline" or s.depth != 1:
            continue
        i = bisect.bisect(deep, u)
        if not 0 < i < len(deep):
            continue
        chapter, number = _outline_parts(texts[deep[i - 1]])[0], _outline_parts(texts[u])[0]
        if (chapter == _outline_parts(texts[deep[i]])[0] and opened.get(chapter, u) < deep[i - 1]
                and number != chapter and not _is_next(chapter, number)):
            items.add(u)
    return items


def _is_next(chapter: str, number: str) -> bool:
    """Whether ``number`` follows ``chapter`` ("5" after "4", "B" after "A")."""
    if chapter.isdigit() and number.isdigit():
        return int(number) == int(chapter) + 1
    return len(chapter) == len(number) == 1 and ord(number) == ord(chapter) + 1


def _nest_items(points: dict[int, tuple[int, bool]], items: set[int]) -> dict[int, tuple[int, bool]]:
    """Each list item one level below the titled start before it (the section that holds the list)."""
    out = dict(points)
    parents = sorted(p for p, (_, title) in points.items() if title and p not in items)
    for u in items:
        i = bisect.bisect(parents, u)
        if i:
            out[u] = (min(out[parents[i - 1]][0] + 1, MAX_LEVEL), True)
    return out


def _as_key(parts: tuple[str, ...]) -> tuple:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


def _nest_outline_depths(level: dict[Style, int], styles: dict[int, Style], texts: Sequence[str]) -> set[int]:
    """Across font sizes and weights: outline depth d + 1 sits one level below depth d where the numbers nest.

    The per-family rule above cannot see that a 14-pt "2" heads the 11-pt "2.1"
    under it; the numbers can. Depth d + 1 nests in depth d when most of its
    headings extend the number of the depth-d heading before them ("2.1" after "2").
    Returns the depths that nest in the one above them.
    """
    last: dict[int, tuple[str, ...]] = {}
    nests: dict[int, list[bool]] = defaultdict(list)
    for u in sorted(styles):
        if styles[u].numbering != "outline" or not any(c.isalpha() for c in texts[u]):
            continue  # "0.6" or "1.2" alone is a value, not a heading: no evidence either way
        parts, d = _outline_parts(texts[u]), styles[u].depth
        if d - 1 in last:  # "3.1" after "2" nests too: its "3" was not predicted
            nests[d].append(_as_key(parts[:-1]) >= _as_key(last[d - 1]))
        last[d] = parts
        for deeper in [k for k in last if k > d]:
            del last[deeper]
    _chain_levels(level, styles, lambda s: s.depth if s.numbering == "outline" else None,
                  lambda d: d - 1, lambda d: nests.get(d, []))
    return {d for d, v in nests.items() if _most(v)}


# label hierarchies: 部分 / 篇 above 章 above 节 above 条; Part above Chapter above Section; 一、 above （一）;
# "I." above "A." (outline letters); numbers that restart under another style's headings: ``_nest_restarting_numbers``
_LABEL_RANKS = {"zh-卷": 0, "zh-部分": 1, "zh-部": 1, "zh-篇": 1, "zh-编": 1, "zh-編": 1, "zh-章": 2, "zh-节": 3,
                "zh-節": 3, "zh-条": 4, "zh-條": 4, "zh-款": 5, "word-volume": 0, "word-book": 0, "word-part": 1,
                "word-chapter": 2, "word-section": 3, "zh-enum": 10, "zh-paren": 11, "roman": 20, "letter": 21}


def _nest_labels(level: dict[Style, int], styles: dict[int, Style]) -> None:
    """Labelled headings of one hierarchy nest: "第一节" sits one level below "第1章", "Chapter" below "Part".

    A deeper label nests when most of its headings come after one of the label just above it.
    """
    first: dict[int, int] = {}
    for u in sorted(styles):
        rank = _LABEL_RANKS.get(styles[u].numbering)
        if rank is not None:
            first.setdefault(rank, u)
    ranks = sorted(first)
    above = {r: q for q, r in zip(ranks, ranks[1:]) if r // 10 == q // 10}  # within one hierarchy
    after = {r: [u > first[above[r]] for u in styles if _LABEL_RANKS.get(styles[u].numbering) == r] for r in above}
    _chain_levels(level, styles, lambda s: _LABEL_RANKS.get(s.numbering), above.get, lambda r: after.get(r, []))


# numberings that count 1, 2, 3 (or 一, 二; A, B; I, II; ①, ②) and may restart under each heading of another style
_SEQUENCE_STYLES = {"outline", "decimal", "zh-enum", "zh-paren", "paren", "letter", "roman", "circled"}
_SEQUENCE_TOKEN = re.compile(r"^\s*\(?\s*([0-9]{1,3}|[零〇一二三四五六七八九十百两]+|[A-Za-z]+|[\u2460-\u2473\u2776-\u277f])")
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}


def _sequence_number(style: Style, text: str) -> int | None:
    """The count a sequence-numbered heading carries ("3." 3, "（三）" 3, "C." 3, "III." 3, "③" 3), else None."""
    if style.numbering not in _SEQUENCE_STYLES or (style.numbering == "outline" and style.depth != 1):
        return None
    m = _SEQUENCE_TOKEN.match(fold(text))
    if not m:
        return None
    token = m.group(1)
    if token.isdigit() and token.isascii():
        return int(token)
    if style.numbering == "circled":
        code = ord(token)
        return code - 0x245F if code <= 0x2473 else code - 0x2775
    if style.numbering == "roman":
        values = [_ROMAN.get(c.lower(), 0) for c in token]
        return sum(-v if k + 1 < len(values) and v < values[k + 1] else v for k, v in enumerate(values)) or None
    if style.numbering == "letter" and len(token) == 1:
        return ord(token.upper()) - 64
    return _zh_number(token) if not token.isascii() else None


def _nest_restarting_numbers(level: dict[Style, int], styles: dict[int, Style], texts: Sequence[str]) -> None:
    """Numbers that count from 1 again under each heading of another style are that style's items.

    Reports and outlines number their third rank plainly: "一、" > "（一）" > "1.",
    "I." > "A." > "1.", "第一节" > "一、". When most headings of a sequence-numbered
    style carry the count of their style since the last heading of another
    style (restarting at 1 under two or more of them, or under one that comes
    again after the run: "F." with "1." to "9.", then "G."), they sit one level
    below it; the windows often put them beside it. Plain numbers with deeper
    outline numbers in the document ("1." over "1.1") head their own outline and
    are left to the outline rules.
    """
    numbers = {u: n for u, st in styles.items() if (n := _sequence_number(st, texts[u])) is not None}
    deep_outline = any(st.numbering == "outline" and st.depth > 1 for st in styles.values())
    units: dict[Style, list[int]] = defaultdict(list)
    for u in sorted(styles):
        units[styles[u]].append(u)
    for child in sorted({styles[u] for u in numbers}, key=lambda st: (level[st], st.numbering, st.depth)):
        if child.numbering == "outline" and deep_outline:
            continue
        parents = []
        for parent in (st for st in units if st != child):
            evidence, restarts, since, last_parent, last_child = [], 0, None, -1, -1
            for u in sorted(units[parent] + [u for u in units[child] if u in numbers]):
                if styles[u] == parent:
                    since, last_parent = 0, u
                else:
                    evidence.append(since is not None and numbers[u] == since + 1)
                    restarts += since == 0 and numbers[u] == 1
                    since = None if since is None else since + 1
                    last_child = u
            if _most(evidence) and (restarts >= 2 or (restarts == 1 and last_parent > last_child)):
                parents.append(parent)
        if parents:
            parent = max(parents, key=lambda st: level[st])  # the nearest rank above: the deepest that qualifies
            if level[child] <= level[parent]:
                level[child] = level[parent] + 1


def _chain_levels(level: dict[Style, int], styles: dict[int, Style], rank_of, parent_of, evidence) -> None:
    """Give ranks that nest consecutive levels, placed where most of their headings already are.

    ``rank_of(style)``: the style's rank in a hierarchy (None: not in it); ``parent_of(rank)``: the rank just
    above it; ``evidence(rank)``: per heading, whether it nests under its parent rank (most must). One lone
    "1." at a doubtful level does not move a hundred "1.x" the model placed with confidence.
    """
    votes: dict[int, Counter] = defaultdict(Counter)
    for style in styles.values():
        rank = rank_of(style)
        if rank is not None:
            votes[rank][level[style]] += 1
    runs: list[list[int]] = []
    for rank in sorted(votes):
        v = evidence(rank)
        if runs and parent_of(rank) == runs[-1][-1] and _most(v):
            runs[-1].append(rank)
        else:
            runs.append([rank])
    for run in (r for r in runs if len(r) > 1):
        bases = range(1, MAX_LEVEL - len(run) + 2)
        base = max(bases, key=lambda b: (sum(votes[r][b + i] for i, r in enumerate(run)), -b))
        place = {r: base + i for i, r in enumerate(run)}
        for s in level:
            if rank_of(s) in place:
                level[s] = place[rank_of(s)]


def _typeset_top_level(points: dict[int, tuple[int, bool]], styles: dict[int, Style]) -> dict[int, tuple[int, bool]]:
    """In a typeset document, the chapters are level 1, unless a part is above them.

    A typeset document's title page is not a section: PDF outlines and the
    tables of contents of typeset books start at the first chapter or section,
    so the opening chunk (title, authors, abstract) is a sibling of "1 Introduction",
    not its parent. The chapters are the top-level outline numbers ("1", "2", ...)
    when at least two exist, else the chapter labels ("Chapter 1", "第 1 章"; "第 1 节"
    where a document has no 章: an article's sections) when at least two exist.
    Titled starts among them labelled "Part" (the opening one too), or two or more set in a
    larger font (the opening title aside), are parts: they go one level above the chapters
    instead, and nothing is shifted; so does a start already above them. Chapter labels
    with other headings on their own level are left alone. Appendix labels after the first
    chapter go on the chapters' level.
    """
    top = _typeset_chapters(points, styles)
    if not top:
        return points
    level, size = points[top[0]][0], max(styles[u].size for u in top)
    opening = min(points)
    bigger = [u for u in styles if opening < u < top[-1] and u not in top and styles[u].size > size]
    parts = [u for u in styles if opening <= u < top[-1] and styles[u].numbering in _PART_LABELS]
    parts += bigger if len(bigger) >= 2 else []
    later = [u for u in points if u > top[0] and points[u][1] and u not in top]
    if parts or any(points[u][0] < level for u in later):
        out = dict(points)
        for u in parts:
            out[u] = (max(1, min(out[u][0], level - 1)), True)
        return out
    if styles[top[0]].numbering != "outline" and any(points[u][0] == level for u in later):
        return points  # labels beside other headings ("第 1 节" beside "2.1") are no evidence of the top
    out = {u: (max(1, lv - level + 1), title) for u, (lv, title) in points.items()}
    for u in later:  # an appendix is a chapter: "Appendix A GNU Free Documentation License" beside "9 Issues"
        if styles.get(u, Style()).numbering == "word-appendix":
            out[u] = (1, True)
    return out


_CHAPTER_LABELS = ({"word-chapter", "zh-章"}, {"zh-节", "zh-節"})  # 节 heads the document only where it has no 章


def _typeset_chapters(points: dict[int, tuple[int, bool]], styles: dict[int, Style]) -> list[int]:
    """The units of a typeset document's chapters: two or more depth-1 outline numbers, else two or more
    chapter labels of the shallowest kind present; none when neither is there. Depth-1 numbers set smaller
    than deeper ones ("2.1" larger than "1.") are a list or a licence appendix's clauses, not chapters."""
    outline = sorted(u for u, s in styles.items() if s.numbering == "outline" and s.depth == 1 and u in points)
    if len(outline) >= 2:
        size = max(styles[u].size for u in outline)
        if not any(s.numbering == "outline" and s.depth > 1 and s.size > size for s in styles.values()):
            return outline
    for kinds in _CHAPTER_LABELS:
        labels = sorted(u for u, s in styles.items() if s.numbering in kinds and u in points)
        if labels:
            return labels if len(labels) >= 2 else []
    return []


def _opening_title_above(points: dict[int, tuple[int, bool]], styles: dict[int, Style], texts: Sequence[str],
                         layouts: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """The document's first heading, on or below the level of the headings after it and in no shared
    numbering, is its title: it goes one level above them ("LOADKEYS" over "NAME", "SYNOPSIS", ...).

    The first heading is the first titled start when only words come before it (a preamble, a sentence
    added at the top: the tree does not change with it); after wordless front matter (badges, a logo,
    a contents block) see ``_front_matter_beside_the_top``. A first heading numbered like the ones after
    it ("第一部分" before "第二部分") stays their sibling, and so does one on level 1 beside unnumbered
    level-1 headings (nothing tells a title from a first section there; an unnumbered first heading
    beside numbered "1", "2" is their title). Not for typeset documents, whose title page is
    a sibling of their top headings.
    """
    first = min((u for u, (_, title) in points.items() if title), default=None)
    if first is None or (first and not _has_words(texts[:first], layouts)):
        return points
    level, numbering = points[first][0], styles.get(first, Style()).numbering
    others = [u for u, (lv, title) in points.items() if u > first and title]
    top = min((points[u][0] for u in others), default=level + 1)
    numbered_top = not numbering and any(styles.get(u, Style()).numbering for u in others if points[u][0] == top)
    if level < top or (level == top == 1 and not numbered_top):
        return points
    if numbering and any(styles.get(u, Style()).numbering == numbering for u in others):
        return points
    if top > 1:
        return points | {first: (top - 1, True)}
    return {u: (lv + 1 if u > first else lv, title) for u, (lv, title) in points.items()} | {first: (1, True)}


_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TAG_OR_URL = re.compile(r"<[A-Za-z/!][^<>]*>|https?://\S+")  # a tag may run over lines: "<img\nsrc=...>"
_TAG_PIECE = re.compile(r"<[A-Za-z/!][^<>]*$|^[^<>]*[\"']\s*/?>|^\s*/?>")  # the part of a tag on a line where it begins or ends


_BULLET = re.compile(r"^\s*[-*+\u2022]\s+")
_ENTITY = re.compile(r"&(?:[A-Za-z]{2,8}|#[0-9]{1,6}|#x[0-9A-Fa-f]{1,6});")
_HTML_LINE = re.compile(r"^\s*<[A-Za-z][^<>]*>.*</[A-Za-z][A-Za-z0-9]*>\s*$")  # an element opened and closed on one line


def _has_words(texts: Sequence[str], layouts: Sequence[LineLayout] | None) -> bool:
    """Whether lines say something: words left once markup, badges and links are removed, no TOC or aside
    role, and more than a navigation entry ("- Table of Contents", "- Next Chapter": a bullet of a few words).

    Markup is removed from the lines joined, so a tag that a hard-wrapped file breaks over lines
    (``<p align="center"><a`` / ``href="..."><img`` / ``alt="stars" /></a>``) is still markup. So are
    entities (``&nbsp;``) and whole-line HTML elements: a README's centred banner
    (``<h1 align="center">Vant</h1>``, a tagline in ``<p>``) names the project above the Markdown, and the
    first heading after it is a section beside the others, not their title. So are navigation lines
    (``is_navigation``).
    """
    kept = [t for i, t in enumerate(texts)
            if not (layouts is not None and layouts[i].role) and not _HTML_LINE.match(t) and not is_navigation(t)]
    joined = _ENTITY.sub(" ", _TAG_OR_URL.sub(" ", _LINK.sub(r"\1", _IMAGE.sub(" ", "\n".join(kept)))))  # a badge: an image in a link
    for words in joined.split("\n"):
        if (bullet := _BULLET.match(words)) and _word_count(words[bullet.end():]) <= 4:
            continue
        if any(c.isalpha() for c in words):
            return True
    return False


_NAV_SEPARATOR = re.compile(r"\s[|\u00b7\u2022]\s")  # "Home | About", "English · 简体中文"


def is_navigation(text: str) -> bool:
    """Whether a line is a navigation bar: two or more short links or labels between separators ("Back to
    Fetchmail Home Page | $Date$", a README's "English | 简体中文 | 日本語"), not a table row (no edge bar)."""
    s = text.strip()
    if s.startswith("|") or s.endswith("|"):
        return False
    parts = _NAV_SEPARATOR.split(_LINK.sub(r"\1", s))
    return len(parts) >= 2 and all(0 < _word_count(p) <= 5 for p in parts)


def _navigation_untitled(points: dict[int, tuple[int, bool]], texts: Sequence[str]) -> dict[int, tuple[int, bool]]:
    """A start on a navigation line may open a chunk, but it is no heading: it has no title and no level of
    its own, so it cannot stand above a document's real headings."""
    return {u: (lv, title and not is_navigation(texts[u])) for u, (lv, title) in points.items()}


def _front_matter_beside_the_top(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                                 layouts: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """Wordless front matter (badges, a logo, a table of contents) is a sibling of the top headings.

    The opening chunk is level 1 by construction. When it holds no words of its
    own (markup, images, links, TOC entries) and every titled start was put
    deeper, the tree would hang the whole document under the front matter;
    instead the shallowest titled starts move up to level 1 and the rest with them.
    """
    first = min((u for u, (_, title) in points.items() if title), default=None)
    if not first or (_has_words(texts[:first], layouts) and (_may_be_a_title(texts[0], layouts[0] if layouts else None)
                                                             or _opens_the_numbers(points, texts, layouts, first))):
        return points
    titled = [lv for u, (lv, title) in points.items() if title]
    shift = min(titled) - 1
    if shift <= 0:
        return points
    return {u: (max(1, lv - shift), title) for u, (lv, title) in points.items()}


def _may_be_a_title(text: str, layout: LineLayout | None) -> bool:
    """Whether a document's first line could be its title (a short standalone line, not a TOC or aside line)."""
    return not (layout is not None and layout.role) and title_shaped(text, layout)


def _opens_the_numbers(points: dict[int, tuple[int, bool]], texts: Sequence[str], layouts: Sequence[LineLayout] | None,
                       first: int) -> bool:
    """Whether a line before the first titled start is numbered above every titled start ("1. NodeJieba" over
    "1.1", "1.2"): a heading the model missed, the parent of what follows, not front matter."""
    depths = [heading_style(texts[u]).depth for u, (_, title) in points.items() if title]
    top = min((d for d in depths if d), default=0)
    return top > 1 and any(heading_style(texts[u]).depth and heading_style(texts[u]).depth < top
                           and _may_be_a_title(texts[u], layouts[u] if layouts else None) for u in range(first))


_PART_LABELS = {"word-part", "word-book", "word-volume", "zh-部分", "zh-部", "zh-篇", "zh-编", "zh-編", "zh-卷"}


def _without_level_gaps(points: dict[int, tuple[int, bool]]) -> dict[int, tuple[int, bool]]:
    """Renumber levels so that none is skipped (1, 3, 4 become 1, 2, 3): the same tree, told in its own depths.

    The opening chunk counts: it has the level of a start on the first unit, else level 1.
    """
    used = sorted({lv for lv, _ in points.values()} | ({1} if 0 not in points else set()))
    rank = {lv: i + 1 for i, lv in enumerate(used)}
    return {u: (rank[lv], title) for u, (lv, title) in points.items()}
