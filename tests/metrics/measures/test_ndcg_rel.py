"""metrics.measures.ndcg_rel: ndcg_rel and Rndcg on small lists, with the arithmetic written out."""
from __future__ import annotations

from math import log2

import pytest

from tests.metrics.measures.hand import ranked_from, value


def test_ndcg_rel_and_rndcg_by_hand():
    ranked = ranked_from({"q": [1, 0, 2]})
    d = [1 / log2(2), 1 / log2(2), 1 / log2(2) + 2 / log2(4)]  # run DCG down to ranks 1, 2, 3
    ideal = [2 / log2(2), 2 / log2(2) + 1 / log2(3)]            # ideal DCG down to ranks 1, 2
    # ndcg_rel: P = 2 positive ideal gains, both retrieved: mean of D_0 / I_0 and D_2 / I_1
    assert value(ranked, "ndcg_rel") == pytest.approx((d[0] / ideal[0] + d[2] / ideal[1]) / 2)
    # Rndcg: the ideal gain changes after ideal rank 1 (2 -> 1) and after rank 2 (1 -> none); n = 3 < P + 2
    assert value(ranked, "Rndcg") == pytest.approx((d[0] / ideal[0] + d[1] / ideal[1]) / 2)
