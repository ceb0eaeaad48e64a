"""The exact text each leaf is encoded from, and what an edit costs to re-embed: one place, so caches,
the index's update reports and the update-cost benchmark agree.

With ``breadcrumb`` on, a leaf's input starts with its heading path (the
titles of the sections it sits in, e.g. ``Guide > Install``) on a line of its
own, then a blank line, then the leaf's clean text. A title that the leaf
itself opens with is not repeated. Every leaf of a document with headings
thus carries the document title, single-leaf documents included.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hichunk.tokens import Tokenizer
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


@dataclass(frozen=True)
class Recompute:
    """What a new version of a document costs to embed when only byte-identical old inputs are reused.

    ``recomputed`` lists, for each distinct new input not found among the old
    ones, its first position in the new inputs and its tokens.
    """

    unique_inputs: int
    unique_tokens: int
    recomputed: tuple[tuple[int, int], ...]

    @property
    def recomputed_inputs(self) -> int:
        return len(self.recomputed)

    @property
    def recomputed_tokens(self) -> int:
        return sum(n for _, n in self.recomputed)

    @property
    def ratio(self) -> float:
        """R of REFERENCE.md §6; 0 when there is nothing to embed."""
        return self.recomputed_tokens / self.unique_tokens if self.unique_tokens else 0.0


def recompute(old_inputs: Iterable[str], new_inputs: Sequence[str], tokenizer: Tokenizer) -> Recompute:
    """R = tokens of distinct new inputs absent from ``old_inputs`` / tokens of all distinct new inputs.

    An embedding is reused only for a byte-identical input of the previous
    version (REFERENCE.md §6); an input repeated in the new version is embedded
    once, so it counts once. The same version twice gives R = 0.
    """
    cache = set(old_inputs)
    first: dict[str, int] = {}
    for i, text in enumerate(new_inputs):
        first.setdefault(text, i)
    unique_tokens = 0
    recomputed = []
    for text, i in first.items():
        n = tokenizer.count(text)
        unique_tokens += n
        if text not in cache:
            recomputed.append((i, n))
    return Recompute(len(first), unique_tokens, tuple(recomputed))
