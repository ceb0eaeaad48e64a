"""Split-point precision/recall/F1, per level and without level (REFERENCE.md §4).

Ground truth is every heading of the document, with its level. Every predicted
chunk counts as a prediction, the first chunk included; it is a hit at level k
when its first line is a heading of level k and it was predicted at level k,
and a hit "without level" when its first line is a heading at all. Credit is
judged by the chunk's first line only. Counts are pooled over all documents of
a set (micro average); there is no macro average. Confidence intervals
resample documents (bootstrap), pooling counts inside each resample.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

MAX_LEVEL = 10
_EPS = 1e-20


@dataclass
class SplitCounts:
    """Pooled counts: ground-truth headings, predicted chunks and hits per level (index = level - 1)."""

    gt: list[int] = field(default_factory=lambda: [0] * MAX_LEVEL)
    pred: list[int] = field(default_factory=lambda: [0] * MAX_LEVEL)
    hit: list[int] = field(default_factory=lambda: [0] * MAX_LEVEL)
    hit_any: int = 0

    def __add__(self, other: "SplitCounts") -> "SplitCounts":
        return SplitCounts([a + b for a, b in zip(self.gt, other.gt)], [a + b for a, b in zip(self.pred, other.pred)],
                           [a + b for a, b in zip(self.hit, other.hit)], self.hit_any + other.hit_any)

    def prf(self, level: int | None = None) -> tuple[float, float, float]:
        """(precision, recall, F1) at ``level`` (1..10), or without level when ``level`` is None."""
        if level is None:
            tp, n_pred, n_gt = self.hit_any, sum(self.pred), sum(self.gt)
        else:
            tp, n_pred, n_gt = self.hit[level - 1], self.pred[level - 1], self.gt[level - 1]
        p, r = tp / (n_pred + _EPS), tp / (n_gt + _EPS)
        return p, r, 2 * p * r / (p + r + _EPS)

    def f1(self, level: int | None = None) -> float:
        return self.prf(level)[2]


def _clamp(level: int) -> int:
    return min(max(int(level), 1), MAX_LEVEL)


def count_splits(gt_levels: Iterable[int], chunks: Iterable[tuple[int | None, int]]) -> SplitCounts:
    """Counts for one document.

    ``gt_levels``: the level of every heading of the document. ``chunks``: for
    every predicted chunk, in order and the first one included, the level of the
    heading its first line is (None when that line is not a heading) and the
    level it was predicted at.
    """
    c = SplitCounts()
    for lv in gt_levels:
        c.gt[_clamp(lv) - 1] += 1
    for true_level, level in chunks:
        k = _clamp(level) - 1
        c.pred[k] += 1
        if true_level is not None:
            c.hit_any += 1
            if _clamp(true_level) - 1 == k:
                c.hit[k] += 1
    return c


def chunks_from_points(points: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """(first line, level) of every chunk made by split points, as hichunk builds chunk trees.

    Text before the first point is a level-1 chunk; a point on line 0 gives the
    first chunk its level (the reference code forced level 1 there); of several
    points on one line the first given wins.
    """
    out: dict[int, int] = {}
    for line, level in points:
        out.setdefault(line, level)
    out.setdefault(0, 1)
    return sorted(out.items())


def count_line_points(line_levels: Sequence[int], points: Iterable[tuple[int, int]]) -> SplitCounts:
    """Counts for one document given per line heading levels (0: not a heading) and predicted (line, level) points."""
    chunks = [(line_levels[i] or None, lv) for i, lv in chunks_from_points(points)]
    return count_splits([lv for lv in line_levels if lv], chunks)


def bootstrap_ci(per_doc: Sequence[SplitCounts], stat: Callable[[SplitCounts], float], n: int = 1000,
                 seed: int = 0, alpha: float = 0.05) -> tuple[float, float]:
    """Percentile interval of ``stat`` over document resamples (counts pooled in each resample)."""
    import numpy as np

    if not per_doc:
        return float("nan"), float("nan")
    table = np.array([[*c.gt, *c.pred, *c.hit, c.hit_any] for c in per_doc], dtype=np.int64)
    picks = np.random.default_rng(seed).integers(0, len(per_doc), size=(n, len(per_doc)))
    pooled = table[picks].sum(axis=1)
    m = MAX_LEVEL
    values = sorted(stat(SplitCounts(list(r[:m]), list(r[m : 2 * m]), list(r[2 * m : 3 * m]), int(r[-1])))
                    for r in pooled.tolist())
    return values[int(alpha / 2 * (n - 1))], values[int((1 - alpha / 2) * (n - 1))]
