"""metrics.stats.paired: the t-test, Wilcoxon and randomisation tests against scipy.stats, exact
enumeration and hand arithmetic; effect sizes and wins/ties/losses."""
from __future__ import annotations

from math import sqrt

import numpy as np
import pytest
from scipy import stats as sp

from metrics import stats
from metrics.stats import paired
from tests.metrics.stats.helpers import mc_error, paired_sample


@pytest.mark.parametrize("n,seed", [(5, 1), (50, 2), (300, 3)])
def test_ttest_matches_scipy_ttest_rel(n, seed):
    base, system = paired_sample(n, seed)
    expected = sp.ttest_rel(system, base).pvalue
    assert stats.paired_ttest(base, system) == pytest.approx(expected, abs=1e-9, rel=1e-9)


def test_ttest_is_vectorised_over_comparisons():
    base, system = paired_sample(40, 4)
    _, other = paired_sample(40, 5, shift=-0.01)
    diffs = np.column_stack([system - base, other - base])
    p = stats.ttest_pvalues(diffs)
    assert p == pytest.approx([sp.ttest_rel(system, base).pvalue, sp.ttest_rel(other, base).pvalue], abs=1e-12)


def test_ttest_degenerate_differences():
    assert stats.paired_ttest([0.2, 0.4, 0.6], [0.2, 0.4, 0.6]) == 1.0  # nothing changed
    assert stats.paired_ttest([0.2, 0.4, 0.6], [0.3, 0.5, 0.7]) == 0.0  # every query +0.1, no variance
    assert stats.paired_ttest([0.2], [0.9]) == 1.0  # one query: no test


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("n,zeros,ties", [(12, 0, False), (10, 3, True), (40, 0, False), (80, 10, True)])
def test_wilcoxon_matches_scipy(zero_method, n, zeros, ties):
    base, system = paired_sample(n, n + zeros, zeros=zeros, ties=ties)
    expected = sp.wilcoxon(system - base, zero_method=zero_method).pvalue
    got = stats.paired_wilcoxon(base, system, zero_method=zero_method)
    assert got == pytest.approx(expected, abs=1e-9, rel=1e-9)


def test_wilcoxon_all_zero_differences_is_one():
    assert stats.paired_wilcoxon([0.1, 0.2, 0.3], [0.1, 0.2, 0.3]) == 1.0



def test_randomization_exact_by_hand():
    # d = (1, 2, 3): the 8 sign patterns give |sum| = 6, 4, 2, 0, 0, 2, 4, 6; two reach 6
    assert stats.randomization_pvalues(np.array([1.0, 2.0, 3.0])) == pytest.approx(2 / 8)
    # zero differences do not change any permuted sum, so they do not count
    assert stats.randomization_pvalues(np.array([1.0, 0.0, 2.0, 0.0, 3.0])) == pytest.approx(2 / 8)


@pytest.mark.parametrize("n,zeros,ties", [(8, 0, False), (12, 2, True), (16, 0, False), (17, 3, True)])
def test_randomization_exact_matches_scipy_permutation_test(n, zeros, ties):
    base, system = paired_sample(n, 7 * n, zeros=zeros, ties=ties)
    expected = sp.permutation_test((system, base), lambda x, y, axis: np.mean(x - y, axis=axis),
                                   permutation_type="samples", n_resamples=np.inf, vectorized=True).pvalue
    assert stats.paired_randomization(base, system) == pytest.approx(expected, abs=1e-9)


def test_randomization_monte_carlo_is_within_error_of_exact_enumeration():
    base, system = paired_sample(20, 11, shift=0.04)
    exact = stats.paired_randomization(base, system, exact_max=20)
    for seed in (0, 1):
        sampled = stats.paired_randomization(base, system, exact_max=0, permutations=10_000, seed=seed)
        assert abs(sampled - exact) <= mc_error(exact, 10_000)


def test_randomization_is_reproducible_per_seed_and_independent_of_the_batch(monkeypatch):
    base, system = paired_sample(200, 12, shift=0.01)
    _, other = paired_sample(200, 13, shift=0.02)
    d = system - base
    first = stats.randomization_pvalues(d, seed=3)
    assert stats.randomization_pvalues(d, seed=3) == first
    batch = stats.randomization_pvalues(np.column_stack([other - base, d]), seed=3)
    assert batch[1] == first  # one shared sign matrix: a comparison's p does not depend on its neighbours
    monkeypatch.setattr(paired, "_SIGN_BLOCK_BYTES", 1000)  # other block sizes draw the same signs
    assert stats.randomization_pvalues(d, seed=3) == first
    assert stats.randomization_pvalues(d, seed=4) != first


def test_randomization_byte_lookup_equals_the_explicit_sign_matrix():
    base, system = paired_sample(203, 14, shift=0.01)  # not a multiple of 8 queries
    d = system - base
    signs = stats.sign_matrix(len(d), 2000, seed=5)
    assert set(np.unique(signs)) == {-1, 1}
    permuted = signs.astype(float) @ d
    expected = (np.count_nonzero(np.abs(permuted) >= abs(d.sum()) - 1e-12) + 1) / 2001
    assert stats.randomization_pvalues(d, permutations=2000, seed=5) == pytest.approx(expected, abs=1e-15)


def test_sign_patterns_are_fair_coins():
    signs = stats.sign_matrix(100, 10_000, seed=0)
    assert abs((signs == 1).mean() - 0.5) < 0.005



def test_effect_size_is_paired_cohens_d():
    d = np.array([1.0, 2.0, 3.0, 4.0])
    sd = sqrt(((1 - 2.5) ** 2 + (2 - 2.5) ** 2 + (3 - 2.5) ** 2 + (4 - 2.5) ** 2) / 3)
    assert stats.effect_size(d) == pytest.approx(2.5 / sd)
    assert stats.effect_size(np.zeros(4)) == 0.0
    assert stats.effect_size(np.full(4, -0.1)) == -np.inf


def test_wins_ties_losses_with_tolerance():
    d = np.array([0.1, -0.2, 0.0, 1e-12, 0.05])
    assert stats.wins_ties_losses(d) == (2, 2, 1)
    assert stats.wins_ties_losses(d, tolerance=0.06) == (1, 3, 1)
    wins, ties, losses = stats.wins_ties_losses(np.column_stack([d, -d]))
    assert wins.tolist() == [2, 1] and ties.tolist() == [2, 2] and losses.tolist() == [1, 2]
