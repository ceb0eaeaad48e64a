"""Small PDF writer for tests: a flowing book layout with known structure, built with reportlab.

``build_book`` lays out a title page, a table of contents with dotted leaders,
chapters (Helvetica-Bold 18) with sections (Helvetica-Bold 13) and wrapped
Times-Roman paragraphs that flow across pages, long words hyphenated at line
ends, an optional Chinese chapter in the built-in CID font STSong-Light, a
running head and a "Page N" foot on every page, and bookmarks. With
``heads="titles"`` the running heads carry the current titles instead, as
typeset books set them: "Chapter N. <chapter title>" on even pages,
"<section number and title>" on odd ones, none on a page that opens a chapter.
It returns the bytes and what was drawn (``Book``), so tests compare
extraction with the truth.
``nonbmp_pdf`` writes a one-page PDF by hand whose text holds a character
outside the BMP (reportlab's standard fonts cannot). Output is deterministic.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field

WIDTH, HEIGHT = 595.0, 842.0
MARGIN = 72.0
HEAD = "Hichunk Test Manual"
BODY_FONT, BODY_SIZE, LEADING = "Times-Roman", 11.0, 14.0
HEADING_SIZES = {1: 18.0, 2: 13.0}
WORDS = ("chunk tree leaf level model window split point retrieval budget merge parent child token "
         "sentence heading section paragraph").split()
LONG_WORDS = ("segmentation representation hierarchical configuration documentation "
              "implementation classification").split()
ZH_SENTENCES = ["层次分块把文档切成章节和段落。", "每个叶子块最多包含两百个词元。", "检索时自动合并兄弟块到父节点。",
                "模型根据内容推断文档的结构。", "页眉和页脚不会进入干净视图。"]


@dataclass
class Book:
    """What ``build_book`` drew: the truth the tests check against."""

    data: bytes = b""
    pages: int = 0
    headings: list[tuple[str, int, int]] = field(default_factory=list)  # (text, level, page)
    toc: list[str] = field(default_factory=list)  # TOC lines as drawn (title + leader + page)
    hyphenated: list[tuple[str, str]] = field(default_factory=list)  # ("exam-", "ple...") line end / next line start
    paragraphs: list[str] = field(default_factory=list)  # body paragraphs as written (unwrapped)
    chinese: list[str] = field(default_factory=list)
    running_heads: list[str] = field(default_factory=list)  # the running heads drawn ("titles" heads)


class _Layout:
    def __init__(self, canvas, book: Book, toc_pages: dict[str, int] | None, heads: str = "fixed"):
        self.c = canvas
        self.book = book
        self.toc_pages = toc_pages or {}
        self.heads = heads
        self.page = 0
        self.y = 0.0
        self.chapter = self.section = ""
        self.opens_chapter = False

    def _titled_head(self) -> None:
        """The finished page's running head: its chapter (even pages) or section (odd pages)."""
        if self.opens_chapter or not self.chapter:
            return
        number, _, title = self.chapter.partition(" ")
        head = f"Chapter {number}. {title}" if self.page % 2 == 0 else self.section or self.chapter
        self.c.setFont("Times-Italic", 9)
        self.c.drawString(MARGIN, HEIGHT - 40, head)
        self.book.running_heads.append(head)

    def new_page(self, opens_chapter: bool = False) -> None:
        if self.page:
            if self.heads == "titles":
                self._titled_head()
            self.c.showPage()
        self.page += 1
        self.opens_chapter = opens_chapter
        if self.heads == "fixed":
            self.c.setFont("Helvetica", 8)
            self.c.drawString(MARGIN, HEIGHT - 36, HEAD)
        self.c.setFont("Helvetica", 8)
        self.c.drawCentredString(WIDTH / 2, 30, f"Page {self.page}")
        self.y = HEIGHT - MARGIN

    def room(self, needed: float) -> None:
        if self.y - needed < MARGIN:
            self.new_page()

    def line(self, text: str, font: str, size: float, x: float = MARGIN) -> None:
        self.c.setFont(font, size)
        self.c.drawString(x, self.y, text)

    def heading(self, text: str, level: int) -> None:
        size = HEADING_SIZES[level]
        self.y -= 12 if level == 1 else 8
        self.room(size * 3)
        self.y -= size
        self.line(text, "Helvetica-Bold", size)
        key = f"h{len(self.book.headings)}"
        self.c.bookmarkPage(key)
        self.c.addOutlineEntry(text, key, level - 1)
        self.book.headings.append((text, level, self.page))
        if level == 1:
            self.chapter, self.section = text, ""
        else:
            self.section = text
        self.y -= size * 0.6

    def wrap(self, words: list[str], font: str, size: float, width: float) -> list[str]:
        """Greedy wrap; a long word that does not fit is hyphenated when its first half does."""
        out, cur = [], ""
        width_of = self.c.stringWidth
        for w in words:
            cand = f"{cur} {w}".strip()
            if width_of(cand, font, size) <= width:
                cur = cand
                continue
            if len(w) >= 8 and w.isalpha():
                k = len(w) // 2
                head = f"{cur} {w[:k]}-".strip()
                if width_of(head, font, size) <= width:
                    out.append(head)
                    self.book.hyphenated.append((w[:k] + "-", w[k:]))
                    cur = w[k:]
                    continue
            out.append(cur)
            cur = w
        if cur:
            out.append(cur)
        return out

    def paragraph(self, text: str) -> None:
        self.book.paragraphs.append(text)
        self.y -= 6
        for ln in self.wrap(text.split(), BODY_FONT, BODY_SIZE, WIDTH - 2 * MARGIN):
            self.room(LEADING)
            self.y -= LEADING
            self.line(ln, BODY_FONT, BODY_SIZE)

    def chinese(self, text: str) -> None:
        self.book.chinese.append(text)
        self.y -= 6
        width, cur = WIDTH - 2 * MARGIN, ""
        rows = []
        for ch in text:
            if self.c.stringWidth(cur + ch, "STSong-Light", BODY_SIZE) > width:
                rows.append(cur)
                cur = ""
            cur += ch
        rows.append(cur)
        for row in rows:
            self.room(LEADING)
            self.y -= LEADING
            self.line(row, "STSong-Light", BODY_SIZE)

    def toc(self, entries: list[tuple[str, int]]) -> None:
        self.y -= HEADING_SIZES[1]
        self.line("Contents", "Helvetica-Bold", HEADING_SIZES[1])
        self.y -= 10
        for title, level in entries:
            self.room(LEADING)
            self.y -= LEADING + 2
            x = MARGIN + (0 if level == 1 else 18)
            page = str(self.toc_pages.get(title, 0))
            room = WIDTH - MARGIN - x - self.c.stringWidth(f"{title}  {page}", BODY_FONT, BODY_SIZE)
            dots = "." * max(4, int(room / self.c.stringWidth(".", BODY_FONT, BODY_SIZE)) - 2)
            self.line(f"{title} {dots}", BODY_FONT, BODY_SIZE, x)
            self.c.drawRightString(WIDTH - MARGIN, self.y, page)
            self.book.toc.append(f"{title} {dots} {page}")


