"""metrics.measures.counts: NumRet, NumRel and NumRelRet by hand."""
from __future__ import annotations

from tests.metrics.measures.hand import ranked_from, value


def test_counts():
    ranked = ranked_from({"q1": [1, None, 0, 2]}, extra={"q1": {"x": 3}})
    assert value(ranked, "NumRet") == 4
    assert value(ranked, "NumRel") == 3
    assert value(ranked, "NumRelRet") == 2
    assert value(ranked, "NumRel(rel=2)") == 2
