"""metrics.measures.rprec: Rprec_mult (and relative_P) on small lists, with the arithmetic written out."""
from __future__ import annotations

import pytest

from tests.metrics.measures.hand import ranked_from, value


def test_rprec_mult_and_relative_precision():
    ranked = ranked_from({"q": [1, 0, 1, 1]}, extra={"q": {"x": 1}})  # R = 4
    # mult 0.5: c = floor(0.5 * 4 + 0.9) = 2; mult 1.6: c = floor(6.4 + 0.9) = 7 (fills with non-relevant)
    assert value(ranked, "Rprec_mult(mult=0.5)") == pytest.approx(1 / 2)
    assert value(ranked, "Rprec_mult(mult=1.6)") == pytest.approx(3 / 7)
    assert value(ranked, "Rprec_mult(mult=1)") == value(ranked, "Rprec")
    assert value(ranked, "relative_P@2") == pytest.approx(1 / 2)
    assert value(ranked, "relative_P@10") == pytest.approx(3 / 4)  # min(10, R) = 4
