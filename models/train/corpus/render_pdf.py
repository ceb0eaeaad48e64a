"""PDF renderings with reportlab: per-document typography, running header and footer, ground-truth pages.

Each document draws a profile: heading sizes per level (a ladder of sizes, or one size
in bold), numbered or not (the numbering schemes of ``styles``), a body font (Times or
Helvetica; Chinese in reportlab's built-in CID font ``STSong-Light``), sometimes a table
of contents with dotted leaders, sometimes hyphenated line ends (soft hyphens in long
words). Every page has a running head and a page number: the document title, or, as
LaTeX books print them, the current chapter and section titles ("CHAPTER 2. GETTING
STARTED" on even pages, "2.3. WHERE TO GET IT" on odd ones, none on a chapter's first
page) with the page number in the head. Sometimes chapter labels stand on their own line
above the title, headings are set narrow so that long ones wrap, and paragraphs carry
callout boxes ("TIP Selecting a mirror") and figure/table/example captions, none of which
are headings. A heading's page is recorded when reportlab draws it, so labels are exact;
a heading with a label line is labelled by the label line.
"""

from __future__ import annotations

import os
import random
import re
from xml.sax.saxutils import escape

from hichunk.models.train.corpus.render import Block, Captions, Labelled, _context, callout_line, file_name, rng_for
from hichunk.models.train.corpus.styles import Numberer, draw_profile

_CJK_FONT = "STSong-Light"


def _register_cjk() -> None:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont

    if _CJK_FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(UnicodeCIDFont(_CJK_FONT))


def _hyphenate(text: str, rng: random.Random) -> str:
    """Soft hyphens inside long words (reportlab breaks there and draws a hyphen)."""
    def soft(m: re.Match) -> str:
        w = m.group(0)
        cut = rng.randint(3, len(w) - 4)
        return w[:cut] + "\u00ad" + w[cut:]

    return re.sub(r"[A-Za-z]{9,}", soft, text)


def pdf_profile(rng: random.Random, lang: str) -> dict:
    ladder = rng.choice([[20, 16, 13.5, 12, 11, 10], [18, 15, 13, 11.5, 11, 10.5], [16, 14, 12, 11, 11, 11],
                         [12, 12, 12, 12, 12, 12], [14, 12.5, 11.5, 11, 11, 11]])
    return {
        "sizes": ladder,
        "bold": [True, True, rng.random() < 0.7, rng.random() < 0.5, rng.random() < 0.5, False],
        "italic_deep": rng.random() < 0.3,
        "body_font": "STSong-Light" if lang == "zh" else rng.choice(["Times-Roman", "Helvetica"]),
        "body_size": rng.choice([10, 10.5, 11, 12]),
        "toc": rng.random() < 0.3,
        "hyphenate": lang == "en" and rng.random() < 0.4,
        "page": rng.choice(["A4", "letter"]),
        "justify": rng.random() < 0.5,
        "running": rng.choice(["title", "title", "chapter-section", "chapter-section", "both", "section"]),
        "head_caps": lang == "en" and rng.random() < 0.6,
        "narrow_heads": rng.random() < 0.25,
        "callout_box": rng.random() < 0.5,
    }


