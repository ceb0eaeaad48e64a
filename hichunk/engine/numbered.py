"""In a document whose sections carry numbers, a start without one below the top level is not a section.

A manual numbered "1", "1.1", "1.1.2" (or "第1章", "（一）", "Chapter 3") states its outline in
its numbers. Its short unnumbered lines under a numbered section are not more of that outline:
table rows and option names ("Setting", "Learning Cycles"), menu entries ("F11 设置全屏模式"),
definition terms and running labels. A model that reads one of them as a heading ends the real
section in the middle of its text. So once most starts of a document (at least
``MIN_NUMBERED`` and a share ``MIN_SHARE``) are numbered, the unnumbered starts below the
shallowest numbered level are dropped. That level and those above it keep theirs ("Preface",
"References", "Concept Index" beside numbered chapters; a manual's title above them), and so
does the opening chunk. Model-agnostic, like the other document-level passes: it reads unit
texts and the levels already made consistent.
"""

from __future__ import annotations

from collections.abc import Sequence

from hichunk.engine.outline import HEADING_CHARS, heading_style
from hichunk.protocol import LineLayout

MIN_NUMBERED = 3
MIN_SHARE = 0.6


def numbered_outline_only(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                          layout: Sequence[LineLayout] | None = None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) without unnumbered starts below the numbered top of a numbered document."""
    if not points:
        return points
    numbered = {u for u in points if _numbered(texts[u], layout[u] if layout else None)}
    if len(numbered) < MIN_NUMBERED or len(numbered) < MIN_SHARE * len(points):
        return points
    top = min(points[u][0] for u in numbered)
    return {u: v for u, v in points.items() if u in numbered or v[0] <= top or u == 0}


def _numbered(text: str, layout: LineLayout | None) -> bool:
    """Whether a line opens with a section number, however long it runs ("1.3 Question 2.3. What do I do if ...")."""
    return bool(heading_style(text.strip()[:HEADING_CHARS], layout).numbering)
