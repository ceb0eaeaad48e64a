"""Build a ChunkTree from chunk boundaries (split points) over a Document.

A level-k chunk is a child of the nearest earlier chunk of smaller level. With
``leaf_tokens`` set, each chunk's own text is cut into sentence-aligned leaves
(HC200); without it every chunk is itself a leaf (fixed-size baselines).

A chunk that holds nothing but headings never becomes a leaf of its own: its
text opens the next chunk's first leaf, as that chunk's breadcrumb (at the end
of the document it closes the previous leaf instead). A titled chunk that opens
on a two-line heading (a "Chapter 3" label and its title line, a wrapped
heading: ``hichunk.document.roles.heading_continuation``) is titled with both
lines, and both count as its heading.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from operator import attrgetter

import numpy as np

from hichunk.document.markdown import front_matter_end
from hichunk.document.model import MAX_LEVEL, Document
from hichunk.document.roles import heading_continuation
from hichunk.sentences import Sentence, SentenceSpans
from hichunk.token_table import TokenTable
from hichunk.tokens import Tokenizer
from hichunk.tree.leaves import enforce_limit, pack_leaves
from hichunk.tree.model import CHUNK, LEAF, ROOT, SECTION, ChunkTree, Node, Split

_MARKERS = re.compile(r"^\s{0,3}#+\s*|\s+#+\s*$")


def _no_content(lead: str) -> bool:
    """True for text that is no section of its own: blank (an info file's header), or a page's YAML/TOML front
    matter and blanks (a Jekyll or Hugo page's metadata belongs with the page's title, not in a chunk alone)."""
    if lead.isspace():
        return True
    lines = lead.split("\n")
    close = front_matter_end(lines)
    return close >= 0 and all(not line.strip() for line in lines[close + 1:])


@dataclass(frozen=True, slots=True)
class Boundary:
    """Where a chunk starts (clean offset), its level 1..10 and whether it opens with a title line."""

    offset: int
    level: int
    title: bool = False


def normalize_boundaries(boundaries: list[Boundary], clean_len: int) -> list[Boundary]:
    """Sorted, de-duplicated, in range, levels clamped to 1..10, with a boundary at offset 0."""
    seen: dict[int, Boundary] = {}
    for b in sorted(boundaries, key=lambda b: b.offset):
        if 0 <= b.offset < clean_len and b.offset not in seen:
            seen[b.offset] = Boundary(b.offset, min(max(int(b.level), 1), MAX_LEVEL), bool(b.title))
    if clean_len and 0 not in seen:
        seen[0] = Boundary(0, 1, False)
    return [seen[k] for k in sorted(seen)]


def heading_title(line_text: str) -> str:
    """Heading text without Markdown markers."""
    return _MARKERS.sub("", line_text).strip()


class _Builder:
    def __init__(self, doc: Document, sentences: SentenceSpans | None, table: TokenTable, leaf_tokens: int | None,
                 known_counts: dict[tuple[int, int], int] | None = None):
        self.doc = doc
        self.sentences = sentences
        self.sentence_starts = sentences.starts if sentences is not None else None
        self.line_starts = [line.clean_start for line in doc.lines]
        self.table = table
        # each sentence's first token index, tokens up to the next sentence, heading flag (filled when leaves are cut)
        self.sentence_tokens: list[int] = []
        self.sentence_sizes: list[int] = []
        self.sentence_heads: list[bool] = []
        self.leaf_tokens = leaf_tokens
        self.known_counts = known_counts or {}

    # -- facts about spans of the clean view ---------------------------------
    def lines_in(self, start: int, end: int) -> range:
        first = max(bisect_right(self.line_starts, start) - 1, 0)
        last = bisect_left(self.line_starts, end)
        return range(first, last)

    def heading_only(self, start: int, end: int, title: bool) -> bool:
        """True when every non-blank line of the span is a heading (or it is one title, on one line or two).

        Reading stops at a third non-blank line once one of them is not a heading: the answer is False then.
        """
        lines = self.doc.lines
        indexes: list[int] = []
        body = False  # a non-blank line without a heading was seen
        for i in self.lines_in(start, end):
            if not lines[i].is_blank:
                indexes.append(i)
                body = body or not lines[i].heading
                if body and len(indexes) > 2:
                    return False
        if not indexes:
            return False
        if not body:
            return True
        return title and (len(indexes) == 1 or (len(indexes) == 2 and heading_continuation(self.doc, indexes[0]) == indexes[1]))

    def second_title_line(self, offset: int) -> int | None:
        """Clean start of the line that completes a two-line title starting at ``offset``, or None."""
        first = self.lines_in(offset, offset + 1)[0]
        j = heading_continuation(self.doc, first)
        return self.doc.lines[j].clean_start if j is not None else None

    def title_of(self, start: int, b: Boundary) -> str | None:
        for i in self.lines_in(start, start + 1):
            line = self.doc.lines[i]
            if line.heading or b.title:
                title = heading_title(line.text)
                j = heading_continuation(self.doc, i) if b.title and not line.heading else None
                if j is not None:
                    title = f"{title} {heading_title(self.doc.lines[j].text)}"
                return title or None
        return None

    def sentence_span(self, start: int, end: int) -> tuple[int, int] | None:
        if self.sentence_starts is None:
            return None
        return bisect_left(self.sentence_starts, start), bisect_left(self.sentence_starts, end)

    def _units(self, start: int, end: int, titles: set[int],
               tokens: dict[int, int]) -> tuple[list[int], int, list[bool], list[int]]:
        """Sentence units covering [start, end), each from a sentence start to the next: ``pack_leaves``'s
        starts, end, heading flags and sizes.

        A unit is a heading when its line has a heading hint or it opens a chunk
        flagged as titled (``titles`` holds those offsets). A unit's size is the
        number of the document's tokens that begin in it (sentence token offsets
        from the one tokenisation, subtracted; ``tokens`` has those of ``start``
        and ``end``); leaves are counted exactly later. The span's first unit runs
        from ``start``, a sentence start or not; the others are slices of the
        document's sentence lists (``_sentence_units``).
        """
        starts, first_token = self.sentence_starts, self.sentence_tokens
        assert starts is not None
        if end <= start:
            return [], end, [], []
        lo, hi = bisect_right(starts, start), bisect_left(starts, end)
        line = self.doc.lines[self.lines_in(start, start + 1)[0]]
        head = bool(line.heading) or start in titles
        if lo == hi:
            return [start], end, [head], [tokens[end] - tokens[start]]
        return ([start, *starts[lo:hi]], end, [head, *self.sentence_heads[lo:hi]],
                [first_token[lo] - tokens[start], *self.sentence_sizes[lo : hi - 1], tokens[end] - first_token[hi - 1]])

    def _sentence_units(self, titles: set[int]) -> None:
        """Each sentence's first token, size up to the next sentence and heading flag, for ``_units``."""
        assert self.sentence_starts is not None and self.sentences is not None
        lines = self.doc.lines
        first_token = self.table.indexes(self.sentence_starts)
        self.sentence_tokens = first_token.tolist()
        self.sentence_sizes = np.diff(first_token).tolist()
        heading_lines = np.fromiter(map(bool, map(attrgetter("heading"), lines)), dtype=bool, count=len(lines))
        heads = heading_lines[np.asarray(self.sentences.lines, dtype=np.int64)]
        starts = self.sentence_starts
        for a in titles:  # the sentences that start at a title (a few per document)
            first = bisect_left(starts, a)
            heads[first : bisect_right(starts, a, first)] = True
        self.sentence_heads = heads.tolist()

    def count(self, a: int, b: int) -> int:
        n = self.known_counts.get((a, b))  # by span: a chunk that took the blank text before it is counted again
        return n if n is not None else self.table.count(a, b)

    # -- construction --------------------------------------------------------
    def build(self, boundaries: list[Boundary], name: str, meta: dict) -> ChunkTree:
        doc = self.doc
        clean_len = len(doc.clean)
        bounds = normalize_boundaries(boundaries, clean_len)
        if not bounds and doc.text:  # only markup, no visible text: one empty leaf keeps the raw text
            bounds = [Boundary(0, 1)]
        blank_lead = len(bounds) > 1 and _no_content(doc.clean[: bounds[1].offset])
        if blank_lead:  # blank text or front matter before the first point opens the first chunk
            bounds = bounds[1:]
        ends = [b.offset for b in bounds[1:]] + [clean_len]
        splits = [Split(doc.raw_offset(b.offset), b.offset, b.level, b.title) for b in bounds]
        if blank_lead:
            splits[0] = replace(splits[0], start=0)

        # chunk records: [boundary, start, end, parent index, own leaf spans, child indexes]
        parents: list[int | None] = []
        stack: list[int] = []
        for i, b in enumerate(bounds):
            while stack and bounds[stack[-1]].level >= b.level:
                stack.pop()
            parents.append(stack[-1] if stack else None)
            stack.append(i)

        own: list[tuple[int, int] | None] = [(b.offset, e) for b, e in zip(bounds, ends)]
        if own:
            own[0] = (0, ends[0])
        leaf_spans: list[list[tuple[int, int, int]]] = []
        if self.leaf_tokens is None:  # fixed-size chunks are leaves as they are
            leaf_spans = [[(a, b, self.count(a, b))] for a, b in own]
        else:
            self._absorb_headings(own, [self.heading_only(b.offset, e, b.title) for b, e in zip(bounds, ends)])
            titles = {b.offset for b in bounds if b.title}
            titles |= {second for b in bounds if b.title and (second := self.second_title_line(b.offset)) is not None}
            leaf_spans = self._leaves(own, titles)
            if not clean_len and doc.text:
                leaf_spans = [[(0, 0, 0)]]

        tree_nodes = self._assemble(bounds, parents, own, leaf_spans)
        return ChunkTree(name=name, text=doc.text, clean=doc.clean, nodes=tree_nodes, splits=splits, meta=meta,
                         page_starts=list(doc.page_starts))

    def _leaves(self, own: list[tuple[int, int] | None], titles: set[int]) -> list[list[tuple[int, int, int]]]:
        """Each chunk's leaves (start, end, tokens): sentences packed by ``pack_leaves``, then every leaf of every
        chunk counted in one ``span_counts`` and fitted by ``enforce_limit``."""
        assert self.leaf_tokens is not None
        self._sentence_units(titles)
        spans = [span for span in own if span is not None]
        points = sorted({x for span in spans for x in span})
        tokens = dict(zip(points, self.table.indexes(points).tolist()))
        packed = [pack_leaves(self.table, *self._units(a, b, titles, tokens), self.leaf_tokens) for a, b in spans]
        counts = self.table.span_counts([leaf for leaves in packed for leaf in leaves])
        fitted: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
        done = 0  # leaves counted before this chunk's
        for span, leaves in zip(spans, packed):
            cut, cut_counts = enforce_limit(self.table, leaves, self.leaf_tokens, counts[done : done + len(leaves)])
            fitted[span] = [(a, b, n) for (a, b), n in zip(cut, cut_counts)]
            done += len(leaves)
        return [[] if span is None else fitted[span] for span in own]

    @staticmethod
    def _absorb_headings(own: list[tuple[int, int] | None], empty: list[bool]) -> None:
        """Move heading-only chunk text into the next chunk (at the end: into the previous one).

        Spans that are not None stay contiguous and in order, so the text moved
        backwards at the end always joins its neighbour.
        """
        n = len(own)
        carry: int | None = None
        for i in range(n):
            span = own[i]
            assert span is not None
            if carry is not None:
                own[i] = span = (carry, span[1])
                carry = None
            if empty[i] and i < n - 1:
                carry = span[0]
                own[i] = None
        last = own[-1] if n > 1 and empty[-1] else None
        prev = next((j for j in range(n - 2, -1, -1) if own[j] is not None), None)
        if last is not None and prev is not None:
            own[prev] = (own[prev][0], last[1])
            own[-1] = None

    def _assemble(self, bounds, parents, own, leaf_spans) -> list[Node]:
        doc = self.doc
        children: list[list[int]] = [[] for _ in bounds]
        tops: list[int] = []
        for i, p in enumerate(parents):
            (children[p] if p is not None else tops).append(i)

        nodes: list[Node] = [Node(0, ROOT, 0, 0, len(doc.text), 0, len(doc.clean))]

        clean_len, text_len, offsets = len(doc.clean), len(doc.text), doc.offsets

        def raw(offset: int) -> int:
            return text_len if offset >= clean_len else offsets(offset)  # ``doc.raw_offset`` within the text

        def new(kind: str, parent: Node, level: int, split: int | None, span=(0, 0)) -> Node:
            a, b = span
            node = Node(len(nodes), kind, level, 0 if a == 0 else raw(a), raw(b), a, b, parent=parent.id, split=split)
            nodes.append(node)
            return node

        def attach(node: Node) -> None:
            nodes[node.parent].children.append(node.id)

        sentence_starts = self.sentence_starts

        def add_leaves(parent: Node, i: int) -> None:  # ``new`` and ``attach`` for each leaf, inlined
            level, kids = bounds[i].level, parent.children
            for a, b, n in leaf_spans[i]:
                leaf = Node(len(nodes), LEAF, level, 0 if a == 0 else raw(a), raw(b), a, b, parent=parent.id, split=i)
                leaf.tokens = n
                if sentence_starts is not None:
                    leaf.sentences = (bisect_left(sentence_starts, a), bisect_left(sentence_starts, b))
                nodes.append(leaf)
                kids.append(leaf.id)

        def add_split(i: int, parent: Node) -> None:
            b = bounds[i]
            title = self.title_of(b.offset, b)
            if self.leaf_tokens is None and not children[i]:  # fixed-size chunks: the chunk is the leaf
                add_leaves(parent, i)
                nodes[-1].title = title
                return
            holder = parent
            if children[i]:
                holder = new(SECTION, parent, b.level, i)
                holder.title = title
            if leaf_spans[i]:
                chunk = new(CHUNK, holder, b.level, i)
                chunk.title = title
                add_leaves(chunk, i)
                attach(chunk)
            for c in children[i]:
                add_split(c, holder)
            if holder is not parent:
                if holder.children:
                    attach(holder)
                else:  # a heading-only section whose text went elsewhere
                    del nodes[holder.id :]

        for i in tops:
            add_split(i, nodes[0])
        _fix_spans(nodes, doc, self)
        return nodes


