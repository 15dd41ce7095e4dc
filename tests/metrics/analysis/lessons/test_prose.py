"""metrics.analysis.lessons.prose: what a lesson's words say about its example (grades at ranks, counts,
missed documents, cutoffs) is checked against the example, and a planted mismatch is refused."""
from __future__ import annotations

import pytest

from metrics.analysis import lessons
from metrics.analysis.lessons import prose
from metrics.errors import MetricsError

LESSONS = lessons.catalogue()
LESSON = '''
title = "T"
order = 1
summary = "S"
text = "TEXT"
try = "Try."
[example]
grades = [1, 0, 0, 0, 0, 0, 0, 4, 4, 3]
cutoff = 10
missed = [2]
[[exercise]]
kind = "number"
question = "RR?"
quantity = "rr"
grades = [0, 0, 0, 4, 0, 0, 1, 0, 0, 0]
[[exercise]]
kind = "number"
question = "P@10?"
quantity = "p"
grades = [0, 0, 0, 4, 0, 0, 1, 0, 0, 0]
'''


def load(tmp_path, text):
    path = tmp_path / "rivals.toml"
    path.write_text(LESSON.replace("TEXT", text), encoding="utf-8")
    return lessons.load(path)


@pytest.mark.parametrize("text", [
    "a grade-1 document at rank 1, grade-4 documents at ranks 8 and 9 and a grade-3 one at rank 10",
    "two grade-4 documents at ranks 8 to 9; the grade-3 document tenth; ten results",
    "one relevant document (grade 2) the list missed; P@10 = {p} and nDCG@10 = {ndcg}",
    "one missed relevant documents",
])
def test_words_that_match_the_example_load(tmp_path, text):
    assert load(tmp_path, text).id == "rivals"


@pytest.mark.parametrize("text, problem", [
    ("grade-4 documents at ranks 8 to 10: RR = {rr}",                      # the rivals lesson as it was
     "'grade-4 documents at ranks 8 to 10': the example has grade 3 at rank 10"),
    ("a grade-4 document at rank 1", "the example has grade 1 at rank 1"),
    ("the grade-4 document eighth", "'the grade-4 document eighth': the example holds 2 grade-4 document(s)"),
    ("three grade-4 documents", "the example holds 2 grade-4 document(s)"),
    ("a grade-3 document at rank 12", "the example has no document at rank 12"),
    ("nine results", "'nine results': the example lists 10 documents"),
    ("two relevant documents (grades 3 and 2) the list missed", "the example misses 1 relevant documents"),
    ("one relevant document (grade 3) the list missed", "the missed documents' grades are 2"),
    ("here nDCG@5 = {ndcg}", "'nDCG@5 = {ndcg}': the value is computed at cutoff 10, not 5"),
    ("nDCG@20 = {ndcg:k10}", "computed at cutoff 10, not 20"),
    ("rank 5 keeps {discount:4}", "the value is computed at rank 4, not 5"),
])
def test_a_planted_mismatch_is_refused_with_the_words_and_the_fact(tmp_path, text, problem):
    with pytest.raises(MetricsError) as info:
        load(tmp_path, text)
    message = str(info.value)
    assert message.startswith("rivals.toml: the text contradicts its example: ")
    assert problem in message


def test_the_rivals_lesson_says_what_its_example_holds():
    lesson = LESSONS["rivals"]
    assert lesson.example.grades[7:10] == (4, 4, 3)
    assert "grade-4 documents at ranks 8 and 9 and a grade-3 one at rank 10" in " ".join(lesson.text.split())
    assert prose.problems(lesson, "grade-4 documents at ranks 8 to 10") == [
        "'grade-4 documents at ranks 8 to 10': the example has grade 3 at rank 10"]


def test_every_shipped_lesson_agrees_with_its_example():
    for lesson in LESSONS.values():
        assert prose.problems(lesson, lesson.text) == [] and prose.problems(lesson, lesson.try_text) == []