def render_pdf(blocks: list[Block], title: str, lang: str, rng: random.Random, path: str) -> tuple[dict, list[dict]]:
    """Write ``blocks`` as a PDF at ``path``; (style, headings with level, title and page)."""
    from reportlab.lib.enums import TA_CENTER, TA_JUSTIFY, TA_LEFT
    from reportlab.lib.pagesizes import A4, letter
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import cm
    from reportlab.platypus import PageBreak, Paragraph, Preformatted, SimpleDocTemplate, Spacer
    from reportlab.platypus.tableofcontents import TableOfContents

    text_profile = draw_profile(rng, lang, "pdf")
    prof = pdf_profile(rng, lang)
    zh = lang == "zh"
    if zh:
        _register_cjk()
    bold_of = {"Times-Roman": "Times-Bold", "Helvetica": "Helvetica-Bold", _CJK_FONT: _CJK_FONT}
    italic_of = {"Times-Roman": "Times-Italic", "Helvetica": "Helvetica-Oblique", _CJK_FONT: _CJK_FONT}
    body_font = prof["body_font"]
    body = ParagraphStyle("body", fontName=body_font, fontSize=prof["body_size"], leading=prof["body_size"] * 1.35,
                          spaceAfter=prof["body_size"] * 0.5, alignment=TA_JUSTIFY if prof["justify"] else TA_LEFT,
                          wordWrap="CJK" if zh else None, embeddedHyphenation=1 if prof["hyphenate"] else 0,
                          uriWasteReduce=0)
    code_style = ParagraphStyle("code", fontName=_CJK_FONT if zh else "Courier", fontSize=prof["body_size"] - 1.5,
                                leading=(prof["body_size"] - 1.5) * 1.25, spaceAfter=6)
    head_styles = []
    for lv in range(6):
        size = prof["sizes"][lv]
        font = bold_of[body_font] if prof["bold"][lv] else body_font
        if prof["italic_deep"] and lv >= 3:
            font = italic_of[body_font]
        head_styles.append(ParagraphStyle(f"h{lv + 1}", fontName=font, fontSize=size, leading=size * 1.25,
                                          spaceBefore=size * 0.9, spaceAfter=size * 0.45, keepWithNext=1,
                                          rightIndent=5.5 * cm if prof["narrow_heads"] else 0,
                                          wordWrap="CJK" if zh else None))
    small = prof["body_size"] - 0.5
    label_style = ParagraphStyle("label", parent=head_styles[0], fontSize=prof["sizes"][0] * 0.8,
                                 leading=prof["sizes"][0], spaceAfter=2)
    callout_head = ParagraphStyle("callout_head", fontName=bold_of[body_font], fontSize=small, leading=small * 1.3,
                                  leftIndent=14, spaceBefore=4, keepWithNext=1, wordWrap="CJK" if zh else None)
    callout_body = ParagraphStyle("callout_body", parent=body, fontSize=small, leading=small * 1.3, leftIndent=14,
                                  borderWidth=0.5 if prof["callout_box"] else 0, borderPadding=4,
                                  borderColor="#777777" if prof["callout_box"] else None)
    caption_style = ParagraphStyle("caption", fontName=italic_of[body_font], fontSize=small, leading=small * 1.3,
                                   alignment=TA_CENTER, spaceBefore=2, spaceAfter=6, wordWrap="CJK" if zh else None)
    caption_above = ParagraphStyle("caption_above", parent=caption_style, alignment=TA_LEFT, keepWithNext=1)

    tops = sum(1 for b in blocks if b.level == 1)
    numberer = Numberer(text_profile, tops)
    heads: list[dict] = []

    running: dict = {"chapter": "", "section": "", "chapter_pages": set()}

    class Doc(SimpleDocTemplate):
        def beforeDocument(self):  # noqa: N802 - every pass of multiBuild starts afresh
            heads.clear()
            recorded.clear()
            running.update(chapter="", section="", chapter_pages=set())

        def afterFlowable(self, flowable):  # noqa: N802 (reportlab's name)
            info = getattr(flowable, "_hc_heading", None)
            if info is not None:
                level, text, key, full = info
                if key not in recorded:
                    recorded.add(key)
                    heads.append({"level": level, "title": text, "offset": None, "page": self.page})
                if level == 1:
                    running.update(chapter=full, section="")
                    running["chapter_pages"].add(self.page)
                elif level == 2:
                    running["section"] = full
                if prof["toc"]:
                    self.notify("TOCEntry", (min(level, 3) - 1, escape(full), self.page))

        def handle_pageEnd(self):  # noqa: N802 - the head shows the titles in force at the page's end
            _running_head(self.canv, self, prof, running, body_font)
            super().handle_pageEnd()

    recorded: set[int] = set()
    captions = Captions(text_profile, rng)
    chapter = 0
    story = []
    toc = None
    if prof["toc"] and sum(1 for b in blocks if b.level) >= 3:
        toc = TableOfContents(dotsMinLevel=0)
        toc.levelStyles = [ParagraphStyle(f"toc{i}", fontName=body_font, fontSize=prof["body_size"],
                                          leftIndent=18 * i, firstLineIndent=0, leading=prof["body_size"] * 1.3)
                           for i in range(3)]
        story += [Paragraph("目录" if zh else "Contents", head_styles[0]), toc, PageBreak()]
    for n, block in enumerate(blocks):
        if block.level:
            heading = numberer.parts(block.level, block.text)
            chapter += block.level == 1
            style = head_styles[min(block.level, 6) - 1]
            if text_profile.label_line and heading.label:
                label = Paragraph(escape(heading.label_text), label_style if block.level == 1 else style)
                label._hc_heading = (block.level, heading.label_text, n, heading.text)
                story += [label, Paragraph(escape(heading.bare), style)]
            else:
                p = Paragraph(escape(heading.text), style)
                p._hc_heading = (block.level, heading.text, n, heading.text)
                story.append(p)
        elif block.code:
            if text_profile.captions and rng.random() < text_profile.captions * 3:
                story.append(Paragraph(escape(captions.line("example", chapter, _context(blocks, n))), caption_above))
            story.append(Preformatted("\n".join(line[:110] for line in block.lines), code_style))
        else:
            plain = " ".join(" ".join(block.lines).split()) if not zh else "".join(x.strip() for x in block.lines)
            text = escape(plain)
            if prof["hyphenate"]:
                text = _hyphenate(text, rng)
            if text_profile.callouts and rng.random() < text_profile.callouts:
                story += [Paragraph(escape(callout_line(text_profile, plain, rng)), callout_head),
                          Paragraph(text, callout_body)]
                continue
            story.append(Paragraph(text, body))
            if text_profile.captions and rng.random() < text_profile.captions:
                story.append(Paragraph(escape(captions.line("figure", chapter, plain)), caption_style))
    if not story:
        story.append(Spacer(1, 1 * cm))

    header = escape(title)[:90]

    def decorate(canvas, doc):
        canvas.saveState()
        width, height = doc.pagesize
        canvas.setFont(body_font, 8.5)
        if prof["running"] == "title":  # the other heads are drawn when the page ends (_running_head)
            canvas.drawString(doc.leftMargin, height - 1.3 * cm, header)
            canvas.line(doc.leftMargin, height - 1.45 * cm, width - doc.rightMargin, height - 1.45 * cm)
            label = f"— {doc.page} —" if rng_footer == 0 else (f"第 {doc.page} 页" if zh else f"Page {doc.page}")
            canvas.drawCentredString(width / 2, 1.1 * cm, label)
        canvas.restoreState()

    rng_footer = rng.randint(0, 1)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    doc = Doc(path, pagesize=A4 if prof["page"] == "A4" else letter, title=title, author="hichunk render",
              leftMargin=2.2 * cm, rightMargin=2.2 * cm, topMargin=2.2 * cm, bottomMargin=2 * cm,
              invariant=1)
    if toc is not None:
        doc.multiBuild(story, onFirstPage=decorate, onLaterPages=decorate, maxPasses=4)
    else:
        doc.build(story, onFirstPage=decorate, onLaterPages=decorate)
    style = {**text_profile.to_dict(), **prof}
    return style, heads


