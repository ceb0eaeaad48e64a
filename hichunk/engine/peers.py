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
are left alone. Code signatures need less evidence: an API reference's short
entries (``def has_buvid3()`` over one line of description) are the ones a model
misses most, and a call shape on a line of its own is no keyword list, so a fifth
of them found (two at least) is enough, whatever share of their level they make
(an API section's entries share their level with prose headings such as "Usage"). So for entries named
by one code span on a line of its own (Node.js's `` `ERR_HTTP_HEADERS_SENT` ``, `` `--jitless` ``).
Model-agnostic, like the other document-level passes.

Typeset documents have one more such style: the chapter type. A thesis sets
"摘 要", "致 谢", "参考文献" and "附录 A 常见问题" in the same large type as
"第一章 简介"; a model that found the numbered chapters often misses the
unnumbered ones. Once the levels are settled (``type_peers_as_titles`` runs
after them), when the titled starts of one level are mostly lines of one large
type and a fair share of that type's standalone lines are among them, the
type's other lines are headings of that level too. A title page sets a few
lines in large type as well; they are fewer than the headings, and they are
the price of this rule, unless they come before the type's first found heading (a cover
page): there only front matter ("摘 要", "Preface") joins.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

from hichunk.engine.matter import heading_name
from hichunk.engine.outline import heading_style, title_shaped
from hichunk.engine.signatures import signature_shaped
from hichunk.protocol import LineLayout
from hichunk.textnorm import fold

MIN_FOUND = 2  # predicted titles of a style before its other lines follow them
MIN_SHARE_OF_STYLE = 0.5  # of the style's standalone lines, predicted titles
MIN_SHARE_OF_SIGNATURES = 0.2  # the same for code signatures (leave-family-out: 0.2 and 0.1 alike, 0.3 less)
MIN_SHARE_OF_LEVEL = 0.5  # of the level's titled starts, the style's
LARGE_TYPE = 1.25  # a font this much larger than the body's: a chapter type
# front matter set in the chapter type before the first chapter; other lines there in that type are a title page
_FRONT_NAMES = re.compile(r"^(?:序|序言|前言|引言|摘要|概述|abstract|preface|foreword|introduction)$")
MIN_SHARE_OF_TYPE = 0.25  # of the type's standalone lines, titled starts of one level (a title page has some too)


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
        if _CODE_NAME.match(fold(text).strip()):
            groups[("signature", "name")].append(unit)  # an entry named by a code span alone: `ERR_X`, `--jitless`
        elif style.caps or style.underline:
            groups[style.family].append(unit)
        elif fold(text).rstrip().endswith("?"):  # an FAQ's questions ("？" folds to "?")
            groups[("question",)].append(unit)
        elif signature_shaped(text):
            # A bare signature (``get_info(uid)``) and an annotated field (``uid (int): 用户 ID``) are two styles.
            groups[("signature", text.rstrip().endswith(")"))].append(unit)
    return groups


_CODE_NAME = re.compile(r"^`[^`\s/]+`$")  # one token, no path or address (`~/.config/app.json` is a file named)


def styled_peers_as_titles(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                           layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with the missed lines of a mostly-found heading style added as titles."""
    if layout is None:
        return points
    titled_at = Counter(level for level, title in points.values() if title)
    out = dict(points)
    for style, members in _peer_groups(texts, layout).items():
        signatures = style[0] == "signature"
        found = [u for u in members if points.get(u, (0, False))[1]]
        share = MIN_SHARE_OF_SIGNATURES if signatures else MIN_SHARE_OF_STYLE
        if len(found) < MIN_FOUND or len(found) < share * len(members):
            continue
        counts = Counter(points[u][0] for u in found)
        level = min(counts, key=lambda lv: (-counts[lv], lv))
        if not signatures and counts[level] < MIN_SHARE_OF_LEVEL * titled_at[level]:
            continue
        for unit in members:
            if unit not in out and unit - 1 not in points:
                out[unit] = (level, True)
    return out


def type_peers_as_titles(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                         layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """``points`` with the missed lines of a large type that a level's titled starts are mostly set in added
    at that level (run once levels are settled)."""
    if layout is None:
        return points
    types: dict[tuple, list[int]] = defaultdict(list)
    for unit, (text, shape) in enumerate(zip(texts, layout)):
        if shape.size >= LARGE_TYPE and _standalone(shape) and title_shaped(text, shape):
            style = heading_style(text, shape)
            types[(style.size, style.bold)].append(unit)
    titled_at = Counter(level for level, title in points.values() if title)
    out, opening = dict(points), min(points, default=0)  # the opening start (a title) is no chapter found
    for members in types.values():
        found = Counter(points[u][0] for u in members if points.get(u, (0, False))[1])
        if not found:
            continue
        level, n = min(found.items(), key=lambda item: (-item[1], item[0]))
        if n < MIN_FOUND or n < MIN_SHARE_OF_TYPE * len(members) or n < MIN_SHARE_OF_LEVEL * titled_at[level]:
            continue
        first = min((u for u in members if points.get(u, (0, False))[1] and u != opening), default=opening)
        for unit in members:  # nor a title line under a label line; nor a title page before the first found
            if (unit > first or _front_matter(texts[unit])) and unit not in out and unit - 1 not in out:
                out[unit] = (level, True)
    return out


def _front_matter(text: str) -> bool:
    """Whether a line is named like the front matter that opens a book before its first chapter ("摘 要", "Preface")."""
    return bool(_FRONT_NAMES.match(heading_name(text)))
