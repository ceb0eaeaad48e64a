"""No section starts inside a fenced code block.

With heading markers hidden, a Markdown file still shows its code fences, and the
lines between them are code: a shell comment (``# 环境设置``), a call
(``app = Flask(__name__)``), the last line of a snippet (``}).login()``), even a
whole man page shown as an example. A model that reads such a line as a
heading ends the section in the middle of its example, and the start's level
skews the levels of the real headings around it. So starts on the lines inside
a fenced block, and on its closing fence, are dropped (a start on the opening
fence is left: the chunk then opens with the block). Only backtick fences
(three or more, up to three spaces of indent, no backtick after them on the
opening line) that close (a line of at least as many backticks and nothing
else) count: plain-text manuals underline headings with runs of ``~``, and a
stray unclosed fence must not silence the rest of a document. Model-agnostic,
like the other document-level passes: it reads unit texts only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_OPEN = re.compile(r"^ {0,3}(`{3,})[^`]*$")
_CLOSE = re.compile(r"^ {0,3}(`{3,})\s*$")


def code_lines(texts: Sequence[str]) -> set[int]:
    """Indexes of the lines inside closed backtick fences, closing fences included."""
    inside: set[int] = set()
    opened: tuple[int, int] | None = None  # (line, fence length) of the open fence
    for i, text in enumerate(texts):
        if "```" not in text:
            continue
        if opened is None:
            m = _OPEN.match(text)
            if m:
                opened = (i, len(m[1]))
        else:
            m = _CLOSE.match(text)
            if m and len(m[1]) >= opened[1]:
                inside.update(range(opened[0] + 1, i + 1))
                opened = None
    return inside


def starts_outside_code_fences(points: dict[int, tuple[int, bool]],
                               texts: Sequence[str]) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) without the starts inside fenced code blocks."""
    code = code_lines(texts)
    if not code:
        return points
    return {u: v for u, v in points.items() if u not in code}
