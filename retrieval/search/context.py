"""From selected nodes to a context string and passages with provenance."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from hichunk.retrieval.search.automerge import REFERENCE, FillOptions, FillResult, Merge, Ref, _Entry
from hichunk.retrieval.search.view import TreeView
from hichunk.tokens import Tokenizer


@dataclass
class Passage:
    """One piece of the context and where it came from."""

    doc: str
    node: int
    kind: str
    level: int
    path: list[int]  # node ids from the top of the tree down to this node
    titles: list[str]  # heading breadcrumb
    start: int  # raw char span in the source document
    end: int
    clean_start: int  # span in the clean view (what the text is cut from)
    clean_end: int
    score: float  # best score among the ranked leaves inside
    rank: int  # rank of the earliest ranked leaf inside
    tokens: int
    text: str
    leaves: list[int]  # ranked leaves that led to this passage
    merged: bool  # an inner node that replaced retrieved children
    truncated: bool = False  # only a prefix fitted the budget
    pages: tuple[int, int] | None = None  # 1-based first and last page of the node (paged documents; else None)

    def to_dict(self) -> dict:
        return asdict(self)


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
        out = asdict(self)
        out["passages"] = [p.to_dict() for p in self.passages]
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


def assemble(query: str, result: FillResult, view: Callable[[str], TreeView], options: FillOptions,
             tokenizer: Tokenizer) -> SearchResult:
    """Write the selected nodes as one context, in rank or document order, and count it."""
    reference = options.mode == REFERENCE
    separator = "\n\n" if reference else options.separator
    passages: list[Passage] = []
    for (doc, node_id), entry in _ordered(result, view, options.order):
        v = view(doc)
        node = v.node(node_id)
        text = v.joined_text(node_id, "\n") if reference else v.text(node_id)
        if entry.truncated_tokens is not None:
            text = _prefix_tokens(text, entry.truncated_tokens, tokenizer).rstrip()
        lead = len(v.tree.clean_text(node)) - len(v.tree.clean_text(node).lstrip())
        passages.append(Passage(
            doc=doc, node=node_id, kind=node.kind, level=node.level,
            path=[n.id for n in v.tree.path(node)], titles=v.tree.breadcrumb(node),
            start=node.start, end=node.end, clean_start=node.clean_start,
            clean_end=node.clean_start + lead + len(text) if entry.truncated_tokens is not None else node.clean_end,
            score=entry.score, rank=entry.key, tokens=result.selection.cost((doc, node_id)), text=text,
            leaves=sorted(entry.hits), merged=entry.merged,
            truncated=entry.truncated_tokens is not None, pages=v.tree.pages(node)))
    passages = [p for p in passages if p.text or not p.truncated]
    context = separator.join(p.text for p in passages)
    tokens = result.selection.used
    if reference or options.verify:
        tokens = tokenizer.count(context)
        if tokens > options.budget:
            context, passages, tokens = _cut(context, passages, separator, options.budget, tokenizer, keep_tail=reference)
    return SearchResult(query, context, passages, tokens, options.budget, options.mode, options.auto_merge,
                        result.merges, result.merge_count, result.candidates_seen)


def _cut(context: str, passages: list[Passage], separator: str, budget: int, tokenizer: Tokenizer,
         keep_tail: bool) -> tuple[str, list[Passage], int]:
    """Cut the context at the budget; passages past the cut go, the one it falls in is shortened.

    ``keep_tail`` keeps whatever whitespace precedes the cut (the reference
    code decodes the first T tokens, trailing separators included).
    """
    if keep_tail:
        starts = tokenizer.starts(context)
        cut_text, tokens = context[: int(starts[budget])], budget
    else:
        cut_text, tokens = _fit(context, budget, tokenizer)
        cut_text = cut_text.rstrip()
    kept: list[Passage] = []
    pos = 0
    for p in passages:
        if pos >= len(cut_text) and kept:
            break
        end = pos + len(p.text)
        if end > len(cut_text):
            p.text = cut_text[pos:] if keep_tail else cut_text[pos:].rstrip()
            p.truncated = True
            p.clean_end = min(p.clean_end, p.clean_start + len(p.text))
        kept.append(p)
        pos = end + len(separator)
    kept = [p for p in kept if p.text or p is kept[0]]
    if not keep_tail:
        tokens = tokenizer.count(cut_text)
    return cut_text, kept, tokens
