"""metrics.stats.corrections: Bonferroni, Holm and Benjamini-Hochberg, by hand and against scipy."""
from __future__ import annotations

import numpy as np
import pytest

from metrics import stats
from metrics.errors import MetricsError

P = [0.01, 0.04, 0.03, 0.005]


def test_bonferroni_by_hand():
    assert stats.adjust(P, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert stats.adjust([0.3, 0.6], "bonferroni") == pytest.approx([0.6, 1.0])


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04; running max 0.02, 0.03, 0.06, 0.06
    assert stats.adjust(P, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm(P) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_benjamini_hochberg_by_hand():
    # sorted p * m / rank = 0.02, 0.02, 0.04, 0.04; running min from the largest down
    assert stats.adjust(P, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    # R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05, 0.5), "BH")
    assert stats.benjamini_hochberg([0.01, 0.02, 0.03, 0.04, 0.05, 0.5]) == pytest.approx(
        [0.06, 0.06, 0.06, 0.06, 0.06, 0.5])


def test_no_correction_and_unknown_correction():
    assert stats.adjust(P, "none") == pytest.approx(P)
    with pytest.raises(MetricsError, match="unknown correction"):
        stats.adjust(P, "sidak")


def test_benjamini_hochberg_equals_the_step_up_formula_on_random_pvalues():
    rng = np.random.default_rng(5)
    for m in (1, 2, 7, 50, 400):
        p = rng.uniform(0, 1, m) ** 3
        p[: m // 5] = p[0]                       # ties
        order = np.argsort(p)
        scaled = p[order] * m / np.arange(1, m + 1)
        expected = np.empty(m)
        expected[order] = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
        assert stats.benjamini_hochberg(p) == pytest.approx(expected, abs=1e-15)
    assert len(stats.benjamini_hochberg([])) == 0
