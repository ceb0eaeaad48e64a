"""Hand-built chunk trees and a word tokenizer for exact Auto-Merge expectations."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import strategies as st

from hichunk.tree.model import CHUNK, LEAF, ROOT, SECTION, ChunkTree, Node, Split

_WORD = re.compile(r"\S+")


class WordTokenizer:
    """One token per whitespace-separated word: sizes anyone can count by eye."""

    name = "words"

    def count(self, text: str) -> int:
        return len(_WORD.findall(text))

    def encode(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        starts = np.array([m.start() for m in _WORD.finditer(text)], dtype=np.int64)
        return np.arange(len(starts), dtype=np.int64), starts

    def starts(self, text: str) -> np.ndarray:
        return self.encode(text)[1]


def make_tree(spec: list, name: str = "doc") -> ChunkTree:
    """A tree from nested lists: a string is a leaf, a list of strings a chunk, other lists sections.

    Leaves are joined by newlines; node ids follow a pre-order walk. Returns
    the tree; ``leaf_ids(tree)`` gives the leaf node ids in order.
    """
    tok = WordTokenizer()
    parts: list[str] = []
    nodes: list[Node] = [Node(0, ROOT, 0, 0, 0, 0, 0)]
    pos = 0

    def build(item, parent: int, level: int) -> int:
        nonlocal pos
        if isinstance(item, str):
            text = item + "\n"
            node = Node(len(nodes), LEAF, level, pos, pos + len(text), pos, pos + len(text), parent=parent,
                        tokens=tok.count(item), split=0)
            nodes.append(node)
            parts.append(text)
            pos += len(text)
            return node.id
        kind = CHUNK if all(isinstance(c, str) for c in item) else SECTION
        node = Node(len(nodes), kind, level, pos, pos, pos, pos, parent=parent, split=0)
        nodes.append(node)
        for child in item:
            node.children.append(build(child, node.id, level + (0 if kind == CHUNK else 1)))
        kids = [nodes[c] for c in node.children]
        node.start = node.clean_start = kids[0].start
        node.end = node.clean_end = kids[-1].end
        node.tokens = sum(k.tokens for k in kids)
        return node.id

    for item in spec:
        nodes[0].children.append(build(item, 0, 1))
    text = "".join(parts)
    nodes[0].end = nodes[0].clean_end = len(text)
    nodes[0].tokens = sum(nodes[c].tokens for c in nodes[0].children)
    return ChunkTree(name, text, text, nodes, [Split(0, 0, 1)], {"tokenizer": tok.name})


@st.composite
def random_trees(draw, name: str = "doc") -> ChunkTree:
    """A random tree of up to three levels, leaves of 1-12 distinct words (hypothesis)."""
    counter = iter(range(10**6))

    def node(depth):
        if depth >= 3 or draw(st.booleans()):
            return [words(f"w{next(counter)}_", draw(st.integers(1, 12))) for _ in range(draw(st.integers(1, 4)))]
        return [node(depth + 1) for _ in range(draw(st.integers(1, 3)))]

    return make_tree([node(0) for _ in range(draw(st.integers(1, 3)))], name)


def leaf_ids(tree: ChunkTree) -> list[int]:
    return [n.id for n in tree.nodes if n.kind == LEAF]


def words(prefix: str, n: int) -> str:
    """``n`` distinct words ``prefix0 ... prefix{n-1}``, the last ending with a period."""
    return " ".join(f"{prefix}{i}" for i in range(n)) + "."
