"""The clean view of a paged document: visual lines reflowed into paragraphs.

Why reflow: a PDF line is a line of print, not of meaning. Sentences never
cross clean lines, and models read layout from blank lines, so each paragraph
becomes one clean line with a blank line before the next, like the Markdown
our models learned from. Body lines only: furniture and TOC lines are left
out (they stay in the raw text, inside the span of the text around them).

Line ``b`` continues the paragraph of the line ``a`` before it when both have
the same size, weight and pitch, and

* ``b`` sits on ``a``'s baseline, to its right (a line PDFium cut in two), or
* ``b`` is one body line step (scaled to the font) below ``a``; ``a`` was
  full: it reaches the right margin, or ``b``'s first word would not have fit
  after it (ragged-right text); a short line ends its paragraph, except in
  lines larger than the body (multi-line headings); ``b`` is not a bullet; and
  ``b`` starts where ``a`` does (the paragraph's first line may be indented,
  a bullet item's continuation may hang to the right), or
* ``b`` opens the next page, ``a`` closed the previous one full, and either ``a`` ends in a hyphen before a lower-case ``b`` or ``a`` ends
  without sentence punctuation and ``b`` is not indented.

Fixed-pitch lines (code) are never joined; consecutive ones stay on
consecutive clean lines without a blank line between them.

Joins: a space, none between CJK characters, none after a hyphen. A hyphen
that broke a word is dropped when the next line starts in lower case
("exam-" + "ple" -> "example"); otherwise it stays ("S-" + "Plus" -> "S-Plus").

Offsets: paragraph text is copied from the raw text, so cuts inside it are
exact; a cut before a page's first paragraph lands at the page start, so the
page's running head travels with the text below it and every chunk's page
range starts where its text does.
"""

from __future__ import annotations

import re

from hichunk.document.cleanview import CleanBuilder
from hichunk.document.layout import SENTENCE_END, BodyMetrics
from hichunk.document.model import Document, LineStyle
from hichunk.document.pdftext import BODY, PdfText, TextLine

_BULLET = re.compile(r"^(?:[•◦▪▫‣∙●○■□►▸➢✓*]|[-–—](?=\s))\s*")
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\uac00-\ud7af]")
_SAME_SIZE = 0.06  # relative size difference still read as the same font size
_INDENT = 0.5  # ems of horizontal slack between the lines of a paragraph
_HANG = 4.0  # ems a bullet item's continuation may hang right of the bullet

NEW, SPACE, TIGHT, DEHYPHEN = "new", "space", "tight", "dehyphen"


class _Reflow:
    def __init__(self, pdf: PdfText, metrics: BodyMetrics):
        self.text = pdf.text
        self.metrics = metrics

    def s(self, line: TextLine) -> str:
        return self.text[line.start : line.end]

    def step(self, line: TextLine) -> float:
        """Baseline step of a paragraph in this line's font."""
        return self.metrics.leading * self.metrics.ratio(line)

    def full(self, a: TextLine, b: TextLine) -> bool:
        """True when ``a`` had to break before ``b``: it reaches the right margin, or ``b``'s first word would not fit."""
        m = self.metrics
        limit = m.right[a.page - 1] - 1.5 * m.size  # glyph widths vary: the estimate below is rough
        sb = self.s(b)
        word = 1 if _CJK.match(sb) else len(sb.split(None, 1)[0])
        width = (b.x1 - b.x0) / len(sb) * (word + 1)  # the word and a space, at b's average character width
        return a.x1 + width >= limit

    def join(self, a: TextLine, b: TextLine, first: TextLine) -> str:
        """How ``b`` follows ``a`` (``first``: the first line of ``a``'s paragraph)."""
        if a.mono or b.mono or a.bold != b.bold or abs(a.size - b.size) > _SAME_SIZE * max(a.size, b.size):
            return NEW
        sa, sb = self.s(a), self.s(b)
        if a.page == b.page:
            step, dy = self.step(a), b.y - a.y
            if abs(dy) < 0.3 * step and b.x0 >= a.x1 - 1:
                return self.separator(a, sa, sb)
            if not 0.5 * step <= dy <= 1.2 * step or _BULLET.match(sb):
                return NEW
            if not a.hyphen and self.metrics.ratio(a) < 1.1 and not self.full(a, b):
                return NEW
            em = self.metrics.size
            if a is first:
                hang = _HANG if _BULLET.match(sa) else _INDENT
                ok = b.x0 <= a.x0 + hang * em
            else:
                ok = abs(b.x0 - a.x0) <= _INDENT * em
            return self.separator(a, sa, sb) if ok else NEW
        if b.page != a.page + 1 or not self.full(a, b) or _BULLET.match(sb):
            return NEW
        if a.hyphen and sb[:1].islower():
            return DEHYPHEN
        if not sa.endswith(SENTENCE_END) and abs(self.metrics.indent(b)) <= _INDENT:
            return self.separator(a, sa, sb)
        return NEW

    @staticmethod
    def separator(a: TextLine, sa: str, sb: str) -> str:
        if a.hyphen:
            return DEHYPHEN if sb[:1].islower() else TIGHT
        if _CJK.match(sa[-1]) and _CJK.match(sb[0]):
            return TIGHT
        return SPACE

    def paragraphs(self, lines: list[TextLine]) -> list[tuple[list[TextLine], list[str]]]:
        """Body lines grouped into paragraphs, each with the joins between its lines."""
        out: list[tuple[list[TextLine], list[str]]] = []
        for line in lines:
            if out:
                group, joins = out[-1]
                how = self.join(group[-1], line, group[0])
                if how != NEW:
                    group.append(line)
                    joins.append(how)
                    continue
            out.append(([line], []))
        return out

    def style(self, line: TextLine, above: TextLine | None) -> LineStyle:
        m = self.metrics
        gap = 0.0
        if above is not None and above.page == line.page and line.y > above.y:
            gap = max(0.0, (line.y - above.y - self.step(line)) / m.leading)
        return LineStyle(page=line.page, size=round(m.ratio(line), 2), bold=m.bold(line), italic=line.italic,
                         indent=round(m.indent(line), 2), gap=round(gap, 2))


def reflow(pdf: PdfText, metrics: BodyMetrics, name: str, fmt: str = "pdf") -> Document:
    """The Document of a paged text: raw = the extracted text, clean = its body paragraphs (module docstring)."""
    r = _Reflow(pdf, metrics)
    builder = CleanBuilder(pdf.text)
    above: TextLine | None = None
    for group, joins in r.paragraphs([ln for ln in pdf.lines if ln.role == BODY]):
        first = group[0]
        same_page = above is not None and above.page == first.page
        at = first.start if same_page else pdf.page_starts[first.page - 1]
        code_run = same_page and above.mono and first.mono and 0 < first.y - above.y <= 1.5 * r.step(first)
        if builder.started and not code_run:
            builder.new_line(at)  # the blank line between paragraphs
        builder.new_line(at, style=r.style(first, above))
        for k, line in enumerate(group):
            end = line.end - 1 if k < len(joins) and joins[k] == DEHYPHEN else line.end
            builder.copy(line.start, end)
            if k < len(joins) and joins[k] == SPACE:
                builder.insert(" ", group[k + 1].start)
        above = group[-1]
    doc = builder.finish(name, fmt)
    doc.page_starts = list(pdf.page_starts)
    return doc
