"""``HeadingRules``: a hand-written heading detector, the baseline the trained model must beat.

A line is taken for a heading when it is short, does not end like a sentence
or a list item, does not look like code, and is followed by a longer line.
Its level comes from its numbering ("3.2" -> 3, "第2章"/"一、" -> 2,
"（一）" -> 3); an unnumbered heading is level 1 when it opens the document,
else 2. It follows the split-point model protocol, so it runs through the same
engine and evaluation as any model.
"""

from __future__ import annotations

import re

from hichunk.models.encoder.model import count_lines
from hichunk.numbering import number_pattern
from hichunk.protocol import ChunkStart, Prediction, Window
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


class HeadingRules:
    """Rule-based split points (no training, no weights)."""

    name = "heading-rules"
    window_tokens = 1024

    def count_tokens(self, text: str) -> int:
        return count_lines(text)

    def overhead_tokens(self) -> int:
        return 0

    def predict(self, window: Window) -> Prediction:
        lines = window.lines
        starts = []
        for i in range(window.n_residual, len(lines)):
            nxt = lines[i + 1] if i + 1 < len(lines) else None
            if looks_like_heading(lines[i], nxt):
                first = window.n_residual == 0 and i == 0
                starts.append(ChunkStart(i, heading_level(lines[i], first), True))
        return Prediction(starts)
