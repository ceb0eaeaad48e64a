"""Layout analysis of paged text: body metrics, page furniture, table-of-contents lines, hyphenation.

Works on ``TextLine`` records (text spans with font size, weight and position),
so it does not depend on the PDF library. Everything is relative to the
document's own body text, found as the most common font size weighted by
characters: a heading is "larger than the body", a paragraph break is "more
space than the body's line step".

Furniture is what repeats in the page margins: running heads and feet, folios
("12", "iv", "Page 3 of 30"). Candidates are the two outermost lines at the top
and at the bottom of each page (an inner one only when the outer one is
furniture too), and one is taken when

* its text with numbers masked (digits, and Chinese numerals in "第四章") repeats at the same height on at least
  max(3, 20%) of the pages (running heads),
* it starts or ends with a number whose difference to the page index is the
  same, at the same height, on at least max(3, 10%) of the pages (texinfo heads
  such as "Chapter 3: Objects 15", whose text repeats only on a few pages), or
* it is the outermost line and a bare folio.

Running heads that carry the current chapter or section title ("CHAPTER 2.
GETTING STARTED 14", "2.3. Where to get it") vary from page to page, so the
first rule also compares them with the document's **titles masked**: a run of
words that is a heading title found elsewhere in the document (a line set
larger or bolder than the body, or two such lines in a row; numbers stripped,
case and width folded, a title cut short with an ellipsis too) reads as one
placeholder. (Bookmarks are not read here: layout analysis is the same whether
explicit structure is used or hidden.) A line that is nothing but titles counts this way only
when it is not set like a title: not bold, and less than ``TITLE_SIZE`` larger than the body
(bold labels such as "Usage" or "Examples" that open many pages are headings, not furniture;
a LaTeX package's documentation sets its running heads like its prose, a little larger than
its code listings, which are most of its text and so give the body size).

A page's outermost line made of titles and numbers, at the height and in the size
of running heads found on enough other pages, is one too (a chapter's first page
carries the chapter title alone where its other pages carry section and chapter).

The first two rules skip lines larger than the body (chapter titles open
pages at the same height, numbered in step with the pages) and bold inner
lines (section labels right under a running head).

Table-of-contents lines are lines that end in a page number after a dotted
leader; on a page with three or more of them, lines ending in a page number,
the page's "Contents" title and the first lines of wrapped entries count too.
Book indexes with leaders are caught the same way. Both kinds stay in the raw
text and are left out of the clean view.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from hichunk.document.pdftext import BODY, FURNITURE, TOC, TextLine
from hichunk.document.roles import TOC_TITLE, TRAILING_NUMBER, is_toc_entry
from hichunk.numbering import strip_heading_number
from hichunk.textnorm import fold

_DIGITS = re.compile(r"\d+")
# a chapter's number written in Chinese numerals ("第四章"), masked like digits so chapters share one running head
_ZH_ORDINAL = re.compile(r"(?<=第)\s*[零〇一二三四五六七八九十百千两]+(?=\s*(?:章|节|節|篇|部分|部|卷|编|編|回|课|課|讲|講))")
_FOLIO = re.compile(r"^(?:page\s*)?(?:\d{1,4}|[ivxlcdm]{1,7})(?:\s*(?:of|/)\s*\d{1,4})?$|^[-–—]\s*\d{1,4}\s*[-–—]$", re.I)
_CJK = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af"
# words (a CJK character is a word of its own), and the ellipsis that cuts a title short
_TOKENS = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+|…")
TITLE_SIZE = 1.12  # a line this much larger than the body (or bold) is a title that running heads may repeat
SENTENCE_END = (".", "!", "?", ":", "。", "！", "？", "：")
_HYPHENATED = re.compile(r"[^\W\d_]{2,}-$")
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
BAND = 0.2  # running heads and feet sit in the outer fifth of the page
SAME_HEIGHT = 2  # points of baseline difference still "at the same height"


@dataclass(frozen=True, slots=True)
class BodyMetrics:
    """The body text's font size, line step and margins, in points."""

    size: float
    leading: float  # baseline to baseline within a paragraph
    left: tuple[float, float]  # left margin of even and odd pages
    right: list[float]  # right edge of the text on each page (0-based page index)
    body_bold: bool = False  # most body text reads as bold (some fonts report a heavy weight for a regular face)

    def ratio(self, line: TextLine) -> float:
        return line.size / self.size

    def bold(self, line: TextLine) -> bool:
        """Bold relative to the body: when the body itself reads as bold, weight tells nothing."""
        return line.bold and not self.body_bold

    def indent(self, line: TextLine) -> float:
        """Left edge minus the page's left margin, in body font sizes."""
        return (line.x0 - self.left[line.page % 2]) / self.size


