"""A chunk predicted to start at the description under an API heading starts at the heading.

API references title their entries with code signatures (``def json()``,
``async def get_info()``, ``class Api()``, ``Widget.render(ctx)``), one per
line with blank lines around, as Sphinx, mkdocstrings and pdoc write them.
With heading markers hidden, a model that takes such a line for code still
sees that a new entry begins, and puts the start on the description below it:
the chunk then opens with "转换为 JSON 数据" and the signature ends the chunk
before. When the line right above a predicted start is a paragraph of its own
(one whole line with blank lines around it) shaped like a signature, not a
start itself and not a role line, and the start's own line carries no heading
style (numbering, underline, type size or weight), the start moves up onto the
signature. Only signatures: a plain line above a heading (the last sentence of
a section, a ``.. versionadded::`` note) is no evidence, and moving onto it
broke correct starts in plain-text books. Model-agnostic, like the other
document-level passes: it reads unit texts and layouts only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hichunk.engine.outline import heading_style
from hichunk.protocol import LineLayout
from hichunk.textnorm import fold

# Keywords, a dotted identifier (Markdown may escape its underscores), a parameter list, a return annotation;
# the whole may be one code span (Node.js's "`console.log([data][, ...args])`").
_SIGNATURE = re.compile(
    r"^(`?)(?:(?:async|def|class|function|func|fn|method|property|static|classmethod|staticmethod|coroutine|new)\s+)*"
    r"[A-Za-z_\\$][\w.\\:$]*\s*\([^()`]*\)\s*(?:(?:->|:)\s*[\w.\[\], |\\]+)?\1$")  # in backticks or not


def signature_shaped(text: str) -> bool:
    """Whether a line reads as an API entry's code signature (``async def get_info()``, ``Api.request(url)``)."""
    return bool(_SIGNATURE.match(fold(text).strip()))


def _standalone_signature(text: str, layout: LineLayout) -> bool:
    whole = layout.starts_line and layout.ends_line and layout.blank_before and layout.blank_after
    return whole and not layout.role and signature_shaped(text)


def _styled(text: str, layout: LineLayout) -> bool:
    """Heading style that marks the start's own line as the heading (capitals aside: "转换为 JSON 数据" has no
    lower-case letter, and is a description)."""
    style = heading_style(text, layout)
    return bool(style.numbering or style.underline or style.size != 1.0 or style.bold)


def starts_on_signatures_above(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                               layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with starts under a standalone signature moved onto it (once: never
    onto a line that was a start itself)."""
    if layout is None:
        return points
    out = dict(points)
    for unit in sorted(points):
        above = unit - 1
        if above < 0 or above in points or above in out or not layout[unit].blank_before:
            continue
        if _styled(texts[unit], layout[unit]) or not _standalone_signature(texts[above], layout[above]):
            continue
        level, _ = out.pop(unit)
        out[above] = (level, True)
    return out
