"""metrics.stats.compare: the comparison rows of the tidy frame agree with the array functions;
reproducible, checked inputs, difference profiles."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics import stats
from metrics.errors import MetricsError

LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"


@pytest.fixture(scope="module")
def legal_frame():
    runs = [LEGAL / f"{name}.run" for name in ("bm25", "bm25_ce", "dense")]
    return metrics.evaluate(LEGAL / "qrels.txt", runs, ["nDCG(dcg='exp-log2')@10", "AP"])


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
    ce = table[(table["system"] == "bm25_ce") & (table["measure"] == "nDCG(dcg='exp-log2')@10")].iloc[0]
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


@pytest.mark.parametrize("block", [2**18, 2**22, 1])
def test_difference_profile_draws_the_package_resamples(monkeypatch, block):
    """The profile's blocked matmul draws the same resamples as bootstrap_means: on values in
    eighths every sum is exact in any order, so the intervals agree to the bit; blocks of several
    resample chunks (2**18: four chunks of 131 rows to a block of 524, the last one short), one
    block for all, and one chunk a block."""
    from metrics.stats import comparison

    monkeypatch.setattr(comparison, "_PROFILE_BLOCK", block)
    rng = np.random.default_rng(3)
    qids = pd.Index([f"q{i}" for i in range(500)], name="qid")
    ks = pd.RangeIndex(1, 31, name="k")
    base = pd.DataFrame(rng.integers(0, 9, (500, 30)) / 8, index=qids, columns=ks)
    system = pd.DataFrame(rng.integers(0, 9, (500, 30)) / 8, index=qids, columns=ks)
    prof = stats.difference_profile(base, system, resamples=3000, seed=11)
    d = (system.sort_index() - base.sort_index()).to_numpy()
    tail = (1.0 - stats.DEFAULT_LEVEL) / 2.0
    low, high = np.quantile(stats.bootstrap_means(d, resamples=3000, seed=11), [tail, 1.0 - tail], axis=0)
    np.testing.assert_array_equal(prof["ci_low"].to_numpy(), low)
    np.testing.assert_array_equal(prof["ci_high"].to_numpy(), high)
