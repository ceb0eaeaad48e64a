"""PDF text extraction with PDFium (pypdfium2): the raw text and its visual lines.

What the raw text of a PDF is, exactly (``hichunk`` chunks are spans of it):

* Each page's text is PDFium's text of the page (``FPDFText_GetText``, content
  order) cut into lines at the line breaks PDFium generates. Where PDFium
  marks a word broken by a hyphen at a line end (it then drops the break and
  leaves U+FFFE in place of the hyphen), the line is cut there too and the
  hyphen is written back as ``-``. Control characters that fonts map glyphs
  to (TeX's copyright sign comes out as ``\\r``) become spaces, each line is
  stripped of surrounding whitespace, and empty lines are dropped. The lines
  of a page are joined with ``\\n``.
* Pages are joined with ``\\f``: an n-page PDF has n - 1 form feeds, and a
  page without text is the empty string between two of them.

So the same PDF always gives the same text, every line is ``text[start:end]``
of a ``TextLine`` and ``page_starts[i]`` is where page i + 1 begins.

Why only a few characters per line are inspected: every PDFium call goes
through ctypes (about 1 us each), so font size, weight and flags are read for
the first and last visible character of a line (and a middle one when those
two disagree) instead of for every character. That keeps extraction at a few
hundred pages per second.

Index caveats handled here: PDFium counts UTF-16 units, so a character outside
the BMP is two PDFium characters while Python counts one; and when PDFium's
text and character lists differ in length (characters it excluded or
inserted) indexes are translated with ``FPDFText_GetCharIndexFromTextIndex``.
"""

from __future__ import annotations

import ctypes
import math
import re
from dataclasses import dataclass, field
from typing import Any

BODY, FURNITURE, TOC = "body", "furniture", "toc"

_SUBSET = re.compile(rb"^[A-Z]{6}\+")
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi|medi|cmbx|cmb\d|cmssbx|-b$|,b$", re.I)
_ITALIC_NAME = re.compile(r"italic|oblique|cmti|cmsl|cmmi|cmssi|slant|-it$|-i$|,i$", re.I)
_MONO_NAME = re.compile(r"mono|courier|consol|inconsolata|cmtt|typewriter|menlo|lmtt|-tt$", re.I)
_LINE_BREAK = re.compile("\r\n|\ufffe")
# control characters (and the non-characters PDFium uses as markers) that may come from font mappings
_CONTROL = re.compile("[\x00-\x1f\x7f\ufffe\uffff]")
_FIXED_PITCH, _ITALIC_FLAG, _FORCE_BOLD = 0x1, 0x40, 0x40000


@dataclass(slots=True)
class TextLine:
    """One visual line of a page: its span in the raw text and what it looks like."""

    start: int  # raw offsets: text[start:end] is the line
    end: int
    page: int  # 1-based
    size: float  # effective font size in points (Tf size scaled by the text matrix)
    bold: bool
    italic: bool
    mono: bool  # a fixed-pitch font (code)
    x0: float  # left edge, points from the page's left
    x1: float  # right edge
    y: float  # baseline, points from the page's top (grows downwards)
    hyphen: bool = False  # ends with a hyphen that broke a word (PDFium's marker or the layout rule)
    role: str = BODY  # body | furniture (running heads, folios) | toc; set by layout analysis


@dataclass(slots=True)
class PdfText:
    """The extracted text of a PDF: raw text, visual lines in text order, page starts and sizes."""

    text: str
    lines: list[TextLine]
    page_starts: list[int]
    page_sizes: list[tuple[float, float]] = field(default_factory=list)  # (width, height) in points

    @property
    def n_pages(self) -> int:
        return len(self.page_starts)


class _Fonts:
    """Style of a character from its font, cached by (font name, flags, weight)."""

    def __init__(self, raw: Any):
        self.raw = raw
        self.name = ctypes.create_string_buffer(128)
        self.flags = ctypes.c_int()
        self.matrix = raw.FS_MATRIX()
        self.cache: dict[tuple[bytes, int, int], tuple[bool, bool, bool]] = {}

    def style(self, tp: Any, ci: int) -> tuple[float, bool, bool, bool]:
        """(size in points, bold, italic, mono) of character ``ci``."""
        raw = self.raw
        m = self.matrix
        raw.FPDFText_GetMatrix(tp, ci, m)
        size = raw.FPDFText_GetFontSize(tp, ci) * (math.sqrt(abs(m.a * m.d - m.b * m.c)) or 1.0)
        raw.FPDFText_GetFontInfo(tp, ci, self.name, 128, self.flags)
        key = (self.name.value, self.flags.value, raw.FPDFText_GetFontWeight(tp, ci))
        found = self.cache.get(key)
        if found is None:
            name = _SUBSET.sub(b"", key[0]).decode("latin-1")
            flags, weight = key[1], key[2]
            found = (
                weight >= 550 or bool(flags & _FORCE_BOLD) or bool(_BOLD_NAME.search(name)),
                bool(flags & _ITALIC_FLAG) or bool(_ITALIC_NAME.search(name)),
                bool(flags & _FIXED_PITCH) or bool(_MONO_NAME.search(name)),
            )
            self.cache[key] = found
        return (round(size, 2), *found)


