"""metrics.analysis.lessons.kinds: every exercise's computed answer equals an independent hand computation."""
from __future__ import annotations

import pytest

from metrics.analysis import lessons
from tests.metrics.analysis.lessons.hand import hand, hand_value

LESSONS = lessons.catalogue()

@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_every_exercise_answer_equals_the_hand_computation(lesson_id):
    for ex in LESSONS[lesson_id].exercises:
        right = lessons.answer(ex)
        if ex.kind == "number":
            assert right == pytest.approx(hand_value(ex), abs=1e-9), ex.question
        elif ex.kind == "choice":
            if all(isinstance(o, float) for o in ex.options):
                target = hand_value(ex)
                assert right == min(range(len(ex.options)), key=lambda i: abs(ex.options[i] - target))
            else:
                values = [hand(s, ex.quantity, st or ex.strategy) for _, s, st in ex.options]
                assert right == values.index(max(values)), ex.question
        elif ex.kind == "reorder":
            assert right == pytest.approx(hand(ex.sandbox.ideal(), "ndcg"), abs=1e-9)
            assert hand(ex.sandbox, "ndcg") < ex.target <= right
        else:
            for g in ("exp", "linear"):
                a, b = hand(ex.sandbox.replace(gain=g), "ndcg"), hand(ex.other.replace(gain=g), "ndcg")
                assert right[g] == ("A" if a > b else "B" if b > a else "equal")
