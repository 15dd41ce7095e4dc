"""Multiple-testing corrections across a family of comparisons: Bonferroni, Holm, Benjamini-Hochberg."""
from __future__ import annotations

import numpy as np

from ..errors import MetricsError
from .common import CORRECTIONS, scipy_stats


def bonferroni(pvalues) -> np.ndarray:
    """Bonferroni adjusted p-values: min(1, m p)."""
    p = np.asarray(pvalues, dtype=np.float64)
    return np.minimum(p * len(p), 1.0)


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni step-down adjusted p-values (monotone, capped at 1)."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def benjamini_hochberg(pvalues) -> np.ndarray:
    """Benjamini-Hochberg step-up adjusted p-values (false discovery rate): min over j >= i of m p_(j) / j,
    capped at 1; ``scipy.stats.false_discovery_control(p, method="bh")``."""
    p = np.asarray(pvalues, dtype=np.float64)
    if len(p) == 0:
        return p
    return np.asarray(scipy_stats().false_discovery_control(p, method="bh"), dtype=np.float64)


def adjust(pvalues, correction: str = "holm") -> np.ndarray:
    """Adjusted p-values under one of :data:`CORRECTIONS` ("holm", "bonferroni", "bh", "none")."""
    if correction == "holm":
        return holm(pvalues)
    if correction == "bonferroni":
        return bonferroni(pvalues)
    if correction == "bh":
        return benjamini_hochberg(pvalues)
    if correction == "none":
        return np.asarray(pvalues, dtype=np.float64).copy()
    raise MetricsError(f"unknown correction {correction!r}", fix="use one of " + ", ".join(CORRECTIONS))
