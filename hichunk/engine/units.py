"""Model units: the sentences a split-point model reads, one line each.

Units are the document's sentences (a heading line is one sentence). What the
model reads of a sentence is its clean text with heading markers hidden (the
model must infer structure from content), HTML anchors without a link read as their text,
line breaks turned into spaces (each
unit must stay one numbered line) and truncated (long sentences carry little
extra signal and would crowd the window). Sentences left empty by this (a bare
``#`` line) are not shown; their text stays in the chunk around them. Each unit
also records its layout (``LineLayout``: whole line or not, blank lines around,
indentation, an underline rule below, typography from paged formats) from the
clean view, which stays visible when markers are hidden.

Lines that read as one heading are one unit (``hichunk.document.roles``): a
label line and its title line ("Chapter 3" + "Installing"), a heading wrapped
onto a second line. The unit starts where the first line does, so a chunk
started on it starts at the label. Units on table-of-contents lines and asides
(callouts, captions) carry that ``role`` in their layout: the engine never
starts a chunk on them. Spaces are folded (``hichunk.textnorm.fold_spaces``):
a no-break space reads as a space.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from hichunk.document.model import Document
from hichunk.document.roles import ASIDE, TOC, heading_continuation, is_aside, toc_lines
from hichunk.protocol import LineLayout
from hichunk.sentences import MAX_CHARS_EN, MAX_CHARS_ZH, Sentence, truncate_for_model
from hichunk.textnorm import first_visible, fold, fold_spaces
from hichunk.tree.build import heading_title

# Everything str.splitlines() treats as a line break.
_BREAKS = re.compile(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+")
# A rule line: one character repeated (spaces allowed between), as plain text underlines its headings.
_RULE = re.compile(r"^\s*([=\-~*^#+_.:'\"`])(?:\s*\1){2,}\s*$")
_RULE_CHARS = "=-~*^#+_.:'\"`"  # _RULE's first group


@dataclass(frozen=True, slots=True)
class Unit:
    """One model line: the sentence it comes from, where it starts in the clean view, what the model reads."""

    sentence: int
    offset: int
    text: str
    layout: LineLayout = LineLayout()


# An HTML anchor with no link (``<a id="rules"></a>``, ``<a name="faq"/>``, ``<a id="intro">1.</a>``) renders
# as its text alone; a heading carries one to be linked to, and read as markup it makes "Rules" look like code.
_ANCHOR = re.compile(r"<(a|span)\s+(?:id|name)\s*=\s*(?:\"[^\"<>]*\"|'[^'<>]*'|[^\s<>]+)\s*(?:/>|>([^<>]*)</\1\s*>)", re.I)


def _shown(doc: Document, sentence: Sentence) -> str:
    return _shown_text(doc.clean[sentence.start : sentence.end], doc.lines[sentence.line].heading is not None)


def _shown_text(text: str, heading: bool) -> str:
    """A sentence's clean text as a model reads it (``heading``: its line is a heading, whose markers go)."""
    if heading:
        text = heading_title(text)
    if "<" in text:
        text = _ANCHOR.sub(lambda m: m[2] or "", text)
    return fold_spaces(_BREAKS.sub(" ", text)).strip()


def model_text(doc: Document, sentence: Sentence, max_chars_en: int = MAX_CHARS_EN, max_chars_zh: int = MAX_CHARS_ZH) -> str:
    """What a model reads of one sentence."""
    return truncate_for_model(_shown(doc, sentence), max_chars_en, max_chars_zh)


def underline_of(doc: Document, index: int) -> str:
    """The rule character of the line below line ``index`` when that line is a rule under text, else ""."""
    if index + 1 >= len(doc.lines) or doc.lines[index].is_blank or _RULE.match(fold(doc.lines[index].text)):
        return ""
    m = _RULE.match(fold(doc.lines[index + 1].text))
    return m.group(1) if m else ""


def sentence_layout(doc: Document, sentence: Sentence) -> LineLayout:
    """The layout of one sentence: its place on its line, the lines around it and the line's typography."""
    line = doc.lines[sentence.line]
    before = line.text[: sentence.start - line.clean_start]
    after = line.text[sentence.end - line.clean_start :]
    starts, ends = not before.strip(), not after.strip()
    above = sentence.line == 0 or doc.lines[sentence.line - 1].is_blank
    underline = underline_of(doc, sentence.line) if ends else ""
    below_line = sentence.line + 2 if underline else sentence.line + 1
    below = below_line >= len(doc.lines) or doc.lines[below_line].is_blank
    style = line.style
    typography = {} if style is None else {"size": style.size, "bold": style.bold, "italic": style.italic, "gap": style.gap}
    return LineLayout(starts, ends, starts and above, ends and below, line.text[:1].isspace() or (style is not None and style.indent > 0.5),
                      underline, **typography)


