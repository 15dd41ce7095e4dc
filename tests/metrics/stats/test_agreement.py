"""metrics.stats.agreement: Tukey HSD and Kendall's tau against scipy.stats and hand arithmetic,
and the ranking stability over cutoffs."""
from __future__ import annotations

from math import sqrt

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp

from metrics import stats
from tests.metrics.stats.helpers import paired_sample


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
