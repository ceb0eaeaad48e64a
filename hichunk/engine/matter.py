"""Front and back matter (a preface, acknowledgements, a glossary, references, the indexes) are chapters.

Books and manuals put them beside their chapters, never inside the last one:
in the outlines of our real PDFs and text manuals 65 of 70 unnumbered ones are
on the top level of the document (the level of the chapters, or of the parts
when parts are there; 74 of 81 over every rendering of the corpus). A windowed
model often hangs "Concept Index" under the chapter before it, since nothing in
its window says otherwise. This pass puts a titled start named like front or
back matter on the shallowest level of the other titled starts after the document's
first heading (the title, when there is one), down as well as up: an index the model put beside
the title of a texinfo manual goes beside its chapters.

A section inside a preface ("Preface" > "Acknowledgements", as the Octave
manual has it) stays there. A name that recurs ("参考文献" closing every chapter of a thesis) is each
chapter's own and stays where the model put it. An index counts only where no
outline number ("2", "2.1") follows it ("Rename Current Index" in a user
interface's help is a command, not a book's index; "Appendix A References" may
follow one); a numbered one ("17 Acknowledgments", "Appendix D Indexes") is the
numbering's to place. Model-agnostic: it reads unit texts and the predicted
starts only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from hichunk.engine.outline import heading_style
from hichunk.textnorm import fold

_MATTER = re.compile(r"^(?:preface|foreword|acknowledge?ments?|bibliography|glossary|references|"
                     r"前言|序言|致谢|致謝|参考文献|參考文獻|术语表|術語表|索引)$", re.I)
_FRONT = re.compile(r"^(?:preface|foreword|前言|序言)$", re.I)
_LETTER_SPACE = re.compile(r"(?<=[\u3400-\u9fff])\s+(?=[\u3400-\u9fff])")  # "致 谢" set letter-spaced reads "致谢"
_INDEX = re.compile(r"^(?:[a-z]+ ){0,3}(?:index|indices|indexes)$", re.I)


def heading_name(text: str) -> str:
    """A heading's words as names are compared: folded, lower case, no trailing colon, no letter spacing."""
    return _LETTER_SPACE.sub("", fold(text).strip().rstrip(":").casefold())


def front_and_back_matter_as_chapters(points: dict[int, tuple[int, bool]], texts: Sequence[str]) -> dict[int, tuple[int, bool]]:
    """``points`` (unit -> (level, title)) with front and back matter on the document's top level."""
    titled = sorted(u for u, (_, title) in points.items() if title)
    if len(titled) < 3:
        return points
    names = {u: heading_name(texts[u]) for u in titled}
    others = [points[u][0] for u in titled[1:] if not (_MATTER.match(names[u]) or _INDEX.match(names[u]))]
    if not others:
        return points
    top = min(others)  # of the headings after the first that are no matter: an index beside the title is none
    styles = {u: heading_style(texts[u]).numbering for u in titled}
    numbered = {u for u in titled if styles[u]}
    outlined = [u for u in titled if styles[u] == "outline"]
    seen = Counter(names.values())
    out = dict(points)
    for i, u in enumerate(titled[1:], start=1):
        name = names[u]
        if u in numbered or points[u][0] == top or seen[name] > 1 or _inside_front_matter(titled[:i], u, out, names):
            continue
        if _MATTER.match(name) or (_INDEX.match(name) and not any(n > u for n in outlined)):
            out[u] = (top, True)
    return out


def _inside_front_matter(before: Sequence[int], u: int, levels: dict[int, tuple[int, bool]], names: dict[int, str]) -> bool:
    """True when the section ``u`` opens a part of is a preface or foreword ("Preface" > "Acknowledgements")."""
    for p in reversed(before):
        if levels[p][0] < levels[u][0]:
            return bool(_FRONT.match(names[p]))
    return False
