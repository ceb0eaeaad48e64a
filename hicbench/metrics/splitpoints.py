"""Split-point precision, recall and F1, per level and without level (REFERENCE.md §4).

Semantics are those of the HiCBench scorer:

* ground truth: every line of the original document that starts with ``#`` in
  its first column is a split point; its level is the number of ``#`` in the
  leading run of spaces and ``#`` of the stripped line (``"# # x"`` counts 2);
* prediction: every chunk ``(text, level)`` counts as a predicted point of its
  level, the first chunk included; it is a hit for that level when the chunk
  text starts with ``#`` and its ``#`` count equals the predicted level, and a
  hit "without level" when it merely starts with ``#``;
* counts are pooled over all documents (micro average);
  ``P = hits/predicted``, ``R = hits/ground truth``, ``F1 = 2PR/(P+R)``, each
  with a 1e-20 guard, so an empty class scores 0.

A chunk gets no credit for a heading in its middle: only its first character
is looked at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from hichunk.bench.metrics.splits import SplitCounts
from hichunk.bench.metrics.splits import count_splits as count_levels

_PREFIX = re.compile(r"^[ #]*")


def hash_count(text: str) -> int:
    """Number of ``#`` in the leading run of spaces and ``#`` of ``text``."""
    return _PREFIX.match(text).group(0).count("#")


def ground_truth_levels(document: str) -> list[int]:
    """Levels of the document's heading lines, in order."""
    return [hash_count(line.strip()) for line in document.split("\n") if line.startswith("#")]


def count_splits(document: str, splits: Iterable[tuple[str, int]]) -> SplitCounts:
    """Counts for one document: its original text and the predicted chunks ``(text, level)``."""
    chunks = [(hash_count(text.strip()) if text.startswith("#") else None, level) for text, level in splits]
    return count_levels(ground_truth_levels(document), chunks)


def scores(counts: SplitCounts, levels: Sequence[int] | None = None) -> dict[str, dict[str, float]]:
    """P/R/F1 per level (``"L1"``, ``"L2"``, ...) and ``"no_level"`` from (pooled) counts."""
    if levels is None:
        levels = sorted(set(counts.gt) | set(counts.pred))
    named = {f"L{k}": counts.prf(k) for k in levels}
    named["no_level"] = counts.prf()
    return {key: dict(zip(("precision", "recall", "f1"), values)) for key, values in named.items()}


def pooled(per_doc: Iterable[SplitCounts]) -> SplitCounts:
    """Micro pooling: the sum of per-document counts."""
    return sum(per_doc, SplitCounts())


def split_point_scores(documents: Sequence[str], predictions: Sequence[Iterable[tuple[str, int]]],
                       levels: Sequence[int] | None = None) -> dict[str, dict[str, float]]:
    """Micro P/R/F1 over a dataset: ``documents[i]`` is chunked into ``predictions[i]``."""
    if len(documents) != len(predictions):
        raise ValueError(f"{len(documents)} documents but {len(predictions)} predictions")
    return scores(pooled(count_splits(d, p) for d, p in zip(documents, predictions)), levels)
