"""Bootstrap confidence intervals: one method's mean, paired differences, any statistic.

Every interval is a seeded percentile bootstrap over items (questions or
documents), so the same results always give the same report. Paired intervals
resample the same items for both methods, which is what makes a difference
between two methods on one item set meaningful.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

N_BOOT = 2000
SEED = 0


@dataclass(frozen=True)
class Estimate:
    """A value with its 95% interval over ``n`` items."""

    value: float
    low: float
    high: float
    n: int

    def to_dict(self) -> dict:
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}


def _indexes(n: int, n_boot: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def _interval(samples: np.ndarray, alpha: float) -> tuple[float, float]:
    lo, hi = np.nanpercentile(samples, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def mean_ci(values: Sequence[float], n_boot: int = N_BOOT, seed: int = SEED, alpha: float = 0.05) -> Estimate:
    """Mean of ``values`` with a percentile bootstrap interval."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    means = x[_indexes(x.size, n_boot, seed)].mean(axis=1)
    return Estimate(float(x.mean()), *_interval(means, alpha), int(x.size))


def paired_diff_ci(a: Sequence[float], b: Sequence[float], n_boot: int = N_BOOT, seed: int = SEED,
                   alpha: float = 0.05) -> Estimate:
    """mean(a - b) over paired items, with a bootstrap interval that resamples pairs."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in size ({x.size} vs {y.size})")
    return mean_ci(x - y, n_boot, seed, alpha)


def statistic_ci(n_items: int, statistic: Callable[[np.ndarray], float], n_boot: int = N_BOOT, seed: int = SEED,
                 alpha: float = 0.05) -> Estimate:
    """Any statistic of a set of items (given as an index array), e.g. an F1 pooled over documents."""
    if n_items == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    value = statistic(np.arange(n_items))
    samples = np.array([statistic(idx) for idx in _indexes(n_items, n_boot, seed)])
    return Estimate(float(value), *_interval(samples, alpha), n_items)


def paired_statistic_diff_ci(n_items: int, stat_a: Callable[[np.ndarray], float], stat_b: Callable[[np.ndarray], float],
                             n_boot: int = N_BOOT, seed: int = SEED, alpha: float = 0.05) -> Estimate:
    """stat_a - stat_b over the same resampled items (pooled statistics such as micro F1)."""
    return statistic_ci(n_items, lambda idx: stat_a(idx) - stat_b(idx), n_boot, seed, alpha)


def bootstrap_ci(values: Sequence[float], stat: Callable = np.median, n: int = N_BOOT, seed: int = SEED,
                 level: float = 0.95) -> tuple[float, float, float]:
    """(stat(values), low, high) for any statistic that takes ``axis=`` (medians of timings, quantiles)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    samples = stat(x[_indexes(x.size, n, seed)], axis=1)
    return (float(stat(x)), *_interval(np.asarray(samples, dtype=float), 1 - level))


def fmt_ci(values: Sequence[float], stat: Callable = np.median, digits: int = 3) -> str:
    """``value (95% CI low-high, n=N)`` for printed benchmark lines."""
    value, low, high = bootstrap_ci(values, stat)
    return f"{value:.{digits}g} (95% CI {low:.{digits}g}-{high:.{digits}g}, n={len(values)})"
