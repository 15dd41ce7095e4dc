"""ndcg_lab.ui.lessons.screen: a lesson's texts and example numbers, computed once per process and
equal to what the library computes for the lesson each time."""
from __future__ import annotations

import pytest

from metrics import stats
from metrics.analysis import lessons, sandbox
from ndcg_lab.ui import lessons as lessons_view

LESSONS = lessons.catalogue()


@pytest.mark.parametrize("lesson_id", ["discount", "collection"])
def test_a_lessons_screen_is_the_librarys_numbers(lesson_id):
    lesson = LESSONS[lesson_id]
    shown = lessons_view.screen(lesson)
    assert shown.text == lessons.render(lesson, lesson.text)
    assert shown.try_text == lessons.render(lesson, lesson.try_text)
    if lesson.collection is None:
        assert shown.values == sandbox.scores(lesson.example)
        assert shown.per_rank.equals(sandbox.per_rank(lesson.example))
    else:
        diffs = lesson.collection.per_query()["B - A"].to_numpy()
        assert shown.p_t == pytest.approx(float(stats.ttest_pvalues(diffs)))
        assert shown.summary == lesson.collection.summary()


def test_a_lessons_screen_is_computed_once(monkeypatch):
    lesson = LESSONS["cutoff"]
    lessons_view.screen.cache_clear()
    calls = []
    real = lessons.render
    monkeypatch.setattr(lessons, "render", lambda le, text: calls.append(text) or real(le, text))
    first = lessons_view.screen(lesson)
    assert len(calls) == 2                            # the text and the "what to try" line
    assert lessons_view.screen(lesson) is first and len(calls) == 2
