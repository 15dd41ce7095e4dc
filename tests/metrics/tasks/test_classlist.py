"""Class lists: parsing with line-numbered problems, personal links (re-issue, removal), teams
formed at join up to a size, the join link refused, activity, grades and course progress."""
from __future__ import annotations

import csv
import io

import pytest

from metrics import MetricsError
from metrics.analysis import lessons
from metrics.tasks import TaskNotFound, classlist, course, grades, roster, views
from tests.metrics.tasks.conftest import LEGAL, make_task

LIST = "student id,name,email,team\ns1,Ada Lovelace,ada@uni.edu,Red\ns2,Alan Turing,alan@uni.edu,Red\n" \
       "s3,Grace Hopper,grace@uni.edu,Blue\ns4,=HYPERLINK(\"x\"),evil@uni.edu,\n"


def loaded(tasks, text=LIST, **options):
    links = make_task(tasks, **options)
    instructor = tasks.open(links.instructor)
    classlist.load(tasks.registry, instructor, text, "class.csv", team_size=2)
    return links, instructor


def test_parse_reads_columns_in_any_order_and_separator():
    entries = roster.parse("Name;Student_ID;Group\nAda;s1;Red\nAlan;s2;\n")
    assert [(e.student_id, e.name, e.team, e.email) for e in entries] == [("s1", "Ada", "Red", None),
                                                                           ("s2", "Alan", None, None)]


@pytest.mark.parametrize(("text", "expected"), [
    ("name,email\nAda,a@b.c\n", "the header has no student id column"),
    ("id,name\ns1,Ada\ns1,Alan\n", "line 3: student id 's1' is also on line 2"),
    ("id,name\ns1,\n", "line 2: the name is empty"),
    ("id,name,email\ns1,Ada,not-an-address\n", "line 2: 'not-an-address' is not an email address"),
    ("id,name\ns1,Ada,extra\n", "line 2: 3 fields where the header has 2"),
    ("id,name\ns1,Ada\n=2+2,Alan\n", "line 3: the student id '=2+2' begins with '='"),
    ("id,name\n-s1,Ada\n", "line 2: the student id '-s1' begins with '-'"),
    ("id,name,email\ns1,Ada,=a@b.c\n", "line 2: '=a@b.c' is not an email address"),
    ("id,name\n", "has a header but no student"),
    ("", "the class list is empty"),
])
def test_parse_names_the_line_and_problem(text, expected):
    with pytest.raises(MetricsError) as caught:
        roster.parse(text, "class.csv")
    assert expected in str(caught.value)
    assert "class.csv" in str(caught.value)


def test_a_bad_list_loads_nothing(tasks):
    links = make_task(tasks)
    instructor = tasks.open(links.instructor)
    with pytest.raises(MetricsError):
        classlist.load(tasks.registry, instructor, "id,name\ns1,Ada\ns2,\n")
    assert roster.students(instructor.task) == []


def test_personal_links_open_the_students_team(tasks):
    links, instructor = loaded(tasks)
    personal = classlist.links(instructor)
    ada = tasks.open(personal[1])
    assert (ada.role, ada.student) == ("team", 1)
    assert ada.team == tasks.open(personal[2]).team          # both listed in Red
    assert tasks.open(personal[4]).role == "student"        # no team yet
    with pytest.raises(MetricsError, match="class list"):
        tasks.join(links.join, "Gatecrashers")


def test_reissue_stops_the_old_link_at_once(tasks):
    _, instructor = loaded(tasks)
    old = classlist.links(instructor)[1]
    new = classlist.reissue(tasks.registry, instructor, 1)
    assert new != old
    with pytest.raises(TaskNotFound):
        tasks.open(old)
    assert tasks.open(new).student == 1
    assert classlist.links(instructor)[1] == new


def test_removal_stops_the_link_and_drops_the_student(tasks):
    _, instructor = loaded(tasks)
    link = classlist.links(instructor)[3]
    classlist.remove(tasks.registry, instructor, 3)
    with pytest.raises(TaskNotFound):
        tasks.open(link)
    assert [s.student_id for s in roster.students(instructor.task)] == ["s1", "s2", "s4"]


def test_teams_formed_at_join_up_to_the_size(tasks):
    text = "id,name\na,A\nb,B\nc,C\n"
    _, instructor = loaded(tasks, text)
    personal = classlist.links(instructor)
    team = roster.form_team(instructor.task, 1, "Green", tasks.clock())
    assert roster.form_team(instructor.task, 2, "green", tasks.clock()) == team
    with pytest.raises(MetricsError, match="full \\(2 students\\)"):
        roster.form_team(instructor.task, 3, "Green", tasks.clock())
    assert tasks.open(personal[1]).team == team


def test_activity_and_submissions_per_student(tasks):
    _, instructor = loaded(tasks)
    ada = tasks.open(classlist.links(instructor)[1])
    ada.submit((LEGAL / "dense.run").read_bytes(), "dense", "dense.run")
    data = classlist.class_view(instructor)
    rows = {s.student_id: s for s in data.students}
    assert (rows["s1"].submitted, rows["s1"].team_submissions) == (1, 1)
    assert (rows["s2"].submitted, rows["s2"].team_submissions) == (0, 1)
    assert rows["s3"].team_submissions == 0
    assert [t.submissions for t in data.teams if t.name == "Red"] == [1]


