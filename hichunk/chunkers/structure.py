"""``structure``: chunks start at the document's explicit headings (Markdown, HTML, reST hints)."""

from __future__ import annotations

from hichunk.chunkers.base import ChunkOptions
from hichunk.document.model import Document
from hichunk.sentences import sentence_spans
from hichunk.token_table import TokenTable
from hichunk.tree.build import Boundary, build_tree
from hichunk.tree.levels import fold_levels, merge_over_chunk
from hichunk.tree.model import ChunkTree


def heading_boundaries(doc: Document) -> list[Boundary]:
    """One titled boundary per explicit heading line."""
    return [Boundary(doc.lines[i].clean_start, level, True) for i, level in doc.headings]


class StructureChunker:
    name = "structure"

    def __init__(self, options: ChunkOptions):
        self.options = options

    def chunk(self, doc: Document) -> ChunkTree:
        opts = self.options
        bounds = heading_boundaries(doc) if opts.hints == "use" else []
        bounds = fold_levels(bounds, opts.max_level)
        table = TokenTable(doc.clean, opts.tokenizer)
        if opts.merge_over_chunk:
            bounds = merge_over_chunk(bounds, doc.clean, opts.tokenizer, opts.leaf_tokens, table)
        return build_tree(doc, bounds, opts.tokenizer, sentence_spans(doc), opts.leaf_tokens,
                          {"method": self.name, "hints": opts.hints}, table=table)
