"""A manual page's sections (NAME, SYNOPSIS, DESCRIPTION ...) are its sections, in any language around them.

Every Unix manual page is cut into the same few sections, named in capitals by man-pages(7):
NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS, FILES, SEE ALSO, BUGS, AUTHOR and a few more.
Translations keep the English name and put their own beside it ("总览 SYNOPSIS", "NAME(名称)").
A model that never saw a translated manual page reads those lines as labels in running text:
with their markers hidden, the fold model that left ``manpages-zh`` out found 36% of its Markdown
headings. Over the corpus's Markdown, 2,572 of the 2,593 lines so named that stand alone outside
code, in documents with three of them (NAME or SYNOPSIS among them), are headings; the others are
man(7) listing the names, and lines a converter left plain.

So where a document has at least ``MIN_SECTIONS`` such lines standing apart and outside code
fences (NAME or SYNOPSIS among them), with at most one titled start above them (its title; a
guide that shows a page's template in its text has sections of its own above it), each starts a
titled section, all on one level: one below the page's title ("LSATTR(1)", "git-credential(1)")
when a titled start above them or the document's first line is one, else the level the model
gave most of them, else the top level. Model-agnostic: it reads unit texts, their layout and the
starts already made.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from hichunk.engine.fences import code_lines
from hichunk.protocol import LineLayout
from hichunk.textnorm import fold

MAN_SECTIONS = frozenset({
    "NAME", "NAMES", "SYNOPSIS", "CONFIGURATION", "DESCRIPTION", "OVERVIEW", "OPTIONS", "COMMAND OPTIONS", "ARGUMENTS",
    "COMMANDS", "USAGE", "EXIT STATUS", "RETURN VALUE", "RETURN VALUES", "ERRORS", "DIAGNOSTICS", "ENVIRONMENT",
    "FILES", "VERSIONS", "ATTRIBUTES", "CONFORMING TO", "STANDARDS", "HISTORY", "NOTES", "CAVEATS", "WARNINGS",
    "SECURITY", "SIGNALS", "LIMITATIONS", "RESTRICTIONS", "BUGS", "REPORTING BUGS", "EXAMPLE", "EXAMPLES", "AUTHOR",
    "AUTHORS", "COPYRIGHT", "LICENSE", "AVAILABILITY", "SEE ALSO", "SUMMARY", "VARIABLES", "PROMPTS", "KEYWORDS",
    "SCRIPT FILES",
})
MIN_SECTIONS = 3
_SIGNATURE = frozenset({"NAME", "SYNOPSIS"})  # every manual page opens with them

# the name in capitals, a translation of at most a few words before it or after it (bare or in brackets)
_SECTION = re.compile(r"^(?:[^\x00-\x7f]{1,8}\s*)?([A-Z][A-Z ]*[A-Z])\s*(?:[(（][^()（）]{1,12}[)）]|[^\x00-\x7f][^.!?。！？]{0,11})?$")
_PAGE_TITLE = re.compile(r"^\S+\s*[(（]\d\w{0,5}[)）]$")  # "LSATTR(1)", "git-credential(1)", "for(3tcl)"


def man_section(text: str) -> str | None:
    """The man-pages(7) section a line is named after ("总览 SYNOPSIS" -> "SYNOPSIS"), or None."""
    m = _SECTION.match(fold(text).strip())
    return m[1] if m and m[1] in MAN_SECTIONS else None


def man_sections_as_starts(points: dict[int, tuple[int, bool]], texts: Sequence[str],
                           layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with every standalone manual-page section line a titled start of one level."""
    sections = [u for u, text in enumerate(texts) if (layout is None or (layout[u].blank_before and not layout[u].role))
                and man_section(text)]
    if len(sections) >= MIN_SECTIONS:
        code = code_lines(texts)  # a manual page shown as an example in a guide is code, not the guide's sections
        sections = [u for u in sections if u not in code]
    if len(sections) < MIN_SECTIONS or not _SIGNATURE & {man_section(texts[u]) for u in sections}:
        return points
    if sum(1 for u, (_, title) in points.items() if title and u < sections[0]) > 1:
        return points  # a page opens on its sections, under its title alone: this one shows a page inside its text
    # the page's title: a titled start above the sections, or the document's first line (its opening chunk, level 1)
    titles = [u for u in range(sections[0]) if (u == 0 or points.get(u, (0, False))[1])
              and _PAGE_TITLE.match(fold(texts[u]).strip())]
    found = Counter(points[u][0] for u in sections if u in points)
    level = points.get(titles[-1], (1,))[0] + 1 if titles else found.most_common(1)[0][0] if found else 1
    return points | {u: (level, True) for u in sections}
