"""metrics.stats against scipy.stats, exact enumeration and hand arithmetic."""
from __future__ import annotations

from itertools import product
from math import sqrt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp

import metrics
from metrics import stats
from metrics.errors import MetricsError
from metrics.stats import bootstrap, paired

LEGAL = Path(__file__).resolve().parents[3] / "sample_data" / "legal"


def paired_sample(n: int, seed: int, *, shift: float = 0.03, zeros: int = 0, ties: bool = False):
    """Seeded per-query values of a baseline and a system in [0, 1], with some equal queries and tied gaps."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.1, 0.9, n)
    diff = rng.normal(shift, 0.1, n)
    if ties:
        diff = np.round(diff, 2)
    diff[:zeros] = 0.0
    return base, base + diff


def mc_error(p: float, draws: int) -> float:
    """Four standard errors of a Monte Carlo proportion, plus the +1 of the (1 + count) / (1 + draws) rule."""
    return 4 * sqrt(max(p * (1 - p), 1e-4) / draws) + 2 / draws


# ------------------------------------------------------------------ t-test and Wilcoxon vs scipy

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


# ------------------------------------------------------------------ randomisation test

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


# ------------------------------------------------------------------ bootstrap

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


# ------------------------------------------------------------------ effect size, wins/ties/losses

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


# ------------------------------------------------------------------ multiple testing

# ------------------------------------------------------------------ Tukey HSD, Kendall's tau

def test_tukey_one_way_is_scipy_tukey_hsd():
    rng = np.random.default_rng(41)
    x = rng.uniform(0, 1, size=(30, 4)) + np.array([0.0, 0.05, 0.1, -0.02])
    got = stats.tukey_hsd(x, ["a", "b", "c", "d"], design="one-way")
    ref = sp.tukey_hsd(*x.T)
    ci = ref.confidence_interval()
    for row in got.itertuples():
        i, j = "abcd".index(row.system_a), "abcd".index(row.system_b)
        assert row.p_value == pytest.approx(ref.pvalue[i, j], abs=1e-9)
        assert row.diff == pytest.approx(-ref.statistic[i, j])
        assert (row.ci_low, row.ci_high) == pytest.approx((-ci.high[i, j], -ci.low[i, j]))


def test_tukey_two_way_with_two_systems_is_the_paired_t_test():
    base, system = paired_sample(25, 42)
    got = stats.tukey_hsd(np.column_stack([base, system]), ["base", "sys"])
    assert got["p_value"].iloc[0] == pytest.approx(sp.ttest_rel(system, base).pvalue, abs=1e-9)


def test_tukey_two_way_by_hand():
    x = np.array([[0.2, 0.4, 0.3], [0.5, 0.6, 0.9], [0.1, 0.3, 0.2], [0.7, 0.7, 0.8]])
    n, m = x.shape
    residual = sum((x[i, j] - x[i].mean() - x[:, j].mean() + x.mean()) ** 2 for i in range(n) for j in range(m))
    df = (n - 1) * (m - 1)
    se = sqrt(residual / df / n)
    got = stats.tukey_hsd(x, ["a", "b", "c"]).set_index(["system_a", "system_b"])
    diff = x[:, 2].mean() - x[:, 0].mean()
    assert got.loc[("a", "c"), "diff"] == pytest.approx(diff)
    assert got.loc[("a", "c"), "p_value"] == pytest.approx(sp.studentized_range.sf(abs(diff) / se, m, df))
    half = sp.studentized_range.ppf(0.95, m, df) * se
    assert got.loc[("a", "c"), "ci_low"] == pytest.approx(diff - half)


@pytest.mark.parametrize("x,y", [([0.1, 0.2, 0.3, 0.4], [0.1, 0.3, 0.2, 0.4]),
                                 ([0.5, 0.5, 0.2, 0.9, 0.1], [0.4, 0.6, 0.6, 0.8, 0.0]),
                                 ([1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1])])
def test_kendall_tau_matches_scipy(x, y):
    assert stats.kendall_tau(x, y) == pytest.approx(sp.kendalltau(x, y).statistic, abs=1e-12)


def test_ranking_stability_over_cutoffs():
    table = pd.DataFrame({"@5": [0.5, 0.4, 0.3], "@10": [0.5, 0.45, 0.3], "@20": [0.3, 0.45, 0.5]},
                         index=["a", "b", "c"])
    tau = stats.ranking_stability(table)
    assert tau.loc["@5", "@10"] == 1.0
    assert tau.loc["@5", "@20"] == pytest.approx(-1.0)
    assert np.allclose(tau.to_numpy(), tau.to_numpy().T)


# ------------------------------------------------------------------ frames

@pytest.fixture(scope="module")
def legal_frame():
    runs = [LEGAL / f"{name}.run" for name in ("bm25", "bm25_ce", "dense")]
    return metrics.evaluate(LEGAL / "qrels.txt", runs, ["nDCG(dcg=exp-log2)@10", "AP"])


@pytest.mark.parametrize("test", list(stats.TESTS))
def test_compare_rows_agree_with_the_array_functions(legal_frame, test):
    table = stats.compare(legal_frame, "bm25", test=test, correction="bh")
    assert list(table.columns) == stats.COMPARE_COLUMNS
    assert len(table) == 4  # 2 systems x 2 measures
    diffs = np.column_stack([stats.per_query(legal_frame, m, "bm25", s)["delta"]
                             for m, s in zip(table["measure"], table["system"])])
    assert table["p_value"].to_numpy() == pytest.approx(stats.paired_pvalues(diffs, test), abs=1e-15)
    assert table["p_adjusted"].to_numpy() == pytest.approx(stats.benjamini_hochberg(table["p_value"]))
    assert table["rel_diff"].to_numpy() == pytest.approx(table["diff"] / table["baseline_mean"])
    assert (table["diff_ci_low"] < table["diff"]).all() and (table["diff"] < table["diff_ci_high"]).all()
    assert (table["wins"] + table["ties"] + table["losses"] == 50).all()
    ce = table[(table["system"] == "bm25_ce") & (table["measure"] == "nDCG(dcg=exp-log2)@10")].iloc[0]
    assert ce["rel_diff"] > 0.05 and ce["marker"] == "▲" and ce["losses"] == 5


def test_compare_is_reproducible(legal_frame):
    first = stats.compare(legal_frame, "bm25", test="randomization", seed=7)
    again = stats.compare(legal_frame, "bm25", test="randomization", seed=7)
    pd.testing.assert_frame_equal(first, again)


def test_compare_rejects_unknown_inputs(legal_frame):
    with pytest.raises(MetricsError, match="baseline 'nope'"):
        stats.compare(legal_frame, "nope")
    with pytest.raises(MetricsError, match="unknown test"):
        stats.compare(legal_frame, "bm25", test="z")
    with pytest.raises(MetricsError, match="NaN"):
        stats.ttest_pvalues([0.1, np.nan])


def test_versus_baseline_keeps_its_columns_and_uses_the_chosen_test(legal_frame):
    old = stats.versus_baseline(legal_frame, "bm25")
    assert {"system", "measure", "baseline_mean", "mean", "p_value", "p_holm", "significant", "marker"} <= set(old)
    base = stats.paired_matrix(legal_frame, "AP", ["bm25", "dense"])
    row = old[(old["system"] == "dense") & (old["measure"] == "AP")].iloc[0]
    assert row["p_value"] == pytest.approx(stats.paired_ttest(base["bm25"], base["dense"]))
    wil = stats.versus_baseline(legal_frame, "bm25", test="wilcoxon", correction="bonferroni")
    assert wil["p_adjusted"].to_numpy() == pytest.approx(np.minimum(wil["p_value"] * 4, 1))
    assert (wil["test"] == "wilcoxon").all()


def test_difference_profile_aligns_queries_and_cutoffs():
    base = pd.DataFrame([[0.0, 0.5, 0.5], [1.0, 1.0, 1.0]], index=pd.Index(["q1", "q2"], name="qid"),
                        columns=pd.RangeIndex(1, 4, name="k"))
    system = pd.DataFrame([[1.0, 1.0], [0.0, 0.5], [1.0, 1.0]], index=pd.Index(["q1", "q2", "q3"], name="qid"),
                          columns=pd.RangeIndex(1, 3, name="k"))
    prof = stats.difference_profile(base, system, resamples=2000, seed=0)
    # q3 is missing from the baseline (scores 0); system's k = 3 repeats its k = 2 value
    assert prof["k"].tolist() == [1, 2, 3]
    assert prof["diff"].to_numpy() == pytest.approx([(1 - 1 + 1) / 3, (0.5 - 0.5 + 1) / 3, (0.5 - 0.5 + 1) / 3])
    assert (prof["ci_low"] <= prof["diff"]).all() and (prof["diff"] <= prof["ci_high"]).all()
    pd.testing.assert_frame_equal(prof, stats.difference_profile(base, system, resamples=2000, seed=0))
