"""Discriminative power, swap rates and topic-set size: exact cases, the randomisation test as the
two-system limit of the randomised Tukey HSD, scipy's noncentral distributions, seeded draws."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sst

import metrics
from metrics.stats import bootstrap_pvalues, randomization_pvalues
from metrics.stats.behaviour import (
    asl_curve,
    discriminative_power,
    pair_asl,
    share_significant,
    swap_rates,
    swap_summary,
    topics_needed,
    tukey_asl,
)
from metrics.stats.behaviour.power import residual_variance, within_variance


def matrix(seed=0, topics=40, systems=5):
    rng = np.random.default_rng(seed)
    return np.clip(0.4 + np.linspace(0, 0.1, systems) + rng.normal(0, 0.2, (topics, systems)), 0, 1)


def test_tukey_with_two_systems_is_the_randomisation_test():
    # with two systems the range of the permuted means is |permuted mean difference|: a sign flip
    # per topic, so the ASL tends to the exact randomisation p-value (12 topics: 2^12 patterns)
    x = matrix(topics=12, systems=2)
    exact = randomization_pvalues(x[:, 1] - x[:, 0])
    trials = 20_000
    asl = tukey_asl(x, trials=trials, seed=1)[0]
    assert asl == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / trials))


def test_tukey_two_topics_by_hand():
    # topics x systems [[1, 0], [1, 0]]: |diff| = 1; a trial keeps range 1 only when both topics are
    # permuted alike (probability 1/2), else both means are 0.5 and the range is 0
    trials = 20_000
    asl = tukey_asl([[1.0, 0.0], [1.0, 0.0]], trials=trials, seed=0)[0]
    assert asl == pytest.approx(0.5, abs=4 * np.sqrt(0.25 / trials))


def test_tukey_is_more_conservative_than_pairwise_tests():
    x = matrix(systems=6)
    asl = pair_asl(x, resamples=500, seed=0)
    assert (asl["tukey"] >= asl["bootstrap"] - 0.05).mean() > 0.9


def test_pair_asl_is_the_bootstrap_test_of_each_pair():
    x = matrix()
    asl = pair_asl(x, list("abcde"), resamples=300, seed=4)
    a, b = np.triu_indices(5, 1)
    expected = bootstrap_pvalues(x[:, b] - x[:, a], resamples=300, seed=4)
    np.testing.assert_array_equal(asl["bootstrap"].to_numpy(), expected)
    assert asl[["system_a", "system_b"]].iloc[0].tolist() == ["a", "b"]
    assert asl["diff"].iloc[0] == pytest.approx(x[:, 1].mean() - x[:, 0].mean())


def test_seeded_and_reproducible():
    x = matrix()
    one = discriminative_power(x, resamples=200, seed=7)
    two = discriminative_power(x, resamples=200, seed=7)
    other = discriminative_power(x, resamples=200, seed=8)
    pd.testing.assert_frame_equal(one["asl"], two["asl"])
    pd.testing.assert_frame_equal(one["swaps"], two["swaps"])
    assert not one["asl"]["tukey"].equals(other["asl"]["tukey"])
    assert one["settings"]["seed"] == 7 and one["settings"]["resamples"] == 200


def test_asl_curve_and_share():
    asl = pd.DataFrame({"bootstrap": [0.2, 0.01, 0.04], "tukey": [0.3, 0.06, 0.2]})
    assert asl_curve(asl)["asl"].tolist() == [0.01, 0.04, 0.2]
    assert share_significant(asl, 0.05) == {"bootstrap": pytest.approx(2 / 3), "tukey": 0.0}


def test_swap_rates_exact_case():
    # 4 topics, differences (+1, +1, -1, -1) between two systems, sets of 2: a draw of {+,+} or {-,-}
    # as set 1 (2 of the 6 pairs of topics) has |d1| = 1 and always swaps; {+,-} has d1 = 0, never a swap
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    trials = 6000
    rates = swap_rates(x, [2], trials=trials, seed=0, bin_width=0.5).set_index("bin_low")
    assert rates.loc[1.0, "rate"] == 1.0 and rates.loc[0.0, "rate"] == 0.0
    assert rates.loc[1.0, "pairs"] / trials == pytest.approx(1 / 3, abs=4 * np.sqrt(2 / 9 / trials))
    summary = swap_summary(rates.reset_index(), delta=0.5)
    assert summary["swap_rate_at_delta"].iloc[0] == 1.0


def test_swap_rates_fall_with_more_topics():
    x = matrix(topics=200, systems=6)
    summary = swap_summary(swap_rates(x, [5, 50, 100], trials=400, seed=0))
    assert summary["swap_rate"].is_monotonic_decreasing


def test_swap_rates_reject_oversized_sets():
    with pytest.raises(metrics.MetricsError, match="disjoint"):
        swap_rates(matrix(topics=10), [6])


def test_variances_by_hand():
    x = np.array([[1.0, 2.0], [3.0, 5.0], [2.0, 2.0]])
    # residuals e = x - row mean - column mean + grand mean: column means 2, 3; row means 1.5, 4, 2;
    # grand 2.5 -> e = [[0, 0], [-0.5, 0.5], [0.5, -0.5]], sum of squares 1, df (3-1)(2-1) = 2
    assert residual_variance(x) == pytest.approx(1.0 / 2)
    # one-way: variances of the columns (ddof 1): (1 + 1 + 0) / 2 = 1 and (1 + 4 + 1) / 2 = 3 -> mean 2
    assert within_variance(x) == pytest.approx(2.0)


def test_topics_needed_is_the_fewest_with_enough_power():
    x = matrix(topics=50, systems=4)
    out = topics_needed(x, delta=0.05, alpha=0.05, power=0.8).set_index("design")
    sigma2 = 2 * residual_variance(x)

    def t_power(n):    # two-sided paired t-test: noncentral t, df n - 1, nc = delta sqrt(n) / sigma_d
        crit = sst.t.ppf(0.975, n - 1)
        nc = 0.05 * np.sqrt(n) / np.sqrt(sigma2)
        return sst.nct.sf(crit, n - 1, nc) + sst.nct.cdf(-crit, n - 1, nc)

    n = out.loc["paired t-test", "topics"]
    assert t_power(n) >= 0.8 > t_power(n - 1)
    # the normal approximation n ~ (z_.975 + z_.8)^2 sigma_d^2 / delta^2 is within a few topics
    assert n == pytest.approx((1.959964 + 0.841621) ** 2 * sigma2 / 0.05 ** 2, abs=3)

    v, m = within_variance(x), 4

    def f_power(n):    # one-way ANOVA: noncentral F, df (m - 1, m (n - 1)), lambda = n delta^2 / (2 V_E)
        crit = sst.f.ppf(0.95, m - 1, m * (n - 1))
        return sst.ncf.sf(crit, m - 1, m * (n - 1), n * 0.05 ** 2 / (2 * v))

    k = out.loc["one-way ANOVA", "topics"]
    assert f_power(k) >= 0.8 > f_power(k - 1)
    assert out.loc["one-way ANOVA", "variance"] == pytest.approx(v)


def test_disjoint_halves_become_complements_and_swap_where_resampled_sets_do_not():
    # 2 topics, differences +1 and -1 between two systems: sets of 1 disjoint topic always hold one
    # of each, so every trial swaps (rate 1); two independent draws with replacement pick different
    # topics half the time
    x = np.array([[1.0, 0.0], [0.0, 1.0]])
    disjoint = swap_rates(x, [1], trials=500, seed=0, bin_width=0.5)
    assert disjoint["swaps"].sum() == disjoint["pairs"].sum() == 500
    assert (disjoint["method"] == "disjoint").all()
    resampled = swap_rates(x, [1], trials=500, seed=0, bin_width=0.5, method="resampled")
    picks = np.random.default_rng(0).integers(0, 2, (500, 2))
    assert resampled["swaps"].sum() == int((picks[:, 0] != picks[:, 1]).sum())
    assert (resampled["method"] == "resampled").all()


def test_resampled_sets_may_reach_every_topic_and_methods_are_checked():
    x = matrix(topics=10)
    assert set(swap_rates(x, [10], trials=20, seed=0, method="resampled")["topics"]) == {10}
    with pytest.raises(metrics.MetricsError, match="unknown swap method"):
        swap_rates(x, [2], method="halves")
