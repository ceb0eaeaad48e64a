"""Explicit headings and predicted starts together (``--hints use``).

The rule, kept simple on purpose:

* Every explicit heading line (Markdown, HTML, reST markup) is a fixed chunk
  start, titled, at its markup level made relative: levels shift so that the
  document's shallowest heading is level 1.
* A region is the text from one explicit heading to the next (the text before
  the first heading is a region under an imaginary level 0). Predicted starts
  inside a region are added below its heading: the shallowest predicted level
  of the region becomes the heading's level + 1, deeper ones keep their
  distance from it (capped at 10). Predicted starts on heading lines are
  dropped; the markup wins.

So the markup decides the outline, and the model adds structure only inside
stretches of text that the markup leaves flat. Fallback starts (a window whose
answer could not be used) are not predictions and are left out by the caller.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict

from hichunk.document.model import MAX_LEVEL, Document
from hichunk.tree.build import Boundary


def relative_headings(doc: Document) -> list[Boundary]:
    """Titled boundaries at the explicit headings, levels shifted so the shallowest is 1."""
    heads = doc.headings
    if not heads:
        return []
    shift = min(level for _, level in heads) - 1
    return [Boundary(doc.lines[i].clean_start, level - shift, True) for i, level in heads]


def merge_with_headings(headings: list[Boundary], predicted: list[Boundary]) -> list[Boundary]:
    """Headings as they are, plus predicted starts placed below the heading of their region."""
    if not headings:
        return sorted(predicted, key=lambda b: b.offset)
    heads = sorted(headings, key=lambda b: b.offset)
    head_offsets = [h.offset for h in heads]
    taken = set(head_offsets)
    regions: dict[int, list[Boundary]] = defaultdict(list)
    for b in predicted:
        if b.offset not in taken:
            regions[bisect_right(head_offsets, b.offset) - 1].append(b)
    out = list(heads)
    for region, members in regions.items():
        base = heads[region].level if region >= 0 else 0
        shallowest = min(b.level for b in members)
        out.extend(Boundary(b.offset, min(MAX_LEVEL, base + 1 + b.level - shallowest), b.title) for b in members)
    return sorted(out, key=lambda b: b.offset)
