"""Weighted kappa and Krippendorff's alpha: hand cases, Krippendorff's worked example, and the
published implementations (scikit-learn, the krippendorff package) where installed."""
from __future__ import annotations

import numpy as np
import pytest

import metrics
from metrics.stats.behaviour import confusion, krippendorff_alpha, weighted_kappa

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 observers x 12 units
RELIABILITY = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
])


def test_krippendorff_worked_example():
    # the paper's results: nominal 0.743, ordinal 0.815, interval 0.849
    assert krippendorff_alpha(RELIABILITY, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(RELIABILITY, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(RELIABILITY, "interval") == pytest.approx(0.849, abs=5e-4)


def test_krippendorff_two_coders_by_hand():
    # units (0,0), (1,1), (0,1): coincidences o00 = 2, o11 = 2, o01 = o10 = 1; n_0 = n_1 = 3, n = 6
    # nominal: alpha = 1 - (n - 1) * (o01 + o10) / (n_0 n_1 + n_1 n_0) = 1 - 5 * 2 / 18
    data = np.array([[0, 1, 0], [0, 1, 1]], dtype=float)
    assert krippendorff_alpha(data, "nominal") == pytest.approx(1 - 5 * 2 / 18)
    # two values: ordinal d_01 = (n_0 + n_1 - (n_0 + n_1) / 2)^2 = 9, the same ratio
    assert krippendorff_alpha(data, "ordinal") == pytest.approx(1 - 5 * 2 * 9 / (18 * 9))


def test_krippendorff_equals_the_package():
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(3)
    data = rng.integers(0, 4, (3, 60)).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha(data, level) == pytest.approx(
            krippendorff.alpha(reliability_data=data, level_of_measurement=level), abs=1e-12)


def test_weighted_kappa_by_hand():
    a, b = [0, 0, 1, 2], [0, 1, 1, 2]
    # O = [[1,1,0],[0,1,0],[0,0,1]], rows (2,1,1), columns (1,2,1), N = 4, E = outer / 4 =
    # [[.5,1,.5],[.25,.5,.25],[.25,.5,.25]]; observed disagreement: the one (0, 1) pair, weight 1
    # linear:    sum |i-j| E = 1 + .5*2 + .25 + .25 + .25*2 + .5 = 3.5  -> kappa = 1 - 1 / 3.5
    # quadratic: sum (i-j)^2 E = 1 + .5*4 + .25 + .25 + .25*4 + .5 = 5 -> kappa = 1 - 1 / 5
    assert weighted_kappa(a, b, "linear") == pytest.approx(1 - 1 / 3.5)
    assert weighted_kappa(a, b, "quadratic") == pytest.approx(1 - 1 / 5)
    assert confusion(a, b).to_numpy().tolist() == [[1, 1, 0], [0, 1, 0], [0, 0, 1]]


def test_weighted_kappa_equals_scikit_learn():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    a = rng.integers(-1, 4, 300)
    b = np.clip(a + rng.integers(-1, 2, 300), -1, 3)
    for weights, theirs in (("linear", "linear"), ("quadratic", "quadratic"), ("none", None)):
        assert weighted_kappa(a, b, weights) == pytest.approx(
            sklearn_metrics.cohen_kappa_score(a, b, weights=theirs), abs=1e-12)


def test_bad_weights_and_levels():
    with pytest.raises(metrics.MetricsError):
        weighted_kappa([0], [0], "cubic")
    with pytest.raises(metrics.MetricsError):
        krippendorff_alpha(RELIABILITY, "ratio")