def _mode(values: list[float], weights: list[int] | None = None, default: float = 0.0) -> float:
    counts: Counter[float] = Counter()
    for i, v in enumerate(values):
        counts[v] += weights[i] if weights else 1
    # ties go to the smaller value, so the result never depends on input order
    return min(counts, key=lambda v: (-counts[v], v)) if counts else default


def body_metrics(lines: list[TextLine], n_pages: int) -> BodyMetrics:
    """Body size (the mode, weighted by printed width), line step (mode of body baseline steps) and margins.

    Measured on body lines in proportional fonts (code is often smaller than the text around it).
    """
    pool = [ln for ln in lines if ln.role == BODY and not ln.mono] or [ln for ln in lines if ln.role == BODY] or lines
    # weighted by printed width, not characters: a CJK character is twice as wide as a Latin one
    size = _mode([round(ln.size, 1) for ln in pool], [max(1, round(ln.x1 - ln.x0)) for ln in pool], 10.0) or 10.0
    body = [ln for ln in pool if abs(ln.size - size) <= 0.05 * size]
    steps = [round(b.y - a.y, 1) for a, b in zip(body, body[1:]) if a.page == b.page and 0.8 * size < b.y - a.y < 2.5 * size]
    leading = _mode(steps, default=1.2 * size) or 1.2 * size
    lefts: list[list[float]] = [[], []]
    for ln in body:
        lefts[ln.page % 2].append(round(ln.x0))
    everywhere = _mode(lefts[0] + lefts[1], default=0.0)
    left = (_mode(lefts[0], default=everywhere), _mode(lefts[1], default=everywhere))
    per_page: dict[int, list[float]] = defaultdict(list)
    for ln in body:
        per_page[ln.page].append(ln.x1)
    known = {p: max(xs) for p, xs in per_page.items() if len(xs) >= 3}
    fallback = sorted(known.values())[len(known) // 2] if known else max((ln.x1 for ln in lines), default=0.0)
    right = [known.get(p, fallback) for p in range(1, n_pages + 1)]
    body_bold = sum(ln.end - ln.start for ln in body if ln.bold) > 0.5 * sum(ln.end - ln.start for ln in body)
    return BodyMetrics(size, leading, left, right, body_bold)


def _number(token: str) -> int | None:
    """Value of a page-number token (arabic or roman), else None."""
    if token.isdecimal():
        return int(token) if len(token) <= 4 else None
    t = token.lower()
    if not t or len(t) > 7 or any(c not in _ROMAN for c in t):
        return None
    total = 0
    for a, b in zip(t, t[1:] + " "):
        v = _ROMAN[a]
        total += -v if b != " " and _ROMAN[b] > v else v
    return total


class _Heights:
    """On which pages a key occurs, by baseline height; counted within a couple of points of a height."""

    def __init__(self) -> None:
        self.bins: dict[tuple, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))

    def add(self, key: tuple, y: float, page: int) -> None:
        self.bins[key][round(y)].add(page)

    def count(self, key: tuple, y: float) -> int:
        bins = self.bins.get(key)
        if not bins:
            return 0
        at = round(y)
        return sum(len(bins.get(b, ())) for b in range(at - SAME_HEIGHT, at + SAME_HEIGHT + 1))


def _candidates(lines: list[TextLine], page_heights: list[float]) -> list[tuple[TextLine, str, int]]:
    """(line, band, rank from the page edge) for the two outermost lines at the top and bottom of each page."""
    by_page: dict[int, list[TextLine]] = defaultdict(list)
    for ln in lines:
        by_page[ln.page].append(ln)
    out = []
    for page, page_lines in by_page.items():
        height = page_heights[page - 1] or 792.0
        ordered = sorted(page_lines, key=lambda ln: ln.y)
        for rank in range(min(2, len(ordered))):
            if ordered[rank].y <= BAND * height:
                out.append((ordered[rank], "top", rank))
            low = ordered[-1 - rank]
            if len(ordered) - 1 - rank > rank and low.y >= (1 - BAND) * height:
                out.append((low, "bottom", rank))
    return out


