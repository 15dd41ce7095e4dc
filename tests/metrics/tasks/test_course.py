"""Course progress counts every kind of exercise a set may hold: a "reorder" (the list put in an
order that reaches the target) and a "higher" (which list scores higher under each gain) are
asked, checked and counted as the numbers and choices are; a malformed answer of each kind gets a
message saying what is expected, and counts nothing."""
from __future__ import annotations

import pytest

from metrics import MetricsError
from metrics.analysis import lessons
from metrics.tasks import classlist, course
from tests.metrics.tasks.test_classlist import loaded


def of_kind(kind: str) -> lessons.Exercise:
    return next(ex for lesson in course.lesson_catalogue().values() for ex in lesson.exercises if ex.kind == kind)


@pytest.fixture
def course_of_two(tasks):
    """A course of one exercise set, a reorder and a higher; Ada's personal link on it."""
    _, instructor = loaded(tasks)
    reorder, higher = of_kind("reorder"), of_kind("higher")
    course.set_items(instructor, [course.Item("exercises", lessons.encode([reorder, higher]), "Order and gains")])
    return instructor, tasks.open(classlist.links(instructor)[1]), reorder, higher


def test_reorder_and_higher_are_asked_and_counted(course_of_two):
    instructor, ada, reorder, higher = course_of_two
    assert [ex.kind for ex in course.exercises_of(course.items(instructor.task)[0])] == ["reorder", "higher"]
    assert [(p.done, p.parts) for p in course.progress(ada).items] == [(0, 2)]

    worst = list(reversed(reorder.on_list().ideal().names))          # the best last: below the target
    assert not course.answer(ada, 0, 0, worst).correct
    assert course.answer(ada, 0, 0, list(reorder.on_list().ideal().names)).correct
    assert [(p.done, p.parts) for p in course.progress(ada).items] == [(1, 2)]
    assert course.class_progress(instructor).set_index("student id").loc["s1", "1. Order and gains"] == "1/2"

    right = lessons.answer(higher)
    flipped = {gain: "B" if side == "A" else "A" for gain, side in right.items()}
    assert not course.answer(ada, 0, 1, flipped).correct
    assert course.answer(ada, 0, 1, dict(right)).correct
    mine = course.progress(ada)
    assert ([(p.done, p.parts) for p in mine.items], mine.next) == ([(2, 2)], None)
    table = course.class_progress(instructor).set_index("student id")
    assert (table.loc["s1", "1. Order and gains"], table.loc["s1", "complete"]) == ("done", 1)
    assert (table.loc["s2", "1. Order and gains"], table.loc["s2", "complete"]) == ("", 0)


@pytest.mark.parametrize(("index", "response", "message"), [
    (0, "d1 d2 d3", "a reorder answer is the list's documents in your order"),
    (0, 0.9, "a reorder answer is the list's documents in your order"),
    (1, {"exp": "A"}, "say which list scores higher under both gains"),
    (1, "A", "say which list scores higher under both gains"),
])
def test_a_malformed_answer_says_what_is_expected_and_counts_nothing(course_of_two, index, response, message):
    _, ada, _, _ = course_of_two
    with pytest.raises(MetricsError, match=message):
        course.answer(ada, 0, index, response)
    assert course.progress(ada).items[0].done == 0


def test_a_number_and_a_choice_that_are_not_answers(tasks):
    _, instructor = loaded(tasks)
    number, choice = of_kind("number"), of_kind("choice")
    course.set_items(instructor, [course.Item("exercises", lessons.encode([number, choice]), "")])
    ada = tasks.open(classlist.links(instructor)[1])
    with pytest.raises(MetricsError, match="that answer is not a number"):
        course.answer(ada, 0, 0, "about a half")
    with pytest.raises(MetricsError, match="that answer is not one of the options"):
        course.answer(ada, 0, 1, "the first")
    assert course.answer(ada, 0, 1, lessons.answer(choice)).correct
    assert course.progress(ada).items[0].done == 1
