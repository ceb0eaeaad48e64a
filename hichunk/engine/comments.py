"""A start on an HTML comment goes onto the heading above it, or goes when a start follows the comment.

Markdown renders an HTML comment (``<!-- YAML added: v0.10.8 -->`` under each entry of Node.js's API
pages, ``<!-- End section: Overview -->`` in a README) as nothing, but a model reads its lines. It
takes the comment for where the entry begins and starts the chunk there: under a heading it did not
take for one ("`--abort-on-uncaught-exception`", an option's name in a code span), and the heading then
ends the chunk before. So a start on the first line of a comment block moves up onto the line right
above it when that line stands apart, is shaped like a title (and ends on no stop or colon) and is no
start itself; and a start on a
comment that the next start follows right after the comment's end goes (the chunk would open with
nothing a reader sees). Model-agnostic, like the other document-level passes: it reads unit texts
and layouts only.
"""

from __future__ import annotations

from collections.abc import Sequence

from hichunk.engine.outline import title_shaped
from hichunk.protocol import LineLayout
from hichunk.textnorm import fold

_RUNNING_END = (".", "。", ":", ",", ";", "!")  # folded: a line of running text ("See the list below:")


def starts_off_comments(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                        layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with no start left on the opening line of an HTML comment block."""
    if layout is None or not any(texts[u].lstrip().startswith("<!--") for u in points):
        return points
    out = dict(points)
    for unit in sorted(points):
        if not texts[unit].lstrip().startswith("<!--") or unit == 0:
            continue
        end = _comment_end(texts, unit)
        above = unit - 1
        if (above not in out and layout[unit].blank_before and layout[above].starts_line and layout[above].blank_before
                and not layout[above].role and title_shaped(texts[above], layout[above])
                and not fold(texts[above]).rstrip().endswith(_RUNNING_END)):
            level, _ = out.pop(unit)
            out[above] = (level, True)
        elif end is not None and end + 1 in out:
            del out[unit]
    return out


def _comment_end(texts: Sequence[str], unit: int) -> int | None:
    """The unit that closes the comment opened on ``unit`` (None: it does not close within 50 units)."""
    for u in range(unit, min(len(texts), unit + 50)):
        if "-->" in texts[u]:
            return u
    return None
