"""metrics.analysis.lessons.leaks and the lesson model's refusal of a page that answers its own exercise:
a number is a leak when the check would accept it (tolerance, percentages), the hints stop short of the
answer, and a lesson file whose text, example or hint shows an answer names the file and the place."""
from __future__ import annotations

from math import log2

import pytest

from metrics.analysis import lessons
from metrics.analysis.lessons import from_spec, leaks, model
from metrics.errors import MetricsError
from tests.metrics.analysis.lessons.hand import dcg, hand

LESSONS = lessons.catalogue()
UNJUDGED = {"kind": "number", "question": "nDCG@5?", "grades": [3, "?", 2, "?", 1, 0, 2], "cutoff": 5}
ZERO = dcg([3, 0, 2, 0, 1], 5, "exp") / dcg([3, 2, 2, 1, 0], 5, "exp")          # 0.8211: unjudged as 0


def test_numbers_reads_decimals_commas_and_percentages_not_names():
    assert leaks.numbers("nDCG@5 = 0.8211, 61% or 0,82 at rank 7; q01 log2(3) 2^rel") == [
        ("0.8211", 0.8211), ("61%", 0.61), ("0,82", 0.82), ("7", 7.0), ("3", 3.0)]


@pytest.mark.parametrize("text, leaked", [("it is 0.8211", "0.8211"), ("about 0.82", "0.82"), ("82%", "82%"),
                                          ("0,821", "0,821"), ("0.8", None), ("0.83", None), ("8211", None)])
def test_a_number_leaks_when_the_check_would_accept_it(text, leaked):
    ex = from_spec(UNJUDGED)
    assert lessons.answer(ex) == pytest.approx(ZERO)
    assert leaks.leak(ex, text) == leaked


def test_a_choice_among_numbers_leaks_its_computed_value():
    ex = from_spec({"kind": "choice", "question": "kept at 10?", "quantity": "discount", "rank": 10,
                    "options": [0.46, 0.289, 0.1]})
    assert leaks.leak(ex, "rank 10 keeps 0.2891") == "0.2891"                        # 1/log2(11)
    assert 1 / log2(11) == pytest.approx(0.2891, abs=5e-5)
    assert leaks.leak(ex, "rank 5 keeps 0.387") is None


@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_no_hint_of_any_lesson_gives_its_answer_away(lesson_id):
    for ex in LESSONS[lesson_id].exercises:
        steps = leaks.hints(ex)
        target = leaks.accepted(ex)
        for line in steps:
            for _, number in leaks.numbers(line):
                assert target is None or abs(number - target[0]) > target[1], (lesson_id, line)
        if ex.kind == "number" and ex.quantity == "ndcg":
            assert steps[-1].endswith("= ?") and steps[-1].startswith(f"nDCG@{ex.sandbox.cutoff} = ")


def test_the_hint_keeps_the_formula_and_drops_the_value():
    ex = from_spec({**UNJUDGED, "quantity": "idcg"})
    ideal = dcg([3, 2, 2, 1, 0], 5, "exp")                                           # 7 + 3/log2(3) + ... = 10.8235
    assert leaks.hints(ex)[-1] == "IDCG@5 = 7/log2(2) + 3/log2(3) + 3/log2(4) + 1/log2(5) = ?"
    assert f"{ideal:.4f}" == "10.8235"
    assert all("10.8235" not in line for line in leaks.hints(ex))


GOOD = '''
title = "T"
order = 1
summary = "S"
text = "TEXT"
try = "Try."
[example]
grades = [3, "?", 2, "?", 1, 0, 2]
cutoff = 5
[[exercise]]
kind = "number"
question = "QUESTION"
hint = "HINT"
grades = [2, "?", 3, 1, "?", 0, 3]
[[exercise]]
kind = "number"
question = "DCG@5?"
quantity = "dcg"
grades = [0, 3]
cutoff = 2
'''


def test_the_good_lesson_loads(tmp_path):
    path = tmp_path / "good.toml"
    path.write_text(GOOD.replace("TEXT", "Unjudged as 0: {ndcg}."), encoding="utf-8")
    lesson = lessons.load(path)
    assert lessons.answer(lesson.exercises[0]) == pytest.approx(hand(lesson.exercises[0].sandbox, "ndcg"))


OWN_LIST = 'grades = [2, "?", 3, 1, "?", 0, 3]'


@pytest.mark.parametrize("change, where, shown", [
    ({OWN_LIST: ""}, "text", f"{ZERO:.4f}"),                                       # the old unjudged lesson
    ({OWN_LIST: "", "Unjudged as 0: {ndcg}.": "Rank by rank."}, "example", f"{ZERO:.4f}"),
    ({"HINT": "about 0.52"}, "hint", "0.52"),
    ({"QUESTION": "nDCG@5, about 52%?"}, "question", "52%"),
])
def test_a_lesson_that_shows_an_answer_is_refused(tmp_path, change, where, shown):
    text = GOOD.replace("TEXT", "Unjudged as 0: {ndcg}.")
    for old, new in change.items():
        text = text.replace(old, new)
    path = tmp_path / "leaky.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(MetricsError) as info:
        lessons.load(path)
    assert str(info.value).startswith(f"leaky.toml: exercise 1 is answered on its page before it is answered: "
                                      f"the {where} shows {shown!r}")


def test_the_shipped_lessons_show_no_answer_before_it_is_asked():
    for lesson in LESSONS.values():
        for ex in lesson.exercises:
            for where, text in model.on_the_page(lesson, ex).items():
                assert leaks.leak(ex, text) is None, (lesson.id, where)
