"""Hand-written split-point baselines the trained model must beat (registered as models).

* ``rules`` (``HeadingRules``): a line is a heading when it is short, does not
  end like a sentence or a list item, does not look like code, and is followed
  by a longer line. Its level comes from its numbering ("3.2" -> 3,
  "第2章"/"一、" -> 2, "（一）" -> 3); an unnumbered heading is level 1 when it
  opens the document, else 2.
* ``numbering`` (``NumberingRegex``): the one-line numbering regex: a whole,
  short line that starts with an outline number ("2", "2.1", "A.3") or a
  chapter marker ("Chapter 4", "第2章", "一、", "（一）") is a heading; outline
  depth gives the level, chapter markers level 1.
* ``fontsize`` (``FontSizeHeuristic``): for typeset documents (PDF, DOCX): a
  whole short line set larger than the body, or bold with space above, is a
  heading; its level is the rank of its (size, bold) among the document's
  heading styles, largest first.

They follow the split-point model protocol, so they run through the same
engine, document-level levels and evaluation as any model.
"""

from __future__ import annotations

import re

from hichunk.engine.outline import heading_style
from hichunk.models.encoder.model import count_lines
from hichunk.numbering import number_pattern
from hichunk.protocol import ChunkStart, LineLayout, Prediction, Window
from hichunk.sentences import is_chinese

MAX_CHARS_EN = 80
MAX_CHARS_ZH = 30
_SENTENCE_END = tuple(".,;:!?。，；：！？、")
_CODE = re.compile(r"[{}()\[\]=<>;$`|\\]|^\s*(?:[-*+•]\s|\d+[.)]\s)|https?://")
_DECIMAL = re.compile(r"^\s*[0-9０-９]{1,3}((?:[.．][0-9０-９]{1,3})*)")
_STYLE_LEVEL = {"zh-chapter": 2, "chapter-word": 2, "zh-enum": 2, "roman": 2, "zh-paren": 3, "paren": 3,
                "letter": 3, "circled": 3, "section-sign": 2}


def looks_like_heading(text: str, next_text: str | None) -> bool:
    """Short, not sentence-like, not code, and followed by a longer line."""
    s = text.strip()
    if not s or next_text is None:
        return False
    limit = MAX_CHARS_ZH if is_chinese(s) else MAX_CHARS_EN
    if len(s) > limit or s.endswith(_SENTENCE_END) or _CODE.search(s):
        return False
    if not (s[0].isupper() or s[0].isdigit() or is_chinese(s[0])):
        return False
    return len(next_text.strip()) > len(s)


def heading_level(text: str, first: bool) -> int:
    """Level from numbering; unnumbered: 1 at the top of the document, else 2."""
    style = number_pattern(text.strip())
    if style == "decimal":
        dots = _DECIMAL.match(text.strip())
        return 2 + len(re.findall(r"[.．][0-9０-９]", dots.group(1))) if dots else 2
    if style in _STYLE_LEVEL:
        return _STYLE_LEVEL[style]
    return 1 if first else 2


class _LineBaseline:
    """Window size in lines, no instruction: what every baseline shares."""

    window_tokens = 1024

    def __init__(self, settings=None):
        """``settings``: ``hichunk.models.registry.ModelSettings`` (only the window size applies)."""
        if settings is not None and settings.window_tokens:
            self.window_tokens = settings.window_tokens

    def count_tokens(self, text: str) -> int:
        return count_lines(text)

    def overhead_tokens(self) -> int:
        return 0


def _whole_short(text: str, layout: LineLayout | None) -> bool:
    s = text.strip()
    limit = MAX_CHARS_ZH if is_chinese(s) else MAX_CHARS_EN
    return bool(s) and len(s) <= limit and (layout is None or (layout.starts_line and layout.ends_line))


class HeadingRules(_LineBaseline):
    """Rule-based split points (no training, no weights)."""

    name = "heading-rules"

    def predict(self, window: Window) -> Prediction:
        lines = window.lines
        starts = []
        for i in range(window.n_residual, len(lines)):
            nxt = lines[i + 1] if i + 1 < len(lines) else None
            if looks_like_heading(lines[i], nxt):
                first = window.n_residual == 0 and i == 0
                starts.append(ChunkStart(i, heading_level(lines[i], first), True))
        return Prediction(starts)


_CHAPTER_LEVEL1 = ("word-chapter", "word-part", "word-appendix", "zh-章", "zh-编", "zh-編", "zh-篇", "zh-部分", "zh-enum")


class NumberingRegex(_LineBaseline):
    """Numbered whole short lines are headings; outline depth (or a chapter marker) gives the level."""

    name = "numbering-regex"

    def predict(self, window: Window) -> Prediction:
        starts = []
        for i in range(window.n_residual, len(window.lines)):
            text = window.lines[i]
            layout = window.layout[i] if window.layout else None
            if not _whole_short(text, layout) or text.strip().endswith(_SENTENCE_END):
                continue
            style = heading_style(text)
            if style.numbering == "outline":
                starts.append(ChunkStart(i, min(style.depth, 10), True))
            elif style.numbering in _CHAPTER_LEVEL1:
                starts.append(ChunkStart(i, 1, True))
            elif style.numbering in ("zh-节", "zh-節", "zh-paren"):
                starts.append(ChunkStart(i, 2, True))
        return Prediction(starts)


class FontSizeHeuristic(_LineBaseline):
    """Larger (or bold, spaced) whole short lines are headings, ranked by size then weight."""

    name = "fontsize-heuristic"
    window_tokens = 1 << 20  # levels are ranks over the whole document: one window

    def predict(self, window: Window) -> Prediction:
        found = []
        for i in range(window.n_residual, len(window.lines)):
            layout = window.layout[i] if window.layout else None
            if layout is None or not _whole_short(window.lines[i], layout):
                continue
            if layout.size >= 1.12 or (layout.bold and layout.gap >= 1.2):
                found.append((i, (-round(layout.size * 20) / 20, -int(layout.bold))))
        ranks = {key: rank for rank, key in enumerate(sorted({key for _, key in found}))}
        return Prediction([ChunkStart(i, min(ranks[key] + 1, 10), True) for i, key in found])