def _tokens(s: str) -> tuple[str, ...]:
    """Words of a line as titles are compared: folded, lower case, every number one token "0"."""
    return tuple(_TOKENS.findall(_mask_numbers(fold(s).casefold().replace("...", "…"), "0")))


def _mask_numbers(s: str, mark: str) -> str:
    """``s`` with every number (digits, or a Chinese chapter numeral) as ``mark``."""
    return _ZH_ORDINAL.sub(mark, _DIGITS.sub(mark, s))


class TitleMask:
    """Heading titles of a document, to find in running heads; each title knows the lines it was read from."""

    def __init__(self) -> None:
        self.by_first: dict[str, dict[tuple[str, ...], set[int]]] = defaultdict(dict)

    def add(self, title: str, source: int) -> None:
        words = _tokens(strip_heading_number(title))
        if words and any(w != "0" for w in words):
            self.by_first[words[0]].setdefault(words, set()).add(source)

    def _length(self, words: tuple[str, ...], k: int, source: int) -> int:
        """Words of the longest title (from another line) at ``words[k:]``, a title cut by "…" included."""
        best = 0
        for title, sources in self.by_first.get(words[k], {}).items():
            if not sources - {source}:
                continue
            n = len(title)
            if words[k : k + n] == title:
                best = max(best, n)
                continue
            common = 0
            while common < n and k + common < len(words) and words[k + common] == title[common]:
                common += 1
            if common >= 2 and k + common < len(words) and words[k + common] == "…":
                best = max(best, common + 1)
        return best

    def mask(self, s: str, source: int) -> tuple[tuple[str, ...], bool] | None:
        """The line's words with each title in it as "<title>", and whether nothing else is left; None: no title."""
        words, out, k, found = _tokens(s), [], 0, False
        while k < len(words):
            n = self._length(words, k, source) if words[k] in self.by_first else 0
            out.append("<title>" if n else words[k])
            found = found or bool(n)
            k += n or 1
        if not found:
            return None
        return tuple(out), all(w in ("<title>", "0") for w in out)


def title_mask(text: str, lines: list[TextLine], metrics: BodyMetrics) -> TitleMask:
    """The titles running heads may carry: lines larger or bolder than the body (two such lines in a row
    also as one title)."""
    mask = TitleMask()
    heads = [(i, ln) for i, ln in enumerate(lines)
             if ln.role == BODY and ln.end - ln.start <= 120 and (metrics.ratio(ln) >= TITLE_SIZE or metrics.bold(ln))]
    for k, (i, ln) in enumerate(heads):
        mask.add(text[ln.start : ln.end], i)
        if k + 1 < len(heads):
            j, nxt = heads[k + 1]
            if (j == i + 1 and nxt.page == ln.page and abs(nxt.size - ln.size) < 0.5 and nxt.bold == ln.bold
                    and 0 < nxt.y - ln.y <= 2 * ln.size):
                mask.add(f"{text[ln.start : ln.end]} {text[nxt.start : nxt.end]}", i)
    return mask


