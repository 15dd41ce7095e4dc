"""metrics.measures.ap: AP by hand, at a cutoff and with graded thresholds."""
from __future__ import annotations

import pytest

from tests.metrics.measures.hand import ranked_from, value


def test_average_precision_and_cutoff_divide_by_all_relevant():
    ranked = ranked_from({"q1": [1, 0, 1, 0, 0]}, extra={"q1": {"x": 1}})
    assert value(ranked, "AP") == pytest.approx((1 / 1 + 2 / 3) / 3)
    assert value(ranked, "AP@2") == pytest.approx((1 / 1) / 3)