def _text(rng: random.Random, n: int) -> str:
    words = [rng.choice(LONG_WORDS) if rng.random() < 0.25 else rng.choice(WORDS) for _ in range(n)]
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def _chapters(n_chapters: int, sections: int, paragraphs: int, words: int, seed: int) -> list[tuple]:
    rng = random.Random(seed)
    out = []
    for i in range(1, n_chapters + 1):
        secs = []
        for j in range(1, sections + 1):
            secs.append((f"{i}.{j} {rng.choice(WORDS).capitalize()} {rng.choice(WORDS)}",
                         [_text(rng, words) for _ in range(paragraphs)]))
        out.append((f"{i} Chapter about {rng.choice(WORDS)}", secs))
    return out


def _draw(spec: list[tuple], chinese: bool, encrypt: str | None, toc_pages: dict[str, int] | None,
          heads: str = "fixed") -> Book:
    from reportlab.pdfgen import canvas

    book = Book()
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=(WIDTH, HEIGHT), invariant=1, encrypt=encrypt)
    c.setTitle(HEAD)
    lay = _Layout(c, book, toc_pages, heads)
    lay.new_page()
    lay.y -= 150
    lay.line(HEAD, "Helvetica-Bold", 24)
    lay.y -= 30
    lay.line("A generated book for PDF tests", "Helvetica-Oblique", 12)
    lay.new_page()
    lay.toc([(title, 1) for title, _ in spec] + [(s, 2) for _, secs in spec for s, _ in secs[:1]])
    for title, secs in spec:
        lay.new_page(opens_chapter=True)
        lay.heading(title, 1)
        for stitle, paras in secs:
            lay.heading(stitle, 2)
            for p in paras:
                lay.paragraph(p)
    if chinese:
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.cidfonts import UnicodeCIDFont

        pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
        lay.new_page()
        lay.y -= HEADING_SIZES[1]
        lay.line("第九章 中文内容", "STSong-Light", HEADING_SIZES[1])
        book.headings.append(("第九章 中文内容", 1, lay.page))
        lay.y -= 10
        for k in range(3):
            lay.chinese("".join(ZH_SENTENCES[(k + m) % len(ZH_SENTENCES)] for m in range(8)))
    if heads == "titles":
        lay._titled_head()
    c.save()
    book.data = buf.getvalue()
    book.pages = lay.page
    return book


