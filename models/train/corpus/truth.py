"""Ground truth of a labelled document, placed in its loaded ``Document``.

The scorer looks a predicted chunk up by where its first visible character lies
in the clean view, so every true heading is placed the same way: at the first
visible character of the line it starts on. Headings come from three places:

* explicit markup (corpus Markdown, HiCBench documents): the heading lines;
* renderings with exact offsets (plain text, Markdown): the line holding the offset;
* PDFs (titles and pages, from our renderer or a PDF's outline): placed as the
  core places bookmarks (``hichunk.document.bookmarks.TitleFinder``): the first
  line, on that page or the next, whose text begins the title (or the title
  begins it), searched in reading order; a title under a label line ("Chapter 1")
  goes on the label. A heading that cannot be placed still counts as ground
  truth, so a loader that loses a heading loses recall, unless it is a short
  title (under ``MIN_PREFIX`` letters and digits: "C", "目录") that no word of its
  page says: an outline entry that the pages do not print (hyperref bookmarks an
  index's letter groups whether or not the letters are set) names no heading,
  and is kept apart as ``unprinted``. A longer title that cannot be found is kept
  as missing: there the outline's string is more often garbled (TeX macros in a
  bookmark) or reworded than unprinted.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from dataclasses import dataclass, field

from hichunk.document.bookmarks import MIN_PREFIX, TitleFinder, compared
from hichunk.document.load import load_document
from hichunk.document.model import Document


@dataclass
class Truth:
    """``at``: clean offset of each placed heading's first visible character -> level; ``missing``: levels not placed.

    ``deepest``: where the truth lists headings only down to a level (a PDF's outline often stops at
    sections while the pages number subsections too), that level; a predicted start below it on a line
    the truth does not list is not scored (the truth says nothing about those lines).
    ``unprinted``: levels of outline entries whose titles their pages do not print (not ground truth).
    """

    at: dict[int, int] = field(default_factory=dict)
    missing: list[int] = field(default_factory=list)
    deepest: int | None = None
    unprinted: list[int] = field(default_factory=list)

    @property
    def levels(self) -> list[int]:
        return [*self.at.values(), *self.missing]


def first_visible(clean: str, offset: int) -> int:
    """The first non-space position at or after ``offset``."""
    while offset < len(clean) and clean[offset].isspace():
        offset += 1
    return offset


def markup_truth(doc: Document) -> Truth:
    """The document's explicit heading lines."""
    return Truth({first_visible(doc.clean, doc.lines[i].clean_start): level for i, level in doc.headings})


def placed_truth(doc: Document, headings: list[dict]) -> Truth:
    """Place labelled headings (``level`` plus ``offset`` into the raw text, or ``title`` and ``page``)."""
    truth = Truth()
    raw_starts = [doc.raw_offset(line.clean_start) for line in doc.lines]
    finder = TitleFinder(doc)
    cursor = 0
    for h in headings:
        level = int(h["level"])
        index = None
        if h.get("offset") is not None:
            index = max(bisect_right(raw_starts, int(h["offset"])) - 1, 0) if doc.lines else None
        else:
            page = int(h["page"]) if h.get("page") else None
            title = h.get("title") or ""
            index = finder.find(title, page, cursor)
            if index is None and len(compared(title).chars) < MIN_PREFIX and not finder.printed(title, page):
                truth.unprinted.append(level)
                continue
        if index is None:
            truth.missing.append(level)
            continue
        cursor = index + 1
        truth.at[first_visible(doc.clean, doc.lines[index].clean_start)] = level
    return truth


def record_truth(doc: Document, item: dict) -> Truth:
    """The placed truth of a ``labels.jsonl`` record; a real PDF's (its outline) is complete only to its depth."""
    truth = placed_truth(doc, item["headings"])
    if item.get("real") and item["kind"] == "pdf" and item["headings"]:
        truth.deepest = max(int(h["level"]) for h in item["headings"])
    return truth


def load_labelled(item: dict, root: str) -> tuple[Document, Truth]:
    """A ``labels.jsonl`` record's document (loaded as a user would load the file) and its placed truth."""
    doc = load_document(os.path.join(root, item["path"]))
    return doc, record_truth(doc, item)
