"""The exact text each leaf is encoded from: one function, so caches and update costs agree.

With ``breadcrumb`` on, a leaf's input starts with its heading path (the
titles of the sections it sits in, e.g. ``Guide > Install``) on a line of its
own, then a blank line, then the leaf's clean text. A title that the leaf
itself opens with is not repeated. Every leaf of a document with headings
thus carries the document title, single-leaf documents included.
"""

from __future__ import annotations

from hichunk.tree.model import LEAF, ChunkTree, Node

BREADCRUMB_JOINER = " > "


def leaf_breadcrumb(tree: ChunkTree, leaf: Node) -> list[str]:
    """Titles above ``leaf``, without the one its own text opens with."""
    crumbs = tree.breadcrumb(leaf)
    if crumbs and leaf.parent is not None:
        owner = tree.nodes[leaf.parent]
        opens_with_title = owner.title and owner.kind != "root" and leaf.clean_start == owner.clean_start
        if (opens_with_title or leaf.title) and crumbs[-1] == (owner.title or leaf.title):
            crumbs = crumbs[:-1]
    return crumbs


def encoder_input(tree: ChunkTree, leaf: Node, breadcrumb: bool = True) -> str:
    text = tree.clean_text(leaf).strip()
    if not breadcrumb:
        return text
    crumbs = leaf_breadcrumb(tree, leaf)
    return f"{BREADCRUMB_JOINER.join(crumbs)}\n\n{text}" if crumbs else text


def encoder_inputs(tree: ChunkTree, breadcrumb: bool = True) -> list[str]:
    """Encoder inputs of the tree's leaves, in document order."""
    return [encoder_input(tree, n, breadcrumb) for n in tree.nodes if n.kind == LEAF]
