"""Layout rules on hand-made lines (no PDF library): furniture, TOC lines, paragraph joins, offsets."""

from __future__ import annotations

from hichunk.document.layout import _number, analyse
from hichunk.document.pdftext import BODY, FURNITURE, TOC, PdfText, TextLine
from hichunk.document.reflow import reflow
from hichunk.document.roles import is_toc_entry

HEIGHT = 792.0


class Pages:
    """Builds a PdfText line by line: raw text = lines joined by newline, pages by form feed."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.lines: list[TextLine] = []
        self.page_starts: list[int] = []
        self.pos = 0

    def page(self) -> Pages:
        if self.page_starts:
            self.parts.append("\f")
            self.pos += 1
        self.page_starts.append(self.pos)
        return self

    def line(self, text: str, y: float, size: float = 10.0, x0: float = 72.0, x1: float | None = None,
             bold: bool = False, mono: bool = False, hyphen: bool = False) -> Pages:
        if self.parts and self.parts[-1] != "\f":
            self.parts.append("\n")
            self.pos += 1
        self.parts.append(text)
        width = x1 if x1 is not None else (540.0 if len(text) > 60 else x0 + 5 * len(text))
        self.lines.append(TextLine(self.pos, self.pos + len(text), len(self.page_starts), size, bold, False, mono,
                                   x0, width, y, hyphen))
        self.pos += len(text)
        return self

    def body(self, y: float, n: int = 6) -> Pages:
        """Body lines that differ from page to page (digits alone would not: running heads are compared without them)."""
        word = "".join(chr(97 + int(d)) for d in str(len(self.page_starts)))
        for k in range(n - 1):
            self.line(f"Body text {word} line {k} that runs all the way to the right margin of the page here", y + 12 * k)
        return self.line(f"The paragraph {word} ends.", y + 12 * (n - 1))

    def build(self) -> tuple[PdfText, list[str]]:
        pdf = PdfText("".join(self.parts), self.lines, self.page_starts, [(612.0, HEIGHT)] * len(self.page_starts))
        analyse(pdf.text, pdf.lines, [HEIGHT] * len(self.page_starts))
        return pdf, [pdf.text[ln.start : ln.end] for ln in pdf.lines]


def roles(pdf: PdfText) -> dict[str, str]:
    return {pdf.text[ln.start : ln.end]: ln.role for ln in pdf.lines}


def test_page_number_tokens():
    assert [_number(t) for t in ("12", "iv", "XII", "mmxxiv", "x1", "12345", "②", "１２")] == [12, 4, 12, 2024, None, None, None, 12]


def test_toc_lines_need_a_leader_and_a_page_number():
    for s in ("1.1 The R environment. . . . . . . . . 2", "Preface ........ iii", "第一章 简介 ……………… 1",
              "2 Installing ·········· 17"):
        assert is_toc_entry(s), s
    for s in ("values from 32...255 are kept", "See page 12", "Wait . . . and see", "Dots.... then words"):
        assert not is_toc_entry(s), s


def test_texinfo_running_heads_chapter_titles_and_folios():
    p = Pages()
    for page in range(1, 13):
        p.page()
        if page % 4 == 1:  # a chapter opens: bare folio at the foot, a larger numbered title at the top
            p.line(f"{page // 4 + 1} Chapter title", 100, size=17.0, bold=True).body(140).line(str(page + 2), 760)
        else:  # running head: chapter name and a page number in step with the page index
            p.line(f"Chapter {page // 4 + 1}: Topic {page} {page + 2}", 58).body(100)
    pdf, _ = p.build()
    r = roles(pdf)
    assert r["1 Chapter title"] == BODY and r["3 Chapter title"] == BODY
    assert r["3"] == FURNITURE and r["Chapter 1: Topic 2 4"] == FURNITURE and r["Chapter 3: Topic 11 13"] == FURNITURE
    assert all(role == BODY for text, role in r.items() if text.startswith(("Body", "The paragraph")))


def test_running_heads_with_chinese_chapter_numerals_are_furniture():
    """Each chapter's running head ("第三章 使用说明") repeats on fewer pages than a running head must; with
    the chapter numeral masked like a digit (and the title like any title) they are one running head."""
    p = Pages()
    chapters = ["简介", "下载和安装", "使用说明", "模板实现代码", "常见问题", "参考资料"]
    for page in range(30):
        title = f"第{'一二三四五六'[page // 5]}章 {chapters[page // 5]}"
        if page % 5 == 0:  # the chapter opens: its title set large
            p.page().line(title, 100, size=17.0, bold=True).body(140)
        else:
            p.page().line(title, 40).body(100)
    pdf, _ = p.build()
    assert [ln.role for ln in pdf.lines if "章" in pdf.text[ln.start : ln.end]] == [
        BODY if page % 5 == 0 else FURNITURE for page in range(30)]


def test_running_heads_set_like_prose_over_a_body_of_smaller_code_are_furniture():
    """A LaTeX package's documentation: code listings (9 pt) are most of the text, so they give the body
    size; prose and the running heads ("5.3 加载宏包 5 实现细节", section and chapter titles) are set
    in 10 pt, 1.11 times the body. Each section's running head repeats on too few pages to count as
    text; with the titles masked they are one running head, while the titles themselves stay text."""
    p = Pages()
    sections = [f"5.{k} {name}" for k, name in enumerate(["加载宏包", "页面设置", "主文档格式", "字体与字号",
                                                           "局部设置", "附加页面", "参考文献", "附录"], 1)]
    for page in range(32):
        p.page()
        if page == 0:
            p.line("5 实现细节", 70, size=15.0, bold=True)
        else:
            p.line(f"{sections[(page - 1) // 4]} 5 实现细节", 40, size=10.0)
        if page % 4 == 1:
            p.line(sections[(page - 1) // 4], 90, size=12.0, bold=True)
        p.line(f"这一节说明第 {page} 页的宏包代码与它的用法。", 110, size=10.0)
        for k in range(8):
            p.line(f"\\def\\njuw@{chr(97 + page % 26)}{k}{{\\relax}} % {page}", 130 + 11 * k, size=9.0)
    pdf, _ = p.build()
    heads = [ln.role for ln in pdf.lines if "5 实现细节" in pdf.text[ln.start : ln.end] and ln.y == 40]
    assert heads == [FURNITURE] * 31
    assert {ln.role for ln in pdf.lines if ln.bold} == {BODY}


def test_a_chapters_first_page_running_head_with_the_chapter_alone_is_furniture():
    """A chapter's first page carries "3 使用说明" in the running head's place; its other pages "3.2 论文选项
    3 使用说明". Too few pages repeat the short form; it sits in the running heads' slot, so it is one."""
    p = Pages()
    chapters = ["简介", "安装", "使用说明", "实现细节"]
    for page in range(32):
        number, k = page // 8 + 1, page % 8
        chapter = f"{number} {chapters[number - 1]}"
        p.page()
        if k == 0:
            p.line(chapter, 40, size=10.0, x0=500.0).line(chapter, 80, size=15.0, bold=True)
        else:
            section = f"{number}.{(k + 1) // 2} 第{number}章第{(k + 1) // 2}节"
            p.line(f"{section} {chapter}", 40, size=10.0, x0=400.0)
            if k % 2:
                p.line(section, 90, size=12.0, bold=True)
        p.line(f"这一页说明第 {page} 页的内容与它的用法。", 110, size=10.0)
        for j in range(6):
            p.line(f"\\def\\cmd{chr(97 + page % 26)}{j}{{\\relax}} % {page}", 130 + 11 * j, size=9.0)
    pdf, _ = p.build()
    assert [ln.role for ln in pdf.lines if ln.y == 40] == [FURNITURE] * 32
    assert {ln.role for ln in pdf.lines if ln.bold} == {BODY}


