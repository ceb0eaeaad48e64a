"""A README's title is its project's name: a line of one name the document's own links point to.

A README often opens with a banner of badges, a logo and a tagline, and only then its title, the
project's name alone on its line ("hexo-theme-anzhiyu", "CnOCR"). A model reading the window sees a
short word between markup and misses it; the sections after it then stand beside the opening banner
and one of them becomes the document's top. The name is told by the document itself: its badges and
repository links carry it in their URLs (``github.com/anzhiyu-c/hexo-theme-anzhiyu``). Over the
corpus, 38 of 39 such lines at the top of a document are its title.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hichunk.protocol import LineLayout

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9._-]{3,40}")  # one project-name token
_BADGE = re.compile(r"\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)|!\[[^\]]*\]\([^)]*\)")  # an image, or an image in a link
_URL = re.compile(r"https?://[^\s)\"'<>]+|\]\(([^)\s]+)")  # a bare URL or a Markdown link's target


def _targets(texts: Sequence[str]) -> str:
    """Every URL and link target of the document, lower case, one per line."""
    found = []
    for text in texts:
        for m in _URL.finditer(text):
            found.append((m.group(1) or m.group(0)).lower())
    return "\n".join(found)


def starts_on_project_name(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                           layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with a titled level-1 start on the project-name line of an
    untitled opening, when no titled start comes before it: a standalone line of one name token, badges
    beside it aside ("lunar [![License](...)](...)"), the only such line with that name, that a URL or
    link target of the document contains as a whole word. The outline head and the style rules then
    set the levels.
    """
    if layout is None or not points:
        return points
    first_title = min((u for u, (_, title) in points.items() if title), default=len(texts))
    names = {u: _BADGE.sub("", texts[u]).strip() for u in range(first_title)}
    # the first line, the name alone, already opens the document (a texinfo manual's "sbcl"); beside
    # badges it reads as markup, and only there it needs the title
    candidates = [u for u in range(first_title) if _NAME.fullmatch(names[u]) and layout[u].blank_before
                  and layout[u].blank_after and not layout[u].role and not layout[u].indented
                  and (u > 0 or names[u] != texts[u].strip())]
    if not candidates:
        return points
    targets = _targets(texts)
    for u in candidates:
        name = names[u].lower()
        if sum(1 for t in texts if _BADGE.sub("", t).strip().lower() == name) > 1:
            continue
        if re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", targets):
            return points | {u: (1, True)}
    return points
