"""PDF renderings with reportlab: per-document typography, running header and footer, ground-truth pages.

Each document draws a profile: heading sizes per level (a ladder of sizes, or one size
in bold), numbered or not (the numbering schemes of ``styles``), a body font (Times or
Helvetica; Chinese in reportlab's built-in CID font ``STSong-Light``), sometimes a table
of contents with dotted leaders, sometimes hyphenated line ends (soft hyphens in long
words). Every page has a running header (the document title) and a footer with the page
number. A heading's page is recorded when reportlab draws it, so labels are exact.
"""

from __future__ import annotations

import os
import random
import re
from xml.sax.saxutils import escape

from hichunk.models.train.corpus.render import Block, Labelled, file_name, rng_for
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
    }


def render_pdf(blocks: list[Block], title: str, lang: str, rng: random.Random, path: str) -> tuple[dict, list[dict]]:
    """Write ``blocks`` as a PDF at ``path``; (style, headings with level, title and page)."""
    from reportlab.lib.enums import TA_JUSTIFY, TA_LEFT
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
                                          wordWrap="CJK" if zh else None))

    tops = sum(1 for b in blocks if b.level == 1)
    numberer = Numberer(text_profile, tops)
    heads: list[dict] = []

    class Doc(SimpleDocTemplate):
        def beforeDocument(self):  # noqa: N802 - every pass of multiBuild starts afresh
            heads.clear()
            recorded.clear()

        def afterFlowable(self, flowable):  # noqa: N802 (reportlab's name)
            info = getattr(flowable, "_hc_heading", None)
            if info is not None:
                level, text, key = info
                if key not in recorded:
                    recorded.add(key)
                    heads.append({"level": level, "title": text, "offset": None, "page": self.page})
                if prof["toc"]:
                    self.notify("TOCEntry", (min(level, 3) - 1, escape(text), self.page))

    recorded: set[int] = set()
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
            text = numberer.title(block.level, block.text)
            p = Paragraph(escape(text), head_styles[min(block.level, 6) - 1])
            p._hc_heading = (block.level, text, n)
            story.append(p)
        elif block.code:
            story.append(Preformatted("\n".join(line[:110] for line in block.lines), code_style))
        else:
            text = " ".join(" ".join(block.lines).split()) if not zh else "".join(x.strip() for x in block.lines)
            text = escape(text)
            if prof["hyphenate"]:
                text = _hyphenate(text, rng)
            story.append(Paragraph(text, body))
    if not story:
        story.append(Spacer(1, 1 * cm))

    header = escape(title)[:90]

    def decorate(canvas, doc):
        canvas.saveState()
        width, height = doc.pagesize
        canvas.setFont(body_font, 8.5)
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


def render_pdf_doc(doc, split: str, seed: int, out_dir: str) -> Labelled:
    """A corpus document as a labelled PDF."""
    from hichunk.models.train.corpus.render import blocks_of

    rng = rng_for(seed, "pdf", doc.id)
    doc_id = f"pdf:{doc.id}"
    rel = os.path.join("pdf", split, file_name(doc_id, ".pdf"))
    style, heads = render_pdf(blocks_of(doc.markdown), doc.title, doc.lang, rng, os.path.join(out_dir, rel))
    return Labelled(doc_id, doc.id, split, doc.lang, doc.corpus, "pdf", style, rel, heads)
