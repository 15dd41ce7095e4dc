"""metrics.measures.bpref: Bpref and infAP on small lists, with the arithmetic written out."""
from __future__ import annotations

import pytest

from tests.metrics.measures.hand import ranked_from, value


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
