"""A chunk predicted to start at the first item of a list under a title line starts at the title; none starts
at a later item.

How-to pages title their steps with short headings over a tight list
(``机器人收不到消息`` / ``1. 检查应用是否已发布`` / ``2. 检查事件订阅``). With
heading markers hidden, a model may miss the title line yet see that something
begins, and put the start on the list's first item: the chunk then opens with
"1. 检查…" and the title ends the chunk before. When a predicted start's own
line opens a tight list (a list item after a blank line, the next line the
next item of the same list: the same bullet, or the next number) and the line
above is a paragraph of its own shaped like a title (one whole short line,
blank lines around, no role, not a point itself, not ending like a sentence or
a colon that introduces the list), the start moves up onto the title. A
numbered heading ("1. Introduction") has body text under it, not its sibling
"2." on the next line, so it is left alone. Model-agnostic, like the other
document-level passes.

The other items of a tight list never start a section: a start on an item
whose line follows the item before it with no blank line (the same bullet,
or the number one less: "3. 方便个性化定制" right under "2. 先进性") is dropped.
A model that took such a line for a numbered heading ends the section in the
middle of its list, and its level (often 1) skews the levels of the real headings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hichunk.engine.outline import title_shaped
from hichunk.protocol import LineLayout
from hichunk.textnorm import fold

_ITEM = re.compile(r"^\s*(?:([-*+•·])|(\d{1,3})[.)、])\s+\S")
_INTRODUCES = (".", "。", ":", ";", ",", "!", "?")  # folded text: "：" reads ":"


def list_item(text: str) -> tuple[str, int] | None:
    """A list item's marker: ("-", 0) for a bullet, ("1", n) for the n-th numbered item; None for other lines."""
    m = _ITEM.match(fold(text))
    if m is None:
        return None
    return (m[1], 0) if m[1] else ("1", int(m[2]))


def _opens_tight_list(unit: int, texts: Sequence[str], layout: Sequence[LineLayout]) -> bool:
    here = list_item(texts[unit])
    if here is None or unit + 1 >= len(texts) or not layout[unit].blank_before or layout[unit].blank_after:
        return False
    below = list_item(texts[unit + 1])
    return below is not None and below == (here[0], here[1] + (here[0] == "1"))


def _title_above(text: str, layout: LineLayout) -> bool:
    whole = layout.starts_line and layout.ends_line and layout.blank_before and layout.blank_after
    return (whole and not layout.role and list_item(text) is None and title_shaped(text, layout)
            and not fold(text).rstrip().endswith(_INTRODUCES))


def _continues_tight_list(unit: int, texts: Sequence[str], layout: Sequence[LineLayout]) -> bool:
    """Whether the line is an item right under the item before it (no blank line between)."""
    if unit == 0 or layout[unit].blank_before:
        return False
    here, above = list_item(texts[unit]), list_item(texts[unit - 1])
    return here is not None and above is not None and here == (above[0], above[1] + (above[0] == "1"))


def starts_on_titles_above_lists(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                                 layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with starts on a list's first item moved onto the title line above
    and starts on its later items dropped."""
    if layout is None:
        return points
    out = {u: v for u, v in points.items() if not _continues_tight_list(u, texts, layout)}
    for unit in sorted(out):
        above = unit - 1
        if above < 0 or above in out or not _opens_tight_list(unit, texts, layout):
            continue
        if _title_above(texts[above], layout[above]):
            level, _ = out.pop(unit)
            out[above] = (level, True)
    return out
