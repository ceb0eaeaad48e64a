"""Chunk tree exports: splits, tree JSON (loads back equal), Markdown, networkx, readable text."""

from __future__ import annotations

from typing import Any

from hichunk.tree.build import heading_title
from hichunk.tree.model import CHUNK, LEAF, SECTION, ChunkTree, Node, Split

TREE_FORMAT = "hichunk.tree/1"
_NODE_FIELDS = ("id", "kind", "level", "start", "end", "clean_start", "clean_end", "parent", "children", "title", "sentences", "tokens", "split")


def to_splits(tree: ChunkTree) -> list[list[Any]]:
    """``[[chunk_text, level], ...]`` as the reference repository writes it."""
    return [[text, level] for text, level in tree.split_texts()]


def to_dict(tree: ChunkTree) -> dict:
    """A JSON-ready dict holding the texts, so the tree loads back without the source file.

    Paged documents add ``page_starts`` and, for reading only, each node's ``pages`` ([first, last]).
    """
    out: dict[str, Any] = {"format": TREE_FORMAT, "name": tree.name, "meta": tree.meta, "text": tree.text}
    if tree.clean != tree.text:
        out["clean"] = tree.clean
    if tree.page_starts:
        out["page_starts"] = list(tree.page_starts)
    out["splits"] = [[s.start, s.clean_start, s.level, s.title] for s in tree.splits]
    out["nodes"] = [_node_dict(tree, n) for n in tree.nodes]
    return out


def _node_dict(tree: ChunkTree, node: Node) -> dict:
    out = {f: _jsonable(getattr(node, f)) for f in _NODE_FIELDS}
    if tree.page_starts:
        out["pages"] = _jsonable(tree.pages(node))
    return out


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def from_dict(data: dict) -> ChunkTree:
    """Inverse of ``to_dict``."""
    if data.get("format") != TREE_FORMAT:
        raise ValueError(f"not a hichunk tree (format {data.get('format')!r})")
    nodes = []
    for d in data["nodes"]:
        fields = {f: d[f] for f in _NODE_FIELDS}  # "pages" is derived from page_starts
        fields["children"] = list(fields["children"])
        if fields["sentences"] is not None:
            fields["sentences"] = tuple(fields["sentences"])
        nodes.append(Node(**fields))
    text = data["text"]
    return ChunkTree(
        name=data["name"],
        text=text,
        clean=data.get("clean", text),
        nodes=nodes,
        splits=[Split(int(a), int(c), int(level), bool(t)) for a, c, level, t in data["splits"]],
        meta=dict(data.get("meta") or {}),
        page_starts=[int(p) for p in data.get("page_starts") or []],
    )


def to_markdown(tree: ChunkTree) -> str:
    """The clean text with the chunk structure written as Markdown.

    A chunk opening with a title line gets that line as a heading of its level;
    any other chunk is marked by an HTML comment, so the structure is visible
    and no text is lost or changed.
    """
    parts: list[str] = []
    pos = 0
    for split in tree.splits:
        parts.append(tree.clean[pos : split.clean_start])
        pos = split.clean_start
        line_end = tree.clean.find("\n", pos)
        line_end = len(tree.clean) if line_end < 0 else line_end
        title = heading_title(tree.clean[pos:line_end]) if split.title else ""
        if title:
            parts.append("#" * split.level + " " + title)
            pos = line_end
        else:
            parts.append(f"<!-- chunk level {split.level} -->\n")
    parts.append(tree.clean[pos:])
    return "".join(parts)


def to_networkx(tree: ChunkTree):
    """A ``networkx.DiGraph`` with edges parent -> child and node attributes."""
    import networkx as nx

    graph = nx.DiGraph(name=tree.name)
    for n in tree.nodes:
        graph.add_node(n.id, kind=n.kind, level=n.level, start=n.start, end=n.end, title=n.title, tokens=n.tokens,
                       pages=tree.pages(n))
        if n.parent is not None:
            graph.add_edge(n.parent, n.id)
    return graph


def render_tree(tree: ChunkTree, width: int = 60) -> str:
    """A readable outline: one line per semantic chunk with level, title, tokens, its leaves (and pages).

    ``[316 tok in 2 leaves: 200, 116]``: the chunk's size in tokens and its leaves' sizes; a section with
    subsections says so and gives its own text's size apart: ``[1499 tok with subsections; own text 76 tok
    in 1 leaf]``.
    """
    from hichunk.wording import counted

    leaves = tree.leaves()
    paged = f", {len(tree.page_starts)} pages" if tree.page_starts else ""
    lines = [f"{tree.name}: {counted(len(tree.splits), 'chunk')}, {counted(len(leaves), 'leaf', 'leaves')}, "
             f"{tree.root.tokens} tokens{paged}"]
    depth = {0: -1}
    for node, _ in tree.walk():
        if node.parent is None:
            continue
        parent = tree.nodes[node.parent]
        same_split = parent.kind == SECTION and parent.split == node.split
        depth[node.id] = depth[parent.id] + (0 if same_split else 1)
        if node.kind == CHUNK and same_split:
            continue  # shown on its section's line
        if node.kind == LEAF and parent.kind != tree.root.kind:
            continue  # shown as sizes on its chunk's line
        own = node
        if node.kind == SECTION:
            own = next((tree.nodes[c] for c in node.children if tree.nodes[c].kind == CHUNK and tree.nodes[c].split == node.split), None)
        label = node.title or "(untitled) " + _preview(tree.clean_text(own if own is not None else node), width - 11)
        pages = format_pages(tree.pages(node))
        lines.append(f"{'  ' * depth[node.id]}L{node.level} {label}  [{_sizes(tree, node, own)}"
                     f"{'; ' + pages if pages else ''}]")
    return "\n".join(lines)


def _sizes(tree: ChunkTree, node: Node, own: Node | None) -> str:
    """"316 tok in 2 leaves: 200, 116", or for a section "1499 tok with subsections; own text ..."."""
    from hichunk.wording import counted

    def in_leaves(chunk: Node) -> str:
        sizes = [tree.nodes[c].tokens for c in chunk.children] if chunk.kind == CHUNK else [chunk.tokens]
        listed = f": {', '.join(map(str, sizes))}" if len(sizes) > 1 else ""
        return f"{chunk.tokens} tok in {counted(len(sizes), 'leaf', 'leaves')}{listed}"

    if node.kind != SECTION:
        return in_leaves(node)
    own_text = f"; own text {in_leaves(own)}" if own is not None else ""
    return f"{node.tokens} tok with subsections{own_text}"


def format_pages(pages: tuple[int, int] | None) -> str:
    """"p. 3" or "pp. 3-5" ("" without pages)."""
    if pages is None:
        return ""
    first, last = pages
    return f"p. {first}" if first == last else f"pp. {first}-{last}"


def _preview(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
