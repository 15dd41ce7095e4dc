"""metrics.measures.ndcg: nDCG, DCG and IDCG by hand, linear, exponential and custom gains."""
from __future__ import annotations

from math import log2

import pytest

from tests.metrics.measures.hand import ranked_from, value


def test_ndcg_at_3_linear_gain():
    ranked = ranked_from({"q1": [2, 0, 1]})
    dcg = 2 / log2(2) + 0 / log2(3) + 1 / log2(4)
    idcg = 2 / log2(2) + 1 / log2(3)
    assert value(ranked, "nDCG@3") == pytest.approx(dcg / idcg)
    assert value(ranked, "DCG@3") == pytest.approx(dcg)
    assert value(ranked, "IDCG@3") == pytest.approx(idcg)


def test_ndcg_exponential_gain():
    ranked = ranked_from({"q1": [1, 3, 0, 2]})
    dcg = 1 / log2(2) + 7 / log2(3) + 0 + 3 / log2(5)
    idcg = 7 / log2(2) + 3 / log2(3) + 1 / log2(4)
    assert value(ranked, "nDCG(dcg='exp-log2')@4") == pytest.approx(dcg / idcg)
    assert value(ranked, "nDCG(dcg='exp-log2')") == pytest.approx(dcg / idcg)


def test_ideal_counts_relevant_docs_not_retrieved():
    ranked = ranked_from({"q1": [1, 0]}, extra={"q1": {"missing": 3}})
    dcg = 1 / log2(2)
    idcg = 3 / log2(2) + 1 / log2(3)
    assert value(ranked, "nDCG@2") == pytest.approx(dcg / idcg)


def test_custom_fractional_gains_are_kept():
    ranked = ranked_from({"q1": [1, 2]})
    # gains {1: 0.5, 2: 2.5}: the ideal puts grade 2 first; nothing is truncated to integers
    dcg = 0.5 / log2(2) + 2.5 / log2(3)
    idcg = 2.5 / log2(2) + 0.5 / log2(3)
    assert value(ranked, "nDCG(gains={1:0.5,2:2.5})@2") == pytest.approx(dcg / idcg)


def test_negative_grades_gain_nothing_and_are_not_relevant():
    ranked = ranked_from({"q1": [-1, 2, None, 1]})
    dcg = 2 / log2(3) + 1 / log2(5)
    idcg = 2 / log2(2) + 1 / log2(3)
    assert value(ranked, "nDCG@5") == pytest.approx(dcg / idcg)
    assert value(ranked, "P@2") == pytest.approx(1 / 2)
    assert value(ranked, "AP") == pytest.approx((1 / 2 + 2 / 4) / 2)