def _joined(a: LineLayout, b: LineLayout) -> LineLayout:
    """The layout of two lines read as one: the first one's start, the second one's end, the larger type."""
    big = a if (a.size, a.bold) >= (b.size, b.bold) else b
    return replace(a, ends_line=b.ends_line, blank_after=b.blank_after, underline=b.underline or a.underline,
                   size=big.size, bold=big.bold, italic=big.italic)


def _whole_line(layout: LineLayout) -> bool:
    return layout.starts_line and layout.ends_line


class _LineFacts:
    """What the units of one document read of its lines, each worked out once: blank or not, the rule
    character of a rule line (``underline_of``), and layouts already made (a Markdown or plain-text
    document has a handful of distinct ones; a ``LineLayout`` costs more to make than to look up)."""

    __slots__ = ("doc", "lines", "n", "blank", "rules", "layouts")

    def __init__(self, doc: Document):
        self.doc = doc
        self.lines = doc.lines
        self.n = len(doc.lines)
        self.blank = [not line.text.strip() for line in doc.lines]  # Line.is_blank
        self.rules: dict[int, str | None] = {}
        self.layouts: dict[tuple, LineLayout] = {}

    def rule(self, i: int) -> str | None:
        """The repeated character when line ``i`` is a rule line (``_RULE``), else None."""
        rules = self.rules
        if i in rules:
            return rules[i]
        text = self.lines[i].text
        if text.isascii():  # nothing to fold
            m = _RULE.match(text)
        else:  # a rule line opens with its rule character: most lines are not folded whole to find out
            first = first_visible(text)
            m = _RULE.match(fold(text)) if first and first in _RULE_CHARS else None
        rules[i] = c = m.group(1) if m else None
        return c

    def underline(self, i: int) -> str:
        """``underline_of(doc, i)``."""
        if i + 1 >= self.n or self.blank[i] or self.rule(i) is not None:
            return ""
        return self.rule(i + 1) or ""

    def layout(self, sentence: Sentence) -> LineLayout:
        """``sentence_layout(doc, sentence)``."""
        index = sentence.line
        line = self.lines[index]
        if line.style is not None:  # typeset lines: layouts as many as their styles
            return sentence_layout(self.doc, sentence)
        text = line.text
        starts = not text[: sentence.start - line.clean_start].strip()
        ends = not text[sentence.end - line.clean_start :].strip()
        above = index == 0 or self.blank[index - 1]
        underline = self.underline(index) if ends else ""
        below_line = index + 2 if underline else index + 1
        below = below_line >= self.n or self.blank[below_line]
        key = (starts, ends, starts and above, ends and below, text[:1].isspace(), underline)
        layout = self.layouts.get(key)
        if layout is None:
            layout = self.layouts[key] = LineLayout(*key)
        return layout

    def shown(self, sentence: Sentence) -> str:
        """``_shown(doc, sentence)``."""
        return _shown_text(self.doc.clean[sentence.start : sentence.end], self.lines[sentence.line].heading is not None)


def model_units(doc: Document, sentences: list[Sentence], max_chars_en: int = MAX_CHARS_EN,
                max_chars_zh: int = MAX_CHARS_ZH, toc: set[int] | None = None) -> list[Unit]:
    """The units of a document, in order (sentences with nothing to show are left out; two-line headings are one).

    ``toc``: the document's ``toc_lines`` when the caller has them already."""
    toc = toc_lines(doc) if toc is None else toc
    facts = _LineFacts(doc)
    shown, layout_of = facts.shown, facts.layout
    out = []
    n_sentences = len(sentences)
    skip = -1  # a sentence shown as part of the unit before it
    for i, s in enumerate(sentences):
        if i == skip:
            continue
        text = shown(s)
        if not text:
            continue
        layout = layout_of(s)
        if layout.starts_line and layout.ends_line and i + 1 < n_sentences and s.line not in toc:
            nxt = sentences[i + 1]
            if heading_continuation(doc, s.line) == nxt.line and nxt.line not in toc:
                rest = layout_of(nxt)
                if _whole_line(rest):
                    text = f"{text} {shown(nxt)}"
                    layout = _joined(layout, rest)
                    skip = i + 1
        text = truncate_for_model(text, max_chars_en, max_chars_zh)
        role = TOC if s.line in toc else ASIDE if is_aside(text, layout.blank_after) else ""
        out.append(Unit(i, s.start, text, replace(layout, role=role) if role else layout))
    return out
