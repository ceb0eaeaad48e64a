"""The chunk tree: root > sections > chunks > fixed-size leaves.

Each split point starts a semantic chunk of some level. A chunk's own text
(from its split point to the next one) is a ``chunk`` node whose children are
its leaves. A chunk that has deeper chunks after it is wrapped, together with
them, in a ``section`` node of the same level, so a section covers a heading,
its body and all its sub-sections, and the own-text ``chunk`` is the section's
first child (the shape Auto-Merge works on, as in the reference code).

Every node knows its span in the raw text (``start``/``end``: what rebuilds the
source) and in the clean view (``clean_start``/``clean_end``: what models,
embedders and retrieval contexts read). Leaves partition the document, in
order, and every node's span is exactly the union of its leaves' spans. For
paged documents (PDF) the tree keeps the pages' raw start offsets, so every
node's page range follows from its raw span (``ChunkTree.pages``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from hichunk.document.model import page_range

ROOT, SECTION, CHUNK, LEAF = "root", "section", "chunk", "leaf"


@dataclass(frozen=True, slots=True)
class Split:
    """Where a semantic chunk starts (raw and clean offsets), its level, and whether it opens with a title."""

    start: int
    clean_start: int
    level: int
    title: bool = False


@dataclass(slots=True)
class Node:
    id: int
    kind: str  # "root" | "section" | "chunk" | "leaf"
    level: int  # 0 for the root, 1..10 for sections and chunks; a leaf has its chunk's level
    start: int
    end: int
    clean_start: int
    clean_end: int
    parent: int | None = None
    children: list[int] = field(default_factory=list)
    title: str | None = None  # heading text (markers stripped) when the chunk starts with a title line
    sentences: tuple[int, int] | None = None  # [first, last + 1) sentence indexes, when known
    tokens: int = 0  # tokens of the clean text (leaves: counted; others: sum over their leaves)
    split: int | None = None  # index in ChunkTree.splits of the split point this node comes from

    @property
    def is_leaf(self) -> bool:
        return self.kind == LEAF


@dataclass(slots=True)
class ChunkTree:
    """A document's chunk tree. ``nodes[0]`` is the root; ids are list positions."""

    name: str
    text: str
    clean: str
    nodes: list[Node]
    splits: list[Split]  # every semantic chunk's start, in order (before leaves and heading moves)
    meta: dict = field(default_factory=dict)  # method, tokenizer, leaf size, ...
    page_starts: list[int] = field(default_factory=list)  # raw offset of each page (paged documents only)

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def leaves(self) -> list[Node]:
        """Leaves in document order."""
        return [n for n in self.nodes if n.kind == LEAF]

    def chunks(self) -> list[Node]:
        """Own-text chunk nodes in document order (one per split that kept text of its own)."""
        return [n for n in self.nodes if n.kind == CHUNK]

    def pages(self, node: Node) -> tuple[int, int] | None:
        """1-based first and last page of a node, or None for documents without pages."""
        return page_range(self.page_starts, node.start, node.end)

    def raw_text(self, node: Node) -> str:
        return self.text[node.start : node.end]

    def clean_text(self, node: Node) -> str:
        return self.clean[node.clean_start : node.clean_end]

    def path(self, node: Node) -> list[Node]:
        """Ancestors from the root's first child down to ``node`` (root excluded)."""
        out = []
        cur: Node | None = node
        while cur is not None and cur.kind != ROOT:
            out.append(cur)
            cur = self.nodes[cur.parent] if cur.parent is not None else None
        return out[::-1]

    def breadcrumb(self, node: Node) -> list[str]:
        """Titles on the way from the top to ``node`` (its own included), each split once."""
        out: list[str] = []
        seen: set[int] = set()
        for n in self.path(node):
            if n.title and n.split not in seen:
                out.append(n.title)
            if n.split is not None:
                seen.add(n.split)
        return out

    def walk(self, node: Node | None = None, depth: int = 0) -> Iterator[tuple[Node, int]]:
        """Depth-first (pre-order) walk with depths."""
        node = node or self.root
        yield node, depth
        for child in node.children:
            yield from self.walk(self.nodes[child], depth + 1)

    def split_texts(self) -> Iterator[tuple[str, int]]:
        """The reference "splits" format: ``(chunk_text, level)`` pairs, concatenating to the text."""
        ends = [s.start for s in self.splits[1:]] + [len(self.text)]
        for split, end in zip(self.splits, ends):
            yield self.text[split.start : end], split.level
