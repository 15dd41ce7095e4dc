"""AppTest of the Course page: the instructor pastes a class list (a bad one names its line and
loads nothing), re-issues a link; a student without a team makes one on the task page; a
student's course shows no other student's name."""
from __future__ import annotations

import pytest

from metrics.analysis import lessons
from metrics.tasks import classlist, course, roster
from tests.views.class_tasks import legal_task, ok, texts

PAGE = "views/course.py"


@pytest.fixture
def task(tmp_path):
    home = tmp_path / "home"
    tasks, links = legal_task(home, "Course task")
    yield home, links, tasks
    tasks.close()


def test_the_instructor_pastes_a_class_list(open_app, task):
    home, links, tasks = task
    at = ok(open_app(PAGE, home=home, query_params={"course": links.tokens["instructor"]}))
    at.text_area(key="class_paste").input("id,name\ns1,Ada\ns1,Alan\n")
    at.button[0].click().run()
    ok(at)
    assert "line 3: student id 's1' is also on line 2" in texts(at)
    assert roster.students(tasks.open(links.instructor).task) == []
    at.text_area(key="class_paste").input("id,name,team\ns1,Ada,Red\ns2,Alan,\n")
    at.button[0].click().run()
    ok(at)
    assert "2 students in 1 teams" in texts(at)
    old = classlist.links(tasks.open(links.instructor))[1]
    next(b for b in at.button if b.label.startswith("Re-issue")).click().run()
    ok(at)
    assert "the old one is dead" in texts(at)
    assert classlist.links(tasks.open(links.instructor))[1] != old


def test_a_student_makes_a_team_then_sees_only_their_own_name(open_app, task):
    home, links, tasks = task
    instructor = tasks.open(links.instructor)
    classlist.load(tasks.registry, instructor, "id,name,team\ns1,Ada Lovelace,Red\ns2,Alan Turing,\n", team_size=2)
    personal = classlist.links(instructor)
    alan = personal[2].rsplit("=", 1)[1]
    at = ok(open_app("views/task.py", home=home, query_params={"task": alan}))
    assert "Welcome, Alan Turing" in texts(at)
    at.text_input[0].input("Red")
    at.button[0].click().run()
    ok(at)
    assert tasks.open(personal[2]).team == tasks.open(personal[1]).team
    at = ok(open_app(PAGE, home=home, query_params={"course": alan}))
    shown = texts(at)
    assert "Alan Turing" in shown and "Ada Lovelace" not in shown


def test_a_student_answers_a_reorder_and_a_higher_exercise_on_the_course_page(open_app, task):
    home, links, tasks = task
    instructor = tasks.open(links.instructor)
    classlist.load(tasks.registry, instructor, "id,name,team\ns1,Ada Lovelace,Red\n")
    every = [ex for lesson in course.lesson_catalogue().values() for ex in lesson.exercises]
    reorder = next(ex for ex in every if ex.kind == "reorder")
    higher = next(ex for ex in every if ex.kind == "higher")
    course.set_items(instructor, [course.Item("exercises", lessons.encode([reorder, higher]), "Order and gains")])
    ada = classlist.links(instructor)[1]
    at = ok(open_app(PAGE, home=home, query_params={"course": ada.rsplit("=", 1)[1]}))
    assert "0 of 2 right" in texts(at)
    assert at.selectbox(key="ex_0_0_move_doc") is not None          # the reorder's widgets
    right = lessons.answer(higher)
    at.radio(key="ex_0_1_exp").set_value(right["exp"])
    at.radio(key="ex_0_1_linear").set_value(right["linear"])
    at.button(key="check_0_1").click().run()
    ok(at)
    assert "Right: kept in your progress." in texts(at)
    assert "1 of 2 right" in texts(at)
    assert [(p.done, p.parts) for p in course.progress(tasks.open(ada)).items] == [(1, 2)]
