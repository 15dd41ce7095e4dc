"""tau_ap, RBO and measure agreement: hand cases from the papers' definitions, scipy for tau-b."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sst

import metrics
from metrics.stats import ranking_stability
from metrics.stats.behaviour import (
    measure_agreement,
    order_of,
    per_query_agreement,
    rbo,
    swapped_pairs,
    system_orders,
    tau_ap,
    tau_ap_matrix,
    tau_ap_symmetric,
)

LEGAL = Path(__file__).resolve().parents[4] / "ndcg_lab" / "sample_data" / "legal"
TRUTH = [4, 3, 2, 1]   # order A B C D


def test_tau_ap_swap_below_the_top():
    # other: A C B D. C(2): A above C in truth -> 1/1; C(3): of A, C only A above B -> 1/2; C(4): 3/3
    assert tau_ap(TRUTH, [4, 2, 3, 1]) == pytest.approx(2 / 3 * (1 + 1 / 2 + 1) - 1)


def test_tau_ap_weights_the_top_more_than_tau():
    top = tau_ap(TRUTH, [3, 4, 2, 1])      # B A C D: C(2) = 0, C(3) = 2/2, C(4) = 3/3
    bottom = tau_ap(TRUTH, [4, 3, 1, 2])   # A B D C: C(2) = 1, C(3) = 2/2, C(4) = 2/3
    assert top == pytest.approx(2 / 3 * (0 + 1 + 1) - 1)
    assert bottom == pytest.approx(2 / 3 * (1 + 1 + 2 / 3) - 1)
    # Kendall's tau cannot tell the two swaps apart: one discordant pair of six each
    assert sst.kendalltau(TRUTH, [3, 4, 2, 1]).statistic == pytest.approx(sst.kendalltau(TRUTH, [4, 3, 1, 2]).statistic)


def test_tau_ap_extremes_and_asymmetry():
    assert tau_ap(TRUTH, TRUTH) == pytest.approx(1.0)
    assert tau_ap(TRUTH, [1, 2, 3, 4]) == pytest.approx(-1.0)
    a, b = [5, 4, 3, 2, 1], [4, 5, 1, 3, 2]
    assert tau_ap(a, b) != pytest.approx(tau_ap(b, a))
    assert tau_ap_symmetric(a, b) == pytest.approx((tau_ap(a, b) + tau_ap(b, a)) / 2)


def test_ties_broken_by_input_position():
    assert order_of([0.5, 0.7, 0.5]).tolist() == [1, 0, 2]


def test_rbo_hand_case():
    # X_1 = 0, X_2 = 2, X_3 = 3; RBO_ext = (1-p)/p (0 + 2/2 p^2 + 3/3 p^3) + 3/3 p^3
    p = 0.9
    assert rbo("abc", "bac", p) == pytest.approx((1 - p) / p * (p ** 2 + p ** 3) + p ** 3)
    assert rbo("abcd", "abcd") == pytest.approx(1.0)
    assert rbo("abc", "xyz") == 0.0


def test_rbo_uneven_lengths_hand_case():
    # S = [a, b] (s = 2), L = [b, c, a] (l = 3), p = 0.5: X_1 = 0, X_2 = 1, X_3 = 2 (S against L's top 3)
    p = 0.5
    sums = 0 / 1 * p + 1 / 2 * p ** 2 + 2 / 3 * p ** 3 + 1 * (3 - 2) / (2 * 3) * p ** 3
    expected = (1 - p) / p * sums + ((2 - 1) / 3 + 1 / 2) * p ** 3
    assert rbo("ab", "bca", p) == pytest.approx(expected)
    assert rbo("bca", "ab", p) == pytest.approx(expected)


def test_rbo_rejects_bad_input():
    with pytest.raises(metrics.MetricsError):
        rbo("ab", "ab", p=1.0)
    with pytest.raises(metrics.MetricsError):
        rbo("aa", "ab")


TABLE = pd.DataFrame({"m1": [0.5, 0.4, 0.3, 0.2], "m2": [0.4, 0.5, 0.3, 0.1]}, index=["a", "b", "c", "d"])


def test_orders_swaps_and_matrices():
    assert system_orders(TABLE)["m2"].tolist() == [2, 1, 3, 4]
    swaps = swapped_pairs(TABLE, "m1", "m2")
    assert swaps[["system_x", "system_y"]].values.tolist() == [["a", "b"]]
    assert swaps["a_diff"].iloc[0] == pytest.approx(0.1) and swaps["b_diff"].iloc[0] == pytest.approx(-0.1)
    ap = tau_ap_matrix(TABLE)
    # m1 order a b c d, m2 order b a c d: tau_ap(m1, m2) = 2/3 (0 + 1 + 1) - 1 both ways
    assert ap.loc["m1", "m2"] == pytest.approx(1 / 3) and ap.loc["m1", "m1"] == 1.0


def test_measure_agreement_on_the_legal_sample_equals_scipy():
    runs = [str(LEGAL / f"{n}.run") for n in ("bm25", "bm25_ce", "bm25_qe", "dense")]
    frame = metrics.evaluate(str(LEGAL / "qrels.txt"), runs, ["nDCG@10", "AP", "R@100"])
    result = measure_agreement(frame)
    table = metrics.means(frame)
    for a in table.columns:
        for b in table.columns:
            assert result["tau"].loc[a, b] == pytest.approx(sst.kendalltau(table[a], table[b]).statistic)
    pd.testing.assert_frame_equal(result["tau"], ranking_stability(table))
    assert result["ranks"].loc["bm25_ce", "nDCG@10"] == 1


def test_per_query_agreement_equals_scipy():
    frame = pd.DataFrame({"system": ["s"] * 4 + ["t"] * 4, "qid": list("1234") * 2,
                          "measure": "m1", "value": [0.1, 0.4, 0.2, 0.9, 0.3, 0.3, 0.8, 0.1]})
    other = frame.assign(measure="m2", value=[0.2, 0.3, 0.1, 1.0, 0.5, 0.2, 0.6, 0.0])
    both = pd.concat([frame, other])
    out = per_query_agreement(both, "m1", "m2").set_index("system")
    x, y = frame["value"].to_numpy(), other["value"].to_numpy()
    assert out.loc["s", "kendall_tau"] == pytest.approx(sst.kendalltau(x[:4], y[:4]).statistic)
    assert out.loc["t", "pearson"] == pytest.approx(sst.pearsonr(x[4:], y[4:]).statistic)
    assert out.loc["(all)", "n_queries"] == 8
    assert out.loc["(all)", "kendall_tau"] == pytest.approx(sst.kendalltau(x, y).statistic)
    assert np.isfinite(out["pearson"]).all()
