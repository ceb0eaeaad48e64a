"""No section starts inside a fenced code block, nor inside a page's front matter.

With heading markers hidden, a Markdown file still shows its code fences, and the
lines between them are code: a shell comment (``# 环境设置``), a call
(``app = Flask(__name__)``), the last line of a snippet (``}).login()``), even a
whole man page shown as an example. A model that reads such a line as a
heading ends the section in the middle of its example, and the start's level
skews the levels of the real headings around it. So starts on the lines inside
a fenced block, and on its closing fence, are dropped (a start on the opening
fence is left: the chunk then opens with the block). Only fences that close
count (a line of at least as many of the fence's characters and nothing else): a
stray unclosed fence must not silence the rest of a document. Backtick fences
(three or more, up to three spaces of indent, no backtick after them on the
opening line) count as they are; a tilde fence (``~~~python``) only when its
opening line names a language, since plain-text manuals underline headings with
runs of ``~`` and two such underlines would read as a bare fence and its close. Model-agnostic,
like the other document-level passes: it reads unit texts only.

A page's YAML or TOML front matter (``---`` / ``title: ...`` / ``---`` opening the
file, as ``hichunk.document.markdown.front_matter_end`` reads it) is fenced the
same way: it is the page's metadata, and a start on one of its keys
(``docClass: timeline``) would split it from the page's title.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hichunk.document.markdown import front_matter_end

_OPEN = re.compile(r"^ {0,3}(?:(`{3,})[^`]*|(~{3,}) *[A-Za-z][^~]*)$")  # a tilde fence names its language
_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*$")


def code_lines(texts: Sequence[str]) -> set[int]:
    """Indexes of the lines inside closed fences (backticks, or tildes naming a language), closing fences included."""
    inside: set[int] = set()
    opened: tuple[int, str] | None = None  # (line, fence) of the open fence
    for i, text in enumerate(texts):
        if "```" not in text and "~~~" not in text:
            continue
        if opened is None:
            m = _OPEN.match(text)
            if m:
                opened = (i, m[1] or m[2])
        else:
            m = _CLOSE.match(text)
            if m and m[1][0] == opened[1][0] and len(m[1]) >= len(opened[1]):
                inside.update(range(opened[0] + 1, i + 1))
                opened = None
    return inside


def front_matter_lines(texts: Sequence[str]) -> set[int]:
    """Indexes of the lines of the front matter opening the text, its closing line included (empty without)."""
    return set(range(1, front_matter_end(list(texts)) + 1))


def starts_outside_fences(points: dict[int, tuple[int, bool]], texts: Sequence[str]) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) without the starts inside fenced code blocks and front matter."""
    code = code_lines(texts) | front_matter_lines(texts)
    if not code:
        return points
    return {u: v for u, v in points.items() if u not in code}
