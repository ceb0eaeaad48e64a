"""Facts about one chunk tree that the search needs, computed once per tree.

Auto-Merge works on leaf ranges and sizes: which leaves a node covers, how
many tokens and characters they hold, and each leaf's text. Computing these
once when a tree is loaded is what lets a query cost O(k * depth) after
ranking, with no re-tokenising of the growing context.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hichunk.tokens import Tokenizer
from hichunk.tree.model import LEAF, ChunkTree, Node


def leaf_text(tree: ChunkTree, leaf: Node) -> str:
    """The text of a leaf as it appears in a context: its clean text without surrounding whitespace."""
    return tree.clean_text(leaf).strip()


@dataclass
class TreeView:
    """A ChunkTree plus per-node leaf ranges and prefix sums of leaf tokens and characters."""

    doc: str  # document id in the index
    tree: ChunkTree
    leaf_ids: list[int]  # leaf node ids in document order
    leaf_pos: dict[int, int]  # leaf node id -> position in leaf_ids
    lo: list[int]  # per node: first leaf position
    hi: list[int]  # per node: one past the last leaf position
    token_prefix: np.ndarray  # cumulative leaf tokens, length n_leaves + 1
    char_prefix: np.ndarray  # cumulative leaf_text lengths, length n_leaves + 1
    texts: list[str]  # leaf_text per leaf position

    @classmethod
    def build(cls, doc: str, tree: ChunkTree, tokenizer: Tokenizer | None = None) -> TreeView:
        """Sizes come from the tree's own counts, or are recounted when ``tokenizer`` is another one."""
        nodes = tree.nodes
        leaf_ids = [n.id for n in nodes if n.kind == LEAF]
        leaf_pos = {nid: i for i, nid in enumerate(leaf_ids)}
        lo = [0] * len(nodes)
        hi = [0] * len(nodes)
        for node in reversed(nodes):  # children have larger ids than their parent
            if node.kind == LEAF:
                lo[node.id] = leaf_pos[node.id]
                hi[node.id] = lo[node.id] + 1
            elif node.children:
                lo[node.id] = lo[node.children[0]]
                hi[node.id] = hi[node.children[-1]]
        texts = [leaf_text(tree, nodes[i]) for i in leaf_ids]
        if tokenizer is not None and tokenizer.name != tree.meta.get("tokenizer"):
            tokens = np.fromiter((tokenizer.count(t) for t in texts), dtype=np.int64, count=len(texts))
        else:
            tokens = np.fromiter((nodes[i].tokens for i in leaf_ids), dtype=np.int64, count=len(leaf_ids))
        chars = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
        return cls(doc, tree, leaf_ids, leaf_pos, lo, hi,
                   np.concatenate([[0], np.cumsum(tokens)]), np.concatenate([[0], np.cumsum(chars)]), texts)

    def node(self, node_id: int) -> Node:
        return self.tree.nodes[node_id]

    def parent(self, node_id: int) -> int | None:
        return self.tree.nodes[node_id].parent

    def n_children(self, node_id: int) -> int:
        return len(self.tree.nodes[node_id].children)

    def n_leaves(self, node_id: int) -> int:
        return self.hi[node_id] - self.lo[node_id]

    def tokens(self, node_id: int) -> int:
        """Tokens of the node's leaves, each counted once when the tree was built."""
        return int(self.token_prefix[self.hi[node_id]] - self.token_prefix[self.lo[node_id]])

    def chars(self, node_id: int) -> int:
        """Characters of the node's leaf texts (no separators)."""
        return int(self.char_prefix[self.hi[node_id]] - self.char_prefix[self.lo[node_id]])

    def text(self, node_id: int) -> str:
        """The node's clean text (a contiguous span of the document) without surrounding whitespace."""
        node = self.tree.nodes[node_id]
        if node.kind == LEAF:
            return self.texts[self.leaf_pos[node_id]]
        return self.tree.clean_text(node).strip()

    def joined_text(self, node_id: int, joiner: str) -> str:
        """The node's leaf texts joined by ``joiner`` (the reference code's way of writing a node)."""
        return joiner.join(self.texts[self.lo[node_id] : self.hi[node_id]])

    def ancestors(self, node_id: int) -> list[int]:
        """Parent, grandparent, ... up to the root."""
        out = []
        cur = self.tree.nodes[node_id].parent
        while cur is not None:
            out.append(cur)
            cur = self.tree.nodes[cur].parent
        return out