def _fix_spans(nodes: list[Node], doc: Document, builder: _Builder) -> None:
    """Spans, sentence spans and token counts of inner nodes from their leaves.

    Children always get larger ids than their parent, so a reverse id walk
    visits children first.
    """
    for node in reversed(nodes):
        if node.kind == LEAF:
            continue
        kids = [nodes[c] for c in node.children]
        if node.kind == ROOT:
            node.clean_start, node.clean_end, node.start, node.end = 0, len(doc.clean), 0, len(doc.text)
        elif kids:
            node.clean_start, node.clean_end = kids[0].clean_start, kids[-1].clean_end
            node.start, node.end = kids[0].start, kids[-1].end
        node.tokens = sum(k.tokens for k in kids)
        node.sentences = builder.sentence_span(node.clean_start, node.clean_end)


def build_tree(
    doc: Document,
    boundaries: list[Boundary],
    tokenizer: Tokenizer,
    sentences: SentenceSpans | list[Sentence] | None = None,
    leaf_tokens: int | None = 200,
    meta: dict | None = None,
    known_counts: dict[tuple[int, int], int] | None = None,
    table: TokenTable | None = None,
) -> ChunkTree:
    """Chunk tree from boundaries. ``leaf_tokens=None`` makes every chunk a leaf.

    ``sentences``: the document's sentences, as ``sentence_spans`` gives them (a
    ``split_sentences`` list is turned into those columns). ``known_counts`` (token counts of chunks by (start, end) span) spares recounting
    when a size-based chunker already measured its chunks; ``table`` (the clean
    view's ``TokenTable``, shared with the chunker) spares tokenising it again.
    """
    if leaf_tokens is not None and sentences is None:
        raise ValueError("sentence-aligned leaves need the document's sentences")
    if sentences is not None and not isinstance(sentences, SentenceSpans):
        sentences = SentenceSpans.of(sentences)
    builder = _Builder(doc, sentences, table or TokenTable(doc.clean, tokenizer), leaf_tokens, known_counts)
    return builder.build(boundaries, doc.name, dict(meta or {}, leaf_tokens=leaf_tokens, tokenizer=tokenizer.name))
