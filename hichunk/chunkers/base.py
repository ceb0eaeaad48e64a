"""What every chunker shares: options and the protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from hichunk.document.model import Document
from hichunk.errors import HichunkError
from hichunk.token_table import TokenTable
from hichunk.tokens import Tokenizer, load_tokenizer
from hichunk.tree.build import Boundary, build_tree
from hichunk.tree.leaves import enforce_limit
from hichunk.tree.model import ChunkTree

# A single character can take two tokens (a leading-space marker and itself),
# so tiny leaf sizes cannot be honoured; below this they make no sense anyway.
MIN_LEAF_TOKENS = 8


@dataclass
class ChunkOptions:
    """Knobs shared by the chunkers; each chunker reads the ones it needs."""

    leaf_tokens: int = 200  # HC leaf size, and the chunk size of size-based chunkers
    max_level: int = 10  # deeper split points are folded into the chunk before them
    merge_over_chunk: bool = True  # merge a chunk with the deeper chunks after it when they fit in a leaf
    hints: str = "use"  # "use": trust explicit headings; "ignore": hide them from predictors
    tokenizer: Tokenizer = field(default_factory=load_tokenizer)  # or a name: a Hugging Face directory or hub id

    def __post_init__(self) -> None:
        if self.tokenizer is None or isinstance(self.tokenizer, str):
            self.tokenizer = load_tokenizer(self.tokenizer or None)
        check_chunk_settings(self.leaf_tokens, self.max_level, self.hints)


def check_chunk_settings(leaf_tokens: int, max_level: int, hints: str) -> None:
    """HichunkError for settings no chunker can honour; shared by ChunkOptions and the index config,
    so a bad value fails where it is set, not deep inside a later run."""
    if leaf_tokens < MIN_LEAF_TOKENS:
        raise HichunkError(f"leaf size must be at least {MIN_LEAF_TOKENS} tokens (got {leaf_tokens})")
    if not 1 <= max_level <= 10:
        raise HichunkError(f"max level must be between 1 and 10 (got {max_level})")
    if hints not in ("use", "ignore"):
        raise HichunkError(f"hints must be 'use' or 'ignore' (got {hints!r})")


class Chunker(Protocol):
    """Turns a Document into a ChunkTree."""

    name: str

    def chunk(self, doc: Document) -> ChunkTree: ...


def flat_tree(doc: Document, cuts: list[int], options: ChunkOptions, meta: dict, table: TokenTable | None = None) -> ChunkTree:
    """A one-level tree whose chunks are the leaves, each at most ``leaf_tokens`` tokens.

    ``table``: the clean view's token table, when the chunker made one to find its cuts.
    """
    table = table or TokenTable(doc.clean, options.tokenizer)
    bounds = [0, *cuts, len(doc.clean)]
    spans, counts = enforce_limit(table, [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a], options.leaf_tokens)
    boundaries = [Boundary(a, 1) for a, _ in spans]
    known = dict(zip(spans, counts))
    return build_tree(doc, boundaries, options.tokenizer, None, None, dict(meta, chunk_tokens=options.leaf_tokens), known, table)