class _PageReader:
    """Lines of one page's text page (PDFium handle) with sampled style and geometry."""

    def __init__(self, raw: Any, fonts: _Fonts):
        self.raw = raw
        self.fonts = fonts
        self.box = [ctypes.c_double() for _ in range(4)]
        self.ox, self.oy = ctypes.c_double(), ctypes.c_double()

    def page_text(self, tp: Any) -> tuple[str, list[int] | None, bool]:
        """The page's text, a Python-index -> UTF-16-unit table (None when they agree) and whether units are chars."""
        raw = self.raw
        n = raw.FPDFText_CountChars(tp)
        if n <= 0:
            return "", None, True
        buf = (ctypes.c_ushort * (2 * n + 1))()
        got = raw.FPDFText_GetText(tp, 0, n, buf)
        units = max(got - 1, 0)
        text = bytes(memoryview(buf)[:units]).decode("utf-16-le", "replace")
        table = None
        if len(text) != units:  # characters outside the BMP: two units each
            table, u = [], 0
            for ch in text:
                table.append(u)
                u += 2 if ord(ch) > 0xFFFF else 1
            table.append(u)
        return text, table, units == n

    def lines(self, tp: Any, top: float) -> list[tuple[str, tuple[float, bool, bool, bool], float, float, float, bool]]:
        """(line text, style, x0, x1, baseline from the top, ends with a hyphen marker) per visual line."""
        text, table, identity = self.page_text(tp)
        out = []
        seg = 0
        for m in [*_LINE_BREAK.finditer(text), None]:
            end = m.start() if m is not None else len(text)
            nxt = m.end() if m is not None else len(text)
            hyphen = m is not None and m.group() == "\ufffe"
            piece = _CONTROL.sub(" ", text[seg:end])
            body = piece.strip()
            if body:
                first = seg + len(piece) - len(piece.lstrip())
                last = seg + len(piece.rstrip()) - 1
                if hyphen and not body.endswith("-"):
                    body += "-"
                out.append((body, *self._sample(tp, text, table, identity, first, last, top), hyphen))
            seg = nxt
        return out

    def _char(self, tp: Any, table: list[int] | None, identity: bool, i: int) -> int:
        unit = table[i] if table is not None else i
        if identity:
            return unit
        return max(self.raw.FPDFText_GetCharIndexFromTextIndex(tp, unit), 0)

    def _sample(self, tp: Any, text: str, table: list[int] | None, identity: bool, first: int, last: int,
                top: float) -> tuple[tuple[float, bool, bool, bool], float, float, float]:
        """Style (median size and majority flags of up to three sampled characters) and geometry of a line."""
        raw, fonts = self.raw, self.fonts
        a = self._char(tp, table, identity, first)
        z = self._char(tp, table, identity, last)
        styles = [fonts.style(tp, a)]
        if z != a:
            styles.append(fonts.style(tp, z))
            if styles[0] != styles[1]:  # first and last disagree: a middle character breaks the tie
                mid = (first + last) // 2
                while mid < last and text[mid].isspace():
                    mid += 1
                styles.append(fonts.style(tp, self._char(tp, table, identity, mid)))
        k = len(styles)
        style = (sorted(s[0] for s in styles)[k // 2], *(sum(s[j] for s in styles) * 2 > k for j in (1, 2, 3)))
        left, right, bottom, up = self.box
        raw.FPDFText_GetCharBox(tp, a, left, right, bottom, up)
        x0 = left.value
        raw.FPDFText_GetCharBox(tp, z, left, right, bottom, up)
        x1 = right.value
        raw.FPDFText_GetCharOrigin(tp, a, self.ox, self.oy)
        return style, round(x0, 2), round(max(x1, x0), 2), round(top - self.oy.value, 2)


def extract_text(pdf: Any) -> PdfText:
    """The raw text and visual lines of an open ``pypdfium2.PdfDocument`` (see the module docstring)."""
    import pypdfium2.raw as raw

    reader = _PageReader(raw, _Fonts(raw))
    parts: list[str] = []
    lines: list[TextLine] = []
    page_starts: list[int] = []
    sizes: list[tuple[float, float]] = []
    pos = 0
    for index in range(len(pdf)):
        if index:
            parts.append("\f")
            pos += 1
        page_starts.append(pos)
        page = pdf[index]
        try:
            left, bottom, right, top = page.get_bbox()  # the visible box (crop box within media box)
            sizes.append((right - left, top - bottom))
            tp = page.get_textpage()
            try:
                page_lines = reader.lines(tp, top)
            finally:
                tp.close()
        finally:
            page.close()
        for k, (body, (size, bold, italic, mono), x0, x1, y, hyphen) in enumerate(page_lines):
            if k:
                parts.append("\n")
                pos += 1
            parts.append(body)
            lines.append(TextLine(pos, pos + len(body), index + 1, size, bold, italic, mono, x0 - left, x1 - left, y,
                                  hyphen))
            pos += len(body)
    return PdfText("".join(parts), lines, page_starts, sizes)
