"""Headings the model missed, found through the peers it did find: lines of one heading style.

Man pages and many plain-text manuals title their sections with capitals on a
line of their own (``NAME(名称)``, ``SYNOPSIS``, ``DESCRIPTION``) or with an
underline rule, FAQs title theirs with questions on lines of their own, and API
references title their entries with code signatures (``nearby(word [, size =
10])``); with heading markers hidden, a model that sees one such line in a
window of code or option lists may take it for body text, and the
section it opens melts into the one before. A document is consistent about
its headings: when most standalone lines of one such style (a whole line with
blank lines around it, title-shaped, no role) are predicted title starts, and
those starts are most of the titled starts of their level, the other lines of
that style are headings of that level too. Capitals inside running text, a
keyword list (``ONLY``, ``ASC``) where only a few keywords were taken for
titles, and a line right under a start (a subtitle, a first line of content)
are left alone. Model-agnostic, like the other document-level passes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from hichunk.engine.outline import heading_style, title_shaped
from hichunk.engine.signatures import signature_shaped
from hichunk.protocol import LineLayout
from hichunk.textnorm import fold

MIN_FOUND = 2  # predicted titles of a style before its other lines follow them
MIN_SHARE_OF_STYLE = 0.5  # of the style's standalone lines, predicted titles
MIN_SHARE_OF_LEVEL = 0.5  # of the level's titled starts, the style's


def _standalone(layout: LineLayout) -> bool:
    whole = layout.starts_line and layout.ends_line and layout.blank_before and layout.blank_after
    return whole and not layout.role


def _peer_groups(texts: Sequence[str], layout: Sequence[LineLayout]) -> dict[tuple, list[int]]:
    """Standalone, title-shaped lines in capitals or with an underline rule, by heading style; questions; code
    signatures."""
    groups: dict[tuple, list[int]] = defaultdict(list)
    for unit, (text, shape) in enumerate(zip(texts, layout)):
        if not _standalone(shape):
            continue
        style = heading_style(text, shape)
        if not title_shaped(text, shape):
            continue
        if style.caps or style.underline:
            groups[style.family].append(unit)
        elif fold(text).rstrip().endswith("?"):  # an FAQ's questions ("？" folds to "?")
            groups[("question",)].append(unit)
        elif signature_shaped(text):
            # A bare signature (``get_info(uid)``) and an annotated field (``uid (int): 用户 ID``) are two styles.
            groups[("signature", text.rstrip().endswith(")"))].append(unit)
    return groups


def styled_peers_as_titles(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                           layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with the missed lines of a mostly-found heading style added as titles."""
    if layout is None:
        return points
    titled_at = Counter(level for level, title in points.values() if title)
    out = dict(points)
    for members in _peer_groups(texts, layout).values():
        found = [u for u in members if points.get(u, (0, False))[1]]
        if len(found) < MIN_FOUND or len(found) < MIN_SHARE_OF_STYLE * len(members):
            continue
        counts = Counter(points[u][0] for u in found)
        level = min(counts, key=lambda lv: (-counts[lv], lv))
        if counts[level] < MIN_SHARE_OF_LEVEL * titled_at[level]:
            continue
        for unit in members:
            if unit not in out and unit - 1 not in points:
                out[unit] = (level, True)
    return out