def test_repeated_bold_label_under_a_running_head_is_not_furniture():
    p = Pages()
    for _ in range(1, 9):
        p.page().line("Manual title", 40).line("Description", 70, bold=True).body(100)
    pdf, _ = p.build()
    assert roles(pdf)["Manual title"] == FURNITURE and roles(pdf)["Description"] == BODY


def test_toc_page_title_entries_and_wrapped_entries():
    p = Pages().page().line("Contents", 80, size=14.0, bold=True)
    p.line("1 Introduction . . . . . . . . . 1", 110).line("2 A long entry whose title wraps", 124)
    p.line("onto a second line . . . . . . . 3", 138).line("3 Usage 5", 152).line("4 Later . . . . . . . . 9", 166)
    p.page().line("1 Introduction", 100, size=14.0, bold=True).body(130)
    pdf, _ = p.build()
    r = roles(pdf)
    assert [r[t] for t in ("Contents", "1 Introduction . . . . . . . . . 1", "2 A long entry whose title wraps",
                           "3 Usage 5")] == [TOC] * 4
    assert r["1 Introduction"] == BODY


def test_paragraphs_bullets_code_and_cjk_joins():
    p = Pages().page()
    p.line("A paragraph that fills the whole measure of the line up to the margin", 100)
    p.line("and ends here.", 112, x1=150)
    p.line("• first item that also runs long enough to fill the measure of a line", 132)
    p.line("continued under its text", 144, x0=82, x1=200)
    p.line("• second item", 156, x1=140)
    p.line("x <- c(1, 2)", 176, mono=True).line("y <- x + 1", 188, mono=True)
    p.line("中文段落第一行文字一直写到页面右边的边距为止中文段落第一行文字一直写到页面右边的边距为止", 208, x1=540)
    p.line("第二行。", 220, x1=120)
    p.line("A hyphen-", 240, hyphen=True, x1=540).line("ated word and a Auto-", 252, hyphen=True, x1=540)
    p.line("Merge name.", 264, x1=130)
    pdf, _ = p.build()
    doc = reflow(pdf, analyse(pdf.text, pdf.lines, [HEIGHT]), "x.pdf")
    assert [line.text for line in doc.lines if line.text] == [
        "A paragraph that fills the whole measure of the line up to the margin and ends here.",
        "• first item that also runs long enough to fill the measure of a line continued under its text",
        "• second item",
        "x <- c(1, 2)",
        "y <- x + 1",
        "中文段落第一行文字一直写到页面右边的边距为止中文段落第一行文字一直写到页面右边的边距为止第二行。",
        "A hyphenated word and a Auto-Merge name.",
    ]
    assert "x <- c(1, 2)\ny <- x + 1" in doc.clean  # code lines stay together, no blank line
    for line in doc.lines:  # every clean cut maps into the raw text at the line's own start
        if line.text:
            assert doc.text[doc.raw_offset(line.clean_start) :].startswith(line.text[:5])


