"""Small statistics for benchmark reports: bootstrap confidence intervals."""

from __future__ import annotations

from typing import Callable

import numpy as np


def bootstrap_ci(values, stat: Callable = np.median, n: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """(statistic, low, high) with a percentile bootstrap interval."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    samples = rng.choice(values, size=(n, len(values)), replace=True)
    stats = np.apply_along_axis(stat, 1, samples) if stat not in (np.mean, np.median) else stat(samples, axis=1)
    alpha = (1 - level) / 2
    return float(stat(values)), float(np.quantile(stats, alpha)), float(np.quantile(stats, 1 - alpha))


def fmt_ci(values, stat: Callable = np.median, digits: int = 3) -> str:
    value, low, high = bootstrap_ci(values, stat)
    return f"{value:.{digits}g} (95% CI {low:.{digits}g}-{high:.{digits}g}, n={len(values)})"
