"""How much a tau means: its bootstrap interval over topics equals SciPy's, and over a few systems
it takes the handful of values counted by hand."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from metrics.errors import MetricsError
from metrics.stats.behaviour import distinct_values, tau_interval, tau_intervals, tau_values
from metrics.stats.behaviour.rankings import tau_ap_symmetric
from tests.metrics.threads import force_threads


def matrices(topics: int, systems: int, noise: float, seed: int):
    rng = np.random.default_rng(seed)
    first = rng.random((topics, systems)) * np.linspace(0.5, 1.0, systems)
    return first, first + rng.normal(0, noise, (topics, systems))


def scipy_tau(a, b):
    def statistic(i):
        return sps.kendalltau(np.round(a[i].mean(axis=0), 12), np.round(b[i].mean(axis=0), 12)).statistic
    return statistic


@pytest.mark.parametrize("systems", [5, 10])
def test_tau_interval_equals_scipy_bootstrap(systems):
    a, b = matrices(40, systems, 0.15, seed=systems)
    got = tau_interval(a, b, resamples=400, seed=11)
    res = sps.bootstrap((np.arange(40),), scipy_tau(a, b), vectorized=False, n_resamples=400, method="percentile",
                        confidence_level=0.95, rng=np.random.default_rng(11))
    assert got["undefined"] == 0
    assert (got["low"], got["high"]) == pytest.approx((res.confidence_interval.low, res.confidence_interval.high),
                                                      abs=1e-12)
    assert got["value"] == pytest.approx(sps.kendalltau(a.mean(axis=0), b.mean(axis=0)).statistic)
    assert got["low"] < got["high"] and got["systems"] == systems and got["topics"] == 40


def test_tau_interval_by_explicit_resampling_with_ties_and_tau_ap():
    # three systems, two nearly tied: some draws tie a side entirely and have no tau-b
    a, b = matrices(12, 3, 0.3, seed=3)
    a[:, 1] = a[:, 0]
    got = tau_interval(a, b, resamples=300, seed=5)
    draws = np.random.default_rng(5).integers(0, 12, (300, 12))
    values = np.array([scipy_tau(a, b)(i) for i in draws])
    finite = values[np.isfinite(values)]
    assert got["undefined"] == int(np.isnan(values).sum())
    assert (got["low"], got["high"]) == pytest.approx(tuple(np.quantile(finite, [0.025, 0.975])), abs=1e-12)
    ap = tau_interval(a, b, "tau_ap", resamples=300, seed=5)
    ap_values = np.array([tau_ap_symmetric(np.round(a[i].mean(axis=0), 12), np.round(b[i].mean(axis=0), 12))
                          for i in draws])
    assert (ap["low"], ap["high"]) == pytest.approx(tuple(np.quantile(ap_values, [0.025, 0.975])), abs=1e-12)


@pytest.mark.parametrize("block", [1, 108, 2**20])
@pytest.mark.parametrize("threads", [False, True])
def test_tau_intervals_share_their_draws_and_equal_each_interval_alone(monkeypatch, block, threads):
    """Both kinds from one set of draws, their means a block of draws at a time (one draw of 12
    topics x 3 systems a block; 108 elements, three draws a block, the last of the 301 alone; all
    at once), the second measure's on a second thread with ``threads``: each result equals
    tau_interval alone and the explicit resampling's means to the bit."""
    from metrics.stats.behaviour import uncertainty

    a, b = matrices(12, 3, 0.3, seed=3)
    a[:, 1] = a[:, 0]
    alone = [tau_interval(a, b, kind, resamples=301, seed=5) for kind in ("tau", "tau_ap")]
    monkeypatch.setattr(uncertainty, "_DRAW_BLOCK", block)
    started = force_threads(monkeypatch) if threads else []
    draws = np.random.default_rng(5).integers(0, 12, (301, 12))
    np.testing.assert_array_equal(uncertainty._draw_means(a, draws), np.array([a[i].mean(axis=0) for i in draws]))
    both = tau_intervals(a, b, ("tau", "tau_ap"), resamples=301, seed=5)
    assert both == alone
    assert [r["kind"] for r in both] == ["tau", "tau_ap"]
    assert started == ["_draw_means"] * threads


def test_tau_over_a_few_systems_takes_a_few_values():
    # no ties: one value per number of discordant pairs, 0..m(m-1)/2
    assert [distinct_values(m) for m in (2, 3, 4, 5)] == [2, 4, 7, 11]
    assert tau_values(3) == pytest.approx([-1, -1 / 3, 1 / 3, 1])
    assert tau_values(2, "tau_ap") == [-1.0, 1.0]
    # the interval over two systems can only be made of -1 and 1
    a, b = matrices(30, 2, 0.2, seed=1)
    got = tau_interval(a, b, resamples=200, seed=0)
    assert got["values"] == 2 and {got["low"], got["high"]} <= {-1.0, 1.0}


def test_tau_interval_checks_its_inputs():
    with pytest.raises(MetricsError, match="two or more systems"):
        tau_interval(np.zeros((3, 1)), np.zeros((3, 1)))
    with pytest.raises(MetricsError, match="unknown rank correlation"):
        tau_interval(*matrices(5, 3, 0.1, 0), "rho")
