"""metrics.analysis.lessons.collection: the lessons' collection scores each query as the textbook formula does."""
from __future__ import annotations

import statistics

import pytest

from metrics.analysis import lessons
from tests.metrics.analysis.lessons.hand import hand_collection

LESSONS = lessons.catalogue()

def test_collection_summary():
    c = LESSONS["collection"].collection
    table = c.per_query()
    assert len(table) == 10
    assert c.summary()["sd_a"] == pytest.approx(statistics.stdev(table["A"]), abs=1e-12)
    assert c.summary()["mean_b"] == pytest.approx(hand_collection(c, "mean_b"), abs=1e-12)
