"""From selected nodes to a context string and passages with provenance."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields

from hichunk.retrieval.search.automerge import REFERENCE, FillOptions, FillResult, Merge, Ref, _Entry
from hichunk.retrieval.search.view import TreeView
from hichunk.tokens import Tokenizer
from hichunk.tree.spans import clean_span, pages, raw_cut, raw_span, trim


@dataclass
class Passage:
    """One piece of the context and where it came from.

    Provenance is exact: ``text == raw[start:end]``, where ``raw`` is the
    document's decoded text (``ChunkTree.text``; for PDFs the extracted text).
    The context shows the clean view of the same piece at
    ``context[context_start:context_end]``; for plain text and Markdown, and
    outside the reference mode (which joins a node's leaves by newlines), that
    piece *is* ``text``. A truncated passage's span ends where its prefix does.
    """

    doc: str
    node: int
    kind: str
    level: int
    path: list[int]  # node ids from the top of the tree down to this node
    titles: list[str]  # heading breadcrumb
    start: int  # raw char span in the source document: text == raw[start:end]
    end: int
    clean_start: int  # clean span of what the context shows (surrounding whitespace excluded)
    clean_end: int
    score: float  # best score among the ranked leaves inside
    rank: int  # rank of the earliest ranked leaf inside
    tokens: int
    text: str  # raw[start:end], exactly
    leaves: list[int]  # ranked leaves that led to this passage
    merged: bool  # an inner node that replaced retrieved children
    truncated: bool = False  # only a prefix fitted the budget
    pages: tuple[int, int] | None = None  # 1-based first and last page of the span (paged documents; else None)
    context_start: int = 0  # where the passage sits in SearchResult.context
    context_end: int = 0

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}  # flat: no deep copy of every value
        out["path"], out["titles"], out["leaves"] = list(self.path), list(self.titles), list(self.leaves)
        out["pages"] = list(self.pages) if self.pages is not None else None
        return out


@dataclass
class SearchResult:
    query: str
    context: str
    passages: list[Passage]
    tokens: int  # tokens of the context, counted in the search tokenizer
    budget: int
    mode: str
    auto_merge: bool
    merges: list[Merge] = field(default_factory=list)
    merge_count: int = 0
    candidates_seen: int = 0

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["passages"] = [p.to_dict() for p in self.passages]
        out["merges"] = [asdict(m) for m in self.merges]
        return out


def _ordered(result: FillResult, view: Callable[[str], TreeView], order: str) -> list[tuple[Ref, _Entry]]:
    items = result.selection.ordered()
    if order == "rank":
        return items
    first_rank: dict[str, int] = {}
    for (doc, _), entry in items:
        first_rank.setdefault(doc, entry.key)
    return sorted(items, key=lambda it: (first_rank[it[0][0]], view(it[0][0]).node(it[0][1]).clean_start))


def _prefix_tokens(text: str, n: int, tokenizer: Tokenizer) -> str:
    """The longest prefix of ``text`` made of its first ``n`` tokens."""
    starts = tokenizer.starts(text)
    return text if len(starts) <= n else text[: int(starts[n])]


def _fit(text: str, budget: int, tokenizer: Tokenizer) -> tuple[str, int]:
    """``text`` cut at a token boundary so that, counted on its own, it has at most ``budget`` tokens."""
    starts = tokenizer.starts(text)
    n = len(starts)
    k = budget
    while n > budget and k > 0:
        text = text[: int(starts[k])]
        n = tokenizer.count(text)
        k -= max(n - budget, 1)
    return (text, n) if n <= budget else ("", 0)


@dataclass
class _Piece:
    """What one selected node puts into the context: clean spans joined by ``joiner``, maybe cut short."""

    ref: Ref
    entry: _Entry
    spans: list[tuple[int, int]]  # clean spans, whitespace-trimmed, in order
    joiner: str
    text: str
    truncated: bool = False

    def cut(self, text: str) -> None:
        """Keep ``text``, a prefix of the piece."""
        self.truncated = self.truncated or len(text) < len(self.text)
        self.text = text

    def clean_end(self) -> int:
        """The clean offset where the piece's (possibly cut) text ends."""
        pos, end = 0, self.spans[0][0]
        for a, b in self.spans:
            if len(self.text) < pos:
                break
            end = a + min(len(self.text) - pos, b - a)
            pos += b - a + len(self.joiner)
        return end


def _piece(ref: Ref, entry: _Entry, view: TreeView, reference: bool) -> _Piece:
    tree, node = view.tree, view.node(ref[1])
    if reference:  # the published code's way of writing a node: its leaves' texts joined by newlines
        leaves = [tree.nodes[i] for i in view.leaf_ids[view.lo[node.id] : view.hi[node.id]]]
        spans = [clean_span(tree, leaf) for leaf in leaves]
        return _Piece(ref, entry, spans, "\n", view.joined_text(node.id, "\n"))
    return _Piece(ref, entry, [clean_span(tree, node)], "", view.text(node.id))


def _passage(piece: _Piece, view: TreeView, cost: int, tokenizer: Tokenizer) -> Passage:
    """The piece with its exact raw span: the node's span, or up to where a truncated prefix ends."""
    tree, node = view.tree, view.node(piece.ref[1])
    start, end = raw_span(tree, node)
    clean_start, clean_end = piece.spans[0][0], piece.clean_end()
    if piece.truncated:
        leaves = view.leaf_ids[view.lo[node.id] : view.hi[node.id]]
        ends = [tree.nodes[i].clean_end for i in leaves]
        leaf = tree.nodes[leaves[min(bisect_left(ends, clean_end), len(leaves) - 1)]]
        end = max(start, trim(tree.text, start, raw_cut(tree, leaf, clean_end))[1])
        cost = tokenizer.count(piece.text)
    entry = piece.entry
    return Passage(
        doc=piece.ref[0], node=node.id, kind=node.kind, level=node.level,
        path=[n.id for n in tree.path(node)], titles=tree.breadcrumb(node),
        start=start, end=end, clean_start=clean_start, clean_end=max(clean_start, clean_end),
        score=entry.score, rank=entry.key, tokens=cost, text=tree.text[start:end],
        leaves=sorted(entry.hits), merged=entry.merged, truncated=piece.truncated, pages=pages(tree, start, end))


def assemble(query: str, result: FillResult, view: Callable[[str], TreeView], options: FillOptions,
             tokenizer: Tokenizer) -> SearchResult:
    """Write the selected nodes as one context, in rank or document order, and count it."""
    reference = options.mode == REFERENCE
    separator = "\n\n" if reference else options.separator
    pieces: list[_Piece] = []
    for ref, entry in _ordered(result, view, options.order):
        piece = _piece(ref, entry, view(ref[0]), reference)
        if entry.truncated_tokens is not None:
            piece.cut(_prefix_tokens(piece.text, entry.truncated_tokens, tokenizer).rstrip())
            piece.truncated = True
            if not piece.text:
                continue
        pieces.append(piece)
    context = separator.join(p.text for p in pieces)
    tokens = result.selection.used
    if reference or options.verify:
        tokens = tokenizer.count(context)
        if tokens > options.budget:
            context, pieces, tokens = _cut(context, pieces, separator, options.budget, tokenizer, keep_tail=reference)
    passages, pos = [], 0
    for piece in pieces:
        p = _passage(piece, view(piece.ref[0]), result.selection.cost(piece.ref), tokenizer)
        p.context_start, p.context_end = pos, pos + len(piece.text)
        pos = p.context_end + len(separator)
        passages.append(p)
    return SearchResult(query, context, passages, tokens, options.budget, options.mode, options.auto_merge,
                        result.merges, result.merge_count, result.candidates_seen)


def _cut(context: str, pieces: list[_Piece], separator: str, budget: int, tokenizer: Tokenizer,
         keep_tail: bool) -> tuple[str, list[_Piece], int]:
    """Cut the context at the budget; pieces past the cut go, the one it falls in is shortened.

    ``keep_tail`` keeps whatever whitespace precedes the cut (the reference
    code decodes the first T tokens, trailing separators included).
    """
    if keep_tail:
        starts = tokenizer.starts(context)
        cut_text, tokens = context[: int(starts[budget])], budget
    else:
        cut_text, tokens = _fit(context, budget, tokenizer)
        cut_text = cut_text.rstrip()
    kept: list[_Piece] = []
    pos = 0
    for p in pieces:
        if pos >= len(cut_text) and kept:
            break
        end = pos + len(p.text)
        if end > len(cut_text):
            p.cut(cut_text[pos:] if keep_tail else cut_text[pos:].rstrip())
        kept.append(p)
        pos = end + len(separator)
    kept = [p for p in kept if p.text or p is kept[0]]
    if not keep_tail:
        tokens = tokenizer.count(cut_text)
    return cut_text, kept, tokens
