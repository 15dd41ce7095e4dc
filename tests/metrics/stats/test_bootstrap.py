"""metrics.stats.bootstrap: the studentised bootstrap test against exact enumeration, percentile
intervals of means (against scipy.stats.bootstrap) and of mean curves (queries x cutoffs), seeded and exact."""
from __future__ import annotations

from itertools import product
from math import sqrt

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp

from metrics import stats
from metrics.errors import MetricsError
from metrics.stats import bootstrap
from tests.metrics.stats.helpers import mc_error, paired_sample


def test_bootstrap_ci_of_a_curve_is_reproducible_per_seed_and_differs_across_seeds():
    x = np.random.default_rng(1).random((300, 6))
    first = stats.bootstrap_ci(x, resamples=500, seed=42)
    again = stats.bootstrap_ci(pd.DataFrame(x), resamples=500, seed=42)
    other = stats.bootstrap_ci(x, resamples=500, seed=43)
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])
    assert not np.array_equal(first[0], other[0])
    assert first[0].shape == first[1].shape == (6,)


def test_bootstrap_ci_of_a_curve_does_not_depend_on_the_chunk_size(monkeypatch):
    # the same resamples whatever the chunking; only the matmul's last bits may differ
    x = np.random.default_rng(2).random((40, 3))
    whole = stats.bootstrap_ci(x, resamples=100, seed=5)
    monkeypatch.setattr(bootstrap, "_RESAMPLE_BLOCK", 40 * 7)  # blocks of 7 resamples
    chunked = stats.bootstrap_ci(x, resamples=100, seed=5)
    np.testing.assert_allclose(whole[0], chunked[0], rtol=1e-12)
    np.testing.assert_allclose(whole[1], chunked[1], rtol=1e-12)


def test_bootstrap_ci_of_a_curve_has_the_normal_width_for_a_large_sample():
    # 4000 queries with values uniform on [0, 1]: sd sqrt(1/12), so the 95% band of the
    # mean is about 2 * 1.96 * sd / sqrt(n) wide, centred on the sample mean
    n = 4000
    x = np.random.default_rng(11).random((n, 3))
    lower, upper = stats.bootstrap_ci(x, resamples=2000, seed=0, level=0.95)
    sample_mean = x.mean(axis=0)
    assert (lower < sample_mean).all() and (sample_mean < upper).all()
    normal_width = 2 * 1.959964 * np.sqrt(1 / 12) / np.sqrt(n)
    assert (upper - lower) == pytest.approx(np.full(3, normal_width), rel=0.1)


def test_bootstrap_ci_of_a_curve_covers_the_true_mean_about_95_percent_of_the_time():
    # 400 independent columns of 300 uniform values, true mean 1/2 in each: each column is
    # its own experiment, so the share of bands holding 1/2 estimates the coverage
    # (binomial sd about 0.011 around 0.95)
    x = np.random.default_rng(5).random((300, 400))
    lower, upper = stats.bootstrap_ci(x, resamples=1000, seed=0, level=0.95)
    coverage = np.mean((lower <= 0.5) & (0.5 <= upper))
    assert 0.90 <= coverage <= 0.99


def test_bootstrap_ci_of_a_curve_of_a_constant_curve_collapses():
    x = np.tile([0.3, 0.6], (25, 1))
    lower, upper = stats.bootstrap_ci(x, resamples=50)
    assert lower == pytest.approx([0.3, 0.6]) and upper == pytest.approx([0.3, 0.6])


@pytest.mark.parametrize("values, options", [
    (np.empty((0, 3)), {}),
    (np.array([[0.1, np.nan]]), {}),
    (np.ones((3, 2)), {"level": 1.5}),
    (np.ones((3, 2)), {"resamples": 0}),
])
def test_bootstrap_ci_of_a_curve_rejects_bad_input(values, options):
    with pytest.raises(MetricsError):
        stats.bootstrap_ci(values, **options)


def exact_bootstrap_pvalue(d: np.ndarray) -> float:
    """Sakai's studentised bootstrap test over all n^n equally likely resamples."""
    n = len(d)
    w = d - d.mean()
    t_obs = abs(d.mean() / (d.std(ddof=1) / sqrt(n)))
    picks = np.array(list(product(range(n), repeat=n)))
    sample = w[picks]
    mean, sd = sample.mean(axis=1), sample.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sd > 1e-15, np.abs(mean) / (sd / sqrt(n)), np.where(np.abs(mean) > 1e-15, np.inf, 0.0))
    return float(np.mean(t >= t_obs))


def test_bootstrap_test_is_within_error_of_exact_enumeration():
    d = np.array([0.12, -0.03, 0.07, 0.2, 0.01, -0.06])
    exact = exact_bootstrap_pvalue(d)
    for seed in (0, 1):
        sampled = stats.bootstrap_pvalues(d, resamples=20_000, seed=seed)
        assert abs(sampled - exact) <= mc_error(exact, 20_000)


def test_bootstrap_test_is_reproducible_and_independent_of_block_size(monkeypatch):
    base, system = paired_sample(150, 21)
    first = stats.paired_bootstrap(base, system, resamples=3000, seed=9)
    assert stats.paired_bootstrap(base, system, resamples=3000, seed=9) == first
    monkeypatch.setattr(bootstrap, "_RESAMPLE_BLOCK", 777)
    assert stats.paired_bootstrap(base, system, resamples=3000, seed=9) == first
    assert stats.paired_bootstrap(base, system, resamples=3000, seed=10) != first
    assert stats.paired_bootstrap(base, base) == 1.0


def test_bootstrap_ci_of_the_mean_agrees_with_scipy_within_monte_carlo_error():
    base, system = paired_sample(60, 31)
    low, high = stats.bootstrap_ci(system, resamples=10_000, seed=0)
    ref = sp.bootstrap((system,), np.mean, method="percentile", n_resamples=10_000, rng=np.random.default_rng(1))
    se = system.std(ddof=1) / sqrt(len(system))
    assert low == pytest.approx(ref.confidence_interval.low, abs=0.15 * se)
    assert high == pytest.approx(ref.confidence_interval.high, abs=0.15 * se)
    assert low < system.mean() < high


def test_bootstrap_ci_of_the_mean_difference_agrees_with_scipy_paired_bootstrap():
    base, system = paired_sample(60, 32)
    low, high = stats.bootstrap_ci(system - base, resamples=10_000, seed=0)
    ref = sp.bootstrap((system, base), lambda x, y, axis: np.mean(x - y, axis=axis), paired=True,
                       method="percentile", n_resamples=10_000, rng=np.random.default_rng(2))
    se = (system - base).std(ddof=1) / sqrt(len(base))
    assert low == pytest.approx(ref.confidence_interval.low, abs=0.15 * se)
    assert high == pytest.approx(ref.confidence_interval.high, abs=0.15 * se)


def test_bootstrap_ci_is_seeded():
    x = paired_sample(30, 33)[1]
    assert stats.bootstrap_ci(x, seed=4) == stats.bootstrap_ci(x, seed=4)
    assert stats.bootstrap_ci(x, seed=4) != stats.bootstrap_ci(x, seed=5)
