"""Model units: the sentences a split-point model reads, one line each.

Units are the document's sentences (a heading line is one sentence). What the
model reads of a sentence is its clean text with heading markers hidden (the
model must infer structure from content), line breaks turned into spaces (each
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
from hichunk.textnorm import fold, fold_spaces
from hichunk.tree.build import heading_title

# Everything str.splitlines() treats as a line break.
_BREAKS = re.compile(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+")
# A rule line: one character repeated (spaces allowed between), as plain text underlines its headings.
_RULE = re.compile(r"^\s*([=\-~*^#+_.:'\"`])(?:\s*\1){2,}\s*$")


@dataclass(frozen=True, slots=True)
class Unit:
    """One model line: the sentence it comes from, where it starts in the clean view, what the model reads."""

    sentence: int
    offset: int
    text: str
    layout: LineLayout = LineLayout()


def _shown(doc: Document, sentence: Sentence) -> str:
    text = doc.clean[sentence.start : sentence.end]
    if doc.lines[sentence.line].heading is not None:
        text = heading_title(text)
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


def model_units(doc: Document, sentences: list[Sentence], max_chars_en: int = MAX_CHARS_EN,
                max_chars_zh: int = MAX_CHARS_ZH) -> list[Unit]:
    """The units of a document, in order (sentences with nothing to show are left out; two-line headings are one)."""
    toc = toc_lines(doc)
    out = []
    joined_into: set[int] = set()  # sentences shown as part of the unit before them
    for i, s in enumerate(sentences):
        if i in joined_into:
            continue
        text = _shown(doc, s)
        if not text:
            continue
        layout = sentence_layout(doc, s)
        if _whole_line(layout) and i + 1 < len(sentences) and s.line not in toc:
            nxt = sentences[i + 1]
            if heading_continuation(doc, s.line) == nxt.line and nxt.line not in toc:
                rest = sentence_layout(doc, nxt)
                if _whole_line(rest):
                    text = f"{text} {_shown(doc, nxt)}"
                    layout = _joined(layout, rest)
                    joined_into.add(i + 1)
        text = truncate_for_model(text, max_chars_en, max_chars_zh)
        role = TOC if s.line in toc else ASIDE if is_aside(text, layout.blank_after) else ""
        out.append(Unit(i, s.start, text, replace(layout, role=role) if role else layout))
    return out
