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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hichunk.document.model import Document
from hichunk.protocol import LineLayout
from hichunk.sentences import MAX_CHARS_EN, MAX_CHARS_ZH, Sentence, truncate_for_model
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


def model_text(doc: Document, sentence: Sentence, max_chars_en: int = MAX_CHARS_EN, max_chars_zh: int = MAX_CHARS_ZH) -> str:
    """What a model reads of one sentence."""
    text = doc.clean[sentence.start : sentence.end]
    if doc.lines[sentence.line].heading is not None:
        text = heading_title(text)
    text = _BREAKS.sub(" ", text).strip()
    return truncate_for_model(text, max_chars_en, max_chars_zh)


def underline_of(doc: Document, index: int) -> str:
    """The rule character of the line below line ``index`` when that line is a rule under text, else ""."""
    if index + 1 >= len(doc.lines) or doc.lines[index].is_blank or _RULE.match(doc.lines[index].text):
        return ""
    m = _RULE.match(doc.lines[index + 1].text)
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


def model_units(doc: Document, sentences: list[Sentence], max_chars_en: int = MAX_CHARS_EN,
                max_chars_zh: int = MAX_CHARS_ZH) -> list[Unit]:
    """The units of a document, in order (sentences with nothing to show are left out)."""
    out = []
    for i, s in enumerate(sentences):
        text = model_text(doc, s, max_chars_en, max_chars_zh)
        if text:
            out.append(Unit(i, s.start, text, sentence_layout(doc, s)))
    return out
