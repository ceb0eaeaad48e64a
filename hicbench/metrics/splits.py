"""Split-point precision/recall/F1, per level and without level (REFERENCE.md §4): the one scorer.

Ground truth is every heading of the document, with its level. Every predicted
chunk counts as a prediction, the first chunk included; it is a hit at level k
when its first line is a heading of level k and it was predicted at level k,
and a hit "without level" when its first line is a heading at all. Credit is
judged by the chunk's first line only. Counts are pooled over all documents of
a set (micro average); there is no macro average. Confidence intervals
resample documents (bootstrap), pooling counts inside each resample.

Three ways in, one count: ``count_tree`` (a chunk tree against placed ground
truth: what the benchmarks use for any input kind), ``count_line_points``
(per-line labels and predicted points: model training), and
``count_text_splits`` (the HiCBench reference semantics on a Markdown text and
``(chunk text, level)`` splits: the ``split_point_f1`` evaluate module), where

* ground truth: every line of the original document that starts with ``#`` in
  its first column is a split point; its level is the number of ``#`` in the
  leading run of spaces and ``#`` of the stripped line (``"# # x"`` counts 2);
* a chunk is a hit for its level when its text starts with ``#`` and its ``#``
  count equals the predicted level, and a hit "without level" when it merely
  starts with ``#``.
"""

from __future__ import annotations

import re
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


def count_tree(tree, truth, below_truth: bool = False) -> SplitCounts:
    """Counts for one chunk tree (``hichunk.tree.ChunkTree``) against ``hichunk.models.train.corpus.truth.Truth``.

    A chunk's first line is the one holding its first visible character; a heading
    credits only the first chunk that opens on it (as a chunk's text must start
    with the heading itself to be credited in the reference scorer). Where the truth
    lists headings only down to a level (``truth.deepest``: a PDF outline), a chunk
    predicted below that level on a line the truth does not list is not counted,
    unless ``below_truth`` (every chunk counts, as before that rule).
    """
    from hichunk.models.train.corpus.truth import first_visible

    chunks, credited = [], set()
    for s in tree.splits:
        pos = first_visible(tree.clean, s.clean_start)
        true_level = truth.at.get(pos) if pos not in credited else None
        credited.add(pos)
        if true_level is None and truth.deepest is not None and s.level > truth.deepest and not below_truth:
            continue
        chunks.append((true_level, s.level))
    return count_splits(truth.levels, chunks)


_PREFIX = re.compile(r"^[ #]*")


def hash_count(text: str) -> int:
    """Number of ``#`` in the leading run of spaces and ``#`` of ``text``."""
    return _PREFIX.match(text).group(0).count("#")


def ground_truth_levels(document: str) -> list[int]:
    """Levels of the document's heading lines, in order."""
    return [hash_count(line.strip()) for line in document.split("\n") if line.startswith("#")]


def count_text_splits(document: str, splits: Iterable[tuple[str, int]]) -> SplitCounts:
    """Counts for one document: its original text and the predicted chunks ``(text, level)``."""
    chunks = [(hash_count(text.strip()) if text.startswith("#") else None, level) for text, level in splits]
    return count_splits(ground_truth_levels(document), chunks)


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
    return scores(pooled(count_text_splits(d, p) for d, p in zip(documents, predictions)), levels)


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
