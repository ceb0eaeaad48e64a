"""A heading stands apart: no section starts on a plain line glued to the lines above and below it.

Headings are set off from their text: a blank line above or below (Markdown, plain
text), a larger or bolder type (PDF, DOCX), an underline rule. A model that reads a
window of short lines (a list of colour names one per line, a column of option
names, a wrapped table) may still take one of them for a heading, and the
section then ends in the middle of the list. In a document whose starts mostly
stand apart, a start on a whole line with no blank line on either side, in body
type, not underlined and not indented, between two whole lines, is dropped. A
document without blank lines (text with no paragraph breaks) keeps every start:
there, standing apart says nothing. Model-agnostic, like the other
document-level passes: it reads unit layouts only.
"""

from __future__ import annotations

from collections.abc import Sequence

from hichunk.protocol import LineLayout

MIN_SHARE_APART = 0.5  # of a document's starts, set off by a blank line, before a glued one is suspect


def _glued(unit: int, layout: Sequence[LineLayout]) -> bool:
    here = layout[unit]
    if unit == 0 or unit + 1 >= len(layout) or here.blank_before or here.blank_after:
        return False
    plain = here.size == 1.0 and not here.bold and not here.underline and not here.indented
    whole = here.starts_line and here.ends_line and layout[unit - 1].ends_line and layout[unit + 1].starts_line
    return plain and whole


def starts_set_apart(points: dict[int, tuple[int, bool]],
                     layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) without starts glued to their neighbours, in a document whose
    starts mostly stand apart."""
    if layout is None or not points:
        return points
    apart = sum(1 for u in points if layout[u].blank_before or layout[u].blank_after)
    if apart < MIN_SHARE_APART * len(points):
        return points
    return {u: v for u, v in points.items() if not _glued(u, layout)}
