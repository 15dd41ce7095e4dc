"""The trec_eval-only measures on small lists, with the arithmetic written out.

(trec_eval 10 itself checks them on many inputs in test_trec_eval10.py and
test_trec_eval_generated.py; these show what each one computes.)
"""
from __future__ import annotations

from math import log2

import numpy as np
import pytest

from metrics.measures import Context, compute, iprec_curve, parse
from tests.metrics.measures.trec_oracle import ranked_from


def value(ranked, measure: str, **options) -> float:
    (only,) = compute(Context(ranked, **options), parse(measure))
    return float(only)


def test_bpref_counts_judged_nonrelevant_above_each_relevant():
    # ranks: 0 (N), unjudged, 1 (rel), -1 (pooled, unjudged: skipped), 0 (N), 2 (rel); qrels also hold x=1, y=0
    ranked = ranked_from({"q": [0, None, 1, -1, 0, 2]}, extra={"q": {"x": 1, "y": 0}})
    big_r, big_n = 3, 3  # relevant: d2, d5, x; judged non-relevant: d0, d4, y
    first = 1 - min(1, big_r) / min(big_n, big_r)   # one non-relevant above d2
    second = 1 - min(2, big_r) / min(big_n, big_r)  # two above d5
    assert value(ranked, "Bpref") == pytest.approx((first + second) / big_r)
    assert value(ranked, "bpref") == value(ranked, "Bpref")


def test_infap_by_hand():
    ranked = ranked_from({"q": [1, None, 0, -1, 1]})
    e = 1e-5
    # d0 at j = 0: 1. d4 at j = 4: above it r = 1 relevant, n = 1 non-relevant, u = 1 pooled-unjudged
    j, r, n, u = 4, 1, 1, 1
    second = 1 / (j + 1) + (j / (j + 1)) * ((r + n + u) / j) * ((r + e) / (r + n + 2 * e))
    assert value(ranked, "infAP") == pytest.approx((1 + second) / 2)


def test_bing_and_g_by_hand():
    ranked = ranked_from({"q": [0, 2, None, 1]})
    # binG: relevant d1 has 1 non-relevant above, d3 has 2 (d0 and the unjudged d2)
    assert value(ranked, "binG") == pytest.approx((1 / log2(2 + 1) + 1 / log2(2 + 2)) / 2)
    # G: ideal gains 2, 1 so the costs per rank are max(2,1)=2, max(1,1)=1, then 1, 1 -> C = 2, 3, 4, 5;
    # gains so far S = 0, 2, 2, 3
    want = (2 / log2(2 + 3 - 2) + 1 / log2(2 + 5 - 3)) / (2 + 1)
    assert value(ranked, "G") == pytest.approx(want)


def test_ndcg_rel_and_rndcg_by_hand():
    ranked = ranked_from({"q": [1, 0, 2]})
    d = [1 / log2(2), 1 / log2(2), 1 / log2(2) + 2 / log2(4)]  # run DCG down to ranks 1, 2, 3
    ideal = [2 / log2(2), 2 / log2(2) + 1 / log2(3)]            # ideal DCG down to ranks 1, 2
    # ndcg_rel: P = 2 positive ideal gains, both retrieved: mean of D_0 / I_0 and D_2 / I_1
    assert value(ranked, "ndcg_rel") == pytest.approx((d[0] / ideal[0] + d[2] / ideal[1]) / 2)
    # Rndcg: the ideal gain changes after ideal rank 1 (2 -> 1) and after rank 2 (1 -> none); n = 3 < P + 2
    assert value(ranked, "Rndcg") == pytest.approx((d[0] / ideal[0] + d[1] / ideal[1]) / 2)


