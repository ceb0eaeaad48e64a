"""Greedy budget fill with Auto-Merge over ranked leaves (REFERENCE.md §3).

Walk the ranking; add each leaf not yet covered; after an addition, replace
a parent's retrieved children by the parent when the merge conditions hold,
and repeat one level up. Two rule sets:

``paper`` (default), the rule as the paper states it, in tokens:
  (1) at least 2 direct children of p are retrieved; (2) their tokens reach
  len(p)/3 * (1 + t/T), t = tokens in the context after the addition; (3) the
  context with p in place of its retrieved descendants still fits in T.
  A node whose parent has no other child has the same text as that parent, so
  single-child chains are climbed at once. Whole leaves that do not fit are
  cut at a token boundary (``fill="truncate"``, as the paper's code does) or
  skipped (``fill="whole"``); the context never exceeds T.

``reference``, the published code's variant, for side-by-side checks: (1) in
characters; t = tokens of the context as last rebuilt (before the new passage
at the first level); (3) charges only p's tokens not yet retrieved; an only
child is replaced by its parent once; climbing stops once the context reaches
T; the context is cut to T tokens at the end; a merge counts the extra leaves
it pulls in. Nodes are joined by "\\n\\n", leaves inside a node by "\\n".
On one document, the same tree, ranking and an additive tokenizer it gives
the reference code's context exactly. Unlike that code, coverage and merges
never mix leaves of different documents.

Costs come from token counts made once per leaf (``TreeView``), so a query
costs O(k * depth) after ranking: every node added or removed touches its
ancestors' bookkeeping once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from hichunk.errors import HichunkError
from hichunk.retrieval.search.view import TreeView
from hichunk.tokens import Tokenizer

PAPER, REFERENCE = "paper", "reference"
MODES = (PAPER, REFERENCE)
FILLS = ("truncate", "whole")
ORDERS = ("rank", "document")

Ref = tuple[str, int]  # (document id, node id)


@dataclass(frozen=True)
class FillOptions:
    """How the context is filled. ``budget`` is T, counted in the search tokenizer."""

    budget: int = 4096
    auto_merge: bool = True
    mode: str = PAPER
    fill: str = "truncate"
    order: str = "rank"
    separator: str = "\n\n"
    max_candidates: int = 1000
    verify: bool = True  # count the final context once and trim if a non-additive tokenizer overshot

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise HichunkError(f"the token budget must be at least 1 (got {self.budget})")
        if self.mode not in MODES:
            raise HichunkError(f"unknown Auto-Merge mode {self.mode!r} (choose from {', '.join(MODES)})")
        if self.fill not in FILLS:
            raise HichunkError(f"unknown fill rule {self.fill!r} (choose from {', '.join(FILLS)})")
        if self.order not in ORDERS:
            raise HichunkError(f"unknown context order {self.order!r} (choose from {', '.join(ORDERS)})")
        if self.max_candidates < 1:
            raise HichunkError("max_candidates must be at least 1")


@dataclass
class Merge:
    """One merge: ``parent`` replaced the retrieved nodes ``replaced`` (all inside it)."""

    doc: str
    parent: int
    replaced: list[int]
    tokens_before: int  # context tokens just before the merge


@dataclass
class _Entry:
    key: int  # rank position: the rank of the earliest retrieved part
    score: float
    hits: list[int]  # ranked leaf ids that led to this node
    truncated_tokens: int | None = None  # set when only a prefix of the node fits
    merged: bool = False  # the node replaced retrieved nodes inside it


@dataclass
class Selection:
    """Retrieved nodes and the bookkeeping that makes merge checks O(depth).

    ``desc[a]`` holds the retrieved nodes strictly inside ancestor ``a``;
    ``kids[a]`` the retrieved direct children of ``a``. Retrieved nodes never
    overlap.
    """

    view: Callable[[str], TreeView]
    sep_tokens: int = 0  # tokens of the separator between passages
    joiner_tokens: int | None = None  # reference mode: tokens of "\n" between leaves of a node
    entries: dict[Ref, _Entry] = field(default_factory=dict)
    desc: dict[Ref, set[Ref]] = field(default_factory=dict)
    kids: dict[Ref, set[Ref]] = field(default_factory=dict)
    body: int = 0  # Σ cost of retrieved nodes
    n_leaves: int = 0

    @property
    def used(self) -> int:
        """Tokens of the context as it stands (separators included)."""
        return self.body + self.sep_tokens * max(len(self.entries) - 1, 0)

    def cost(self, ref: Ref) -> int:
        view = self.view(ref[0])
        entry = self.entries.get(ref)
        if entry is not None and entry.truncated_tokens is not None:
            return entry.truncated_tokens
        n = view.tokens(ref[1])
        if self.joiner_tokens:
            n += self.joiner_tokens * (view.n_leaves(ref[1]) - 1)
        return n

    def covered(self, doc: str, node: int) -> bool:
        """True when the node or one of its ancestors is retrieved."""
        if (doc, node) in self.entries:
            return True
        return any((doc, a) in self.entries for a in self.view(doc).ancestors(node))

    def add(self, ref: Ref, entry: _Entry) -> None:
        view = self.view(ref[0])
        self.entries[ref] = entry
        self.body += self.cost(ref)
        self.n_leaves += view.n_leaves(ref[1])
        ancestors = view.ancestors(ref[1])
        for a in ancestors:
            self.desc.setdefault((ref[0], a), set()).add(ref)
        if ancestors:
            self.kids.setdefault((ref[0], ancestors[0]), set()).add(ref)

    def remove(self, ref: Ref) -> _Entry:
        view = self.view(ref[0])
        self.body -= self.cost(ref)
        entry = self.entries.pop(ref)
        self.n_leaves -= view.n_leaves(ref[1])
        ancestors = view.ancestors(ref[1])
        for a in ancestors:
            self.desc[(ref[0], a)].discard(ref)
        if ancestors:
            self.kids[(ref[0], ancestors[0])].discard(ref)
        return entry

    def inside(self, ref: Ref) -> list[Ref]:
        """Retrieved nodes inside ``ref``, by rank position."""
        return sorted(self.desc.get(ref, ()), key=lambda r: self.entries[r].key)

    def children(self, ref: Ref) -> list[Ref]:
        """Retrieved direct children of ``ref``, by rank position."""
        return sorted(self.kids.get(ref, ()), key=lambda r: self.entries[r].key)

    def used_if_merged(self, parent: Ref) -> int:
        inside = self.desc.get(parent, ())
        n_after = len(self.entries) - len(inside) + 1
        body = self.body - sum(self.cost(r) for r in inside) + self.cost(parent)
        return body + self.sep_tokens * max(n_after - 1, 0)

    def merge(self, parent: Ref, key: int) -> Merge:
        """Replace every retrieved node inside ``parent`` by ``parent`` at rank position ``key``."""
        tokens_before = self.used
        inside = self.inside(parent)
        removed = [self.remove(r) for r in inside]
        hits = sorted(h for e in removed for h in e.hits)
        self.add(parent, _Entry(key, max(e.score for e in removed), hits, merged=True))
        return Merge(parent[0], parent[1], [r[1] for r in inside], tokens_before)

    def ordered(self) -> list[tuple[Ref, _Entry]]:
        return sorted(self.entries.items(), key=lambda item: item[1].key)


@dataclass
class FillResult:
    selection: Selection
    merges: list[Merge]
    merge_count: int  # leaves pulled in by merges beyond those retrieved (the reference code's count)
    candidates_seen: int


def fill_context(candidates: Iterable[tuple[str, int, float]], view: Callable[[str], TreeView], options: FillOptions,
                 tokenizer: Tokenizer) -> FillResult:
    """Select nodes for the context from ranked leaves ``(doc, leaf node id, score)``."""
    reference = options.mode == REFERENCE
    sel = Selection(view, sep_tokens=tokenizer.count(options.separator if not reference else "\n\n"),
                    joiner_tokens=tokenizer.count("\n") if reference else None)
    walker = _ReferenceWalk(sel, options) if reference else _PaperWalk(sel, options, tokenizer)
    seen = 0
    for rank, (doc, leaf, score) in enumerate(candidates):
        if rank >= options.max_candidates:
            break
        seen = rank + 1
        if sel.covered(doc, leaf):
            continue
        if walker.step(rank, doc, leaf, float(score)):
            break
    return FillResult(sel, walker.merges, walker.merge_count, seen)


class _PaperWalk:
    def __init__(self, sel: Selection, options: FillOptions, tokenizer: Tokenizer):
        self.sel, self.options, self.tokenizer = sel, options, tokenizer
        self.merges: list[Merge] = []
        self.merge_count = 0

    def _top_of_chain(self, doc: str, node: int) -> int:
        """Climb while the parent has this node as its only child (same text, same span)."""
        view = self.sel.view(doc)
        while (p := view.parent(node)) is not None and view.n_children(p) == 1:
            node = p
        return node

    def step(self, rank: int, doc: str, leaf: int, score: float) -> bool:
        """Add one ranked leaf; True when the walk must stop."""
        sel, opts = self.sel, self.options
        budget = opts.budget
        node = self._top_of_chain(doc, leaf) if opts.auto_merge else leaf
        ref = (doc, node)
        room = budget - sel.used - (sel.sep_tokens if sel.entries else 0)
        cost = sel.view(doc).tokens(node)
        if cost > room:
            if opts.fill == "whole":
                return room <= 0
            if room > 0:
                sel.add(ref, _Entry(rank, score, [leaf], truncated_tokens=room))
            return True
        leaves_before = sel.n_leaves
        sel.add(ref, _Entry(rank, score, [leaf]))
        if opts.auto_merge:
            self._climb(doc, node)
        self.merge_count += sel.n_leaves - leaves_before - sel.view(doc).n_leaves(node)
        return sel.used >= budget

    def _climb(self, doc: str, node: int) -> None:
        sel, budget = self.sel, self.options.budget
        view = sel.view(doc)
        while (p := view.parent(node)) is not None:
            parent = (doc, p)
            kids = sel.children(parent)
            if len(kids) < 2:
                return
            t = sel.used
            if sum(sel.cost(r) for r in kids) < view.tokens(p) / 3 * (1 + t / budget):
                return
            if sel.used_if_merged(parent) > budget:
                return
            key = min(sel.entries[r].key for r in sel.desc[parent])
            self.merges.append(sel.merge(parent, key))
            top = self._top_of_chain(doc, p)
            if top != p:  # same text one level up: carry the merged node there
                entry = sel.remove(parent)
                sel.add((doc, top), entry)
            node = top


class _ReferenceWalk:
    def __init__(self, sel: Selection, options: FillOptions):
        self.sel, self.options = sel, options
        self.merges: list[Merge] = []
        self.merge_count = 0
        self.context_tokens = 0  # tokens of the context as last rebuilt

    def step(self, rank: int, doc: str, leaf: int, score: float) -> bool:
        sel, budget = self.sel, self.options.budget
        view = sel.view(doc)
        node = leaf
        if self.options.auto_merge:
            p = view.parent(leaf)
            if p is not None and view.n_children(p) == 1:
                node = p
        leaves_before = sel.n_leaves
        sel.add((doc, node), _Entry(rank, score, [leaf]))
        if self.options.auto_merge:
            self._climb(doc, node)
            self.merge_count += sel.n_leaves - leaves_before - 1
        self.context_tokens = sel.used
        return self.context_tokens >= budget

    def _climb(self, doc: str, node: int) -> None:
        sel, budget = self.sel, self.options.budget
        view = sel.view(doc)
        p = view.parent(node)
        while p is not None:
            parent = (doc, p)
            same = sel.children(parent)
            t = self.context_tokens
            parent_chars = view.chars(p)
            threshold = (t / budget) * parent_chars / 3 + parent_chars / 3
            enough = sum(view.chars(r[1]) for r in same) >= threshold
            inside = sel.desc.get(parent, set())
            joiner = sel.joiner_tokens or 0
            had = sum(view.tokens(r[1]) for r in inside) + joiner * (sum(view.n_leaves(r[1]) for r in inside) - 1)
            parent_tokens = view.tokens(p) + joiner * (view.n_leaves(p) - 1)
            fits = parent_tokens - had <= budget - t
            if not (enough and len(same) >= 2 and fits):
                return
            self.merges.append(sel.merge(parent, sel.entries[same[0]].key))
            self.context_tokens = sel.used
            if self.context_tokens >= budget:
                return
            p = view.parent(p)
