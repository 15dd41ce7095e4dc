"""A course in Chromium against a real server: a class list of 30 students in 6 teams pasted on
the course page, a course of 3 lessons and the task, personal links, each team submitting on a
student's link, a late submission refused, the release, and the grade files read back with their
documented columns. A student's pages show no other student's name (until display names are on:
the check catches the names then)."""
from __future__ import annotations

import csv
import io as stdlib_io
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

import metrics
from metrics.tasks import TaskDefinition, roster, views
from metrics.tasks import course as course_module
from tests.e2e.helpers import LEGAL, TIMEOUT, main, open_app, screenshot_dir, submit, variant_run, wait_for_app
from tests.e2e.servers import public_server, tasks_of  # noqa: F401  (the fixture `server`)

pytestmark = pytest.mark.visitor(timezone="Europe/Paris")

TEAMS = ("Red", "Blue", "Green", "Gold", "Grey", "Teal")
HOSTILE = "=HYPERLINK(\"http://x\")"


def class_list() -> tuple[str, dict[str, tuple[str, str]]]:
    """30 students, 5 a team; the first name is a spreadsheet formula, one is HTML."""
    people = {}
    for i in range(30):
        name = HOSTILE if i == 0 else "<b>Bold</b> Student" if i == 1 else f"Student{i:02d} Surname{i:02d}"
        people[f"s{i:03d}"] = (name, TEAMS[i // 5])
    lines = ["student id,name,email,team"] + [f's{i[1:]},"{n.replace(chr(34), chr(34) * 2)}",{i}@uni.edu,{t}'
                                              for i, (n, t) in people.items()]
    return "\n".join(lines) + "\n", people


def download(page, button: str) -> str:
    with page.expect_download(timeout=TIMEOUT) as event:
        main(page).get_by_role("button", name=button).click()
    return Path(event.value.path()).read_text()


def test_a_course_with_a_class_list_from_paste_to_gradebook(server, visitor, tmp_path):
    tasks = tasks_of(server)
    links = tasks.create(TaskDefinition(title="IR course task", closes=time.time() + 3600, measures=("nDCG@10",),
                                        total=3, seed=4),
                         topics=LEGAL / "topics.tsv", qrels=LEGAL / "qrels.txt",
                         baselines=[("bm25", LEGAL / "bm25.run")])
    token = links.tokens["instructor"]
    text, people = class_list()

    # the teacher pastes the class list and builds a course of 3 lessons and the task
    teacher = visitor()
    open_app(teacher, f"{server.url}/course?course={token}")
    main(teacher).get_by_label("Or paste it").fill(text)
    main(teacher).get_by_role("button", name="Load the class list").click()
    wait_for_app(teacher)
    expect(main(teacher)).to_contain_text("30 students in 6 teams", timeout=TIMEOUT)
    assert HOSTILE in main(teacher).inner_text().replace("\u2060", "")      # shown as text, inert
    assert main(teacher).locator("b", has_text="Bold").count() == 0           # HTML stays text
    titles = [lesson.title for lesson in course_module.lesson_catalogue().values()][:3]
    box = main(teacher).locator('[data-testid="stMultiSelect"]').filter(has_text="Lessons, in order")
    for title in titles:
        box.locator("input").click()
        teacher.keyboard.type(title)
        teacher.get_by_role("option", name=title).first.click()
        teacher.keyboard.press("Escape")
    main(teacher).get_by_role("button", name="Save the course").click()
    wait_for_app(teacher)
    expect(main(teacher)).to_contain_text("The course is saved", timeout=TIMEOUT)
    steps = [i.title for i in course_module.items(tasks.open(links.instructor).task)]
    assert steps == [*titles, "Class task"]
    rows = list(csv.DictReader(stdlib_io.StringIO(download(teacher, "Personal links (CSV, for a mail merge)"))))
    assert len(rows) == 30 and len({r["task link"] for r in rows}) == 30
    assert rows[0]["name"] == "'" + HOSTILE                                     # quoted for spreadsheets
    personal = {r["student id"]: (r["task link"], r["course link"]) for r in rows}
    teacher.screenshot(path=str(screenshot_dir() / "course-instructor.png"), full_page=True)

    # one student of each team submits on their personal link (the team page)
    student = visitor()
    runs = {}
    sources = ("dense", "bm25_ce", "bm25_qe", "dense", "bm25_ce", "bm25_qe")
    for k, team in enumerate(TEAMS):
        sid = f"s{k * 5:03d}"
        runs[team] = variant_run(LEGAL / f"{sources[k]}.run", tmp_path, f"{team}.run") if k >= 3 else \
            LEGAL / f"{sources[k]}.run"
        if k >= 3:  # a new file of the same lists, less its first query: other means
            lines = runs[team].read_text().splitlines(keepends=True)
            first_query = lines[0].split()[0]
            runs[team].write_text("".join(line for line in lines if line.split()[0] != first_query))
        open_app(student, personal[sid][0])
        submit(student, runs[team])
        expect(main(student)).to_contain_text("scored on the public topics", timeout=TIMEOUT)

    # a student's course: what is done (the task: the team submitted) and what is next
    open_app(student, personal["s005"][1])
    expect(main(student)).to_contain_text("1 of 4 steps done", timeout=TIMEOUT)
    expect(main(student).locator("summary").first).to_contain_text("(next)", timeout=TIMEOUT)   # open
    main(student).get_by_role("button", name="I have read it").click()
    wait_for_app(student)
    expect(main(student)).to_contain_text("2 of 4 steps done", timeout=TIMEOUT)
    page_text = main(student).inner_text() + student.content()
    assert "Student05 Surname05" in page_text
    others = [n for i, (n, _) in people.items() if i != "s005"]
    assert [n for n in others if n in page_text] == []                        # no other student's name
    student.screenshot(path=str(screenshot_dir() / "course-student.png"), full_page=True)
    open_app(student, personal["s005"][0])
    team_page = main(student).inner_text() + student.content()
    assert [n for n in others if n in team_page] == []

    # with display names on, the same check finds the teammates' names (it can fail)
    instructor = tasks.open(links.instructor)
    roster.set_options(instructor.task, display_names=True)
    open_app(student, personal["s005"][1])
    expect(main(student)).to_contain_text("Student06 Surname06", timeout=TIMEOUT)
    roster.set_options(instructor.task, display_names=False)

    # a student's page opened before the close, used after it: the submission is refused with a
    # message naming the close, and nothing is stored
    open_app(student, personal["s010"][0])
    closes = time.time() + 3
    instructor.set_close(closes)
    time.sleep(max(0.0, closes - time.time()) + 1)
    stored = len(views.view(tasks.open(personal["s010"][0])).submissions)
    submit(student, runs["Green"])
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(closes))
    expect(main(student)).to_contain_text(f"submission refused: the task closed at {when}", timeout=TIMEOUT)
    assert len(views.view(tasks.open(personal["s010"][0])).submissions) == stored
    open_app(student, personal["s010"][0])
    assert main(student).locator('input[type="file"]').count() == 0          # the form is gone after the close

    # the release; the grade files by rank, read back with their documented columns
    instructor.release()
    open_app(teacher, f"{server.url}/course?course={token}")
    expect(main(teacher)).to_contain_text("The class's progress", timeout=TIMEOUT)
    moodle = list(csv.DictReader(stdlib_io.StringIO(download(teacher, "Moodle (CSV)"))))
    canvas = list(csv.DictReader(stdlib_io.StringIO(download(teacher, "Canvas (CSV)"))))
    teacher.screenshot(path=str(screenshot_dir() / "course-grades.png"), full_page=True)
    hidden = set(instructor.snapshot().hidden_qids)
    qrels = metrics.read_qrels(LEGAL / "qrels.txt")
    frame = metrics.evaluate(qrels, {t: metrics.read_run(p) for t, p in runs.items()}, ["nDCG@10"])
    means = frame[frame["qid"].isin(hidden)].groupby("system")["value"].mean()
    order = sorted(TEAMS, key=lambda t: -means[t])
    points = dict(zip(order, (100, 90, 80, 70, 60, 50)))
    expected = {sid: str(points[team]) for sid, (_, team) in people.items()}
    assert {r["ID number"]: r["Class task"] for r in moodle} == expected
    assert {r["Email address"] for r in moodle} == {f"{sid}@uni.edu" for sid in people}
    assert (canvas[0]["Student"], canvas[0]["Class task"]) == ("Points Possible", "100")
    assert {r["SIS User ID"]: r["Class task"] for r in canvas[1:]} == expected
    assert list(canvas[0])[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert re.search(r"^'=HYPERLINK", "\n".join(r["Student"] for r in canvas), re.M)
    tasks.close()
