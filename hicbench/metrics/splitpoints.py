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
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

_PREFIX = re.compile(r"^[ #]*")
EPS = 1e-20


def hash_count(text: str) -> int:
    """Number of ``#`` in the leading run of spaces and ``#`` of ``text``."""
    return _PREFIX.match(text).group(0).count("#")


@dataclass
class SplitCounts:
    """Per-level counts of one document (or pooled over many)."""

    gt: Counter = field(default_factory=Counter)
    pred: Counter = field(default_factory=Counter)
    hit: Counter = field(default_factory=Counter)
    hit_no_level: int = 0

    def __add__(self, other: "SplitCounts") -> "SplitCounts":
        return SplitCounts(self.gt + other.gt, self.pred + other.pred, self.hit + other.hit,
                           self.hit_no_level + other.hit_no_level)

    def to_dict(self) -> dict:
        return {"gt": dict(sorted(self.gt.items())), "pred": dict(sorted(self.pred.items())),
                "hit": dict(sorted(self.hit.items())), "hit_no_level": self.hit_no_level}

    @classmethod
    def from_dict(cls, data: dict) -> "SplitCounts":
        def counter(d: dict) -> Counter:
            return Counter({int(k): int(v) for k, v in d.items()})

        return cls(counter(data["gt"]), counter(data["pred"]), counter(data["hit"]), int(data["hit_no_level"]))


def ground_truth_levels(document: str) -> list[int]:
    """Levels of the document's heading lines, in order."""
    return [hash_count(line.strip()) for line in document.split("\n") if line.startswith("#")]


def count_splits(document: str, splits: Iterable[tuple[str, int]]) -> SplitCounts:
    """Counts for one document: its original text and the predicted chunks ``(text, level)``."""
    counts = SplitCounts()
    counts.gt.update(ground_truth_levels(document))
    for text, level in splits:
        level = int(level)
        counts.pred[level] += 1
        if text.startswith("#"):
            counts.hit_no_level += 1
            if hash_count(text.strip()) == level:
                counts.hit[level] += 1
    return counts


def prf(hits: int, predicted: int, truth: int) -> dict[str, float]:
    p = hits / (predicted + EPS)
    r = hits / (truth + EPS)
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r + EPS)}


def scores(counts: SplitCounts, levels: Sequence[int] | None = None) -> dict[str, dict[str, float]]:
    """P/R/F1 per level (``"L1"``, ``"L2"``, ...) and ``"no_level"`` from (pooled) counts."""
    if levels is None:
        levels = sorted(set(counts.gt) | set(counts.pred))
    out = {f"L{k}": prf(counts.hit[k], counts.pred[k], counts.gt[k]) for k in levels}
    out["no_level"] = prf(counts.hit_no_level, sum(counts.pred.values()), sum(counts.gt.values()))
    return out


def pooled(per_doc: Iterable[SplitCounts]) -> SplitCounts:
    """Micro pooling: the sum of per-document counts."""
    total = SplitCounts()
    for c in per_doc:
        total = total + c
    return total


def split_point_scores(documents: Sequence[str], predictions: Sequence[Iterable[tuple[str, int]]],
                       levels: Sequence[int] | None = None) -> dict[str, dict[str, float]]:
    """Micro P/R/F1 over a dataset: ``documents[i]`` is chunked into ``predictions[i]``."""
    if len(documents) != len(predictions):
        raise ValueError(f"{len(documents)} documents but {len(predictions)} predictions")
    return scores(pooled(count_splits(d, p) for d, p in zip(documents, predictions)), levels)
