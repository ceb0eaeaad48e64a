"""Chunk trees: build from split points, fixed-size leaves, exports."""

from hichunk.tree.build import Boundary, build_tree, heading_title, normalize_boundaries
from hichunk.tree.export import from_dict, render_tree, to_dict, to_markdown, to_networkx, to_splits
from hichunk.tree.levels import fold_levels, merge_over_chunk
from hichunk.tree.model import CHUNK, LEAF, ROOT, SECTION, ChunkTree, Node, Split

__all__ = [
    "CHUNK",
    "LEAF",
    "ROOT",
    "SECTION",
    "Boundary",
    "ChunkTree",
    "Node",
    "Split",
    "build_tree",
    "fold_levels",
    "from_dict",
    "heading_title",
    "merge_over_chunk",
    "normalize_boundaries",
    "render_tree",
    "to_dict",
    "to_markdown",
    "to_networkx",
    "to_splits",
]
