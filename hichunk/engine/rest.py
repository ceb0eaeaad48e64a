"""In reST sources, the title line right above a ``.. module::`` directive opens a section.

Sphinx documents a module on a page (or a section) whose title comes first
and whose ``.. module:: name`` directive comes right after it (``:mod:`distutils.core`
--- Core Distutils functionality`` over ``.. module:: distutils.core``); every
Sphinx project's ``_sources/*.rst.txt`` follows this. Read as text, such a
title is full of role markup and reads like code, and a model may miss every
one of them: Python's distutils API reference lost 43 of its 45 headings, and
its chunks ran over many modules each. The directive is read as an aside
(``hichunk.document.roles``), never a start; the title line above it (one whole
short line with blank lines around, no role, not typeset larger or bold: in a
PDF the type tells) becomes a titled start when it is
not one already, one level below the titled starts before it (the page's
title), or on level 1 when it is the first. Model-agnostic, like the other
document-level passes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hichunk.engine.outline import title_shaped
from hichunk.protocol import LineLayout
from hichunk.textnorm import first_visible, fold

_MODULE = re.compile(r"^\.\.\s+(?:py:)?module::\s*\S")


def _title_line(text: str, layout: LineLayout) -> bool:
    """A title as text shows it: a whole line, blank lines around, no role, no type size or weight of its own
    (a typeset title is the model's to read; there the outline's size rules set the levels)."""
    whole = layout.starts_line and layout.ends_line and layout.blank_before and layout.blank_after
    plain = layout.size == 1.0 and not layout.bold
    return whole and plain and not layout.role and title_shaped(text, layout)


def starts_on_module_titles(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                            layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with the title line above each ``.. module::`` directive a titled start."""
    if layout is None:
        return points
    out = dict(points)
    for unit in range(1, len(texts)):
        above = unit - 1
        if (above in out or first_visible(texts[unit]) != "." or not _MODULE.match(fold(texts[unit]).lstrip())
                or not _title_line(texts[above], layout[above])):
            continue
        before = [lv for u, (lv, title) in out.items() if u < above and title]
        out[above] = (min(before) + 1 if before else 1, True)
    return out
