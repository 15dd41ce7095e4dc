"""metrics.analysis.lessons.links: an exercise link round-trips, holds no answer, and a damaged one says so."""
from __future__ import annotations

import base64
import json

import pytest

from metrics.analysis import lessons
from metrics.errors import MetricsError

LESSONS = lessons.catalogue()

def all_exercises():
    return [ex for lesson in LESSONS.values() for ex in lesson.exercises]


def test_an_exercise_link_round_trips_and_holds_no_answer():
    exercises = all_exercises()
    token = lessons.encode(exercises)
    decoded = lessons.decode(token)
    assert [lessons.answer(e) for e in decoded] == [lessons.answer(e) for e in exercises]
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    json.loads(raw)
    assert "answer" not in raw and "correct" not in raw
    for ex in exercises:                     # each exercise alone: its link text never shows its value
        if ex.kind == "number" and lessons.answer(ex) != int(lessons.answer(ex)):
            one = lessons.encode([ex])
            text = base64.urlsafe_b64decode(one + "=" * (-len(one) % 4)).decode()
            value = lessons.answer(ex)
            shown = [f"{value:.4f}", f"{value:.3f}"] + ([repr(value)] if len(repr(value)) > 5 else [])
            assert not [t for t in shown if t in text], (ex.question, shown)


def test_a_damaged_link_says_so():
    with pytest.raises(MetricsError, match="damaged"):
        lessons.decode("%%%")
    with pytest.raises(MetricsError, match="holds no exercises"):
        lessons.decode(base64.urlsafe_b64encode(b'{"v":1,"x":[]}').decode())
    bad = base64.urlsafe_b64encode(json.dumps({"v": 1, "x": [{"kind": "number"}]}).encode()).decode()
    with pytest.raises(MetricsError, match="exercise 1 of the link: the exercise has no question"):
        lessons.decode(bad)
