"""Multiple-testing corrections across a family of comparisons: Bonferroni, Holm (1979),
Benjamini-Hochberg (1995), and the choice of the family itself.

The family is the set of p-values adjusted together. ``"all"`` (the default) is every
(system, measure) cell of a comparison table: the strictest reading, the one whose family-wise
error (Holm, Bonferroni) or false discovery rate (BH) covers every marker on the page.
``"measure"`` adjusts each measure's cells apart, over its systems, as PyTerrier's
``pt.Experiment`` does: each measure's table then holds its error rate on its own, not jointly.
A NaN p-value (a comparison not tested, such as a descriptive measure) is left out of every
family and stays NaN.
"""
from __future__ import annotations

import numpy as np

from ..errors import MetricsError
from .common import CORRECTIONS, scipy_stats

FAMILIES: dict[str, str] = {"all": "every (system, measure) cell together",
                            "measure": "each measure apart, over its systems (as PyTerrier)"}


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


def family_label(correction: str, family: str) -> str:
    """The correction and its family in words, as every page and export states them:
    ``Holm over every (system, measure) cell together``; ``no correction`` when there is none."""
    if correction == "none":
        return CORRECTIONS["none"]
    return f"{CORRECTIONS.get(correction, correction)} over {FAMILIES[check_family(family)]}"


def check_family(family: str) -> str:
    if family not in FAMILIES:
        raise MetricsError(f"unknown correction family {family!r}", fix="use one of " + ", ".join(FAMILIES))
    return family


def adjust_family(pvalues, correction: str = "holm", groups=None) -> np.ndarray:
    """:func:`adjust` within each family: ``groups`` (one label per p-value, e.g. the measure) splits
    the p-values into families adjusted apart; ``None`` is one family. NaN p-values (comparisons not
    tested) are left out of their family and stay NaN."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(len(p), np.nan)
    labels = np.zeros(len(p), dtype=np.int64) if groups is None else np.asarray(groups, dtype=object)
    if len(labels) != len(p):
        raise MetricsError(f"{len(labels)} family labels for {len(p)} p-values", fix="give one label per p-value")
    tested = ~np.isnan(p)
    for label in dict.fromkeys(labels[tested].tolist()):
        members = tested & (labels == label)
        out[members] = adjust(p[members], correction)
    return out
