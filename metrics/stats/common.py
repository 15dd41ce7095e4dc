"""What every statistic shares: the tests and corrections offered, default seeds and sizes,
and the shape checks of per-query differences."""
from __future__ import annotations

import numpy as np

from ..errors import MetricsError


def scipy_stats():
    """scipy.stats, imported on first use (it costs about a second at start-up)."""
    from scipy import stats

    return stats


TESTS: dict[str, str] = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank",
                         "randomization": "randomisation test", "bootstrap": "paired bootstrap test"}


CORRECTIONS: dict[str, str] = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg",
                               "none": "no correction"}


DEFAULT_SEED = 0


DEFAULT_PERMUTATIONS = 10_000


DEFAULT_RESAMPLES = 10_000


DEFAULT_LEVEL = 0.95


EXACT_MAX = 16


TIE_TOLERANCE = 1e-9


def as_diffs(diffs) -> tuple[np.ndarray, bool]:
    """(n_queries x n_comparisons float64 matrix, whether the input was one comparison)."""
    d = np.asarray(diffs, dtype=np.float64)
    single = d.ndim == 1
    if single:
        d = d[:, None]
    if d.ndim != 2:
        raise MetricsError(f"differences must be a vector or a queries x comparisons matrix, got {d.ndim} dimensions",
                           fix="pass system - baseline per query")
    if not np.isfinite(d).all():
        raise MetricsError("per-query values contain NaN or infinity",
                           fix="fill or drop the queries without a value (evaluate with missing='zero')")
    return d, single


def shaped(values: np.ndarray, single: bool):
    return float(values[0]) if single else values


def check_count(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise MetricsError(f"{name} must be an integer >= {minimum}, got {value!r}", fix=f"for example {name}=10000")
    return int(value)


def check_level(level: float) -> float:
    if not 0 < level < 1:
        raise MetricsError(f"level must be between 0 and 1, got {level!r}", fix="for example level=0.95")
    return float(level)


def paired_diffs(baseline, system) -> np.ndarray:
    b = np.asarray(baseline, dtype=np.float64)
    s = np.asarray(system, dtype=np.float64)
    if b.shape != s.shape:
        raise MetricsError(f"baseline has {b.shape} values and system {s.shape}",
                           fix="align both on the same queries (metrics.stats.paired_matrix)")
    return s - b
