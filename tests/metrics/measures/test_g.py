"""metrics.measures.g: G and binG on small lists, with the arithmetic written out."""
from __future__ import annotations

from math import log2

import pytest

from tests.metrics.measures.hand import ranked_from, value


def test_bing_and_g_by_hand():
    ranked = ranked_from({"q": [0, 2, None, 1]})
    # binG: relevant d1 has 1 non-relevant above, d3 has 2 (d0 and the unjudged d2)
    assert value(ranked, "binG") == pytest.approx((1 / log2(2 + 1) + 1 / log2(2 + 2)) / 2)
    # G: ideal gains 2, 1 so the costs per rank are max(2,1)=2, max(1,1)=1, then 1, 1 -> C = 2, 3, 4, 5;
    # gains so far S = 0, 2, 2, 3
    want = (2 / log2(2 + 3 - 2) + 1 / log2(2 + 5 - 3)) / (2 + 1)
    assert value(ranked, "G") == pytest.approx(want)
