"""Definition-list terms are not sections: no chunk starts on a run of terms, each over its one-item definition.

Reference pages list their entries as terms, each over a short definition:
a menu reference's ``CtrlShiftN 文件新窗口`` over ``- 用默认配置方案打开一个新 Konsole 窗口``,
a glossary's word over its meaning, an options table's ``--verbose`` over what
it does. With heading markers hidden, a term reads like a heading (a short line
of its own, text under it), and a model starts a chunk on each one, deep under
the section that lists them. But a section opens onto more than one list item
or onto prose; a term opens onto exactly one item, its definition. So where
three or more predicted starts in a row each sit on a line whose next line is a
list item and under which no other item follows before the next start, they
are the entries of one list, not an outline, and are dropped: the section the
list belongs to keeps it whole. Two in a row are left alone (a short section
may hold a single bulleted point), and so is a numbered line (``（一）机器人收不到消息``,
``第七节 v2022.4.1``): its number places it in the outline, whatever lies under it (a
plain-text rendering may even run a list's items into one line). Model-agnostic, like the other
document-level passes.
"""

from __future__ import annotations

from collections.abc import Sequence

from hichunk.engine.lists import list_item
from hichunk.engine.outline import heading_style
from hichunk.protocol import LineLayout

MIN_RUN = 3  # terms in a row before they count as a list's entries


def _opens_one_item(unit: int, end: int, texts: Sequence[str], layout: Sequence[LineLayout] | None) -> bool:
    """Whether the unit's next line is a list item and no other item begins before unit ``end``."""
    def item_line(u: int) -> bool:
        return (layout is None or layout[u].starts_line) and list_item(texts[u]) is not None

    if unit + 1 >= end or not item_line(unit + 1) or list_item(texts[unit]) is not None:
        return False
    if heading_style(texts[unit], layout[unit] if layout else None).numbering:
        return False
    return not any(item_line(u) for u in range(unit + 2, end))


def starts_off_definition_terms(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                                layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) without the starts on runs of ``MIN_RUN`` or more definition terms."""
    starts = sorted(points)
    ends = [*starts[1:], len(texts)]
    terms = [points[u][1] and _opens_one_item(u, e, texts, layout) for u, e in zip(starts, ends)]
    dropped: set[int] = set()
    i = 0
    while i < len(starts):
        j = i
        while j < len(starts) and terms[j]:
            j += 1
        if j - i >= MIN_RUN:
            dropped.update(starts[i:j])
        i = max(j, i + 1)
    return {u: v for u, v in points.items() if u not in dropped} if dropped else points
