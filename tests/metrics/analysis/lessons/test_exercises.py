"""metrics.analysis.lessons.exercises: a reorder and a higher exercise are checked by the engine."""
from __future__ import annotations

import pytest

from metrics.analysis import lessons
from metrics.errors import MetricsError

LESSONS = lessons.catalogue()

def test_reorder_and_higher_are_checked_by_the_engine():
    ex = LESSONS["discount"].exercises[2]
    names = list(ex.sandbox.names)
    up = [names[-1]] + names[:-1]                          # the grade-4 document to rank 1: nDCG 1
    assert lessons.check(ex, up).correct and lessons.check(ex, up).value == pytest.approx(1.0)
    assert not lessons.check(ex, names).correct
    with pytest.raises(MetricsError, match="every document"):
        lessons.check(ex, names[:-1])
    higher = LESSONS["gain"].exercises[1]
    assert lessons.check(higher, {"exp": "A", "linear": "A"}).correct
    assert not lessons.check(higher, {"exp": "A", "linear": "B"}).correct
