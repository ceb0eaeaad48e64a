"""See the tree: self-contained HTML pages (inline CSS and script, nothing fetched from a network).

* ``tree_page(trees)``: each document with its chunk tree as collapsible sections
  (level, title, tokens, leaves, page range for paged documents), open at
  levels 1-2 so the first screen is the outline, not the first chunk's text; the
  leaves hold the document's clean text (its raw text a click away where the two
  differ), so reading them in order reads the whole document.
* ``answer_page(result, trees)``: the passage table (document, headings, span,
  pages, score) first, then the context passage by passage, each under a header
  saying where it came from (merged sections and truncated passages flagged) and
  linked to its place in its document, where the exact raw span
  ``text[start:end]`` is highlighted.

Every piece of document text, title and name is escaped; pages carry no
external links, fonts or scripts. ``hichunk chunk --format html``, ``hichunk
query --html`` and ``hichunk serve`` (``GET /``) write these pages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from hichunk.retrieval.search import SearchResult
from hichunk.tree.export import format_pages
from hichunk.tree.model import LEAF, ROOT, SECTION, ChunkTree, Node
from hichunk.wording import counted

CONTEXT_CHARS = 400  # document text shown around each passage in an answer page
OPEN_LEVELS = 2  # a tree page opens showing the headings of levels 1 to 2 (and no text yet)

_CSS = """
:root { --fg:#1d232b; --muted:#5f6b7a; --line:#d9dee5; --leaf:#f7f9fb; --mark:#fff1a8; --merged:#d6f0dd; --cut:#fde2d4; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); margin: 0; padding: 1.2rem 2rem; }
h1 { font-size: 1.35rem; margin: 0 0 .3rem; } h2 { font-size: 1.1rem; margin: 1.4rem 0 .5rem; }
.muted, .meta { color: var(--muted); font-size: .85rem; }
.toolbar { margin: .6rem 0 1rem; } button { font: inherit; font-size: .85rem; margin-right: .4rem; }
details.node { border-left: 3px solid var(--line); margin: .25rem 0 .25rem .2rem; padding-left: .7rem; }
details.node > summary { cursor: pointer; padding: .15rem 0; }
details.lvl1 { border-color: #4c7bd9; } details.lvl2 { border-color: #3aa57a; } details.lvl3 { border-color: #c9892a; }
details.lvl4 { border-color: #a45bc4; } details.root { border: none; padding-left: 0; }
.badge { display: inline-block; font-size: .72rem; padding: 0 .35rem; border-radius: .6rem; background: #e8edf4; margin-right: .3rem; }
.leaf { background: var(--leaf); border: 1px solid var(--line); border-radius: 4px; margin: .3rem 0; padding: .3rem .5rem; }
pre { white-space: pre-wrap; word-break: break-word; margin: .2rem 0; font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
.leaf pre.raw, body.raw .leaf pre.clean { display: none; } body.raw .leaf pre.raw { display: block; }
.passage { border-left: 4px solid #d8b800; background: var(--leaf); margin: .6rem 0; padding: .3rem .6rem; }
.passage.merged { border-color: #2e9b57; } .passage.truncated { border-color: #d0632b; }
.passage .phead { font-size: .85rem; color: var(--muted); } .passage .phead b { color: var(--fg); }
.flag { font-size: .72rem; padding: 0 .35rem; border-radius: .6rem; background: var(--mark); color: var(--fg); }
.flag.merged { background: var(--merged); } .flag.truncated { background: var(--cut); }
mark { background: var(--mark); } mark.merged { background: var(--merged); } mark.truncated { background: var(--cut); }
mark a, a.tag { color: inherit; text-decoration: none; } a.tag { font-size: .75rem; color: var(--muted); }
:target { outline: 2px solid #4c7bd9; }
table { border-collapse: collapse; font-size: .85rem; } td, th { border: 1px solid var(--line); padding: .2rem .45rem; text-align: left; }
.gap { color: var(--muted); font-style: italic; }
form input[type=text] { width: 28rem; max-width: 100%; }
"""

_SCRIPT = """
function setAll(open) { document.querySelectorAll('details.node').forEach(function (d) { d.open = open; }); }
function showLevel(k) { document.querySelectorAll('details.node').forEach(function (d) {
  d.open = d.classList.contains('root') || (d.dataset.kind === 'section' && Number(d.dataset.level) < k); }); }
function rawText(on) { document.body.classList.toggle('raw', on); }
"""


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
            f'script-src \'unsafe-inline\'; form-action \'self\'">\n'
            f"<title>{escape(title)}</title>\n<style>{_CSS}</style>\n<script>{_SCRIPT}</script>\n</head>\n"
            f"<body>\n{body}\n</body>\n</html>\n")


def _preview(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _anchor(doc_slot: int, node_id: int) -> str:
    return f"d{doc_slot}-n{node_id}"


def _summary(tree: ChunkTree, node: Node, n_leaves: int) -> str:
    if node.kind == ROOT:
        label = escape(tree.name)
    else:
        label = escape(node.title) if node.title else '<span class="muted">(untitled)</span> ' + escape(
            _preview(tree.clean_text(node), 70))
    paged = format_pages(tree.pages(node))
    facts = [f"{node.tokens} tok", counted(n_leaves, "leaf", "leaves")] + ([paged] if paged else [])
    level = f'<span class="badge">L{node.level}</span>' if node.kind != ROOT else ""
    return (f'{level}<span class="badge">{node.kind}</span>{label} '
            f'<span class="meta">· {" · ".join(escape(f) for f in facts)}</span>')


def _tree_html(tree: ChunkTree, slot: int) -> str:
    n_leaves = [0] * len(tree.nodes)
    for node in reversed(tree.nodes):
        n_leaves[node.id] = 1 if node.kind == LEAF else sum(n_leaves[c] for c in node.children)
    out: list[str] = []

    def emit(node: Node) -> None:
        span = f'data-node="{node.id}" data-kind="{node.kind}" data-level="{node.level}" ' \
               f'data-start="{node.start}" data-end="{node.end}"'
        if node.kind == LEAF:
            paged = format_pages(tree.pages(node))
            out.append(f'<div class="leaf" id="{_anchor(slot, node.id)}" {span}>'
                       f'<div class="meta">leaf · L{node.level} · {node.tokens} tok · chars {node.start}–{node.end}'
                       f'{" · " + escape(paged) if paged else ""}</div>{_leaf_text(tree, node)}</div>')
            return
        kind = "root" if node.kind == ROOT else f"lvl{min(node.level, 4)}"
        # open at levels 1-2: the root and level-1 sections, so the outline shows and no text does yet
        is_open = " open" if node.kind == ROOT or (node.kind == SECTION and node.level < OPEN_LEVELS) else ""
        out.append(f'<details class="node {kind}"{is_open} id="{_anchor(slot, node.id)}" {span}>'
                   f"<summary>{_summary(tree, node, n_leaves[node.id])}</summary>")
        for child in node.children:
            emit(tree.nodes[child])
        out.append("</details>")

    emit(tree.root)
    paged = f", {len(tree.page_starts)} pages" if tree.page_starts else ""
    counts = f'{counted(len(tree.splits), "chunk")}, {counted(len(tree.leaves()), "leaf", "leaves")}'
    head = (f'<h2 id="doc-{slot}">{escape(tree.name)}</h2><p class="muted">{counts}, {tree.root.tokens} tokens, '
            f"{len(tree.text)} characters{paged}; method {escape(str(tree.meta.get('method', '?')))}</p>")
    return f'<section class="tree" data-doc="{escape(tree.name)}">{head}{"".join(out)}</section>'


def _leaf_text(tree: ChunkTree, leaf: Node) -> str:
    """The leaf's clean text, and its exact raw text (shown by the "raw text" switch) where the two differ."""
    clean, raw = tree.clean_text(leaf), tree.raw_text(leaf)
    if clean == raw:
        return f"<pre>{escape(raw)}</pre>"
    return f'<pre class="clean">{escape(clean)}</pre><pre class="raw">{escape(raw)}</pre>'


def tree_page(trees: Sequence[ChunkTree], title: str | None = None) -> str:
    """One page with every tree as collapsible sections, open at levels 1-2; leaves show the clean text,
    and the exact raw text where it differs."""
    title = title or (trees[0].name if len(trees) == 1 else f"{len(trees)} documents")
    differs = any(tree.clean != tree.text for tree in trees)
    raw_switch = ('<label><input type="checkbox" onchange="rawText(this.checked)"> raw text (the exact source; '
                  "leaves show the clean text)</label>") if differs else ""
    toolbar = ('<div class="toolbar"><button type="button" onclick="setAll(true)">expand all</button>'
               '<button type="button" onclick="setAll(false)">collapse all</button>'
               '<button type="button" onclick="showLevel(1)">level 1</button>'
               f'<button type="button" onclick="showLevel(2)">levels 1-2</button>{raw_switch}</div>')
    body = (f"<h1>Chunk tree: {escape(title)}</h1>{toolbar}"
            + "".join(_tree_html(tree, k) for k, tree in enumerate(trees)))
    return _page(f"hichunk · {title}", body)


def _windows(spans: Iterable[tuple[int, int]], length: int, margin: int) -> list[tuple[int, int]]:
    """Stretches of a document shown around passages: each span widened by ``margin``, overlaps joined."""
    out: list[list[int]] = []
    for start, end in sorted(spans):
        lo, hi = max(0, start - margin), min(length, end + margin)
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(a, b) for a, b in out]


def _flags(p) -> str:
    return " ".join(f for f, on in (("merged", p.merged), ("truncated", p.truncated)) if on)


def _flag_labels(p) -> str:
    labels = [(f"merged section ({counted(len(p.leaves), 'retrieved leaf', 'retrieved leaves')})", "merged", p.merged),
              ("truncated at the budget", "truncated", p.truncated)]
    return "".join(f' <span class="flag {cls}">{escape(text)}</span>' for text, cls, on in labels if on)


def _passage_title(p) -> str:
    crumbs = " › ".join(p.titles) if p.titles else "(no heading)"
    paged = format_pages(p.pages)
    return (f"{p.doc} · {crumbs} · node {p.node} ({p.kind}, L{p.level}) · chars {p.start}–{p.end}"
            f"{' · ' + paged if paged else ''} · {p.tokens} tok · score {p.score:.3f}"
            f"{' · merged ' + str(len(p.leaves)) + ' retrieved leaves' if p.merged else ''}"
            f"{' · truncated' if p.truncated else ''}")


def _passage_html(i: int, p, text: str) -> str:
    """One passage of the context under a header: number, document, heading path, pages, score, flags."""
    crumbs = "".join(f" › {escape(t)}" for t in p.titles)
    paged = format_pages(p.pages)
    head = (f'<div class="phead"><a href="#src-{i}" title="its place in the document">[{i + 1}]</a> '
            f"<b>{escape(p.doc)}</b>{crumbs}{' · ' + escape(paged) if paged else ''} · score {p.score:.3f} · "
            f"{p.tokens} tok{_flag_labels(p)}</div>")
    return (f'<div class="passage {_flags(p)}" id="ctx-{i}" data-doc="{escape(p.doc)}" data-start="{p.start}" '
            f'data-end="{p.end}">{head}<pre id="ctx-{i}-text">{escape(text)}</pre></div>')


def _document_html(doc: str, slot: int, tree: ChunkTree | None, passages: list[tuple[int, object]]) -> str:
    head = f'<h2 id="doc-{slot}">{escape(doc)}</h2>'
    if tree is None:
        return head + '<p class="muted">(document text not available)</p>'
    text = tree.text
    by_start = sorted(passages, key=lambda ip: ip[1].start)
    parts: list[str] = []
    windows = _windows([(p.start, p.end) for _, p in by_start], len(text), CONTEXT_CHARS)
    pos_in = 0
    for lo, hi in windows:
        if lo > pos_in:
            parts.append(f'<span class="gap">[… {lo - pos_in} characters …]</span>\n')
        cur = lo
        for i, p in by_start:
            if p.start < lo or p.start >= hi:
                continue
            parts.append(escape(text[cur : p.start]))
            parts.append(f'<a class="tag" href="#ctx-{i}">[{i + 1}]</a>'
                         f'<mark id="src-{i}" class="{_flags(p)}" title="{escape(_passage_title(p))}">'
                         f'<a href="#ctx-{i}">{escape(text[p.start : p.end])}</a></mark>')
            cur = p.end
        parts.append(escape(text[cur:hi]))
        pos_in = hi
    if pos_in < len(text):
        parts.append(f'\n<span class="gap">[… {len(text) - pos_in} characters …]</span>')
    return head + f'<pre class="source" data-doc="{escape(doc)}">{"".join(parts)}</pre>'


def answer_page(result: SearchResult, trees: dict[str, ChunkTree], form: str = "") -> str:
    """The passage table, then the context passage by passage under headers saying where each came from,
    then each passage's exact span marked in its document."""
    docs: dict[str, list[tuple[int, object]]] = {}
    for i, p in enumerate(result.passages):
        docs.setdefault(p.doc, []).append((i, p))
    slots = {doc: k for k, doc in enumerate(docs)}
    rows = "".join(
        f'<tr><td><a href="#ctx-{i}">{i + 1}</a></td><td><a href="#doc-{slots[p.doc]}">{escape(p.doc)}</a></td>'
        f'<td>{escape(" › ".join(p.titles))}</td><td><a href="#src-{i}">{p.start}–{p.end}</a></td>'
        f"<td>{escape(format_pages(p.pages))}</td><td>{p.tokens}</td><td>{p.score:.3f}</td>"
        f"<td>{escape(_flags(p))}</td></tr>" for i, p in enumerate(result.passages))
    context = "".join(_passage_html(i, p, result.context[p.context_start : p.context_end])
                      for i, p in enumerate(result.passages))
    merged = sum(p.merged for p in result.passages)
    cut = sum(p.truncated for p in result.passages)
    body = (f"{form}<h1>Answer context: {escape(result.query)}</h1>"
            f'<p class="muted">{counted(len(result.passages), "passage")} ({counted(merged, "merged section")}, '
            f"{cut} truncated), {result.tokens} of {result.budget} tokens, Auto-Merge "
            f"{'on' if result.auto_merge else 'off'} ({escape(result.mode)} rule). Colours: "
            f'<mark>retrieved</mark> <mark class="merged">merged section</mark> <mark class="truncated">truncated</mark>.</p>'
            f"<h2>Passages</h2><table><tr><th>#</th><th>document</th><th>headings</th><th>chars</th><th>pages</th>"
            f"<th>tokens</th><th>score</th><th></th></tr>{rows}</table>"
            f'<h2>Context</h2><div class="context">{context}</div>'
            + "".join(_document_html(doc, slots[doc], trees.get(doc), items) for doc, items in docs.items()))
    return _page(f"hichunk · {result.query}", body)


def query_form(query: str = "", budget: int = 4096, auto_merge: bool = True, docs: Sequence[str] = ()) -> str:
    """A GET form for ``hichunk serve``'s page, and links to each indexed document's tree."""
    links = "".join(f'<li><a href="/tree?doc={escape(_quote(d))}">{escape(d)}</a></li>' for d in docs[:500])
    more = f'<li class="muted">… {len(docs) - 500} more</li>' if len(docs) > 500 else ""
    return (f'<form method="get" action="/"><input type="hidden" name="form" value="1">'
            f'<input type="text" name="q" value="{escape(query)}" '
            f'placeholder="ask the index" autofocus> budget <input type="number" name="budget" min="1" '
            f'value="{budget}" style="width:6rem"> <label><input type="checkbox" name="auto_merge" value="1"'
            f'{" checked" if auto_merge else ""}> Auto-Merge</label> <button type="submit">search</button></form>'
            + (f'<details><summary class="muted">{len(docs)} documents (chunk trees)</summary><ul>{links}{more}</ul>'
               "</details>" if docs else ""))


def index_page(docs: Sequence[str], info: str) -> str:
    """``hichunk serve``'s front page: the query form and the indexed documents."""
    return _page("hichunk", f'<h1>hichunk</h1><p class="muted">{escape(info)}</p>{query_form(docs=docs)}')


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")
