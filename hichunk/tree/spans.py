"""Exact provenance: which raw span of its document a piece of a chunk tree is.

The contract every passage and every exported chunk keeps is
``text == tree.text[start:end]`` (``tree.text``: the decoded file; for PDFs the
extracted text). A node's span is its raw span without surrounding
whitespace, so for plain text and Markdown (where the clean view *is* the raw
text) the span's text is exactly what a retrieval context shows.

A prefix of a node (a passage cut at the token budget) ends inside a leaf. Where
the clean view is a copy of the raw text the cut maps one to one; elsewhere
(HTML, reST, man pages, PDF reflow) the leaf's clean text is aligned with its
raw text (``difflib``) and the cut lands after the raw characters the prefix's
last character came from. The text is still the exact raw span; only where
markup sits around the cut is a matter of alignment.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from hichunk.document.model import page_range
from hichunk.tree.model import ChunkTree, Node


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` without the whitespace at both ends (``str.strip``'s notion of whitespace)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def raw_span(tree: ChunkTree, node: Node) -> tuple[int, int]:
    """The node's raw span without surrounding whitespace."""
    return trim(tree.text, node.start, node.end)


def clean_span(tree: ChunkTree, node: Node) -> tuple[int, int]:
    """The node's clean span without surrounding whitespace (what a context shows of it)."""
    return trim(tree.clean, node.clean_start, node.clean_end)


def raw_cut(tree: ChunkTree, leaf: Node, clean_offset: int) -> int:
    """The raw offset of a cut at ``clean_offset`` (a boundary inside ``leaf``'s clean span).

    Everything the clean text holds before the cut comes from raw text before the returned offset.
    """
    k = clean_offset - leaf.clean_start
    clean = tree.clean[leaf.clean_start : leaf.clean_end]
    raw = tree.text[leaf.start : leaf.end]
    if k <= 0:
        return leaf.start
    if k >= len(clean):
        return leaf.end
    if raw == clean:
        return leaf.start + k
    following = len(raw)
    for a, b, size in SequenceMatcher(None, clean, raw, autojunk=False).get_matching_blocks():
        if a < k <= a + size:  # the prefix's last character is copied from raw[b + (k - a) - 1]
            return leaf.start + b + (k - a)
        if a >= k:  # it is rewritten text (an entity, a marker): its source ends where the next copy starts
            following = b
            break
    return leaf.start + following


def pages(tree: ChunkTree, start: int, end: int) -> tuple[int, int] | None:
    """1-based first and last page of a raw span of a paged document (PDF), else None.

    ``ChunkTree.pages(node)`` is the page range of a node's whole span; a passage's exact
    span (whitespace trimmed, maybe cut short) can end on an earlier page.
    """
    return page_range(tree.page_starts, start, end)
