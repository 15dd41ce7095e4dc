"""metrics.measures.cutoff: P, R, Success, Rprec and Judged at a cutoff, by hand."""
from __future__ import annotations

import pytest

from tests.metrics.measures.hand import ranked_from, value


def test_precision_recall_success_rprec():
    ranked = ranked_from({"q1": [2, 0, 1, 0]}, extra={"q1": {"x": 1, "y": 0}})
    assert value(ranked, "P@3") == pytest.approx(2 / 3)
    assert value(ranked, "P@10") == pytest.approx(2 / 10)  # divides by k even past the end
    assert value(ranked, "P(rel=2)@3") == pytest.approx(1 / 3)
    assert value(ranked, "R@3") == pytest.approx(2 / 3)
    assert value(ranked, "Rprec") == pytest.approx(2 / 3)  # R = 3: two hits in the top 3
    assert value(ranked, "Success@1") == 1.0
    assert value(ranked, "Success(rel=2)@1") == 1.0
    assert value(ranked, "Success(rel=3)@4") == 0.0


def test_rel_level_changes_binary_threshold():
    ranked = ranked_from({"q1": [1, 2, 0]})
    assert value(ranked, "P@2", rel_level=2) == pytest.approx(1 / 2)
    assert value(ranked, "P@2") == pytest.approx(2 / 2)


def test_judged_divides_by_retrieved_when_fewer_than_k():
    ranked = ranked_from({"q1": [1, None, 0]})
    assert value(ranked, "Judged@2") == pytest.approx(1 / 2)
    assert value(ranked, "Judged@10") == pytest.approx(2 / 3)