def _running_head(canvas, doc, prof: dict, running: dict, font: str) -> None:
    """The head of a finished page: chapter and section titles with the page number (none on a chapter's first
    page, where the foot carries the number)."""
    from reportlab.lib.units import cm

    style = prof["running"]
    if style == "title":
        return
    width, height = doc.pagesize
    if doc.page in running["chapter_pages"]:
        canvas.saveState()
        canvas.setFont(font, 8.5)
        canvas.drawCentredString(width / 2, 1.1 * cm, str(doc.page))
        canvas.restoreState()
        return
    chapter, section = running["chapter"], running["section"] or running["chapter"]
    if style == "chapter-section":
        text = chapter if doc.page % 2 == 0 else section
    elif style == "both":
        text = f"{chapter}   {section}" if section != chapter else chapter
    else:
        text = section
    if not text:
        return
    text = " ".join((text.upper() if prof["head_caps"] else text).split())[:80]
    y = height - 1.3 * cm
    canvas.saveState()
    canvas.setFont(font, 8.5)
    if doc.page % 2 == 0:  # even (left-hand) page: number outside on the left
        canvas.drawString(doc.leftMargin, y, f"{doc.page}    {text}")
    else:
        canvas.drawRightString(width - doc.rightMargin, y, f"{text}    {doc.page}")
    canvas.restoreState()


def render_pdf_doc(doc, split: str, seed: int, out_dir: str) -> Labelled:
    """A corpus document as a labelled PDF."""
    from hichunk.models.train.corpus.render import blocks_of

    rng = rng_for(seed, "pdf", doc.id)
    doc_id = f"pdf:{doc.id}"
    rel = os.path.join("pdf", split, file_name(doc_id, ".pdf"))
    style, heads = render_pdf(blocks_of(doc.markdown), doc.title, doc.lang, rng, os.path.join(out_dir, rel))
    return Labelled(doc_id, doc.id, split, doc.lang, doc.corpus, "pdf", style, rel, heads)
