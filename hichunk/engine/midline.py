"""A section opens at the start of its line: a start inside a paragraph's first line moves to the line's start.

A heading line can read as more than one sentence: a label and a question
("Question 2.1. Is it possible to install Asymptote on Mac OS X?", "10.13 R13.
What does "Interrupted system call" mean?"), a signature and its description
("3.15.62 ellpadiclambdamu(E, p). Let p be a prime ..."). The sentence splitter
cuts it after the label, and a model that sees a question begins a section
there, leaving the label at the end of the section before. When a start's
sentence begins inside a line that opens a paragraph (a blank line or the
document's start above it), and no start is on the line before it, the start
moves to the line's first sentence. Lines inside a paragraph keep their
starts (a run-in start in running text is the model's to place), and so do
lines that are never starts (table-of-contents entries, captions, callouts).
Model-agnostic, like the other document-level passes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from hichunk.engine.outline import title_shaped
from hichunk.protocol import LineLayout


def starts_at_line_starts(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                          layout: Sequence[LineLayout] | None,
                          fixed: Collection[int] = ()) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with starts inside a paragraph's first line moved to its first unit.

    The moved start keeps its level; it is titled when it was and the whole line is shaped like a title.
    Starts in ``fixed`` (a failed window's fallback starts, not predictions) stay where they are.
    """
    if layout is None:
        return points
    out = dict(points)
    for unit in sorted(points):
        if layout[unit].starts_line or unit in fixed:
            continue
        first = unit
        while first > 0 and not layout[first].starts_line:
            first -= 1
        if not layout[first].blank_before or layout[first].role or any(u in out for u in range(first, unit)):
            continue
        last = unit
        while last + 1 < len(layout) and not layout[last].ends_line:
            last += 1
        level, title = out.pop(unit)
        out[first] = (level, title and title_shaped(" ".join(texts[first : last + 1])))
    return out
