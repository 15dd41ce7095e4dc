"""metrics.measures.sets: set measures and utility on small lists, with the arithmetic written out."""
from __future__ import annotations

import pytest

from tests.metrics.measures.hand import ranked_from, value


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
