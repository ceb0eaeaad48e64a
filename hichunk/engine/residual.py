"""Residual lines: context carried into the next window when a window ends inside a level-1 segment.

The current level-1 segment runs from the last level-1 start found so far (the
document start when there is none) to the end of the window just read. Its
level-2 starts cut it into clips; the residual lines are the first lines of the
first ``pre`` and the last ``post`` clips, at most ``per_clip`` lines each. When
they take more than ``limit`` tokens (the engine allows less than half of the
window's line budget) the next, smaller setting is tried
((2, 3, 20), then (1, 2, 15), as in the reference code), and after the last one
no lines are carried. Unlike the reference code, which compared characters
with half the window's tokens, the limit is measured in the model's tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

RESIDUAL_STEPS: tuple[tuple[int, int, int], ...] = ((2, 3, 20), (1, 2, 15))


def segment_clips(points: Mapping[int, tuple[int, bool]], start: int) -> list[tuple[int, int]]:
    """[from, to) unit ranges of the current level-1 segment, cut at its level-2 starts."""
    head = max((u for u, (level, _) in points.items() if level == 1 and u < start), default=0)
    cuts = sorted(u for u, (level, _) in points.items() if level == 2 and head < u < start)
    edges = [head, *cuts, start]
    return [(a, b) for a, b in zip(edges, edges[1:]) if b > a]


def residual_units(points: Mapping[int, tuple[int, bool]], start: int, limit: int,
                   cost: Callable[[Sequence[int]], int],
                   steps: Sequence[tuple[int, int, int]] = RESIDUAL_STEPS) -> list[int]:
    """Units to carry before the window starting at ``start`` (``cost`` gives their tokens)."""
    clips = segment_clips(points, start)
    for pre, post, per_clip in steps:
        kept = clips if len(clips) <= pre + post else clips[:pre] + clips[len(clips) - post :]
        units = [u for a, b in kept for u in range(a, min(b, a + per_clip))]
        if cost(units) <= limit:
            return units
    return []
