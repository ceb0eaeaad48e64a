"""Test helpers for the benchmark runners: chunkers that fail on demand or are not deterministic."""

from __future__ import annotations

from hichunk.chunkers.base import ChunkOptions
from hichunk.chunkers.structure import StructureChunker
from hichunk.errors import HichunkError
from hichunk.tree.model import ChunkTree


class FlakyChunker(StructureChunker):
    """The structure chunker, failing on documents whose text contains 'FAIL-ME'."""

    name = "flaky"

    def __init__(self, options: ChunkOptions):
        super().__init__(ChunkOptions(leaf_tokens=options.leaf_tokens, merge_over_chunk=options.merge_over_chunk, hints="use",
                                      tokenizer=options.tokenizer))

    def chunk(self, doc):
        if "FAIL-ME" in doc.text:
            raise HichunkError("this document always fails")
        return super().chunk(doc)


def breadcrumb_inputs(tree: ChunkTree) -> list[str]:
    """Encoder inputs for tests: heading path, blank line, leaf text."""
    return [" > ".join(tree.breadcrumb(leaf)) + "\n\n" + tree.clean_text(leaf).strip() for leaf in tree.leaves()]


class JitteryChunker:
    """Fixed-size windows whose size changes on every call: a method that is not deterministic."""

    name = "jittery"
    calls = 0

    def __init__(self, options: ChunkOptions):
        self.options = options

    def chunk(self, doc):
        from hichunk.chunkers.fixed import FixedChunker

        JitteryChunker.calls += 1
        size = 24 + 8 * (JitteryChunker.calls % 3)
        return FixedChunker(ChunkOptions(leaf_tokens=size, tokenizer=self.options.tokenizer)).chunk(doc)