def test_a_student_sees_teammates_only_with_display_names(tasks):
    _, instructor = loaded(tasks)
    ada = tasks.open(classlist.links(instructor)[1])
    assert classlist.student_view(ada).teammates == ()
    roster.set_options(instructor.task, display_names=True)
    assert classlist.student_view(ada).teammates == ("Alan Turing",)


def _graded(tasks):
    text = "id,name,email,team\na,A,a@x.y,T1\nb,B,b@x.y,T2\nc,C,c@x.y,T3\nd,D,d@x.y,\n"
    _, instructor = loaded(tasks, text)
    personal = classlist.links(instructor)
    for number, run in ((1, "dense"), (2, "bm25_ce")):
        tasks.open(personal[number]).submit((LEGAL / f"{run}.run").read_bytes(), run, f"{run}.run")
    return instructor


def test_grade_rules_by_hand(tasks):
    instructor = _graded(tasks)
    board = {r.team: r.means["nDCG@10"] for r in classlist_board(instructor) if r.kind == "team"}
    teams = {s.student_id: s.team for s in roster.students(instructor.task)}
    first, second = sorted(board, key=board.get, reverse=True)
    by_rank = {g.student_id: g.points for g in grades.grade(instructor, grades.Rule("rank", points=(100, 80)))}
    assert by_rank == {s: (100.0 if teams[s] == first else 80.0 if teams[s] == second else 0.0) for s in teams}
    cut = (board[first] + board[second]) / 2
    by_score = {g.student_id: g.points
                for g in grades.grade(instructor, grades.Rule("thresholds", thresholds=((cut, 90), (0.0, 50))))}
    assert by_score == {s: (90.0 if teams[s] == first else 50.0 if teams[s] == second else 0.0) for s in teams}
    taking = {g.student_id: g.points for g in grades.grade(instructor, grades.Rule("participation", full=10))}
    assert taking == {"a": 10.0, "b": 10.0, "c": 0.0, "d": 0.0}


def classlist_board(instructor):
    return views.view(instructor).final_board.rows


def test_gradebook_files_read_back_with_their_documented_columns(tasks):
    instructor = _graded(tasks)
    found = grades.grade(instructor, grades.Rule("participation", full=10))
    moodle = list(csv.DictReader(io.StringIO(grades.moodle_csv(found, "Class task"))))
    assert [(r["ID number"], r["Email address"], r["Class task"]) for r in moodle] == \
        [("a", "a@x.y", "10"), ("b", "b@x.y", "10"), ("c", "c@x.y", "0"), ("d", "d@x.y", "0")]
    canvas = list(csv.DictReader(io.StringIO(grades.canvas_csv(found, "Class task", 10))))
    assert list(canvas[0]) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Class task"]
    assert (canvas[0]["Student"], canvas[0]["Class task"]) == ("Points Possible", "10")
    assert [(r["SIS User ID"], r["Class task"]) for r in canvas[1:]] == [("a", "10"), ("b", "10"), ("c", "0"),
                                                                          ("d", "0")]


def test_formula_names_are_quoted_in_exports(tasks):
    _, instructor = loaded(tasks)
    found = grades.grade(instructor, grades.Rule())
    assert "'=HYPERLINK" in grades.moodle_csv(found, "x")
    assert ",=HYPERLINK" not in grades.canvas_csv(found, "x", 100)
    assert "'=HYPERLINK" in course.class_csv(course.class_progress(instructor))


def test_course_progress(tasks):
    _, instructor = loaded(tasks)
    catalogue = course.lesson_catalogue()
    first = next(iter(catalogue.values()))
    numbers = [ex for lesson in catalogue.values() for ex in lesson.exercises if ex.kind == "number"][:2]
    course.set_items(instructor, [course.Item("lesson", first.id, ""),
                                  course.Item("exercises", lessons.encode(numbers), "Two numbers"),
                                  course.Item("task", "", "")])
    ada = tasks.open(classlist.links(instructor)[1])
    assert course.progress(ada).next == 0
    course.mark_read(ada, 0)
    assert not course.answer(ada, 1, 0, lessons.answer(numbers[0]) + 1).correct
    assert course.progress(ada).items[1].done == 0
    assert course.answer(ada, 1, 0, lessons.answer(numbers[0])).correct
    mine = course.progress(ada)
    assert ([p.done for p in mine.items], mine.next) == ([1, 1, 0], 1)
    course.answer(ada, 1, 1, lessons.answer(numbers[1]))
    ada.submit((LEGAL / "dense.run").read_bytes(), "dense", "dense.run")
    assert course.progress(ada).next is None
    table = course.class_progress(instructor).set_index("student id")
    assert table.loc["s1", "complete"] == 3
    assert table.loc["s2", "complete"] == 1          # the team submitted; nothing read
    assert table.loc["s3", "complete"] == 0
