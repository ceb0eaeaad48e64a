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

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

_EPS = 1e-20


def prf(hits: float, predicted: float, truth: float) -> tuple[float, float, float]:
    """(precision, recall, F1) from counts, with the reference's 1e-20 guards (an empty class scores 0)."""
    p, r = hits / (predicted + _EPS), hits / (truth + _EPS)
    return p, r, 2 * p * r / (p + r + _EPS)


@dataclass
class SplitCounts:
    """Pooled counts: ground-truth headings, predicted chunks and hits per level, and hits without level."""

    gt: Counter = field(default_factory=Counter)
    pred: Counter = field(default_factory=Counter)
    hit: Counter = field(default_factory=Counter)
    hit_no_level: int = 0

    def __add__(self, other: SplitCounts) -> SplitCounts:
        return SplitCounts(self.gt + other.gt, self.pred + other.pred, self.hit + other.hit,
                           self.hit_no_level + other.hit_no_level)

    def prf(self, level: int | None = None) -> tuple[float, float, float]:
        """(precision, recall, F1) at ``level``, or without level when ``level`` is None."""
        if level is None:
            return prf(self.hit_no_level, sum(self.pred.values()), sum(self.gt.values()))
        return prf(self.hit[level], self.pred[level], self.gt[level])

    def f1(self, level: int | None = None) -> float:
        return self.prf(level)[2]

    def to_dict(self) -> dict:
        return {"gt": dict(sorted(self.gt.items())), "pred": dict(sorted(self.pred.items())),
                "hit": dict(sorted(self.hit.items())), "hit_no_level": self.hit_no_level}

    @classmethod
    def from_dict(cls, data: dict) -> SplitCounts:
        def counter(d: dict) -> Counter:
            return Counter({int(k): int(v) for k, v in d.items()})

        return cls(counter(data["gt"]), counter(data["pred"]), counter(data["hit"]), int(data["hit_no_level"]))


def count_splits(gt_levels: Iterable[int], chunks: Iterable[tuple[int | None, int]]) -> SplitCounts:
    """Counts for one document.

    ``gt_levels``: the level of every heading of the document. ``chunks``: for
    every predicted chunk, in order and the first one included, the level of the
    heading its first line is (None when that line is not a heading) and the
    level it was predicted at.
    """
    c = SplitCounts()
    c.gt.update(int(lv) for lv in gt_levels)
    for true_level, level in chunks:
        level = int(level)
        c.pred[level] += 1
        if true_level is not None:
            c.hit_no_level += 1
            if int(true_level) == level:
                c.hit[level] += 1
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
    levels = sorted({lv for c in per_doc for lv in (*c.gt, *c.pred)})
    m = len(levels)
    table = np.array([[*(c.gt[lv] for lv in levels), *(c.pred[lv] for lv in levels), *(c.hit[lv] for lv in levels),
                       c.hit_no_level] for c in per_doc], dtype=np.int64).reshape(len(per_doc), 3 * m + 1)
    picks = np.random.default_rng(seed).integers(0, len(per_doc), size=(n, len(per_doc)))
    pooled = table[picks].sum(axis=1)

    def counts(row: list[int]) -> SplitCounts:
        return SplitCounts(Counter(dict(zip(levels, row[:m]))), Counter(dict(zip(levels, row[m : 2 * m]))),
                           Counter(dict(zip(levels, row[2 * m : 3 * m]))), int(row[-1]))

    values = sorted(stat(counts(r)) for r in pooled.tolist())
    return values[int(alpha / 2 * (n - 1))], values[int((1 - alpha / 2) * (n - 1))]