def test_interpolated_precision_and_eleven_points():
    # relevant at ranks 1, 3, 6 of R = 4: precisions 1/1, 2/3, 3/6
    ranked = ranked_from({"q": [1, 0, 1, 0, 0, 1]}, extra={"q": {"x": 1}})
    levels = [0.0, 0.25, 0.5, 0.6, 0.75, 1.0]
    # c = round(level * 4) = 0, 1, 2, 2, 3, 4: best precision from the c-th relevant on; 0 past the third
    want = [1.0, 1.0, 2 / 3, 2 / 3, 3 / 6, 0.0]
    assert iprec_curve(ranked, levels)[0] == pytest.approx(want)
    assert value(ranked, "IPrec@0.5") == pytest.approx(2 / 3)
    assert value(ranked, "iprec_at_recall.0.5") == pytest.approx(2 / 3)
    elevens = iprec_curve(ranked)[0]  # levels 0, 0.1, ..., 1: c = 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4
    assert elevens == pytest.approx([1, 1, 1, 1, 2 / 3, 2 / 3, 2 / 3, 0.5, 0.5, 0, 0])
    assert value(ranked, "11pt_avg") == pytest.approx(float(np.sum(elevens[::-1])) / 11)


def test_rounding_of_recall_levels_is_half_away_from_zero():
    # relevant at ranks 1 and 5 (precisions 1 and 2/5) of R = 4. Level 0.3: 0.3 * 4 = 1.2 relevant documents,
    # c = round(1.2) = 1 in trec_eval 10 (9.0.8: floor(1.2 + 0.9) = 2, giving 2/5); level 0.125: 0.5 -> c = 1
    ranked = ranked_from({"q": [1, 0, 0, 0, 1]}, extra={"q": {"x": 1, "y": 1}})
    # 0.375 * 4 = 1.5 -> c = 2; 0.625 * 4 = 2.5 -> c = 3 (half away from zero, not to even): only 2 retrieved
    assert iprec_curve(ranked, [0.3, 0.125, 0.375, 0.625])[0] == pytest.approx([1.0, 1.0, 2 / 5, 0.0])


def test_rprec_mult_and_relative_precision():
    ranked = ranked_from({"q": [1, 0, 1, 1]}, extra={"q": {"x": 1}})  # R = 4
    # mult 0.5: c = floor(0.5 * 4 + 0.9) = 2; mult 1.6: c = floor(6.4 + 0.9) = 7 (fills with non-relevant)
    assert value(ranked, "Rprec_mult(mult=0.5)") == pytest.approx(1 / 2)
    assert value(ranked, "Rprec_mult(mult=1.6)") == pytest.approx(3 / 7)
    assert value(ranked, "Rprec_mult(mult=1)") == value(ranked, "Rprec")
    assert value(ranked, "relative_P@2") == pytest.approx(1 / 2)
    assert value(ranked, "relative_P@10") == pytest.approx(3 / 4)  # min(10, R) = 4


def test_set_measures_and_utility():
    ranked = ranked_from({"q": [1, 0, None, 2]}, extra={"q": {"x": 1, "y": 1}})  # n = 4, rel_ret = 2, R = 4
    precision, recall = 2 / 4, 2 / 4
    assert value(ranked, "SetP") == pytest.approx(precision)
    assert value(ranked, "SetRelP") == pytest.approx(2 / 4)
    assert value(ranked, "SetAP") == pytest.approx(2 * 2 / (4 * 4))
    assert value(ranked, "SetF(beta=0.5)") == pytest.approx(1.5 * precision * recall / (0.5 * precision + recall))
    # utility 1, -1, 0, 0: 2 relevant retrieved - 2 others
    assert value(ranked, "utility") == pytest.approx(0.0)
    expected = 2 * 2 - 2 - (4 - 2) + 0.5 * (100 + 2 - 4 - 4)
    assert value(ranked, "utility(a=2,c=-1,d=0.5,docs=100)") == pytest.approx(expected)
    assert value(ranked, "num_nonrel_judged_ret") == 1.0
    assert value(ranked, "unj@2") == 0.0 and value(ranked, "unj@3") == pytest.approx(1 / 3)


def test_a_query_the_run_lacks():
    ranked = ranked_from({"q": [1]}, extra={"gone": {"a": 1}})  # "gone" is only in the qrels
    assert list(ranked.qids) == ["gone", "q"]
    assert compute(Context(ranked), parse("utility(c=-1)")).tolist() == [0.0, 1.0]  # as trec_eval: 0
    assert compute(Context(ranked), parse("IPrec@0")).tolist() == [0.0, 1.0]
    condensed = Context(ranked.condensed())
    assert np.isnan(compute(condensed, parse("IPrec@0"))[0])  # -J: trec_eval divides 0 by 0
