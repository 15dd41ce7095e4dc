"""metrics.measures.rbp: RBP and its residual, hand-computed.

RBP(p) = (1 - p) * sum over ranks i (from 0) of gain_i * p^i.
"""
from __future__ import annotations

import pytest

from metrics.measures import Context, compute_curve, parse_family
from tests.metrics.measures.hand import ranked_from, value, values


def test_rbp_binary_by_hand():
    ranked = ranked_from({"q": [1, 0, 1, None]})
    assert value(ranked, "RBP(p=0.5,rel=1)") == pytest.approx((1 - 0.5) * (1 + 0.5 ** 2))
    assert value(ranked, "RBP(rel=1)") == pytest.approx((1 - 0.8) * (1 + 0.8 ** 2))  # ir_measures' p = 0.8
    assert value(ranked, "RBP(p=0.5,rel=1)@2") == pytest.approx(0.5 * 1)


def test_rbp_graded_gains_are_scaled_by_the_highest_grade():
    # the query's highest grade is 4 (d9, not retrieved): gains 2/4, 0, 4/4
    ranked = ranked_from({"q": [2, 0, 4]}, extra={"q": {"d9": 4}})
    assert value(ranked, "RBP") == pytest.approx(0.2 * (2 / 4 + 0.8 ** 2 * 4 / 4))
    assert value(ranked, "rbp") == pytest.approx(0.1 * (2 / 4 + 0.9 ** 2 * 4 / 4))  # trec_eval's rbp: p = 0.9
    # binary grades are not rescaled: gains 1, 0, 1
    binary = ranked_from({"q": [1, 0, 1]})
    assert value(binary, "RBP") == pytest.approx(0.2 * (1 + 0.8 ** 2))


def test_rbp_negative_custom_gain_shifts_the_scale():
    # gains {0: -1}: the gains of grades 0, 1, 2 are -1, 1, 2, so lo = -1, hi = 2 and g' = (g + 1) / 3;
    # unjudged and negatively graded documents stay at 0
    ranked = ranked_from({"q": [0, 1, None, 2, -1]})
    p = 0.5
    want = (1 - p) * (0 + p * (2 / 3) + p ** 3 * 1)
    assert value(ranked, "RBP(p=0.5,gains={0:-1})") == pytest.approx(want)


def test_rbp_residual_by_hand():
    ranked = ranked_from({"q": [1, None, 0, -1]})
    p = 0.5
    # judged (grade >= 0) at ranks 0 and 2; unjudged at 1 and 3 (a negative grade counts as unjudged)
    residual = p ** 4 + (1 - p) * (p ** 1 + p ** 3)
    assert residual == pytest.approx(1 - (1 - p) * (1 + p ** 2))
    assert value(ranked, "rbp_resid(p=0.5)") == pytest.approx(residual)
    assert value(ranked, "rbp_resid(p=0.5)@2") == pytest.approx(p ** 2 + (1 - p) * p)
    assert value(ranked_from({"q": [1, 0]}), "rbp_resid") == 0.0  # nothing unjudged: 0, as trec_eval


def test_rbp_at_most_one_and_curve_matches_points():
    ranked = ranked_from({"a": [4, 4, 4], "b": [None, 3, 0, 1]})
    curve = compute_curve(Context(ranked), parse_family("RBP(p=0.7)"), 4)
    for k in (1, 2, 3, 4):
        assert curve[:, k - 1] == pytest.approx(values(ranked, f"RBP(p=0.7)@{k}"))
    assert values(ranked, "RBP(p=0.7)")[0] == pytest.approx(0.3 * (1 + 0.7 + 0.49))  # < 1: the list ends