def build_book(chapters: int = 4, sections: int = 2, paragraphs: int = 2, words: int = 90, chinese: bool = True,
               encrypt: str | None = None, seed: int = 7, heads: str = "fixed") -> Book:
    """A generated book (see the module docstring); TOC page numbers are right (two passes)."""
    spec = _chapters(chapters, sections, paragraphs, words, seed)
    first = _draw(spec, chinese, None, None, heads)
    pages = {title: page for title, _, page in first.headings}
    return _draw(spec, chinese, encrypt, pages, heads)


def no_text_pdf(pages: int = 3) -> bytes:
    """Pages with only a picture (vector shapes): no text layer, as in a scan."""
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=(WIDTH, HEIGHT), invariant=1)
    for _ in range(pages):
        c.rect(100, 300, 300, 300, fill=1)
        c.circle(250, 450, 80, fill=0)
        c.showPage()
    c.save()
    return buf.getvalue()


NONBMP = "\U0001d400"  # MATHEMATICAL BOLD CAPITAL A


def nonbmp_pdf() -> bytes:
    """One page: "ab <U+1D400> cd" in Helvetica 12, then "Heading After" in Helvetica-Bold 18, then body text.

    The glyph for code 0x80 is mapped to U+1D400 (a surrogate pair) by a ToUnicode CMap.
    """
    cmap = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
            b"/CMapName /Custom def /CMapType 2 def\n1 begincodespacerange <00> <FF> endcodespacerange\n"
            b"1 beginbfrange <20> <7E> <0020> endbfrange\n1 beginbfchar <80> <D835DC00> endbfchar\n"
            b"endcmap CMapName currentdict /CMap defineresource pop end end")
    content = (b"BT /F1 12 Tf 72 700 Td (ab \x80 cd) Tj ET\n"
               b"BT /F2 18 Tf 72 660 Td (Heading After) Tj ET\n"
               b"BT /F1 12 Tf 72 630 Td (Body text after the heading.) Tj ET")
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding /WinAnsiEncoding /ToUnicode 6 0 R >>"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R /F2 5 0 R >> >>"
        b" /Contents 7 0 R >>",
        font % b"Helvetica",
        font % b"Helvetica-Bold",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(cmap), cmap),
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (i, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)
