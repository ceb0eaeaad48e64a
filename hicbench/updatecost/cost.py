"""The recompute ratio R of one edit (REFERENCE.md §6).

R itself is ``hichunk.retrieval.inputs.recompute``, the function the index
reports on update: an embedding is reused only when the new version's encoder
input is byte-identical to an input of the previous version of the same
document (the cache holds that version and nothing else).

Besides R, the share of the recomputed text that is unchanged old text: for
each recomputed input, the part of its leaf's span in the new text that lies
outside the edit's new text (token-weighted over recomputed inputs). Text
only moved or only re-wrapped is unchanged old text; a breadcrumb is not part
of a leaf's span, so it is not counted either way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hichunk.errors import HichunkError
from hichunk.retrieval.inputs import Recompute, encoder_inputs, recompute
from hichunk.tokens import Tokenizer
from hichunk.tree.model import ChunkTree

EncoderInputs = Callable[[ChunkTree], list[str]]


def default_encoder_inputs() -> EncoderInputs:
    """The retrieval package's encoder-input function (what the embedder really reads)."""
    return encoder_inputs


@dataclass(frozen=True)
class Cost(Recompute):
    """R of one edit (``hichunk.retrieval.inputs.recompute``) and how much of the recomputed text is old text."""

    recomputed_unchanged_tokens: float = 0.0  # token-weighted unchanged old text inside recomputed inputs

    @property
    def unchanged_share(self) -> float:
        """Of the recomputed tokens, the share that is unchanged old text."""
        return self.recomputed_unchanged_tokens / self.recomputed_tokens if self.recomputed_tokens else 0.0

    def to_dict(self) -> dict:
        return {"unique_inputs": self.unique_inputs, "unique_tokens": self.unique_tokens,
                "recomputed_inputs": self.recomputed_inputs, "recomputed_tokens": self.recomputed_tokens,
                "recomputed_unchanged_tokens": self.recomputed_unchanged_tokens, "R": self.ratio,
                "unchanged_share": self.unchanged_share}


def leaf_inputs(tree: ChunkTree, encoder_inputs: EncoderInputs) -> list[tuple[str, tuple[int, int]]]:
    """(encoder input, raw span of its leaf) for every leaf, in document order."""
    leaves = tree.leaves()
    inputs = encoder_inputs(tree)
    if len(inputs) != len(leaves):
        raise HichunkError(f"the encoder-input function gave {len(inputs)} inputs for {len(leaves)} leaves")
    return [(text, (leaf.start, leaf.end)) for text, leaf in zip(inputs, leaves)]


def _overlap(span: tuple[int, int], changed: list[tuple[int, int]]) -> int:
    a, b = span
    return sum(max(0, min(b, y) - max(a, x)) for x, y in changed)


def recompute_cost(old_inputs: list[str], new_inputs: list[tuple[str, tuple[int, int]]],
                   changed: list[tuple[int, int]], tokenizer: Tokenizer) -> Cost:
    """Cost of moving from ``old_inputs`` to ``new_inputs`` (text + leaf span in the new raw text)."""
    r = recompute(old_inputs, [text for text, _ in new_inputs], tokenizer)
    unchanged = 0.0
    for i, n in r.recomputed:
        span = new_inputs[i][1]
        width = span[1] - span[0]
        unchanged += n * (1.0 - _overlap(span, changed) / width) if width > 0 else 0.0
    return Cost(r.unique_inputs, r.unique_tokens, r.recomputed, unchanged)
