"""metrics.stats.bootstrap: percentile intervals of mean curves (queries x cutoffs), seeded and exact."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics import stats
from metrics.errors import MetricsError
from metrics.stats import bootstrap


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
