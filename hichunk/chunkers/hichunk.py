"""``hichunk``: chunk starts predicted by a split-point model through the iterative engine.

Sentences become model lines (``hichunk.engine.units``), the engine runs the
model window by window, and predicted starts become tree boundaries. With
``hints="use"`` explicit headings are fixed starts and predictions only add
structure inside the text between them (``hichunk.engine.hints``); with
``hints="ignore"`` every start comes from the model. Either way the tree is
built over the raw text, so chunks rebuild the document byte for byte.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from hichunk.chunkers.base import ChunkOptions
from hichunk.document.model import Document
from hichunk.document.roles import toc_lines
from hichunk.engine import (
    EngineSettings,
    PredictionCache,
    WindowRecord,
    infer_points,
    merge_with_headings,
    model_units,
    relative_headings,
)
from hichunk.engine.contents import contents_titles
from hichunk.protocol import SplitPointModel
from hichunk.sentences import split_sentences
from hichunk.token_table import TokenTable
from hichunk.tree.build import Boundary, build_tree
from hichunk.tree.levels import fold_levels, merge_over_chunk
from hichunk.tree.model import ChunkTree

log = logging.getLogger(__name__)


class HichunkChunker:
    name = "hichunk"

    def __init__(self, options: ChunkOptions, model: SplitPointModel | None = None, settings: EngineSettings | None = None,
                 cache: PredictionCache | None = None, on_window: Callable[[str, WindowRecord], None] | None = None,
                 progress: bool = False):
        if model is None:
            from hichunk.models.registry import load_model

            model = load_model(None)
        self.options = options
        self.model = model
        self.settings = settings or EngineSettings()
        self.cache = cache
        self.on_window = on_window
        self.progress = progress

    def predicted_boundaries(self, doc: Document, sentences) -> tuple[list[Boundary], dict]:
        """The model's chunk starts as boundaries, and a summary of the run for the tree's meta."""
        toc = toc_lines(doc)  # read once: the units and the contents titles both need them
        units = model_units(doc, sentences, toc=toc)
        report = None if self.on_window is None else (lambda record: self.on_window(doc.name, record))
        result = infer_points([u.text for u in units], self.model, self.settings, self.cache, report, self.progress,
                              [u.layout for u in units], contents_titles(doc, toc))
        # With explicit headings in use, a fallback start says nothing about the text: leave it out.
        skip = result.fallbacks if self.options.hints == "use" and doc.headings else set()
        bounds = [Boundary(units[u].offset, level, title) for u, (level, title) in sorted(result.points.items()) if u not in skip]
        log.info("%s: %d windows, %d fell back to one level-1 start, %d from the prediction cache",
                 doc.name, len(result.windows), result.errors, result.cache_hits)
        summary = {"model": self.model.name, "window_tokens": self.settings.window_tokens or self.model.window_tokens,
                   "recurrent": self.settings.recurrent, "windows": len(result.windows), "errors": result.errors}
        return bounds, summary

    def chunk(self, doc: Document) -> ChunkTree:
        opts = self.options
        sentences = split_sentences(doc)
        bounds, summary = self.predicted_boundaries(doc, sentences)
        if opts.hints == "use":
            bounds = merge_with_headings(relative_headings(doc), bounds)
        bounds = fold_levels(bounds, opts.max_level)
        table = TokenTable(doc.clean, opts.tokenizer)
        if opts.merge_over_chunk:
            bounds = merge_over_chunk(bounds, doc.clean, opts.tokenizer, opts.leaf_tokens, table)
        meta = {"method": self.name, "hints": opts.hints, **summary}
        return build_tree(doc, bounds, opts.tokenizer, sentences, opts.leaf_tokens, meta, table=table)
