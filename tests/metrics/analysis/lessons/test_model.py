"""metrics.analysis.lessons.model: every file loads, every number of the prose equals an independent
hand computation, and malformed files say which file and what is wrong."""
from __future__ import annotations

from math import log2
from pathlib import Path

import pytest

from metrics.analysis import lessons
from metrics.errors import MetricsError
from tests.metrics.analysis.lessons.hand import gain, hand, hand_collection

LESSONS = lessons.load_all()


def test_the_catalogue_is_the_package_read_once_and_read_only():
    catalogue = lessons.catalogue()
    assert lessons.catalogue() is catalogue
    assert list(catalogue) == list(LESSONS) and all(catalogue[i] == LESSONS[i] for i in LESSONS)
    with pytest.raises(TypeError):
        catalogue["graded"] = LESSONS["gain"]  # type: ignore[index]


def test_the_syllabus_is_there_in_order():
    assert list(LESSONS) == ["graded", "gain", "discount", "idcg", "cutoff", "ties", "unjudged", "rivals",
                             "collection"]
    assert all(2 <= len(lesson.exercises) <= 4 for lesson in LESSONS.values())
    assert {ex.kind for lesson in LESSONS.values() for ex in lesson.exercises} == set(lessons.KINDS)


@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_every_number_of_the_prose_is_the_hand_computation(lesson_id):
    lesson = LESSONS[lesson_id]
    for text in (lesson.text, lesson.try_text, lesson.summary):
        for name, arg in lessons.placeholders(text):
            value, shown = lessons.placeholder(lesson, name, arg)
            sb = lesson.example
            if name in ("discount", "loss"):
                expected = (1 / log2(int(arg) + 1)) if name == "discount" else 1 - 1 / log2(int(arg) + 1)
            elif name.startswith("gain_"):
                expected = gain(int(arg), name[5:])
            elif lesson.collection is not None:
                if name in ("mean_a", "mean_b", "wins_b"):
                    expected = hand_collection(lesson.collection, name)
                else:
                    expected = value  # spread and counts: checked in test_collection_summary
            else:
                strategy = arg if arg in ("zero", "condensed", "inferred") else "zero"
                if arg in ("exp", "linear"):
                    sb = sb.replace(gain=arg)
                elif arg and arg.startswith("k"):
                    sb = sb.replace(cutoff=int(arg[1:]))
                if strategy == "inferred":
                    sb = sb.replace(grades=tuple(1 if g is None else g for g in sb.grades))
                    strategy = "zero"
                expected = hand(sb, name, strategy)
            assert value == pytest.approx(expected, abs=1e-9), (lesson_id, name, arg)
            assert shown in lessons.render(lesson, text)


def test_the_discount_lesson_states_the_true_losses():
    text = lessons.render(LESSONS["discount"], LESSONS["discount"].text)
    assert "loses 61% of its value" in text and "rank 10 loses 71%" in text   # 1-1/log2(6), 1-1/log2(11)
    assert "39%" not in text and "54%" not in text


# -- malformed lesson files ------------------------------------------------------------------------
GOOD = '''
title = "T"
order = 1
summary = "S"
text = "nDCG is {ndcg}."
try = "Try."
[example]
grades = [3, 0, 2]
cutoff = 3
[[exercise]]
kind = "number"
question = "nDCG@3?"
grades = [0, 3, 2]
[[exercise]]
kind = "number"
question = "DCG@3?"
quantity = "dcg"
grades = [2, 0, 3]
'''


@pytest.mark.parametrize("change, problem", [
    (lambda t: t.replace('title = "T"', 'title = "T'), "not valid TOML"),
    (lambda t: t.replace('summary = "S"', ''), "'summary' is missing"),
    (lambda t: t.replace("nDCG is {ndcg}.", "nDCG is 0.78."), "types the number '0.78'"),
    (lambda t: t.replace("nDCG is {ndcg}.", "Rank 5 loses 39%."), "types the number '39%'"),
    (lambda t: t.replace("{ndcg}", "{ndgc}"), "unknown placeholder {ndgc}"),
    (lambda t: t.replace('quantity = "dcg"', 'quantity = "dgc"'), "exercise 2: unknown quantity 'dgc'"),
    (lambda t: t.replace('kind = "number"\nquestion = "DCG', 'kind = "guess"\nquestion = "DCG'),
     "exercise 2: unknown kind 'guess'"),
    (lambda t: t[:t.rindex("[[exercise]]")], "2-4 [[exercise]] tables, this one 1"),
    (lambda t: t.replace("grades = [3, 0, 2]", "grades = [3, 0, 7]"), "grade 7 is outside 0-4"),
    (lambda t: t.replace('question = "nDCG@3?"', 'question = "x"\nkind2 = 1'), "unknown field 'kind2'"),
    (lambda t: t + '[[exercise]]\nkind = "reorder"\nquestion = "q"\ntarget = 0.5\n', "already reaches the target"),
    (lambda t: t + '[[exercise]]\nkind = "choice"\nquestion = "q"\noptions = [{label = "a"}, {label = "b"}]\n',
     "share the best value"),
])
def test_a_malformed_lesson_names_the_file_and_the_problem(tmp_path, change, problem):
    path = tmp_path / "mine.toml"
    path.write_text(change(GOOD), encoding="utf-8")
    with pytest.raises(MetricsError) as info:
        lessons.load(path)
    assert str(info.value).startswith("mine.toml: ")
    assert problem in str(info.value)


def test_a_teachers_folder_loads_in_order(tmp_path):
    (tmp_path / "b.toml").write_text(GOOD.replace("order = 1", "order = 2"), encoding="utf-8")
    (tmp_path / "a.toml").write_text(GOOD.replace("order = 1", "order = 3"), encoding="utf-8")
    assert list(lessons.load_all(tmp_path)) == ["b", "a"]
    with pytest.raises(MetricsError, match="no lesson files"):
        lessons.load_all(tmp_path / "none")


def test_the_lesson_files_ship_in_the_package():
    assert lessons.DATA == Path(lessons.__file__).parent / "data"
    pyproject = (Path(__file__).resolve().parents[4] / "pyproject.toml").read_text()
    assert '"metrics.analysis.lessons" = ["data/*.toml"]' in pyproject


