"""Lessons: every file loads, every number of the prose and every exercise answer equals an
independent hand computation, malformed files say which file and what is wrong, the usual
mistakes are recognised, and an exercise link does not hold its answer."""
from __future__ import annotations

import base64
import json
from math import log2
from pathlib import Path

import pytest

from metrics.analysis import lessons
from metrics.analysis.lessons import Exercise, from_spec
from metrics.analysis.sandbox import Sandbox
from metrics.errors import MetricsError

LESSONS = lessons.load_all()


# -- an independent nDCG: the textbook formula, written out -------------------------------------------
def gain(g, kind):
    return (2 ** g - 1) if kind == "exp" else g


def dcg(grades, k, kind):
    return sum(gain(g, kind) / log2(r + 2) for r, g in enumerate(grades[:k]))


def hand(sb: Sandbox, quantity: str, strategy: str = "zero") -> float:
    """nDCG, DCG, IDCG, AP, RR, P@k, R@k of a sandbox by the textbook formulas (unjudged = 0, or
    removed when condensed), the ideal ranking holding the missed documents."""
    grades = [g for g in sb.grades if g is not None] if strategy == "condensed" else [g or 0 for g in sb.grades]
    judged = [g for g in sb.grades if g is not None] + list(sb.missed)
    k = sb.cutoff
    ideal = sorted(judged, reverse=True)
    d, i = dcg(grades, k, sb.gain), dcg(ideal, k, sb.gain)
    relevant = [r for r, g in enumerate(grades) if g >= 1]
    n_relevant = sum(1 for g in judged if g >= 1)
    return {"ndcg": d / i if i else 0.0, "dcg": d, "idcg": i,
            "ap": sum((j + 1) / (r + 1) for j, r in enumerate(relevant)) / n_relevant,
            "rr": 1 / (relevant[0] + 1) if relevant else 0.0,
            "p": sum(1 for r in relevant if r < k) / k, "r": sum(1 for r in relevant if r < k) / n_relevant}[quantity]


def hand_collection(c, quantity):
    per = []
    for grades, a, b in c.queries:
        ideal = sorted(grades, reverse=True)
        idcg = dcg(ideal, c.cutoff, c.gain)
        per.append(tuple(dcg([grades[d - 1] for d in order], c.cutoff, c.gain) / idcg for order in (a, b)))
    if quantity == "wins_b":
        return sum(1 for a, b in per if b > a + 1e-12)
    return sum(v[0 if quantity == "mean_a" else 1] for v in per) / len(per)


def hand_value(ex: Exercise, sb=None) -> float:
    sb = ex.sandbox if sb is None else sb
    if ex.quantity == "discount":
        return 1 / log2(ex.rank + 1)
    if ex.quantity == "loss":
        return 1 - 1 / log2(ex.rank + 1)
    if ex.quantity == "gain":
        return gain(ex.grade, sb.gain if sb else "exp")
    if ex.quantity in ("mean_a", "mean_b", "wins_b"):
        return hand_collection(ex.collection, ex.quantity)
    return hand(sb, ex.quantity, ex.strategy)


def test_the_syllabus_is_there_in_order():
    assert list(LESSONS) == ["graded", "gain", "discount", "idcg", "cutoff", "ties", "unjudged", "rivals",
                             "collection"]
    assert all(2 <= len(lesson.exercises) <= 4 for lesson in LESSONS.values())
    assert {ex.kind for lesson in LESSONS.values() for ex in lesson.exercises} == set(lessons.KINDS)


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


def test_collection_summary():
    c = LESSONS["collection"].collection
    table = c.per_query()
    assert len(table) == 10
    import statistics
    assert c.summary()["sd_a"] == pytest.approx(statistics.stdev(table["A"]), abs=1e-12)
    assert c.summary()["mean_b"] == pytest.approx(hand_collection(c, "mean_b"), abs=1e-12)


# -- mistakes ---------------------------------------------------------------------------------------
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
[[exercise]]
kind = "number"
question = "DCG@3?"
quantity = "dcg"
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


# -- links ------------------------------------------------------------------------------------------
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