def test_a_paragraph_continues_across_a_page_break_and_furniture_moves_with_the_page():
    p = Pages()
    for page in range(1, 6):
        p.page().line("Running head", 40)
        if page == 2:
            p.line("The last line of page two does not end its sentence and fills the line", 700)
        elif page == 3:
            p.line("but goes on here on page three.", 80, x1=220).line("Next paragraph starts here and is long enough", 100)
        else:
            p.body(80, 3)
        p.line(str(page), 760)
    pdf, _ = p.build()
    doc = reflow(pdf, analyse(pdf.text, pdf.lines, [HEIGHT] * 5), "x.pdf")
    joined = "The last line of page two does not end its sentence and fills the line but goes on here on page three."
    line = next(ln for ln in doc.lines if ln.text == joined)
    assert line.style.page == 2
    nxt = next(ln for ln in doc.lines if ln.text.startswith("Next paragraph"))
    start = doc.raw_offset(nxt.clean_start)
    assert doc.pages(start, start + 1) == (3, 3)
    first_on_page = next(ln for ln in doc.lines if ln.style and ln.style.page == 4)
    assert doc.raw_offset(first_on_page.clean_start) == doc.page_starts[3]  # the page's running head goes with it
    assert "Running head" not in doc.clean and "\n2\n" not in doc.clean
