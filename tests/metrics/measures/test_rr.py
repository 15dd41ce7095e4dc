"""metrics.measures.rr: reciprocal rank by hand, with and without a cutoff."""
from __future__ import annotations

import pytest

from tests.metrics.measures.hand import ranked_from, value


def test_reciprocal_rank_with_and_without_cutoff():
    ranked = ranked_from({"q1": [0, 0, 2, 1]})
    assert value(ranked, "RR") == pytest.approx(1 / 3)
    assert value(ranked, "RR@2") == 0.0
    assert value(ranked, "RR(rel=2)") == pytest.approx(1 / 3)
    assert value(ranked, "RR(rel=3)") == 0.0