def mark_furniture(text: str, lines: list[TextLine], page_heights: list[float], metrics: BodyMetrics) -> None:
    """Set ``role = FURNITURE`` on running heads, feet and folios (rules in the module docstring)."""
    n = len(page_heights)
    min_repeat = 2 if n <= 4 else max(3, math.ceil(0.2 * n))
    min_offset = 2 if n <= 4 else max(3, math.ceil(0.1 * n))
    repeats, offsets = _Heights(), _Heights()
    known = title_mask(text, lines, metrics)
    index = {id(ln): i for i, ln in enumerate(lines)}
    keys = []
    for ln, band, rank in _candidates(lines, page_heights):
        s = text[ln.start : ln.end]
        plain = metrics.ratio(ln) <= 1.15 and not (rank and metrics.bold(ln))
        key = (band, _mask_numbers(" ".join(fold(s).lower().split()), "#")) if plain else None
        masked = known.mask(s, index[id(ln)]) if plain and len(s) <= 200 else None
        if masked is not None:
            words, only_titles = masked
            quiet = metrics.ratio(ln) < TITLE_SIZE and not metrics.bold(ln)  # not set like a title
            masked = (band, "masked", words) if quiet or not only_titles else None
        numbered = []
        if plain and len(s) <= 120:  # longer lines with a leading number are footnotes
            tokens = fold(s).split()
            values = {_number(t) for t in {tokens[0], tokens[-1]}} - {None}
            numbered = [(band, v - ln.page) for v in values]
        if key is not None:
            repeats.add(key, ln.y, ln.page)
        if masked is not None:
            repeats.add(masked, ln.y, ln.page)
        for k in numbered:
            offsets.add(k, ln.y, ln.page)
        keys.append((ln, band, rank, key, masked, numbered))
    flagged: set[tuple[int, str, int]] = set()
    for ln, band, rank, key, masked, numbered in sorted(keys, key=lambda k: k[2]):
        if rank and (ln.page, band, rank - 1) not in flagged:
            continue  # move inwards only past furniture
        if ((key is not None and repeats.count(key, ln.y) >= min_repeat)
                or (masked is not None and repeats.count(masked, ln.y) >= min_repeat)
                or any(offsets.count(k, ln.y) >= min_offset for k in numbered)
                or (rank == 0 and _FOLIO.match(fold(text[ln.start : ln.end])))):
            ln.role = FURNITURE
            flagged.add((ln.page, band, rank))
    _fill_running_head_slots(keys, min_repeat)


def _fill_running_head_slots(keys: list[tuple], min_repeat: int) -> None:
    """A page's outermost line made of titles (and numbers), at the height and in the size of the running
    heads found on enough other pages, is a running head too: a chapter's first page carries the chapter
    alone ("3 使用说明") where its other pages carry section and chapter, so its words repeat too rarely."""
    slots = _Heights()
    for ln, band, rank, *_ in keys:
        if rank == 0 and ln.role == FURNITURE:
            slots.add((band, round(ln.size, 1)), ln.y, ln.page)
    for ln, band, rank, _, masked, _ in keys:
        if (rank == 0 and ln.role != FURNITURE and masked is not None
                and slots.count((band, round(ln.size, 1)), ln.y) >= min_repeat):
            ln.role = FURNITURE


def mark_toc(text: str, lines: list[TextLine]) -> None:
    """Set ``role = TOC`` on table-of-contents (and leader index) lines (rules in the module docstring)."""
    by_page: dict[int, list[int]] = defaultdict(list)
    for i, ln in enumerate(lines):
        if ln.role == BODY:
            by_page[ln.page].append(i)
    for idx in by_page.values():
        leaders = [i for i in idx if is_toc_entry(text[lines[i].start : lines[i].end])]
        for i in leaders:
            lines[i].role = TOC
        if len(leaders) < 3:
            continue
        for i in idx:
            s = text[lines[i].start : lines[i].end]
            if TRAILING_NUMBER.match(s) or TOC_TITLE.match(fold(s).strip()):
                lines[i].role = TOC
        for a, b in zip(idx, idx[1:]):  # first lines of entries wrapped over two lines
            s = text[lines[a].start : lines[a].end]
            if lines[a].role == BODY and lines[b].role == TOC and len(s) <= 120 and not s.endswith(SENTENCE_END):
                lines[a].role = TOC


def mark_hyphens(text: str, lines: list[TextLine]) -> None:
    """Flag lines ending in ``letters-`` followed by a body line that starts in lower case.

    PDFium already flags the hyphens it recognises; this catches the rest.
    """
    body = [ln for ln in lines if ln.role == BODY]
    for a, b in zip(body, body[1:]):
        if not a.hyphen and text[a.end - 1] == "-" and text[b.start].islower() and _HYPHENATED.search(text, a.start, a.end):
            a.hyphen = True


def analyse(text: str, lines: list[TextLine], page_heights: list[float]) -> BodyMetrics:
    """Mark TOC lines, furniture and hyphens; return the body metrics (measured on body text only).

    TOC lines go first so that long leader-dotted indexes cannot pass for the body text.
    """
    mark_toc(text, lines)
    mark_furniture(text, lines, page_heights, body_metrics(lines, len(page_heights)))
    mark_hyphens(text, lines)
    return body_metrics(lines, len(page_heights))
