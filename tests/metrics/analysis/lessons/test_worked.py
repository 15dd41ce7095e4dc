"""metrics.analysis.lessons.worked: the usual mistakes are recognised and the worked arithmetic shows the hand
computation's numbers."""
from __future__ import annotations

import pytest

from metrics.analysis import lessons
from metrics.analysis.lessons import Exercise, from_spec
from tests.metrics.analysis.lessons.hand import dcg


def wikipedia(**changes) -> Exercise:
    spec = {"kind": "number", "question": "nDCG@6?", "grades": [3, 2, 3, 0, 1, 2], "cutoff": 6,
            "gain": "linear", "missed": [3, 2], **changes}
    return from_spec(spec)


def test_each_usual_mistake_is_named():
    ex = wikipedia()
    grades = [3, 2, 3, 0, 1, 2]
    right = dcg(grades, 6, "linear") / dcg([3, 3, 3, 2, 2, 2], 6, "linear")          # 0.7850
    assert lessons.answer(ex) == pytest.approx(right)
    exp = dcg(grades, 6, "exp") / dcg([3, 3, 3, 2, 2, 2], 6, "exp")
    ideal = [3, 3, 3, 2, 2, 2]
    by_rank = sum(g / (r + 1) for r, g in enumerate(grades)) / sum(g / (r + 1) for r, g in enumerate(ideal))
    own = dcg(grades, 6, "linear") / dcg([3, 3, 2, 2, 1, 0], 6, "linear")            # IDCG of the list only
    assert "wrong gain" in lessons.diagnose(ex, round(exp, 3))
    assert "1/rank" in lessons.diagnose(ex, round(by_rank, 3))
    assert "retrieved list only" in lessons.diagnose(ex, round(own, 3))
    assert "not normalised" in lessons.diagnose(ex, round(dcg(grades, 6, "linear"), 3))
    assert lessons.diagnose(ex, 0.123) is None
    result = lessons.check(ex, round(own, 3))
    assert not result.correct and "retrieved list only" in result.mistake
    assert lessons.check(ex, 0.785).correct and lessons.check(ex, 0.785).mistake is None
    assert result.steps[-1] == f"nDCG@6 = 6.8611 / 8.7403 = {right:.4f}"
    assert "3/log2(2) + 2/log2(3) + 3/log2(4)" in result.steps[1]
    assert list(result.table["rank"]) == [1, 2, 3, 4, 5, 6]


def test_the_kept_share_given_for_the_loss_is_recognised():
    ex = from_spec({"kind": "number", "question": "loss at 5?", "quantity": "loss", "rank": 5, "tolerance": 0.01})
    assert "share kept" in lessons.check(ex, 0.39).mistake
    assert lessons.check(ex, 0.61).correct
